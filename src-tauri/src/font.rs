//! The desktop's UI font, named to the page before its first layout.
//!
//! CSS's `system-ui` makes WebKitGTK look the desktop's font up by the name GTK gives it, for every
//! size and weight the page uses, and on a desktop whose font is only an alias of fontconfig's
//! ("Sans", the default without a settings daemon) each lookup misses and falls through to
//! `sans-serif`. On a window rebuilt for a question that doubled the first layout: about 100 ms of a
//! dropped window's dialog (`scripts/bench-desktop.sh`). The app asks GTK once per window, and the
//! page gets the family by name, or the generic `sans-serif` when the desktop names only an alias.

/// The page's `--ui-font` for the desktop's font `setting` (GTK's `gtk-font-name`, as
/// "Cantarell 11"): the family first when it is a real one, then `sans-serif`.
fn family_list(setting: Option<&str>) -> String {
    let family = setting
        .map(|name| {
            gtk::pango::FontDescription::from_string(name)
                .family()
                .map(|family| family.to_string())
                .unwrap_or_default()
        })
        .unwrap_or_default();
    let family = family.split(',').next().unwrap_or_default().trim();
    let alias = [
        "",
        "sans",
        "sans-serif",
        "sans serif",
        "system-ui",
        "serif",
        "monospace",
    ]
    .contains(&family.to_ascii_lowercase().as_str());
    // A family name goes into a CSS string: anything beyond letters, digits, spaces, dashes and
    // underscores is not a font a desktop names, and is left out rather than escaped.
    let plain = family
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'));
    if alias || !plain {
        "sans-serif".to_owned()
    } else {
        format!("\"{family}\", sans-serif")
    }
}

/// The script the window runs before the page: it sets `--ui-font` on the root element. Called on
/// the main thread (GTK's settings live there).
pub fn script() -> String {
    use gtk::prelude::*;
    let setting = gtk::Settings::default().and_then(|settings| settings.gtk_font_name());
    let families = family_list(setting.as_deref());
    tracing::debug!(%families, "the page's UI font");
    let value = serde_json::Value::String(families).to_string();
    format!("document.documentElement.style.setProperty('--ui-font', {value});")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_family_comes_first_without_its_size() {
        assert_eq!(
            family_list(Some("Cantarell 11")),
            "\"Cantarell\", sans-serif"
        );
        assert_eq!(
            family_list(Some("Noto Sans CJK SC Bold 10")),
            "\"Noto Sans CJK SC\", sans-serif"
        );
    }

    #[test]
    fn an_alias_or_nothing_is_the_generic_family() {
        for setting in [
            None,
            Some(""),
            Some("Sans 10"),
            Some("sans-serif 9"),
            Some("Monospace"),
        ] {
            assert_eq!(family_list(setting), "sans-serif", "{setting:?}");
        }
    }

    #[test]
    fn a_name_that_could_break_out_of_the_css_string_is_left_out() {
        for setting in ["Evil\"; x 10", "A\\B 10", "A}B 10", "A'B 11"] {
            assert_eq!(family_list(Some(setting)), "sans-serif", "{setting:?}");
        }
    }
}
