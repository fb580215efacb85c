//! The askdesk-desktop binary: `--version`, else everything lives in the library's `run()`.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // Answered before anything starts: no display, bus or socket is needed to say what this is.
    if std::env::args()
        .skip(1)
        .any(|arg| arg == "--version" || arg == "-V")
    {
        println!("askdesk-desktop {}", askdesk_connect::VERSION);
        return;
    }
    askdesk_desktop::run()
}
