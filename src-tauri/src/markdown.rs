//! Markdown of a question's `detail`, rendered to HTML with pulldown-cmark and sanitized with ammonia.
//!
//! The result is the only HTML the page ever inserts with `innerHTML`, so everything that could run
//! script, load a resource or navigate the app is taken out here:
//!
//! - no `script`, `style`, `iframe`, `object`, `svg`, forms or event-handler attributes (ammonia's
//!   allow-list never admits them);
//! - links keep only `http`, `https` and `mailto` URLs, never relative ones, and get
//!   `rel="noopener noreferrer"`; the page opens them only after asking, through the backend;
//! - images are dropped (the CSP would block remote ones anyway): a markdown image becomes its alt
//!   text, a raw `<img>` disappears;
//! - task-list checkboxes stay, always disabled; headings get ids (prefixed `md-`) so the plan pane
//!   can show an outline.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::LazyLock;

use pulldown_cmark::{html, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde::Serialize;

/// Sanitized HTML plus the headings it contains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rendered {
    pub html: String,
    pub outline: Vec<Heading>,
}

/// One heading of a rendered document, for the outline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Heading {
    pub level: u8,
    pub text: String,
    /// The element id in the sanitized HTML.
    pub anchor: String,
}

/// The prefix ammonia puts on every id, so markdown cannot clobber ids of the page itself.
const ID_PREFIX: &str = "md-";

/// Renders markdown to sanitized HTML and collects its headings.
pub fn render(markdown: &str) -> Rendered {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS | Options::ENABLE_STRIKETHROUGH;
    let mut outline: Vec<Heading> = Vec::new();
    // The heading being read: its level, anchor and text so far.
    let mut heading: Option<Heading> = None;
    let mut events: Vec<Event<'_>> = Vec::new();
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(Tag::Heading {
                level,
                classes,
                attrs,
                ..
            }) => {
                let anchor = format!("h-{}", outline.len() + 1);
                heading = Some(Heading {
                    level: level_number(level),
                    text: String::new(),
                    anchor: format!("{ID_PREFIX}{anchor}"),
                });
                events.push(Event::Start(Tag::Heading {
                    level,
                    id: Some(CowStr::from(anchor)),
                    classes,
                    attrs,
                }));
            }
            Event::End(TagEnd::Heading(level)) => {
                if let Some(mut done) = heading.take() {
                    done.text = done.text.trim().to_owned();
                    outline.push(done);
                }
                events.push(Event::End(TagEnd::Heading(level)));
            }
            // An image becomes its alt text: the text inside it passes through as plain text.
            Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => {}
            Event::Text(text) | Event::Code(text) if heading.is_some() => {
                if let Some(current) = heading.as_mut() {
                    current.text.push_str(&text);
                }
                events.push(Event::Text(text));
            }
            other => events.push(other),
        }
    }
    let mut raw = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut raw, events.into_iter());
    Rendered {
        html: CLEANER.clean(&raw).to_string(),
        outline,
    }
}

fn level_number(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

static CLEANER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut builder = ammonia::Builder::default();
    builder
        .rm_tags(["img"])
        .add_tags(["input"])
        .add_tag_attributes("input", ["type", "checked", "disabled"])
        .set_tag_attribute_value("input", "disabled", "")
        .add_tag_attributes("code", ["class"])
        .url_schemes(HashSet::from(["http", "https", "mailto"]))
        .url_relative(ammonia::UrlRelative::Deny)
        .link_rel(Some("noopener noreferrer"))
        .id_prefix(Some(ID_PREFIX))
        .attribute_filter(filter_attribute);
    for heading in ["h1", "h2", "h3", "h4", "h5", "h6"] {
        builder.add_tag_attributes(heading, ["id"]);
    }
    builder
});

/// Keeps only checkbox inputs and `language-*` classes on code; everything else ammonia allowed.
fn filter_attribute<'u>(element: &str, attribute: &str, value: &'u str) -> Option<Cow<'u, str>> {
    match (element, attribute) {
        ("input", "type") => (value == "checkbox").then_some(Cow::Borrowed(value)),
        ("code", "class") => {
            let ok = value.strip_prefix("language-").is_some_and(|lang| {
                !lang.is_empty()
                    && lang
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+#-_.".contains(c))
            });
            ok.then_some(Cow::Borrowed(value))
        }
        _ => Some(Cow::Borrowed(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders `input` and checks that every `present` string appears and no `absent` one does.
    fn check(input: &str, present: &[&str], absent: &[&str]) {
        let html = render(input).html;
        let lower = html.to_ascii_lowercase();
        for needle in present {
            assert!(
                html.contains(needle),
                "{input:?} -> {html:?} lacks {needle:?}"
            );
        }
        for needle in absent {
            assert!(
                !lower.contains(&needle.to_ascii_lowercase()),
                "{input:?} -> {html:?} contains {needle:?}"
            );
        }
    }

    #[test]
    fn script_tags_are_removed_with_their_content() {
        check(
            "hi <script>alert(1)</script> there",
            &["hi", "there"],
            &["<script", "alert(1)"],
        );
        check(
            "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
            &[],
            &["<script", "evil.example"],
        );
    }

    #[test]
    fn event_handlers_are_removed() {
        check(
            "<img src=x onerror=alert(1)>",
            &[],
            &["<img", "onerror", "alert"],
        );
        check(
            r#"<a href="https://ok.example/" onclick="steal()">go</a>"#,
            &["https://ok.example/", ">go</a>"],
            &["onclick", "steal"],
        );
        check(
            r#"<p onmouseover="x()">text</p>"#,
            &["text"],
            &["onmouseover"],
        );
    }

    #[test]
    fn frames_objects_and_forms_are_removed() {
        check(
            r#"<iframe src="https://evil.example/"></iframe>"#,
            &[],
            &["<iframe", "evil.example"],
        );
        check(
            r#"<object data="x.swf"></object><embed src="y">"#,
            &[],
            &["<object", "<embed"],
        );
        check(
            r#"<form action="https://evil.example/"><input type="text" name="pw"><button>send</button></form>"#,
            &[],
            &["<form", "type=\"text\"", "<button", "evil.example"],
        );
        check(
            "<style>body{display:none}</style>",
            &[],
            &["<style", "display:none"],
        );
    }

    #[test]
    fn dangerous_urls_are_removed() {
        check(
            "[click](javascript:alert(1))",
            &["click"],
            &["javascript:", "href"],
        );
        check(
            "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
            &["data"],
            &["data:", "href"],
        );
        check(
            r#"<a href="JaVaScRiPt:alert(1)">x</a>"#,
            &[">x</a>"],
            &["javascript", "href"],
        );
        check(
            "[relative](index.html)",
            &["relative"],
            &["href", "index.html"],
        );
        check(
            "[site](https://example.com/docs)",
            &[
                r#"href="https://example.com/docs""#,
                r#"rel="noopener noreferrer""#,
            ],
            &[],
        );
    }

    #[test]
    fn svg_with_script_is_removed() {
        check(
            r#"<svg onload="alert(1)"><script>alert(2)</script><circle r="4"/></svg>"#,
            &[],
            &["<svg", "onload", "alert", "<circle"],
        );
    }

    #[test]
    fn images_are_dropped_and_keep_their_alt_text() {
        check(
            "![tracking pixel](https://evil.example/p.png)",
            &["tracking pixel"],
            &["<img", "evil.example"],
        );
        check(
            r#"<img src="https://evil.example/p.png" alt="x">"#,
            &[],
            &["<img", "evil.example"],
        );
    }

    #[test]
    fn styles_are_removed() {
        check(
            r#"<div style="position:fixed;inset:0">cover</div>"#,
            &["cover"],
            &["style="],
        );
    }

    #[test]
    fn plan_markdown_renders() {
        let plan = "# Plan\n\n## Steps\n\n- [x] read\n- [ ] write\n\n| a | b |\n|---|---|\n| 1 | ~~2~~ |\n\n```rust\nfn main() {}\n```\n";
        check(
            plan,
            &[
                "<table>",
                "<th>a</th>",
                "<del>2</del>",
                r#"type="checkbox""#,
                "disabled",
                r#"<code class="language-rust">"#,
                "fn main() {}",
            ],
            &["style="],
        );
    }

    #[test]
    fn task_boxes_cannot_become_other_inputs() {
        check(
            r#"<input type="password"><input type="checkbox" checked>"#,
            &[r#"type="checkbox""#],
            &["password"],
        );
    }

    #[test]
    fn code_classes_are_limited_to_languages() {
        check(
            r#"<code class="language-js">x</code><code class="evil">y</code>"#,
            &[r#"class="language-js""#],
            &["evil"],
        );
    }

    #[test]
    fn headings_form_the_outline() {
        let rendered = render("# Goal\n\ntext\n\n## Step `one`\n\n### Detail\n");
        let outline: Vec<(u8, &str, &str)> = rendered
            .outline
            .iter()
            .map(|h| (h.level, h.text.as_str(), h.anchor.as_str()))
            .collect();
        assert_eq!(
            outline,
            vec![
                (1, "Goal", "md-h-1"),
                (2, "Step one", "md-h-2"),
                (3, "Detail", "md-h-3")
            ]
        );
        assert!(
            rendered.html.contains(r#"<h1 id="md-h-1">Goal</h1>"#),
            "{}",
            rendered.html
        );
        assert!(
            rendered.html.contains(r#"<h3 id="md-h-3">Detail</h3>"#),
            "{}",
            rendered.html
        );
    }

    #[test]
    fn raw_ids_are_prefixed_so_they_cannot_clobber_the_page() {
        check(
            r#"<h2 id="queue">x</h2>"#,
            &[r#"id="md-queue""#],
            &[r#"id="queue""#],
        );
    }
}
