//! The askdesk-desktop binary: everything lives in the library's `run()`.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    askdesk_desktop::run()
}
