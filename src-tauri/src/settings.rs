//! Start-up settings of the desktop app, from the environment and the command line.
//!
//! - `--hidden` / `ASKDESK_START_HIDDEN=1`: start in the tray without showing the window (autostart).
//! - `ASKDESK_NOTIFY_ONLY=1`: a new request raises a notification but does not open the window.
//! - `ASKDESK_GUI_SCOPE=all|agents`: which requests the GUI answerer receives (default `all`).
//! - `--drop-window-after=SECONDS` / `ASKDESK_DROP_WINDOW_AFTER=SECONDS`: how long the window may
//!   stay hidden before it is dropped to free its web process, whether or not requests wait
//!   (default 10; `never` keeps it).
//! - `--theme=dark|light` / `ASKDESK_THEME=dark|light`: the window's colour scheme whatever the
//!   desktop's (default: the desktop's).

use std::time::Duration;

use askdesk_core::Scope;

/// How long a hidden, idle window is kept by default: long enough that hiding and reopening it
/// at once is instant, short enough that an idle app is light within half a minute.
pub const DROP_WINDOW_AFTER: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub start_hidden: bool,
    pub notify_only: bool,
    pub scope: Scope,
    /// `None`: the window is kept for the app's lifetime.
    pub drop_window_after: Option<Duration>,
    /// The window's colour scheme; `None` follows the desktop.
    pub theme: Option<tauri::Theme>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            start_hidden: false,
            notify_only: false,
            scope: Scope::All,
            drop_window_after: Some(DROP_WINDOW_AFTER),
            theme: None,
        }
    }
}

impl Settings {
    pub fn from_env_and_args(args: impl IntoIterator<Item = String>) -> Settings {
        Self::from_lookup(|name| std::env::var(name).ok(), args)
    }

    fn from_lookup(
        env: impl Fn(&str) -> Option<String>,
        args: impl IntoIterator<Item = String>,
    ) -> Settings {
        let flag =
            |name: &str| env(name).is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"));
        let mut settings = Settings {
            start_hidden: flag("ASKDESK_START_HIDDEN"),
            notify_only: flag("ASKDESK_NOTIFY_ONLY"),
            scope: match env("ASKDESK_GUI_SCOPE").as_deref().map(str::trim) {
                Some("agents") => Scope::Agents,
                Some("all") | None => Scope::All,
                Some(other) => {
                    tracing::warn!(scope = other, "unknown ASKDESK_GUI_SCOPE; using all");
                    Scope::All
                }
            },
            drop_window_after: Some(DROP_WINDOW_AFTER),
            theme: None,
        };
        if let Some(value) = env("ASKDESK_DROP_WINDOW_AFTER") {
            settings.set_drop_window_after(&value);
        }
        if let Some(value) = env("ASKDESK_THEME") {
            settings.set_theme(&value);
        }
        for arg in args {
            match arg.as_str() {
                "--hidden" => settings.start_hidden = true,
                "--notify-only" => settings.notify_only = true,
                other => {
                    if let Some(value) = other.strip_prefix("--drop-window-after=") {
                        settings.set_drop_window_after(value);
                    } else if let Some(value) = other.strip_prefix("--theme=") {
                        settings.set_theme(value);
                    } else {
                        tracing::debug!(arg = other, "ignored argument");
                    }
                }
            }
        }
        settings
    }

    fn set_drop_window_after(&mut self, value: &str) {
        match parse_drop_after(value) {
            Some(after) => self.drop_window_after = after,
            None => tracing::warn!(
                value,
                "the window drop delay is seconds or `never`; keeping {:?}",
                self.drop_window_after
            ),
        }
    }
}

impl Settings {
    fn set_theme(&mut self, value: &str) {
        match value.trim() {
            "dark" => self.theme = Some(tauri::Theme::Dark),
            "light" => self.theme = Some(tauri::Theme::Light),
            other => tracing::warn!(
                value = other,
                "the theme is `dark` or `light`; following the desktop"
            ),
        }
    }
}

/// Seconds (fractions allowed) or `never`.
fn parse_drop_after(value: &str) -> Option<Option<Duration>> {
    match value.trim() {
        "never" => Some(None),
        seconds => seconds
            .parse::<f64>()
            .ok()
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(env: &[(&str, &str)], args: &[&str]) -> Settings {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::from_lookup(
            |name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            args.iter().map(|a| a.to_string()),
        )
    }

    #[test]
    fn the_theme_is_dark_or_light_from_the_argument_or_the_environment() {
        assert_eq!(parse(&[], &[]).theme, None);
        assert_eq!(
            parse(&[], &["--theme=dark"]).theme,
            Some(tauri::Theme::Dark)
        );
        assert_eq!(
            parse(&[("ASKDESK_THEME", "light")], &[]).theme,
            Some(tauri::Theme::Light)
        );
        assert_eq!(parse(&[], &["--theme=blue"]).theme, None);
    }

    #[test]
    fn defaults_show_the_window_and_answer_everything() {
        assert_eq!(parse(&[], &[]), Settings::default());
    }

    #[test]
    fn environment_and_flags_are_read() {
        let s = parse(
            &[
                ("ASKDESK_NOTIFY_ONLY", "1"),
                ("ASKDESK_GUI_SCOPE", "agents"),
            ],
            &["--hidden"],
        );
        assert_eq!(
            s,
            Settings {
                start_hidden: true,
                notify_only: true,
                scope: Scope::Agents,
                drop_window_after: Some(DROP_WINDOW_AFTER),
                theme: None,
            }
        );
        assert!(!parse(&[("ASKDESK_NOTIFY_ONLY", "0")], &[]).notify_only);
        assert_eq!(
            parse(&[("ASKDESK_GUI_SCOPE", "nonsense")], &[]).scope,
            Scope::All
        );
    }

    #[test]
    fn the_window_drop_delay_is_seconds_or_never() {
        assert_eq!(parse(&[], &[]).drop_window_after, Some(DROP_WINDOW_AFTER));
        assert_eq!(
            parse(&[("ASKDESK_DROP_WINDOW_AFTER", "2.5")], &[]).drop_window_after,
            Some(Duration::from_millis(2500))
        );
        assert_eq!(
            parse(&[("ASKDESK_DROP_WINDOW_AFTER", "never")], &[]).drop_window_after,
            None
        );
        // The command line wins over the environment; nonsense keeps what was there.
        assert_eq!(
            parse(
                &[("ASKDESK_DROP_WINDOW_AFTER", "never")],
                &["--drop-window-after=1"]
            )
            .drop_window_after,
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            parse(&[("ASKDESK_DROP_WINDOW_AFTER", "-3")], &[]).drop_window_after,
            Some(DROP_WINDOW_AFTER)
        );
        assert_eq!(
            parse(&[], &["--drop-window-after=soon"]).drop_window_after,
            Some(DROP_WINDOW_AFTER)
        );
    }
}
