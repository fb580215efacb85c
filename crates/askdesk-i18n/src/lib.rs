//! askdesk's messages in the person's language: the Fluent catalogues built in, the language chosen
//! for this process, and each message formatted in it with English as the fallback.
//!
//! - The catalogues are `locales/<language>/<area>.ftl` (`cli.ftl`, `connect.ftl`, `desktop.ftl`,
//!   `phone.ftl`, `remote.ftl`, `rules.ftl`, `ui.ftl`), the one source of every message the CLI's human-readable output, the desktop's
//!   notifications, tray and the sentences it composes for the page, the page, and the phone's page and server show; each page gets the text of its language's file through [`source`]
//!   and formats it with Fluent's own JavaScript implementation.
//! - The language ([`choose`]): `ASKDESK_LANG`, else the app's setting, else the system's
//!   (`LC_ALL`, `LC_MESSAGES`, `LANG`, the first one set), negotiated against the catalogues;
//!   English when nothing matches.
//! - A message missing from the chosen catalogue is taken from English ([`Messages::get`]).
//!
//! Fluent's bidi isolation marks (U+2068 and U+2069 around each placeable) are off: they would
//! reach a terminal as raw characters and sit inside text whose bidi controls the CLI escapes.
//! Text an agent supplied is never translated, and is escaped (`askdesk`'s `terminal::one_line`)
//! or isolated (the desktop's notifications) by the caller before it becomes an argument.

use std::sync::{Arc, PoisonError, RwLock};

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::FluentResource;
pub use fluent_bundle::{FluentArgs, FluentValue};
use fluent_langneg::{negotiate_languages, NegotiationStrategy};
use unic_langid::LanguageIdentifier;

/// The language every message exists in, and the one used when no other matches.
pub const DEFAULT: &str = "en";

/// The environment variable that overrides both the app's setting and the system's language.
pub const OVERRIDE: &str = "ASKDESK_LANG";

/// The system's locale variables, in the order POSIX gives them precedence for messages.
const SYSTEM: [&str; 3] = ["LC_ALL", "LC_MESSAGES", "LANG"];

/// One catalogue file: its name and its text.
pub type File = (&'static str, &'static str);

/// The catalogues built in: each language with its files (the same names in every language).
pub const CATALOGUES: &[(&str, &[File])] = &[
    (
        "en",
        &[
            ("cli.ftl", include_str!("../locales/en/cli.ftl")),
            ("connect.ftl", include_str!("../locales/en/connect.ftl")),
            ("desktop.ftl", include_str!("../locales/en/desktop.ftl")),
            ("phone.ftl", include_str!("../locales/en/phone.ftl")),
            ("rules.ftl", include_str!("../locales/en/rules.ftl")),
            ("remote.ftl", include_str!("../locales/en/remote.ftl")),
            ("ui.ftl", include_str!("../locales/en/ui.ftl")),
        ],
    ),
    (
        "zh-CN",
        &[
            ("cli.ftl", include_str!("../locales/zh-CN/cli.ftl")),
            ("connect.ftl", include_str!("../locales/zh-CN/connect.ftl")),
            ("desktop.ftl", include_str!("../locales/zh-CN/desktop.ftl")),
            ("phone.ftl", include_str!("../locales/zh-CN/phone.ftl")),
            ("rules.ftl", include_str!("../locales/zh-CN/rules.ftl")),
            ("remote.ftl", include_str!("../locales/zh-CN/remote.ftl")),
            ("ui.ftl", include_str!("../locales/zh-CN/ui.ftl")),
        ],
    ),
];

/// The languages with a catalogue, English first.
pub fn languages() -> impl Iterator<Item = &'static str> {
    CATALOGUES.iter().map(|(language, _)| *language)
}

/// The files of `language`'s catalogue; `None` for a language askdesk has none for.
pub fn files(language: &str) -> Option<&'static [File]> {
    CATALOGUES
        .iter()
        .find(|(name, _)| *name == language)
        .map(|(_, files)| *files)
}

/// The text of `language`'s catalogue file `name` (`ui.ftl`), for the page to format.
pub fn source(language: &str, name: &str) -> Option<&'static str> {
    files(language)?
        .iter()
        .find(|(file, _)| *file == name)
        .map(|(_, text)| *text)
}

/// The language of a locale name as a person or the system writes it: a BCP 47 tag (`zh-CN`) or
/// a POSIX locale (`zh_CN.UTF-8`, `de_DE@euro`). `None` for `C`, `POSIX`, an empty name and one
/// that is not a language.
pub fn parse(name: &str) -> Option<LanguageIdentifier> {
    let name = name.split(['.', '@']).next().unwrap_or_default().trim();
    if name.is_empty() || name == "C" || name == "POSIX" {
        return None;
    }
    name.replace('_', "-").parse().ok()
}

/// The language askdesk has a catalogue for that best serves `requested` (a locale name, see
/// [`parse`]): the same language in another region or script counts (`zh`, `zh-Hans`, `zh-SG`
/// find `zh-CN`), and anything else is [`DEFAULT`].
pub fn negotiate(requested: Option<&str>) -> &'static str {
    let Some(requested) = requested.and_then(parse) else {
        return DEFAULT;
    };
    let available: Vec<LanguageIdentifier> = languages()
        .map(|l| l.parse().expect("a built-in language parses"))
        .collect();
    let default: LanguageIdentifier = DEFAULT.parse().expect("English parses");
    let chosen = negotiate_languages(
        &[requested],
        &available,
        Some(&default),
        NegotiationStrategy::Lookup,
    );
    let chosen = chosen.first().map(|l| l.to_string()).unwrap_or_default();
    languages().find(|l| *l == chosen).unwrap_or(DEFAULT)
}

/// The language of this process: [`OVERRIDE`] when set, else `setting` (the app's, `None` or
/// empty when it follows the system), else the first of `LC_ALL`, `LC_MESSAGES` and `LANG` that
/// is set, negotiated by [`negotiate`].
pub fn choose(setting: Option<&str>) -> &'static str {
    choose_from(setting, |name| std::env::var(name).ok())
}

/// [`choose`] with the environment read through `var`.
fn choose_from(setting: Option<&str>, var: impl Fn(&str) -> Option<String>) -> &'static str {
    let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let requested = var(OVERRIDE)
        .or_else(|| setting.filter(|s| !s.trim().is_empty()).map(str::to_owned))
        .or_else(|| SYSTEM.iter().find_map(|name| var(name)));
    negotiate(requested.as_deref())
}

/// The messages of one language, each formatted from that language's catalogue when it has the
/// message and from English's otherwise.
pub struct Messages {
    language: &'static str,
    /// The chosen language's bundle first, then English's (once, when they are the same).
    chain: Vec<FluentBundle<FluentResource>>,
}

impl Messages {
    /// The messages of `language`, one of [`languages`] ([`DEFAULT`] for any other).
    pub fn new(language: &str) -> Self {
        let language = languages().find(|l| *l == language).unwrap_or(DEFAULT);
        let mut chain = vec![bundle(language)];
        if language != DEFAULT {
            chain.push(bundle(DEFAULT));
        }
        Self { language, chain }
    }

    /// The language these messages are in.
    pub fn language(&self) -> &'static str {
        self.language
    }

    /// Message `id` formatted with `args`; the id itself when no catalogue has it (the catalogue
    /// tests keep that from happening).
    pub fn get(&self, id: &str, args: Option<&FluentArgs<'_>>) -> String {
        for bundle in &self.chain {
            let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
                continue;
            };
            // A formatting error (an argument not passed) still yields the text with the
            // placeable's name in braces; the catalogue tests check every variable is passed.
            let mut errors = Vec::new();
            return bundle
                .format_pattern(pattern, args, &mut errors)
                .into_owned();
        }
        id.to_owned()
    }

    /// Attribute `attribute` of message `id` (`.title`), formatted as [`get`](Self::get) does.
    pub fn attribute(&self, id: &str, attribute: &str, args: Option<&FluentArgs<'_>>) -> String {
        for bundle in &self.chain {
            let Some(pattern) = bundle
                .get_message(id)
                .and_then(|m| m.get_attribute(attribute))
                .map(|a| a.value())
            else {
                continue;
            };
            let mut errors = Vec::new();
            return bundle
                .format_pattern(pattern, args, &mut errors)
                .into_owned();
        }
        format!("{id}.{attribute}")
    }
}

/// The bundle of a built-in language, isolation marks off (see the crate's documentation).
fn bundle(language: &str) -> FluentBundle<FluentResource> {
    let id: LanguageIdentifier = language.parse().expect("a built-in language parses");
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    bundle.set_use_isolating(false);
    for (name, text) in files(language).expect("a built-in language") {
        let resource = FluentResource::try_new((*text).to_owned())
            .unwrap_or_else(|(_, errors)| panic!("{language}/{name} does not parse: {errors:?}"));
        bundle
            .add_resource(resource)
            .unwrap_or_else(|errors| panic!("{language}/{name} repeats a message: {errors:?}"));
    }
    bundle
}

/// The messages this process speaks in, made on first use from [`choose`]`(None)` unless
/// [`set_language`] chose first.
static CURRENT: RwLock<Option<Arc<Messages>>> = RwLock::new(None);

std::thread_local! {
    /// The messages this thread speaks for the moment ([`speaking`]), instead of the process's.
    static SPEAKING: std::cell::RefCell<Option<Arc<Messages>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `work` with this thread speaking `language` (one of [`languages`]), whatever the process
/// speaks: what `work` composes with [`t!`] is in `language`. For the log, whose words are English
/// whatever the person's language, when the code that composes them serves the person too (the
/// rules file's errors).
pub fn speaking<T>(language: &str, work: impl FnOnce() -> T) -> T {
    /// Gives the thread its previous language back, however `work` ends.
    struct Restore(Option<Arc<Messages>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SPEAKING.with(|slot| *slot.borrow_mut() = self.0.take());
        }
    }
    let messages = if language == DEFAULT {
        english()
    } else {
        Arc::new(Messages::new(language))
    };
    let _restore = Restore(SPEAKING.with(|slot| slot.borrow_mut().replace(messages)));
    work()
}

/// The messages of this thread's language: [`speaking`]'s, else this process's.
pub fn current() -> Arc<Messages> {
    if let Some(messages) = SPEAKING.with(|slot| slot.borrow().clone()) {
        return messages;
    }
    if let Some(messages) = CURRENT
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
    {
        return Arc::clone(messages);
    }
    let mut slot = CURRENT.write().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(slot.get_or_insert_with(|| Arc::new(Messages::new(choose(None)))))
}

/// The messages in English, for what stays English whatever the language (the log).
pub fn english() -> Arc<Messages> {
    static ENGLISH: std::sync::OnceLock<Arc<Messages>> = std::sync::OnceLock::new();
    Arc::clone(ENGLISH.get_or_init(|| Arc::new(Messages::new(DEFAULT))))
}

/// Makes `language` this process's language from now on (the desktop, when its setting changes).
pub fn set_language(language: &str) {
    let messages = Arc::new(Messages::new(language));
    *CURRENT.write().unwrap_or_else(PoisonError::into_inner) = Some(messages);
}

/// Message `id` in this process's language, with named arguments:
/// `t!("history-none", recorded = 3)`. Arguments are anything [`FluentValue`] converts from
/// (strings, numbers); text an agent supplied is escaped or isolated before it is passed.
/// `t!(in messages, "id", ...)` formats it in the language of `messages` (a [`Messages`]) instead.
#[macro_export]
macro_rules! t {
    (in $messages:expr, $id:literal) => {
        $messages.get($id, None)
    };
    (in $messages:expr, $id:literal, $($name:ident = $value:expr),+ $(,)?) => {{
        let mut args = $crate::FluentArgs::new();
        $( args.set(stringify!($name), $crate::FluentValue::from($value)); )+
        $messages.get($id, Some(&args))
    }};
    ($id:expr) => {
        $crate::current().get($id, None)
    };
    ($id:expr, $($name:ident = $value:expr),+ $(,)?) => {{
        let mut args = $crate::FluentArgs::new();
        $( args.set(stringify!($name), $crate::FluentValue::from($value)); )+
        $crate::current().get($id, Some(&args))
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_locales_and_tags_name_their_language() {
        assert_eq!(parse("zh_CN.UTF-8").unwrap().to_string(), "zh-CN");
        assert_eq!(parse("de_DE@euro").unwrap().to_string(), "de-DE");
        assert_eq!(parse("en-GB").unwrap().to_string(), "en-GB");
        assert!(parse("C").is_none());
        assert!(parse("C.UTF-8").is_none());
        assert!(parse("POSIX").is_none());
        assert!(parse("").is_none());
        assert!(parse("not a language!").is_none());
    }

    #[test]
    fn chinese_in_any_simplified_form_finds_the_chinese_catalogue() {
        for name in [
            "zh_CN.UTF-8",
            "zh-CN",
            "zh",
            "zh-Hans",
            "zh_SG.UTF-8",
            "zh-Hans-CN",
        ] {
            assert_eq!(negotiate(Some(name)), "zh-CN", "{name}");
        }
    }

    #[test]
    fn other_languages_and_no_language_fall_back_to_english() {
        for name in [
            Some("en_US.UTF-8"),
            Some("de_DE.UTF-8"),
            Some("fr"),
            Some("C.UTF-8"),
            Some(""),
            None,
        ] {
            assert_eq!(negotiate(name), "en", "{name:?}");
        }
    }

    #[test]
    fn the_override_wins_then_the_setting_then_the_system_in_posix_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let system = &[("LANG", "zh_CN.UTF-8")];
        assert_eq!(choose_from(None, env(system)), "zh-CN");
        assert_eq!(choose_from(Some("en"), env(system)), "en");
        assert_eq!(choose_from(Some(""), env(system)), "zh-CN");
        let overridden = &[("ASKDESK_LANG", "en"), ("LANG", "zh_CN.UTF-8")];
        assert_eq!(choose_from(Some("zh-CN"), env(overridden)), "en");
        let empty_override = &[("ASKDESK_LANG", ""), ("LANG", "zh_CN.UTF-8")];
        assert_eq!(choose_from(None, env(empty_override)), "zh-CN");
        let messages_over_lang = &[("LC_MESSAGES", "en_GB.UTF-8"), ("LANG", "zh_CN.UTF-8")];
        assert_eq!(choose_from(None, env(messages_over_lang)), "en");
        let all_over_messages = &[("LC_ALL", "zh_CN.UTF-8"), ("LC_MESSAGES", "C")];
        assert_eq!(choose_from(None, env(all_over_messages)), "zh-CN");
        assert_eq!(choose_from(None, env(&[])), "en");
    }

    #[test]
    fn a_message_missing_from_a_catalogue_comes_from_english() {
        let messages = Messages::new("zh-CN");
        // Every real message exists in Chinese (the catalogue tests), so ask the chain directly
        // for one only English's bundle is given here.
        let mut english_only = FluentBundle::new_concurrent(vec![DEFAULT.parse().unwrap()]);
        english_only.set_use_isolating(false);
        english_only
            .add_resource(FluentResource::try_new("only-english = Only English".into()).unwrap())
            .unwrap();
        let chain = Messages {
            language: "zh-CN",
            chain: vec![bundle("zh-CN"), english_only],
        };
        assert_eq!(chain.get("only-english", None), "Only English");
        assert_eq!(messages.get("no-such-message", None), "no-such-message");
    }

    #[test]
    fn a_thread_speaks_another_language_only_for_the_work_given_and_after_a_panic_no_more() {
        let process = current().language();
        let said = speaking("zh-CN", || {
            assert_eq!(current().language(), "zh-CN");
            // Nested: the inner language for the inner work, then the outer one again.
            speaking("en", || assert_eq!(current().language(), "en"));
            current().get("history-by", None)
        });
        assert_eq!(said, Messages::new("zh-CN").get("history-by", None));
        assert_eq!(current().language(), process);
        let panicked = std::panic::catch_unwind(|| speaking("zh-CN", || panic!("in the work")));
        assert!(panicked.is_err());
        assert_eq!(current().language(), process);
        // Another thread never hears it.
        speaking("zh-CN", || {
            let other = std::thread::spawn(|| current().language()).join().unwrap();
            assert_eq!(other, process);
        });
    }

    #[test]
    fn placeables_carry_no_isolation_marks() {
        let mut args = FluentArgs::new();
        args.set("recorded", 3);
        for language in languages() {
            let text = Messages::new(language).get("history-none-match", Some(&args));
            assert!(text.contains('3'), "{language}: {text}");
            assert!(
                !text.contains(['\u{2068}', '\u{2069}']),
                "{language}: {text:?}"
            );
        }
    }
}
