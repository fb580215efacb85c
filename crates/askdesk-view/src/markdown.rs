//! Markdown of a question's `detail`, rendered to HTML with pulldown-cmark and sanitized with ammonia.
//!
//! The result is the only HTML the page ever inserts with `innerHTML`, so everything that could run
//! script, load a resource or navigate the app is taken out here:
//!
//! - no `script`, `style`, `iframe`, `object`, `svg`, forms or event-handler attributes (ammonia's
//!   allow-list never admits them);
//! - links keep only `http`, `https` and `mailto` URLs, never relative ones, and get
//!   `rel="noopener noreferrer"`; the page opens them only after asking, through the backend;
//! - images are never loaded (the CSP would block remote ones anyway): a markdown image becomes a
//!   link to its URL with its alt text, kept by the link rule above, a raw `<img>` disappears; the
//!   images a page shows come only from a question's `images` (protocol 1.4);
//! - no form controls at all: `input` is not on the allow-list, so raw HTML `<input>` of any type is
//!   removed and a plan cannot draw a box that looks like askdesk's; a task list's boxes are drawn as
//!   `☐`/`☑` glyphs in `task-box` spans;
//! - headings get ids (prefixed `md-`) so the plan pane can show an outline;
//! - every block (heading, paragraph, list item, table row, line of code) carries a `data-block`
//!   key, and [`Rendered::blocks`] lists them with their heading path and text: comments anchor to
//!   them and revisions are compared by them (`plan_diff`); a raw `data-block` in the plan is dropped;
//! - fenced code in a language syntect knows is highlighted here, as `<span>`s with `hl-` classes
//!   (ui/style.css colours them; the CSP forbids inline styles); the only classes that survive are
//!   `hl-*` and `task-*` on `span`, `hl-*` and `language-*` on `code`, and `align-*` on table cells
//!   (a column's alignment, which pulldown-cmark would write as an inline style).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::LazyLock;

use pulldown_cmark::{
    html, Alignment, CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd,
};
use pulldown_cmark_escape::escape_html_body_text;
use serde::{Deserialize, Serialize};
use syntect::html::{line_tokens_to_classed_spans, ClassStyle};
use syntect::parsing::{ParseState, ScopeStack, ScopeStackOp, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

/// Sanitized HTML plus the headings and blocks it contains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rendered {
    pub html: String,
    pub outline: Vec<Heading>,
    /// Every block in document order; each has an element with its key in `html`.
    pub blocks: Vec<Block>,
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

/// A code block being collected: its language (when syntect knows it) and its text.
struct Fence<'a> {
    info: Option<CowStr<'a>>,
    text: String,
}

/// Renders markdown to sanitized HTML and collects its headings and blocks.
pub fn render(markdown: &str) -> Rendered {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS | Options::ENABLE_STRIKETHROUGH;
    let mut outline: Vec<Heading> = Vec::new();
    // The heading being read: its level, anchor and text so far.
    let mut heading: Option<Heading> = None;
    let mut events: Vec<Event<'_>> = Vec::new();
    // The code block being collected.
    let mut fence: Option<Fence<'_>> = None;
    let mut budget = HIGHLIGHT_BUDGET_BYTES;
    let mut anchors = Anchors::default();
    // The current table's column alignments, the kind of cell its current row has (`th` in the
    // header row, `td` below it) and the column of its next cell.
    let mut columns: Vec<Alignment> = Vec::new();
    let mut cell_tag = "th";
    let mut column = 0;
    for event in Parser::new_ext(markdown, options) {
        if let Some(open) = fence.as_mut() {
            match event {
                Event::Text(text) => open.text.push_str(&text),
                Event::End(TagEnd::CodeBlock) => {
                    if let Some(done) = fence.take() {
                        let block = code_block(&done, &mut budget, &mut anchors);
                        events.push(Event::Html(CowStr::from(block)));
                    }
                }
                // A code block holds only text; anything else is dropped.
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                fence = Some(Fence {
                    info: match kind {
                        CodeBlockKind::Fenced(info) => Some(info),
                        CodeBlockKind::Indented => None,
                    },
                    text: String::new(),
                });
            }
            Event::Start(Tag::Heading {
                level,
                classes,
                mut attrs,
                ..
            }) => {
                let anchor = format!("h-{}", outline.len() + 1);
                heading = Some(Heading {
                    level: level_number(level),
                    text: String::new(),
                    anchor: format!("{ID_PREFIX}{anchor}"),
                });
                let key = anchors.heading(outline.len(), level_number(level));
                attrs.push((
                    CowStr::from(BLOCK_ATTRIBUTE),
                    Some(CowStr::from(marked(&key))),
                ));
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
                anchors.close();
                events.push(Event::End(TagEnd::Heading(level)));
            }
            Event::Start(Tag::Paragraph) => match anchors.paragraph() {
                Some(key) => events.push(Event::Html(CowStr::from(format!(
                    "<p {BLOCK_ATTRIBUTE}=\"{}\">",
                    marked(&key)
                )))),
                None => events.push(Event::Start(Tag::Paragraph)),
            },
            Event::End(TagEnd::Paragraph) => {
                if anchors.close_paragraph() {
                    events.push(Event::Html(CowStr::from("</p>\n")));
                } else {
                    events.push(Event::End(TagEnd::Paragraph));
                }
            }
            Event::Start(Tag::List(start)) => {
                anchors.list(start);
                events.push(Event::Start(Tag::List(start)));
            }
            Event::End(TagEnd::List(ordered)) => {
                anchors.lists.pop();
                events.push(Event::End(TagEnd::List(ordered)));
            }
            Event::Start(Tag::Item) => {
                let key = anchors.item();
                events.push(Event::Html(CowStr::from(format!(
                    "\n<li {BLOCK_ATTRIBUTE}=\"{}\">",
                    marked(&key)
                ))));
            }
            Event::End(TagEnd::Item) => {
                anchors.close();
                events.push(Event::End(TagEnd::Item));
            }
            Event::Start(Tag::Table(alignments)) => {
                anchors.table();
                columns.clone_from(&alignments);
                events.push(Event::Start(Tag::Table(alignments)));
            }
            Event::Start(Tag::TableHead) => {
                // The header row is not a block of its own: its text names the columns.
                anchors.open.push(None);
                (cell_tag, column) = ("th", 0);
                events.push(Event::Start(Tag::TableHead));
            }
            Event::End(TagEnd::TableHead) => {
                anchors.open.pop();
                events.push(Event::End(TagEnd::TableHead));
            }
            Event::Start(Tag::TableRow) => {
                (cell_tag, column) = ("td", 0);
                let key = anchors.row();
                events.push(Event::Html(CowStr::from(format!(
                    "<tr {BLOCK_ATTRIBUTE}=\"{}\">",
                    marked(&key)
                ))));
            }
            Event::End(TagEnd::TableRow) => {
                anchors.close();
                events.push(Event::End(TagEnd::TableRow));
            }
            // Cells are written here, their column's alignment as a class: the HTML writer would
            // write it as an inline style, which the sanitizer drops and the page's CSP forbids.
            Event::Start(Tag::TableCell) => {
                anchors.cell();
                let align = match columns.get(column) {
                    Some(Alignment::Left) => r#" class="align-left""#,
                    Some(Alignment::Center) => r#" class="align-center""#,
                    Some(Alignment::Right) => r#" class="align-right""#,
                    _ => "",
                };
                events.push(Event::Html(CowStr::from(format!("<{cell_tag}{align}>"))));
            }
            Event::End(TagEnd::TableCell) => {
                column += 1;
                events.push(Event::Html(CowStr::from(format!("</{cell_tag}>"))));
            }
            // An image is never loaded: it becomes a link to its URL with its alt text (the
            // sanitizer keeps only http, https and mailto links; anything else is its text).
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => events.push(Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            })),
            Event::End(TagEnd::Image) => events.push(Event::End(TagEnd::Link)),
            Event::Text(text) | Event::Code(text) if heading.is_some() => {
                if let Some(current) = heading.as_mut() {
                    current.text.push_str(&text);
                }
                anchors.text(&text);
                events.push(Event::Text(text));
            }
            Event::Text(ref text) => {
                anchors.text(text);
                events.push(event);
            }
            // Inline code keeps its backticks in the block's text, so a quote reads like the plan.
            Event::Code(ref text) => {
                anchors.text(&format!("`{text}`"));
                events.push(event);
            }
            Event::SoftBreak | Event::HardBreak => {
                anchors.text(" ");
                events.push(event);
            }
            // A glyph rather than a disabled `<input>`: no form control reaches the page.
            Event::TaskListMarker(done) => {
                anchors.text(if done { "[x] " } else { "[ ] " });
                events.push(Event::InlineHtml(CowStr::from(if done {
                    r#"<span class="task-box task-done">☑</span> "#
                } else {
                    r#"<span class="task-box">☐</span> "#
                })));
            }
            other => events.push(other),
        }
    }
    let mut raw = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut raw, events.into_iter());
    Rendered {
        html: CLEANER.clean(&raw).to_string(),
        blocks: anchors.finish(&outline),
        outline,
    }
}

/// The attribute that carries a block's key in the rendered HTML.
pub const BLOCK_ATTRIBUTE: &str = "data-block";

/// What kind of block an anchor names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockKind {
    Heading,
    Paragraph,
    Item,
    Row,
    Line,
}

/// One block of a rendered plan: what a comment is anchored to and what a revision is compared by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// The `data-block` value of its element: unique in the document, made of its section and its
    /// place in it (`s3.li2`, `s4.c1.l7`), so edits in other sections do not move it.
    pub key: String,
    pub kind: BlockKind,
    /// Where it is, for people: its heading path and place (`Steps › 3`, `Risks › row 2`).
    pub path: String,
    /// Its text, whitespace collapsed (a code line keeps its indentation).
    pub text: String,
}

/// A per-process secret the renderer puts before every block key it writes. The sanitizer keeps a
/// `data-block` attribute only when it starts with it (and strips it), so raw HTML in a plan cannot
/// forge or duplicate an anchor: the plan's author never sees rendered output.
static BLOCK_SECRET: LazyLock<String> = LazyLock::new(|| {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0x61736b);
    format!("k{:016x}-", hasher.finish())
});

fn marked(key: &str) -> String {
    format!("{}{key}", *BLOCK_SECRET)
}

/// Collects blocks while the renderer walks the document, and names them.
#[derive(Default)]
struct Anchors {
    blocks: Vec<Pending>,
    /// The blocks whose text is being read, innermost last; `None` reads nothing (a header row).
    open: Vec<Option<usize>>,
    /// Whether each open paragraph was written as an anchored `<p>` (and so must be closed as one).
    paragraphs: Vec<bool>,
    /// The open lists: the number of their next item, and the label of the item they sit in.
    lists: Vec<ListState>,
    /// The heading indices on the path to here, with their levels.
    headings: Vec<(u8, usize)>,
    /// The current section (0 before the first heading) and its counters.
    section: usize,
    counts: SectionCounts,
    /// Whether a table cell was already read in the current row (cells are joined with ` | `).
    cell_read: bool,
}

struct Pending {
    key: String,
    kind: BlockKind,
    headings: Vec<usize>,
    place: Option<String>,
    text: String,
}

struct ListState {
    next: u64,
    parent: Option<String>,
}

#[derive(Default)]
struct SectionCounts {
    paragraphs: usize,
    items: usize,
    tables: usize,
    rows: usize,
    codes: usize,
}

impl Anchors {
    fn push(&mut self, key: String, kind: BlockKind, place: Option<String>) -> String {
        self.open.push(Some(self.blocks.len()));
        self.blocks.push(Pending {
            key: key.clone(),
            kind,
            headings: self.headings.iter().map(|(_, index)| *index).collect(),
            place,
            text: String::new(),
        });
        key
    }

    fn heading(&mut self, index: usize, level: u8) -> String {
        self.headings.retain(|(open, _)| *open < level);
        self.headings.push((level, index));
        self.section = index + 1;
        self.counts = SectionCounts::default();
        self.push(format!("s{}", self.section), BlockKind::Heading, None)
    }

    /// A paragraph outside list items and tables is a block; inside one it is part of it.
    fn paragraph(&mut self) -> Option<String> {
        if !self.open.is_empty() {
            self.paragraphs.push(false);
            return None;
        }
        self.paragraphs.push(true);
        self.counts.paragraphs += 1;
        let n = self.counts.paragraphs;
        Some(self.push(
            format!("s{}.p{n}", self.section),
            BlockKind::Paragraph,
            Some(format!("paragraph {n}")),
        ))
    }

    fn close_paragraph(&mut self) -> bool {
        let anchored = self.paragraphs.pop().unwrap_or(false);
        if anchored {
            self.close();
        }
        anchored
    }

    fn list(&mut self, start: Option<u64>) {
        let parent = self
            .open
            .last()
            .copied()
            .flatten()
            .filter(|&i| self.blocks[i].kind == BlockKind::Item)
            .and_then(|i| self.blocks[i].place.clone());
        self.lists.push(ListState {
            next: start.unwrap_or(1),
            parent,
        });
    }

    fn item(&mut self) -> String {
        let number = match self.lists.last_mut() {
            Some(list) => {
                let n = list.next;
                list.next += 1;
                match &list.parent {
                    Some(parent) => format!("{parent}.{n}"),
                    None => n.to_string(),
                }
            }
            None => "1".to_owned(),
        };
        self.counts.items += 1;
        let key = format!("s{}.li{}", self.section, self.counts.items);
        self.push(key, BlockKind::Item, Some(number))
    }

    fn table(&mut self) {
        self.counts.tables += 1;
        self.counts.rows = 0;
    }

    fn row(&mut self) -> String {
        self.counts.rows += 1;
        self.cell_read = false;
        let (table, row) = (self.counts.tables, self.counts.rows);
        let place = if table > 1 {
            format!("table {table} row {row}")
        } else {
            format!("row {row}")
        };
        self.push(
            format!("s{}.t{table}r{row}", self.section),
            BlockKind::Row,
            Some(place),
        )
    }

    fn cell(&mut self) {
        if self.cell_read {
            self.text(" | ");
        }
        self.cell_read = true;
    }

    /// The keys of a code block's lines, one per line of `code`.
    fn code_lines(&mut self, code: &str) -> Vec<String> {
        self.counts.codes += 1;
        let block = self.counts.codes;
        code.lines()
            .enumerate()
            .map(|(i, line)| {
                let place = if block > 1 {
                    format!("code {block} line {}", i + 1)
                } else {
                    format!("line {}", i + 1)
                };
                let key = self.push(
                    format!("s{}.c{block}.l{}", self.section, i + 1),
                    BlockKind::Line,
                    Some(place),
                );
                self.text(line.trim_end());
                self.close();
                key
            })
            .collect()
    }

    fn text(&mut self, text: &str) {
        if let Some(Some(index)) = self.open.last() {
            self.blocks[*index].text.push_str(text);
        }
    }

    fn close(&mut self) {
        self.open.pop();
    }

    /// The blocks in document order with their paths. A document with one level-1 heading uses it
    /// as its title: it is left out of the paths (`Steps › 3`, not `Plan › Steps › 3`).
    fn finish(self, outline: &[Heading]) -> Vec<Block> {
        let titled = outline.iter().filter(|h| h.level == 1).count() == 1;
        self.blocks
            .into_iter()
            .map(|pending| {
                // The title itself keeps its own name as its path.
                let is_title = pending.headings.len() == 1 && pending.kind == BlockKind::Heading;
                let mut parts: Vec<&str> = pending
                    .headings
                    .iter()
                    .filter_map(|&i| outline.get(i))
                    .filter(|h| !(titled && h.level == 1) || is_title)
                    .map(|h| h.text.as_str())
                    .collect();
                if let Some(place) = &pending.place {
                    parts.push(place);
                }
                let text = if pending.kind == BlockKind::Line {
                    pending.text
                } else {
                    pending
                        .text
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                Block {
                    key: pending.key,
                    kind: pending.kind,
                    path: parts.join(" › "),
                    text,
                }
            })
            .collect()
    }
}

/// `<pre><code>` with one anchored `<span>` per line; highlighted (taken from `budget`) when the
/// language is one syntect knows and the block fits in what is left of the budget.
fn code_block(fence: &Fence<'_>, budget: &mut usize, anchors: &mut Anchors) -> String {
    let language = fence.info.as_deref().and_then(fence_language);
    let highlighted = language.and_then(|(_, syntax)| {
        let left = budget.checked_sub(fence.text.len())?;
        let spans = highlight(syntax, &fence.text)?;
        *budget = left;
        Some(spans)
    });
    let lines = highlighted.unwrap_or_else(|| {
        fence
            .text
            .lines()
            .map(|line| {
                let mut escaped = String::with_capacity(line.len() + 1);
                escape_html_body_text(&mut escaped, line).expect("writing to a String");
                escaped.push('\n');
                escaped
            })
            .collect()
    });
    let keys = anchors.code_lines(&fence.text);
    let class = match (language, fence.info.as_deref()) {
        (Some((lang, _)), _) => format!(" class=\"language-{lang}\""),
        (None, Some(info)) => match info.split_whitespace().next() {
            Some(word) if is_class_word(word) => format!(" class=\"language-{word}\""),
            _ => String::new(),
        },
        (None, None) => String::new(),
    };
    let mut out = format!("<pre><code{class}>");
    for (key, line) in keys.iter().zip(lines) {
        out.push_str(&format!("<span {BLOCK_ATTRIBUTE}=\"{}\">", marked(key)));
        out.push_str(&line);
        out.push_str("</span>");
    }
    out.push_str("</code></pre>\n");
    out
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

/// `code` highlighted line by line, each line's HTML opening the spans of the scopes it starts in
/// and closing every span it leaves open, so each line can be wrapped in an element of its own.
/// `None` when syntect fails on it (the block is then shown plain).
fn highlight(syntax: &SyntaxReference, code: &str) -> Option<Vec<String>> {
    let style = ClassStyle::SpacedPrefixed { prefix: HL_PREFIX };
    let mut parser = ParseState::new(syntax);
    // The scopes open where the next line starts; they carry over from line to line.
    let mut scopes = ScopeStack::new();
    LinesWithEndings::from(code)
        .map(|line| {
            let reopen: Vec<(usize, ScopeStackOp)> = scopes
                .as_slice()
                .iter()
                .map(|scope| (0, ScopeStackOp::Push(*scope)))
                .collect();
            let (mut html, _) =
                line_tokens_to_classed_spans("", &reopen, style, &mut ScopeStack::new()).ok()?;
            let ops = parser.parse_line(line, &SYNTAXES).ok()?;
            let (spans, delta) =
                line_tokens_to_classed_spans(line, &ops, style, &mut scopes).ok()?;
            html.push_str(&spans);
            let open = usize::try_from(reopen.len() as isize + delta).ok()?;
            html.push_str(&"</span>".repeat(open));
            Some(html)
        })
        .collect()
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
        .add_tag_attributes("code", ["class"])
        .add_tag_attributes("span", ["class", BLOCK_ATTRIBUTE])
        .add_tag_attributes("p", [BLOCK_ATTRIBUTE])
        .add_tag_attributes("li", [BLOCK_ATTRIBUTE])
        .add_tag_attributes("tr", [BLOCK_ATTRIBUTE])
        .add_tag_attributes("th", ["class"])
        .add_tag_attributes("td", ["class"])
        .url_schemes(HashSet::from(["http", "https", "mailto"]))
        .url_relative(ammonia::UrlRelative::Deny)
        .link_rel(Some("noopener noreferrer"))
        .id_prefix(Some(ID_PREFIX))
        .attribute_filter(filter_attribute);
    for heading in ["h1", "h2", "h3", "h4", "h5", "h6"] {
        builder.add_tag_attributes(heading, ["id", BLOCK_ATTRIBUTE]);
    }
    builder
});

/// Keeps only `hl-*` and `task-*` classes on spans, `hl-*` and `language-*` classes on code,
/// `align-*` classes on table cells and block keys the renderer wrote; everything else ammonia
/// allowed.
fn filter_attribute<'u>(element: &str, attribute: &str, value: &'u str) -> Option<Cow<'u, str>> {
    match (element, attribute) {
        ("code", "class") => keep_classes(value, &[HL_PREFIX, "language-"]),
        ("span", "class") => keep_classes(value, &[HL_PREFIX, "task-"]),
        ("th" | "td", "class") => keep_classes(value, &["align-"]),
        (_, BLOCK_ATTRIBUTE) => value
            .strip_prefix(BLOCK_SECRET.as_str())
            .filter(|key| is_class_word(key))
            .map(|key| Cow::Owned(key.to_owned())),
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
    fn images_become_links_and_are_never_loaded() {
        check(
            "![tracking pixel](https://evil.example/p.png)",
            &[
                r#"<a href="https://evil.example/p.png" rel="noopener noreferrer">tracking pixel</a>"#,
            ],
            &["<img"],
        );
        check("![local](shot.png)", &["local"], &["<img", "shot.png"]);
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
                r#"<span class="task-box task-done">☑</span> read"#,
                r#"<span class="task-box">☐</span> write"#,
                r#"<code class="language-rust">"#,
                "main",
            ],
            &["style=", "<input"],
        );
    }

    #[test]
    fn table_alignment_becomes_a_class() {
        check(
            "| a | b | c | d |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |\n",
            &[
                r#"<th class="align-left">a</th>"#,
                r#"<th class="align-center">b</th>"#,
                r#"<th class="align-right">c</th>"#,
                "<th>d</th>",
                r#"<td class="align-center">2</td>"#,
                "<td>4</td>",
            ],
            &["style="],
        );
        // Every row starts again at the first column.
        let html = render("| a | b |\n|--:|---|\n| 1 | 2 |\n| 3 | 4 |\n").html;
        assert_eq!(html.matches(r#"class="align-right""#).count(), 3, "{html}");
        assert!(
            html.contains(r#"<td class="align-right">3</td><td>4</td>"#),
            "{html}"
        );
        // A raw cell cannot bring a class of its own.
        check(
            r#"<table><tr><td class="hidden align-right">x</td></tr></table>"#,
            &[r#"<td class="align-right">x</td>"#],
            &["hidden"],
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
            html.starts_with(
                r#"<pre><code class="language-rust"><span data-block="s0.c1.l1"><span class="hl-"#
            ),
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
            &[r#"<code class="language-no-such-language"><span data-block="s0.c1.l1">let x = 1;"#],
            &["hl-"],
        );
        check(
            "```\nlet x = 1;\n```\n",
            &[r#"<pre><code><span data-block="s0.c1.l1">let x = 1;"#],
            &["hl-", "class="],
        );
        check(
            "    indented <b>\n",
            &[r#"<pre><code><span data-block="s0.c1.l1">indented &lt;b&gt;"#],
            &["hl-"],
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
            blocks[1].starts_with(
                r#"<code class="language-rust"><span data-block="s0.c2.l1">let b = 2;"#
            ),
            "{}",
            &blocks[1][..80]
        );
        assert!(!blocks[1].contains("hl-"));
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
    fn raw_inputs_of_any_type_are_removed() {
        for raw in [
            r#"<input type="text" value="Password">"#,
            r#"<input type="password">"#,
            r#"<INPUT TYPE=checkbox checked>"#,
            r#"<input>"#,
            r#"<input/>"#,
            r#"<div><input type="submit" value="Approve"></div>"#,
            r#"Inline <input type="text" placeholder="name"> box"#,
            r#"- [ ] task <input type="text">"#,
        ] {
            let html = render(raw).html;
            assert!(
                !html.to_ascii_lowercase().contains("<input"),
                "{raw:?} -> {html}"
            );
            assert_eq!(
                html.matches(r#"<span class="task-box">☐</span>"#).count(),
                usize::from(raw.starts_with("- [ ]")),
                "{raw:?} -> {html}"
            );
            assert!(!html.to_ascii_lowercase().contains("placeholder"), "{html}");
            assert!(!html.contains("value="), "{html}");
        }
    }

    #[test]
    fn task_boxes_are_glyphs_and_no_input_reaches_the_page() {
        let html = render("- [x] done\n- [ ] open\n\n<input type=\"checkbox\" checked>\n").html;
        assert!(!html.contains("<input"), "{html}");
        assert!(!html.contains("checked"), "{html}");
        assert!(
            html.contains(r#"<span class="task-box task-done">☑</span> done"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<span class="task-box">☐</span> open"#),
            "{html}"
        );
        // A loose list puts the box inside the item's paragraph; it is drawn the same.
        let loose = render("- [x] done\n\n- [ ] open\n").html;
        assert_eq!(loose.matches("class=\"task-box").count(), 2, "{loose}");
    }

    /// (key, kind, path, text) of every block of `markdown`, after checking that each key is on
    /// exactly one element of the HTML.
    fn blocks_of(markdown: &str) -> Vec<(String, BlockKind, String, String)> {
        let rendered = render(markdown);
        for block in &rendered.blocks {
            let attribute = format!("{BLOCK_ATTRIBUTE}=\"{}\"", block.key);
            assert_eq!(
                rendered.html.matches(&attribute).count(),
                1,
                "{attribute} in {}",
                rendered.html
            );
        }
        assert_eq!(
            rendered.html.matches(BLOCK_ATTRIBUTE).count(),
            rendered.blocks.len(),
            "{}",
            rendered.html
        );
        rendered
            .blocks
            .into_iter()
            .map(|b| (b.key, b.kind, b.path, b.text))
            .collect()
    }

    fn block(
        key: &str,
        kind: BlockKind,
        path: &str,
        text: &str,
    ) -> (String, BlockKind, String, String) {
        (key.into(), kind, path.into(), text.into())
    }

    #[test]
    fn every_block_is_anchored_with_its_heading_path() {
        use BlockKind::*;
        let plan = "# Plan\n\nWhy we do it.\n\n## Steps\n\n3. Read *the* journal\n4. Write\n   - the schema\n   - the importer\n\n## Schema\n\n```sql\nCREATE TABLE t (\n  id INTEGER\n);\n```\n\n### Risks\n\n| Risk | Fix |\n|---|---|\n| torn | `skip` |\n| - [ ] size | accept |\n\n- [x] checked\n";
        assert_eq!(
            blocks_of(plan),
            vec![
                block("s1", Heading, "Plan", "Plan"),
                block("s1.p1", Paragraph, "paragraph 1", "Why we do it."),
                block("s2", Heading, "Steps", "Steps"),
                block("s2.li1", Item, "Steps › 3", "Read the journal"),
                block("s2.li2", Item, "Steps › 4", "Write"),
                block("s2.li3", Item, "Steps › 4.1", "the schema"),
                block("s2.li4", Item, "Steps › 4.2", "the importer"),
                block("s3", Heading, "Schema", "Schema"),
                block("s3.c1.l1", Line, "Schema › line 1", "CREATE TABLE t ("),
                block("s3.c1.l2", Line, "Schema › line 2", "  id INTEGER"),
                block("s3.c1.l3", Line, "Schema › line 3", ");"),
                block("s4", Heading, "Schema › Risks", "Risks"),
                block("s4.t1r1", Row, "Schema › Risks › row 1", "torn | `skip`"),
                block(
                    "s4.t1r2",
                    Row,
                    "Schema › Risks › row 2",
                    "- [ ] size | accept"
                ),
                block("s4.li1", Item, "Schema › Risks › 1", "[x] checked"),
            ]
        );
    }

    #[test]
    fn paths_keep_every_level_when_there_is_no_single_title() {
        use BlockKind::*;
        assert_eq!(
            blocks_of("# A\n\n- x\n\n# B\n\ntext\n\n> quoted\n"),
            vec![
                block("s1", Heading, "A", "A"),
                block("s1.li1", Item, "A › 1", "x"),
                block("s2", Heading, "B", "B"),
                block("s2.p1", Paragraph, "B › paragraph 1", "text"),
                block("s2.p2", Paragraph, "B › paragraph 2", "quoted"),
            ]
        );
    }

    #[test]
    fn raw_block_keys_cannot_be_forged() {
        let html =
            render("<p data-block=\"s1\">forged</p>\n\n<span data-block=\"s0.p1\">x</span> real\n")
                .html;
        assert_eq!(html.matches("data-block").count(), 1, "{html}");
        assert!(
            html.contains(r#"<p data-block="s0.p1"><span>x</span> real</p>"#),
            "{html}"
        );
    }

    #[test]
    fn highlighted_lines_each_close_their_spans() {
        let code = "/* one\n   two */\nfn x() {}\n\n";
        let html = render(&format!("```rust\n{code}```\n")).html;
        let lines: Vec<&str> = html.split("<span data-block=").skip(1).collect();
        assert_eq!(lines.len(), 4, "{html}");
        for line in &lines {
            let line = line.trim_end_matches("</code></pre>\n");
            assert_eq!(
                line.matches("<span").count() + 1,
                line.matches("</span>").count(),
                "{line}"
            );
        }
        // The comment's second line reopens the comment's span.
        assert!(lines[1].contains("hl-comment"), "{}", lines[1]);
        // The text is the code, unchanged (plus the newline after `</pre>`).
        assert_eq!(text_of(&html), format!("{code}\n"));
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
            rendered
                .html
                .contains(r#"<h1 id="md-h-1" data-block="s1">Goal</h1>"#),
            "{}",
            rendered.html
        );
        assert!(
            rendered
                .html
                .contains(r#"<h3 id="md-h-3" data-block="s3">Detail</h3>"#),
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
