//! What a tool call will do, as the markdown `detail` of its approval question: the command in a
//! fenced block, an edit as a unified diff, the URL, or an MCP tool's arguments.

use serde_json::{Map, Value};

/// The text of one tool approval question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub question: String,
    pub header: String,
    pub detail: String,
}

/// The most bytes of one shown block (a command, a diff, a file): a longer one is cut, with a
/// note, so the question stays under the broker's per-field limit.
const BLOCK_LIMIT: usize = 96 * 1024;

/// Describes a call of `tool` with `input` for the human.
pub fn describe(tool: &str, input: &Map<String, Value>) -> Shown {
    let text = |key: &str| input.get(key).and_then(Value::as_str);
    let mut parts: Vec<Part> = Vec::new();
    let mut question = format!("Allow {tool}?");
    let mut header = tool.to_owned();
    match tool {
        "Bash" | "NetworkAccess" | "shell" | "exec_command" => {
            let description = text("description").filter(|d| !d.trim().is_empty());
            if let Some(domain) = description
                .and_then(|d| d.strip_prefix("network-access "))
                .filter(|domain| !domain.trim().is_empty())
            {
                question = format!("Allow network access to {}?", domain.trim());
                header = "Network access".into();
            } else if let Some(description) = description {
                parts.push(Part::Text(description.to_owned()));
            }
            match input.get("command") {
                Some(Value::String(command)) => parts.push(Part::block("sh", command)),
                Some(Value::Array(argv)) => match shell_command(argv) {
                    Some(command) => parts.push(Part::block("sh", command)),
                    None => parts.push(json_block(input)),
                },
                _ => parts.push(json_block(input)),
            }
        }
        "Edit" => {
            let path = text("file_path").unwrap_or("?");
            let mut intro = format!("Edit {}", inline_code(path));
            if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                intro.push_str(" (every occurrence)");
            }
            parts.push(Part::Text(intro));
            parts.push(Part::block(
                "diff",
                unified_diff(
                    path,
                    text("old_string").unwrap_or(""),
                    text("new_string").unwrap_or(""),
                ),
            ));
        }
        "MultiEdit" => {
            let path = text("file_path").unwrap_or("?");
            let edits = input.get("edits").and_then(Value::as_array);
            let count = edits.map_or(0, Vec::len);
            parts.push(Part::Text(format!(
                "Edit {} ({count} change{})",
                inline_code(path),
                if count == 1 { "" } else { "s" }
            )));
            for edit in edits.into_iter().flatten() {
                let old = edit.get("old_string").and_then(Value::as_str).unwrap_or("");
                let new = edit.get("new_string").and_then(Value::as_str).unwrap_or("");
                parts.push(Part::block("diff", unified_diff(path, old, new)));
            }
        }
        "Write" => {
            let path = text("file_path").unwrap_or("?");
            parts.push(Part::Text(format!("Write {}", inline_code(path))));
            parts.push(Part::block(language(path), text("content").unwrap_or("")));
        }
        "NotebookEdit" => {
            let path = text("notebook_path").unwrap_or("?");
            let mode = text("edit_mode").unwrap_or("replace");
            let cell = text("cell_id").map(|c| format!(", cell {}", inline_code(c)));
            parts.push(Part::Text(format!(
                "Notebook {} ({mode}{})",
                inline_code(path),
                cell.unwrap_or_default()
            )));
            let lang = if text("cell_type") == Some("markdown") {
                "markdown"
            } else {
                "python"
            };
            parts.push(Part::block(lang, text("new_source").unwrap_or("")));
        }
        "WebFetch" => {
            question = "Allow WebFetch?".into();
            parts.push(Part::Text(format!(
                "Fetch {}",
                inline_code(text("url").unwrap_or("?"))
            )));
            if let Some(prompt) = text("prompt") {
                parts.push(Part::Text(format!("To find out: {prompt}")));
            }
        }
        "WebSearch" => {
            parts.push(Part::Text(format!(
                "Search the web for {}",
                inline_code(text("query").unwrap_or("?"))
            )));
        }
        _ => {
            if let Some((server, name)) = tool
                .strip_prefix("mcp__")
                .and_then(|rest| rest.split_once("__"))
            {
                question = format!("Allow the MCP tool {name} of {server}?");
                header = format!("MCP: {server}");
                parts.push(Part::Text(format!(
                    "Call {} on the MCP server {} with:",
                    inline_code(name),
                    inline_code(server)
                )));
            }
            parts.push(json_block(input));
        }
    }
    Shown {
        question,
        header,
        detail: assemble(parts),
    }
}

/// The most bytes of a tool approval's whole detail (or of a question's option previews): under the broker's default per-field limit
/// (256 KiB), with room for the notes that say what was cut.
const DETAIL_LIMIT: usize = 240 * 1024;

/// One part of a tool approval's detail: words, or a block shown fenced.
enum Part {
    Text(String),
    Block { lang: String, body: String },
}

impl Part {
    fn block(lang: &str, body: impl Into<String>) -> Part {
        Part::Block {
            lang: lang.to_owned(),
            body: body.into(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Part::Text(text) => text.len(),
            Part::Block { body, .. } => body.len(),
        }
    }
}

/// The parts as markdown, each block at most [`BLOCK_LIMIT`] and all of them together within
/// [`DETAIL_LIMIT`]: when they are longer, the longest are cut to one share of what is left, so
/// every part is seen (three long diffs of one edit are cut alike, a short intro not at all).
fn assemble(parts: Vec<Part>) -> String {
    join_within(parts, "\n\n")
}

/// `AskUserQuestion`'s option previews as one detail, a rule between them, within
/// [`DETAIL_LIMIT`] like a tool's parts.
pub fn previews(sections: Vec<String>) -> String {
    join_within(
        sections.into_iter().map(Part::Text).collect(),
        "\n\n---\n\n",
    )
}

/// The parts joined by `separator`, the longest cut to one share of [`DETAIL_LIMIT`].
fn join_within(parts: Vec<Part>, separator: &str) -> String {
    let lens: Vec<usize> = parts.iter().map(Part::len).collect();
    let share = share(&lens, DETAIL_LIMIT.saturating_sub(parts.len() * 64));
    parts
        .into_iter()
        .map(|part| match part {
            Part::Text(text) => cut(&text, share).into_owned(),
            Part::Block { lang, body } => fence(&lang, &body, share.min(BLOCK_LIMIT)),
        })
        .collect::<Vec<_>>()
        .join(separator)
}

/// The largest cap such that the parts, each cut to it, fit in `budget` bytes.
fn share(lens: &[usize], budget: usize) -> usize {
    let mut sorted = lens.to_vec();
    sorted.sort_unstable();
    let mut left = budget;
    for (i, &len) in sorted.iter().enumerate() {
        let even = left / (sorted.len() - i);
        if len > even {
            return even;
        }
        left -= len;
    }
    usize::MAX
}

/// What "Always allow in this session" will add, from the client's own suggestions.
pub fn suggestions(suggestions: &[Value]) -> String {
    let mut said: Vec<String> = Vec::new();
    for suggestion in suggestions {
        let field = |key: &str| suggestion.get(key).and_then(Value::as_str);
        match field("type") {
            Some("addRules") | Some("replaceRules") => {
                for rule in suggestion
                    .get("rules")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let tool = rule.get("toolName").and_then(Value::as_str).unwrap_or("?");
                    said.push(match rule.get("ruleContent").and_then(Value::as_str) {
                        Some(content) => format!("{tool}({content})"),
                        None => tool.to_owned(),
                    });
                }
            }
            Some("setMode") => said.push(format!("{} mode", field("mode").unwrap_or("?"))),
            Some("addDirectories") => {
                let dirs: Vec<&str> = suggestion
                    .get("directories")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                said.push(format!("access to {}", dirs.join(", ")));
            }
            _ => {}
        }
    }
    if said.is_empty() {
        "Allow it and what the agent suggested, until this session ends".into()
    } else {
        format!("Allow {} until this session ends", said.join(", "))
    }
}

/// A line diff of `old` into `new` as one unified hunk over the whole snippet.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut out = format!(
        "--- {path}\n+++ {path}\n@@ -1,{} +1,{} @@\n",
        a.len(),
        b.len()
    );
    for (mark, line) in line_ops(&a, &b) {
        out.push(mark);
        out.push_str(line);
        out.push('\n');
    }
    out.pop();
    out
}

/// The edit script from `a` to `b` (' ' kept, '-' removed, '+' added), by longest common
/// subsequence; inputs too large for the table are shown as all removed, then all added.
fn line_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(char, &'a str)> {
    const TABLE_LIMIT: usize = 4_000_000;
    if a.len().saturating_mul(b.len()) > TABLE_LIMIT {
        return a
            .iter()
            .map(|l| ('-', *l))
            .chain(b.iter().map(|l| ('+', *l)))
            .collect();
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let width = b.len() + 1;
    let mut lcs = vec![0u32; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i * width + j] = if a[i] == b[j] {
                lcs[(i + 1) * width + j + 1] + 1
            } else {
                lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(a.len() + b.len());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < a.len()
            && (j == b.len() || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])
        {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    // Show removals before additions within each changed run, as diff tools do.
    let mut start = 0;
    while start < ops.len() {
        if ops[start].0 == ' ' {
            start += 1;
            continue;
        }
        let end = ops[start..]
            .iter()
            .position(|op| op.0 == ' ')
            .map_or(ops.len(), |n| start + n);
        ops[start..end].sort_by_key(|op| op.0 != '-');
        start = end;
    }
    ops
}

/// An argument list as the command a shell would read back (`rm -rf 'my dir'`), so the human sees
/// the arguments it really has; `None` when a word is not a string. Only a NUL byte cannot be
/// quoted: such a list is shown as the list it is.
pub fn shell_command(argv: &[Value]) -> Option<String> {
    let words: Vec<&str> = argv.iter().map(Value::as_str).collect::<Option<_>>()?;
    Some(shlex::try_join(words.iter().copied()).unwrap_or_else(|_| format!("{words:?}")))
}

/// `body` in a fenced code block long enough that no backtick run inside closes it.
/// `body` fenced, cut to `limit` bytes with a note.
fn fence(lang: &str, body: &str, limit: usize) -> String {
    let body = cut(body, limit);
    let ticks = "`".repeat(longest_backtick_run(&body).max(2) + 1);
    format!("{ticks}{lang}\n{body}\n{ticks}")
}

/// `text` as inline code.
pub fn inline_code(text: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// A tool's arguments as one JSON block within [`BLOCK_LIMIT`]: each argument's value gets a
/// share of it, a longer one is cut (shown as a string ending in the note), so a short argument
/// (a path) is never hidden behind a long one (a file's content).
fn json_block(input: &Map<String, Value>) -> Part {
    let sizes: Vec<usize> = input
        .values()
        .map(|value| serde_json::to_string(value).map_or(0, |text| text.len()))
        .collect();
    let mut budget = BLOCK_LIMIT.saturating_sub(64 * (input.len() + 1));
    loop {
        let cap = share(&sizes, budget);
        let shown: Map<String, Value> = input
            .iter()
            .zip(&sizes)
            .map(|((key, value), &size)| {
                let value = if size <= cap {
                    value.clone()
                } else {
                    let text = match value {
                        Value::String(text) => text.clone(),
                        other => serde_json::to_string(other).expect("JSON serializes"),
                    };
                    Value::String(cut(&text, cap).into_owned())
                };
                (key.clone(), value)
            })
            .collect();
        let text = serde_json::to_string_pretty(&shown).expect("JSON serializes");
        // Escapes and indentation can make the block longer than its values: cut deeper then.
        if text.len() <= BLOCK_LIMIT || budget < 1024 {
            return Part::block("json", text);
        }
        budget /= 2;
    }
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

fn cut(body: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    if body.len() <= limit {
        return body.into();
    }
    let mut end = limit;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… ({} more bytes not shown)",
        &body[..end],
        body.len() - end
    )
    .into()
}

/// The fence language for a file, from its extension (the highlighter knows these tokens).
fn language(path: &str) -> &str {
    std::path::Path::new(path)
        .extension()
        .and_then(|ext| ext.to_str())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(tool: &str, input: Value) -> Shown {
        let Value::Object(input) = input else {
            unreachable!()
        };
        describe(tool, &input)
    }

    #[test]
    fn bash_shows_the_command_fenced() {
        let s = shown(
            "Bash",
            json!({ "command": "rm -rf target", "description": "Clean the build" }),
        );
        assert_eq!(s.question, "Allow Bash?");
        assert_eq!(s.detail, "Clean the build\n\n```sh\nrm -rf target\n```");
        let s = shown("Bash", json!({ "command": "echo ```" }));
        assert_eq!(s.detail, "````sh\necho ```\n````");
    }

    #[test]
    fn codex_network_approvals_name_the_domain() {
        let s = shown(
            "Bash",
            json!({ "command": "curl https://example.com", "description": "network-access example.com" }),
        );
        assert_eq!(s.question, "Allow network access to example.com?");
        assert_eq!(s.detail, "```sh\ncurl https://example.com\n```");
        // No domain named: an ordinary command approval.
        let s = shown(
            "Bash",
            json!({ "command": "curl x", "description": "network-access " }),
        );
        assert_eq!(s.question, "Allow Bash?");
    }

    #[test]
    fn argument_lists_show_their_quoting() {
        let s = shown(
            "shell",
            json!({ "command": ["rm", "-rf", "my dir", "it's"] }),
        );
        assert_eq!(s.detail, "```sh\nrm -rf 'my dir' \"it's\"\n```");
        // A word that is not text: the input as it is, not a command missing a word.
        let s = shown("shell", json!({ "command": ["rm", 7] }));
        assert!(s.detail.contains("```json"), "{}", s.detail);
    }

    #[test]
    fn edits_are_unified_diffs() {
        let s = shown(
            "Edit",
            json!({ "file_path": "src/lib.rs", "old_string": "a\nb\nc", "new_string": "a\nB\nc\nd" }),
        );
        assert_eq!(
            s.detail,
            "Edit `src/lib.rs`\n\n```diff\n--- src/lib.rs\n+++ src/lib.rs\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n```"
        );
        assert_eq!(
            unified_diff("f", "x\ny", "z"),
            "--- f\n+++ f\n@@ -1,2 +1,1 @@\n-x\n-y\n+z"
        );
    }

    #[test]
    fn mcp_tools_show_their_arguments() {
        let s = shown(
            "mcp__github__create_issue",
            json!({ "title": "Bug", "labels": ["x"] }),
        );
        assert_eq!(s.question, "Allow the MCP tool create_issue of github?");
        assert_eq!(s.header, "MCP: github");
        assert!(
            s.detail.ends_with(
                "```json\n{\n  \"labels\": [\n    \"x\"\n  ],\n  \"title\": \"Bug\"\n}\n```"
            ),
            "{}",
            s.detail
        );
    }

    #[test]
    fn writes_and_fetches() {
        let s = shown(
            "Write",
            json!({ "file_path": "/tmp/a.py", "content": "print(1)" }),
        );
        assert_eq!(s.detail, "Write `/tmp/a.py`\n\n```py\nprint(1)\n```");
        let s = shown(
            "WebFetch",
            json!({ "url": "https://example.com", "prompt": "the title" }),
        );
        assert_eq!(
            s.detail,
            "Fetch `https://example.com`\n\nTo find out: the title"
        );
    }

    #[test]
    fn long_blocks_are_cut_with_a_note() {
        let s = shown(
            "Write",
            json!({ "file_path": "a", "content": "x".repeat(BLOCK_LIMIT + 10) }),
        );
        assert!(
            s.detail.starts_with("Write `a`\n\n```\n"),
            "{}",
            &s.detail[..20]
        );
        assert!(s.detail.ends_with("\n… (10 more bytes not shown)\n```"));
    }

    /// However many long parts a call has, the detail stays under the broker's per-field limit
    /// (256 KiB), each long part cut alike with its note, a short one whole.
    #[test]
    fn the_whole_detail_stays_under_the_field_limit() {
        let big = |n: usize| "y".repeat(n);
        let edit = |n| json!({ "old_string": "", "new_string": big(n) });
        let cases = [
            (
                "MultiEdit",
                json!({ "file_path": "f.rs", "edits": [edit(90_000), edit(90_000), edit(90_000), edit(10)] }),
                3,
            ),
            (
                "Bash",
                json!({ "command": big(200_000), "description": big(300_000) }),
                2,
            ),
            (
                "mcp__srv__tool",
                json!({ "a": big(200_000), "b": big(200_000) }),
                2,
            ),
        ];
        for (tool, input, notes) in cases {
            let s = shown(tool, input);
            assert!(s.detail.len() <= 256 * 1024, "{tool}: {}", s.detail.len());
            assert_eq!(
                s.detail.matches("more bytes not shown").count(),
                notes,
                "{tool}"
            );
        }
        // A tool's short argument is shown whole beside a long one, whatever the keys' order.
        let s = shown(
            "mcp__filesystem__write_file",
            json!({ "path": "/home/dev/.ssh/authorized_keys", "content": "#".repeat(120_000), "mode": [1, 2] }),
        );
        assert!(
            s.detail
                .contains("\"path\": \"/home/dev/.ssh/authorized_keys\""),
            "{}",
            &s.detail[..200]
        );
        assert!(
            s.detail.contains("\"mode\": [\n"),
            "a short value keeps its shape"
        );
        assert_eq!(s.detail.matches("more bytes not shown").count(), 1);
        assert!(s.detail.len() <= BLOCK_LIMIT + 200, "{}", s.detail.len());
        let escaped = shown(
            "mcp__srv__tool",
            json!({ "a": "\"".repeat(200_000), "z": "short" }),
        );
        assert!(escaped.detail.contains("\"z\": \"short\""));
        assert!(
            escaped.detail.len() <= BLOCK_LIMIT + 200,
            "{}",
            escaped.detail.len()
        );
        let s = shown(
            "MultiEdit",
            json!({ "file_path": "f.rs", "edits": [edit(200_000), edit(200_000), edit(10)] }),
        );
        assert!(s.detail.starts_with("Edit `f.rs` (3 changes)\n\n"));
        assert!(
            s.detail.contains(&format!("+{}\n", big(10))),
            "the short edit is whole"
        );
    }

    #[test]
    fn suggestions_are_described() {
        let text = suggestions(&[
            json!({ "type": "addRules", "rules": [{ "toolName": "Bash", "ruleContent": "npm test:*" }] }),
            json!({ "type": "setMode", "mode": "acceptEdits" }),
        ]);
        assert_eq!(
            text,
            "Allow Bash(npm test:*), acceptEdits mode until this session ends"
        );
    }
}
