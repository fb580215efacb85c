//! The app's language: chosen at start-up from `ASKDESK_LANG`, the person's choice and the
//! system's (`askdesk_i18n::choose`), the page's catalogue, and the Settings choice that changes it.
//!
//! The page formats its words itself, with Fluent's JavaScript implementation, from the same
//! `ui.ftl` the catalogues hold: [`get_catalogue`] sends the chosen language's text and English's,
//! which the page falls back to per message as the Rust side does.

use askdesk_i18n::t;
use serde::Serialize;
use tauri::State;

use crate::commands::CommandError;
use crate::settings::{Language, Preferences};
use crate::state::Rules;

/// The catalogue file the page's words are in.
const PAGE_FILE: &str = "ui.ftl";

/// Makes the language the person's choice and the environment give this process's language.
pub fn apply(prefs: &Preferences) -> &'static str {
    let language = askdesk_i18n::choose(prefs.get().language.map(|l| l.0));
    askdesk_i18n::set_language(language);
    language
}

/// A language the page offers, named in its own words (`简体中文`).
#[derive(Debug, Serialize)]
pub struct LanguageOption {
    id: &'static str,
    name: String,
}

/// What the page needs to speak the app's language.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogueView {
    /// The language in force, a BCP 47 tag (the page's `lang` and its `Intl` formats use it).
    language: &'static str,
    /// What the person chose; `None` follows the system.
    chosen: Option<&'static str>,
    /// The language the system (or `ASKDESK_LANG`) gives, which "System" in the choice stands for.
    system: &'static str,
    /// Whether `ASKDESK_LANG` decides, whatever is chosen.
    overridden: bool,
    /// The page's messages in `language`, then in English.
    source: &'static str,
    fallback: &'static str,
    languages: Vec<LanguageOption>,
}

fn view(prefs: &Preferences) -> CatalogueView {
    let language = askdesk_i18n::current().language();
    let page = |language| askdesk_i18n::source(language, PAGE_FILE).unwrap_or_default();
    CatalogueView {
        language,
        chosen: prefs.get().language.map(|l| l.0),
        system: askdesk_i18n::choose(None),
        overridden: std::env::var(askdesk_i18n::OVERRIDE).is_ok_and(|v| !v.trim().is_empty()),
        source: page(language),
        fallback: page(askdesk_i18n::DEFAULT),
        languages: askdesk_i18n::languages()
            .map(|id| LanguageOption {
                id,
                name: askdesk_i18n::Messages::new(id).get("language-name", None),
            })
            .collect(),
    }
}

/// The page's catalogue in the app's language.
#[tauri::command]
pub fn get_catalogue(prefs: State<'_, Preferences>) -> CatalogueView {
    view(&prefs)
}

/// Keeps the person's language (`None`: the system's) and speaks it from now on; the page then
/// draws itself again with the catalogue returned. A broken rules file is read again, so that the
/// Rules view says what is wrong with it in the new language.
#[tauri::command]
pub async fn set_language(
    prefs: State<'_, Preferences>,
    rules: State<'_, Rules>,
    language: Option<String>,
) -> Result<CatalogueView, CommandError> {
    let language = match language.as_deref() {
        None | Some("") => None,
        Some(name) => Some(Language::named(name).ok_or_else(|| {
            CommandError::new(
                "invalid",
                t!("desktop-command-no-catalogue", name = format!("{name:?}")),
            )
        })?),
    };
    prefs
        .set_language(language)
        .map_err(|e| CommandError::new("failed", e))?;
    apply(&prefs);
    if let Some(engine) = rules.0.get() {
        if engine.current().error.is_some() {
            engine.reload().await;
        }
    }
    Ok(view(&prefs))
}
