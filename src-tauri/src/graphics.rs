//! Whether there is a display to show the window on, checked before the socket is bound.
//!
//! Without one, GTK would panic deep inside Tauri after the broker had taken the socket. The app
//! instead names what is missing and points at `askdesk serve`, the broker without a window.

use std::fmt;

/// What stands between the app and a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoDisplay {
    /// Neither `DISPLAY` nor `WAYLAND_DISPLAY` is set.
    Unset,
    /// A display is named but GTK could not open it.
    Refused { display: String },
}

impl fmt::Display for NoDisplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoDisplay::Unset => {
                write!(f, "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)")?
            }
            NoDisplay::Refused { display } => write!(
                f,
                "cannot open the display {display} (GTK refused to start)"
            )?,
        }
        write!(f, "; `askdesk serve` runs the broker without a window")
    }
}

/// Checks the environment, then starts GTK on this (the main) thread; Tauri's own start-up later
/// finds GTK ready. (Elsewhere than Linux the system's own window server is always there.)
#[cfg(target_os = "linux")]
pub fn check() -> Result<(), NoDisplay> {
    let display = named_display(|name| std::env::var(name).ok()).ok_or(NoDisplay::Unset)?;
    gtk::init().map_err(|_| NoDisplay::Refused { display })
}

/// Whether GTK runs on a Wayland compositor (else on X11, or not on Linux). After [`check`].
#[cfg(target_os = "linux")]
pub fn is_wayland() -> bool {
    use gtk::prelude::*;
    gtk::gdk::Display::default()
        .is_some_and(|display| display.type_().name() == "GdkWaylandDisplay")
}

#[cfg(not(target_os = "linux"))]
pub fn is_wayland() -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
pub fn check() -> Result<(), NoDisplay> {
    Ok(())
}

/// The display the environment names: Wayland's first, as GTK prefers it.
fn named_display(env: impl Fn(&str) -> Option<String>) -> Option<String> {
    ["WAYLAND_DISPLAY", "DISPLAY"]
        .into_iter()
        .filter_map(|name| env(name).filter(|value| !value.trim().is_empty()))
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(vars: &[(&str, &str)]) -> Option<String> {
        named_display(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn a_display_is_named_by_either_variable() {
        assert_eq!(named(&[]), None);
        assert_eq!(named(&[("DISPLAY", "")]), None);
        assert_eq!(named(&[("DISPLAY", ":0")]), Some(":0".into()));
        assert_eq!(
            named(&[("DISPLAY", ":0"), ("WAYLAND_DISPLAY", "wayland-0")]),
            Some("wayland-0".into())
        );
    }

    #[test]
    fn the_message_names_what_is_missing_and_the_headless_broker() {
        let unset = NoDisplay::Unset.to_string();
        assert!(
            unset.contains("DISPLAY") && unset.contains("WAYLAND_DISPLAY"),
            "{unset}"
        );
        assert!(unset.contains("askdesk serve"), "{unset}");
        let refused = NoDisplay::Refused {
            display: ":9".into(),
        }
        .to_string();
        assert!(
            refused.contains(":9") && refused.contains("askdesk serve"),
            "{refused}"
        );
    }
}
