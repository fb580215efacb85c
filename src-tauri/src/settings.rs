//! Start-up settings of the desktop app, from the environment and the command line.
//!
//! - `--hidden` / `ASKDESK_START_HIDDEN=1`: start in the tray without showing the window (autostart).
//! - `ASKDESK_NOTIFY_ONLY=1`: a new request raises a notification but does not open the window.
//! - `ASKDESK_GUI_SCOPE=all|agents`: which requests the GUI answerer receives (default `all`).

use askdesk_core::Scope;

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub start_hidden: bool,
    pub notify_only: bool,
    pub scope: Scope,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            start_hidden: false,
            notify_only: false,
            scope: Scope::All,
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
        };
        for arg in args {
            match arg.as_str() {
                "--hidden" => settings.start_hidden = true,
                "--notify-only" => settings.notify_only = true,
                other => tracing::debug!(arg = other, "ignored argument"),
            }
        }
        settings
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
                scope: Scope::Agents
            }
        );
        assert!(!parse(&[("ASKDESK_NOTIFY_ONLY", "0")], &[]).notify_only);
        assert_eq!(
            parse(&[("ASKDESK_GUI_SCOPE", "nonsense")], &[]).scope,
            Scope::All
        );
    }
}
