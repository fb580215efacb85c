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
//!   can show an outline;
//! - fenced code in a language syntect knows is highlighted here, as `<span>`s with `hl-` classes
//!   (ui/style.css colours them; the CSP forbids inline styles); the only classes that survive are
//!   `hl-*` on `span`/`code` and `language-*` on `code`.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::LazyLock;

use pulldown_cmark::{
    html, CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd,
};
use serde::Serialize;
use syntect::html::{ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

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

/// The prefix of every highlighting class (`hl-keyword`, `hl-string`, ...).
const HL_PREFIX: &str = "hl-";

/// How many bytes of code one document may have highlighted; blocks past it are shown plain.
/// Highlighting is regex work per line (about 0.1 s per KiB of Rust in a debug build) and `render`
/// runs when a request is offered, so its cost must stay bounded.
pub const HIGHLIGHT_BUDGET_BYTES: usize = 16 * 1024;

/// syntect's bundled grammars, loaded once ([`warm_up`] does it early, off the broker's path).
static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

/// Loads the grammars on a thread of their own, so the first request with code does not wait.
pub fn warm_up() {
    let spawned = std::thread::Builder::new()
        .name("askdesk-syntaxes".into())
        .spawn(|| LazyLock::force(&SYNTAXES).syntaxes().len());
    if let Err(error) = spawned {
        tracing::warn!(%error, "grammars load on first use");
    }
}

/// A fenced code block being collected for highlighting.
struct Fence<'a> {
    info: CowStr<'a>,
    lang: String,
    syntax: &'static SyntaxReference,
    text: String,
}

/// Renders markdown to sanitized HTML and collects its headings.
pub fn render(markdown: &str) -> Rendered {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS | Options::ENABLE_STRIKETHROUGH;
    let mut outline: Vec<Heading> = Vec::new();
    // The heading being read: its level, anchor and text so far.
    let mut heading: Option<Heading> = None;
    let mut events: Vec<Event<'_>> = Vec::new();
    // The fenced code block being collected, when its language is one syntect knows.
    let mut fence: Option<Fence<'_>> = None;
    let mut budget = HIGHLIGHT_BUDGET_BYTES;
    for event in Parser::new_ext(markdown, options) {
        if let Some(open) = fence.as_mut() {
            match event {
                Event::Text(text) => open.text.push_str(&text),
                Event::End(TagEnd::CodeBlock) => {
                    if let Some(done) = fence.take() {
                        match highlighted_block(&done, &mut budget) {
                            Some(block) => events.push(Event::Html(CowStr::from(block))),
                            None => events.extend([
                                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(done.info))),
                                Event::Text(CowStr::from(done.text)),
                                Event::End(TagEnd::CodeBlock),
                            ]),
                        }
                    }
                }
                // A code block holds only text; anything else is passed through unchanged.
                other => events.push(other),
            }
            continue;
        }
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                match fence_language(&info) {
                    Some((lang, syntax)) => {
                        fence = Some(Fence {
                            lang: lang.to_owned(),
                            syntax,
                            text: String::new(),
                            info,
                        })
                    }
                    None => events.push(Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))),
                }
            }
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

/// The language of a fence's info string (its first word) and its grammar, when syntect has one
/// other than plain text and the name is a safe class suffix.
fn fence_language(info: &str) -> Option<(&str, &'static SyntaxReference)> {
    let lang = info.split_whitespace().next()?;
    let lang = lang.split(',').next()?;
    if !is_class_word(lang) {
        return None;
    }
    let syntaxes: &'static SyntaxSet = &SYNTAXES;
    let syntax = syntaxes.find_syntax_by_token(lang)?;
    (syntax.name != "Plain Text").then_some((lang, syntax))
}

/// `<pre><code class="language-x">` with the code as classed spans, taken from `budget`; `None`
/// (the block is then rendered plain, as pulldown-cmark does) when the block is more than the
/// budget left or the grammar fails on it.
fn highlighted_block(fence: &Fence<'_>, budget: &mut usize) -> Option<String> {
    *budget = budget.checked_sub(fence.text.len())?;
    let spans = highlight(fence.syntax, &fence.text)?;
    Some(format!(
        "<pre><code class=\"language-{}\">{spans}</code></pre>\n",
        fence.lang
    ))
}

fn highlight(syntax: &SyntaxReference, code: &str) -> Option<String> {
    let mut generator = ClassedHTMLGenerator::new_with_class_style(
        syntax,
        &SYNTAXES,
        ClassStyle::SpacedPrefixed { prefix: HL_PREFIX },
    );
    for line in LinesWithEndings::from(code) {
        generator
            .parse_html_for_line_which_includes_newline(line)
            .ok()?;
    }
    Some(generator.finalize())
}

/// Letters, digits and `+#-_.`: what may follow `language-` or `hl-` in a class.
fn is_class_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+#-_.".contains(c))
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
        .add_tag_attributes("span", ["class"])
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

/// Keeps only checkbox inputs, `hl-*` classes on spans and code and `language-*` classes on code;
/// everything else ammonia allowed.
fn filter_attribute<'u>(element: &str, attribute: &str, value: &'u str) -> Option<Cow<'u, str>> {
    match (element, attribute) {
        ("input", "type") => (value == "checkbox").then_some(Cow::Borrowed(value)),
        ("code", "class") => keep_classes(value, &[HL_PREFIX, "language-"]),
        ("span", "class") => keep_classes(value, &[HL_PREFIX]),
        _ => Some(Cow::Borrowed(value)),
    }
}

/// The classes of `value` that start with one of `prefixes` and are safe words; none left drops
/// the attribute.
fn keep_classes<'u>(value: &'u str, prefixes: &[&str]) -> Option<Cow<'u, str>> {
    let kept: Vec<&str> = value
        .split_ascii_whitespace()
        .filter(|class| {
            prefixes
                .iter()
                .any(|prefix| class.strip_prefix(prefix).is_some_and(is_class_word))
        })
        .collect();
    if kept.is_empty() {
        None
    } else if kept.len() == 1 && kept[0] == value {
        Some(Cow::Borrowed(value))
    } else {
        Some(Cow::Owned(kept.join(" ")))
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
                "main",
            ],
            &["style="],
        );
    }

    /// The text of `html` with every tag taken out and the five entities decoded.
    fn text_of(html: &str) -> String {
        let mut text = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => in_tag = false,
                _ if !in_tag => text.push(c),
                _ => {}
            }
        }
        text.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    }

    #[test]
    fn fenced_rust_is_highlighted_with_hl_classes() {
        let code = "fn main() {\n    // greet\n    let n: u32 = 42;\n    if n > 1 {\n        return;\n    }\n    println!(\"hi {n}\");\n}\n";
        let html = render(&format!("```rust\n{code}```\n")).html;
        assert!(
            html.starts_with(r#"<pre><code class="language-rust"><span class="hl-"#),
            "{html}"
        );
        for class in [
            "hl-keyword",
            "hl-comment",
            "hl-constant hl-numeric",
            "hl-string",
            "hl-entity hl-name hl-function",
        ] {
            assert!(html.contains(class), "{html} lacks {class}");
        }
        // The spans only add markup: the text is the code, unchanged.
        assert_eq!(text_of(&html).trim_end(), code.trim_end());
        assert!(!html.contains("style="), "{html}");
    }

    #[test]
    fn unknown_or_absent_languages_stay_plain() {
        check(
            "```no-such-language\nlet x = 1;\n```\n",
            &[r#"<code class="language-no-such-language">let x = 1;"#],
            &["<span"],
        );
        check(
            "```\nlet x = 1;\n```\n",
            &["<pre><code>let x = 1;"],
            &["<span", "class="],
        );
        check(
            "    indented <b>\n",
            &["<pre><code>indented &lt;b&gt;"],
            &["<span"],
        );
    }

    #[test]
    fn code_past_the_highlight_budget_stays_plain() {
        let small = "let a = 1;\n";
        let big = "let b = 2;\n".repeat(HIGHLIGHT_BUDGET_BYTES / 11);
        let html = render(&format!("```rust\n{small}```\n\n```rust\n{big}```\n")).html;
        let blocks: Vec<&str> = html.split("<pre>").skip(1).collect();
        assert_eq!(blocks.len(), 2, "{html}");
        assert!(blocks[0].contains("<span class=\"hl-"), "{}", blocks[0]);
        assert!(
            blocks[1].starts_with(r#"<code class="language-rust">let b = 2;"#),
            "{}",
            &blocks[1][..80]
        );
        assert!(!blocks[1].contains("<span"));
    }

    #[test]
    fn markup_inside_code_blocks_stays_text() {
        let evil = "</code></pre><img src=x onerror=alert(1)><script>alert(2)</script>";
        for lang in ["rust", "html", "js", "", "unknown"] {
            let input = format!("```{lang}\n{evil}\n```\n");
            let html = render(&input).html;
            assert!(
                !html.contains("<img") && !html.contains("<script") && !html.contains("</pre><"),
                "{input:?} -> {html}"
            );
            // Only the block's own elements: every `<` of the code arrives as `&lt;`.
            let tags: HashSet<&str> = html
                .split('<')
                .skip(1)
                .map(|tag| {
                    let name = tag.trim_start_matches('/');
                    &name[..name.find([' ', '>']).unwrap_or(name.len())]
                })
                .collect();
            assert!(
                tags.is_subset(&HashSet::from(["pre", "code", "span"])),
                "{input:?} -> {html}"
            );
            assert_eq!(text_of(&html).trim_end(), evil, "{input:?} -> {html}");
            // The highlighted version is one block, ending where the fence ends.
            assert_eq!(html.matches("<pre>").count(), 1, "{html}");
        }
    }

    #[test]
    fn classes_are_limited_to_hl_and_languages() {
        check(
            r#"<span class="evil hl-keyword">a</span><span class="evil">b</span><span class="hl-">c</span>"#,
            &[
                r#"<span class="hl-keyword">a</span>"#,
                "<span>b</span>",
                "<span>c</span>",
            ],
            &["evil", r#"class="hl-""#],
        );
        check(
            r#"<code class="hl-x language-go bogus">x</code><p class="hl-keyword">p</p><div class="language-x">d</div>"#,
            &[
                r#"<code class="hl-x language-go">x</code>"#,
                "<p>p</p>",
                "<div>d</div>",
            ],
            &["bogus"],
        );
        check(
            r#"<span class="hl-a&quot; onclick=&quot;x()">a</span><span class='hl-"x'>b</span>"#,
            &[],
            &["onclick", "class="],
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
