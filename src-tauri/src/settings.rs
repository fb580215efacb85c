//! The desktop app's settings: start-up settings from the environment and the command line
//! ([`Settings`]), and the choices the person makes in the app's Settings ([`Choices`]), kept in
//! `desktop.json` in askdesk's configuration folder ([`Preferences`]).
//!
//! - `--hidden` / `ASKDESK_START_HIDDEN=1`: start in the tray without showing the window (autostart).
//! - `--notify-only` / `ASKDESK_NOTIFY_ONLY=1`: a new request raises a notification but does not
//!   open the window, whatever the person chose in the app.
//! - `ASKDESK_GUI_SCOPE=all|agents`: which requests the GUI answerer receives (default `all`).
//! - `--drop-window-after=SECONDS` / `ASKDESK_DROP_WINDOW_AFTER=SECONDS`: how long the window may
//!   stay hidden before it is dropped to free its web process, whether or not requests wait
//!   (default 10; `never` keeps it).
//! - `--theme=dark|light` / `ASKDESK_THEME=dark|light`: the window's colour scheme whatever the
//!   desktop's (default: the desktop's).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use askdesk_core::Scope;
use serde::{Deserialize, Serialize};

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

/// The file the person's choices are kept in, in askdesk's configuration folder.
const CHOICES_FILE: &str = "desktop.json";
/// The file the window's size and place are kept in, beside it (`tauri-plugin-window-state`).
const WINDOW_STATE_FILE: &str = "window-state.json";

/// What the person chose in the app's Settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Choices {
    /// A new request raises a notification and never the window by itself.
    pub notify_only: bool,
    /// A window a request opens shows without taking the focus (the person clicks into it).
    pub without_focus: bool,
    /// The app's language, one askdesk has a catalogue for; `None` follows the system
    /// (`ASKDESK_LANG` overrides both, see `askdesk_i18n::choose`). A language the file names
    /// that askdesk has no catalogue for reads as `None`.
    #[serde(
        deserialize_with = "known_language",
        skip_serializing_if = "Option::is_none"
    )]
    pub language: Option<Language>,
}

/// A language askdesk has a catalogue for (one of `askdesk_i18n::languages`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Language(pub &'static str);

impl Language {
    /// The language of this name, `None` when askdesk has no catalogue for it.
    pub fn named(name: &str) -> Option<Language> {
        askdesk_i18n::languages().find(|l| *l == name).map(Language)
    }
}

fn known_language<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Language>, D::Error> {
    let name = Option::<String>::deserialize(deserializer)?;
    Ok(name.as_deref().and_then(Language::named))
}

/// The person's choices, read at start-up and written whenever they change one.
pub struct Preferences {
    /// `None` without a configuration folder: the choices last until the app quits.
    path: Option<PathBuf>,
    chosen: Mutex<Choices>,
    /// `--notify-only` or `ASKDESK_NOTIFY_ONLY`: notify only, whatever was chosen.
    forced_notify_only: bool,
}

/// The choices as the page shows them: the choices in force, and whether the start-up settings
/// fixed "notify only" for this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChoicesView {
    #[serde(flatten)]
    pub choices: Choices,
    pub notify_only_forced: bool,
}

impl Preferences {
    /// Reads the choices from askdesk's configuration folder; a missing or unreadable file gives
    /// the defaults (the window opens and takes the focus), and an unreadable one is logged.
    pub fn load(settings: &Settings) -> Preferences {
        Self::at(
            askdesk_core::xdg::config_home().map(|c| c.join("askdesk").join(CHOICES_FILE)),
            settings.notify_only,
        )
    }

    fn at(path: Option<PathBuf>, forced_notify_only: bool) -> Preferences {
        let chosen = path.as_deref().map(read_choices).unwrap_or_default();
        Preferences {
            path,
            chosen: Mutex::new(chosen),
            forced_notify_only,
        }
    }

    /// The choices in force.
    pub fn get(&self) -> Choices {
        let mut choices = *askdesk_core::sync::lock(&self.chosen);
        choices.notify_only |= self.forced_notify_only;
        choices
    }

    /// The choices in force, for the page.
    pub fn view(&self) -> ChoicesView {
        ChoicesView {
            choices: self.get(),
            notify_only_forced: self.forced_notify_only,
        }
    }

    /// Keeps the person's new choices, on disk (atomically) before this returns; in force at
    /// once. On an error, what was chosen before stays. The language stays as it is: the page
    /// sends the switches, and the language through [`set_language`](Self::set_language).
    pub fn set(&self, mut choices: Choices) -> std::io::Result<ChoicesView> {
        let mut chosen = askdesk_core::sync::lock(&self.chosen);
        choices.language = chosen.language;
        if let Some(path) = &self.path {
            write_choices(path, &choices)?;
        }
        *chosen = choices;
        drop(chosen);
        Ok(self.view())
    }
}

impl Preferences {
    /// Keeps the person's language (`None`: the system's), as [`set`](Self::set) keeps the other
    /// choices.
    pub fn set_language(&self, language: Option<Language>) -> std::io::Result<ChoicesView> {
        let mut chosen = askdesk_core::sync::lock(&self.chosen);
        let choices = Choices {
            language,
            ..*chosen
        };
        if let Some(path) = &self.path {
            write_choices(path, &choices)?;
        }
        *chosen = choices;
        drop(chosen);
        Ok(self.view())
    }
}

fn read_choices(path: &Path) -> Choices {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            tracing::warn!(%error, path = %path.display(), "the app's settings are unreadable; using the defaults");
            Choices::default()
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Choices::default(),
        Err(error) => {
            tracing::warn!(%error, path = %path.display(), "the app's settings cannot be read; using the defaults");
            Choices::default()
        }
    }
}

/// Writes the choices to a file beside `path` and renames it over `path`: a reader sees the old
/// file or the new one, never half of one.
fn write_choices(path: &Path, choices: &Choices) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut text = serde_json::to_string_pretty(choices).map_err(std::io::Error::other)?;
    text.push('\n');
    let temporary = path.with_extension("json.new");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}

/// Where the window's size and place are kept: in askdesk's configuration folder, else (with
/// none) the plugin's own default in the app's configuration folder.
pub fn window_state_file() -> Option<PathBuf> {
    askdesk_core::xdg::config_home().map(|c| c.join("askdesk").join(WINDOW_STATE_FILE))
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

    #[test]
    fn choices_are_kept_across_starts_and_the_start_up_flag_wins() {
        let dir = std::env::temp_dir().join(format!("askdesk-choices-{}", std::process::id()));
        let path = dir.join("askdesk").join(CHOICES_FILE);
        let _ = std::fs::remove_dir_all(&dir);
        let first = Preferences::at(Some(path.clone()), false);
        assert_eq!(first.get(), Choices::default());
        let chosen = Choices {
            notify_only: true,
            without_focus: true,
            language: None,
        };
        assert_eq!(first.set(chosen).unwrap().choices, chosen);
        assert_eq!(Preferences::at(Some(path.clone()), false).get(), chosen);
        // `--notify-only` holds for the run, whatever was chosen; the choice itself is kept.
        let forced = Preferences::at(Some(path.clone()), true);
        forced.set(Choices::default()).unwrap();
        assert!(forced.get().notify_only && forced.view().notify_only_forced);
        assert_eq!(
            Preferences::at(Some(path.clone()), false).get(),
            Choices::default()
        );
        // The language is kept beside them, and switching a choice keeps it.
        let prefs = Preferences::at(Some(path.clone()), false);
        prefs.set_language(Language::named("zh-CN")).unwrap();
        prefs.set(chosen).unwrap();
        let reread = Preferences::at(Some(path.clone()), false).get();
        assert_eq!(reread.language, Some(Language("zh-CN")));
        assert!(reread.notify_only && reread.without_focus);
        // A language askdesk has no catalogue for follows the system.
        std::fs::write(&path, r#"{"notifyOnly": true, "language": "xx-YY"}"#).unwrap();
        let unknown = Preferences::at(Some(path.clone()), false).get();
        assert_eq!((unknown.notify_only, unknown.language), (true, None));
        // A broken file gives the defaults.
        std::fs::write(&path, "{ not json").unwrap();
        assert_eq!(Preferences::at(Some(path), false).get(), Choices::default());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
