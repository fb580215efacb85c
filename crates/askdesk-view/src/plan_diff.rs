//! The block diff between two versions of a plan: which blocks were added, removed, changed or moved.
//!
//! Plans are compared by their blocks ([`Block`]: headings, paragraphs, list items, table rows,
//! lines of code), never as raw text, so the page can mark the rendered plan. Blocks are paired in
//! three passes:
//!
//! 1. the same kind and the same text, in order (a step moved elsewhere is still the same step);
//! 2. the same kind and similar text (word or letter-pair overlap of at least [`SIMILAR`]): the
//!    block was edited;
//! 3. the same kind in the same slot, between two paired neighbours: the block was rewritten in
//!    place (a heading renamed to other words).
//!
//! What is left is added (new side) or removed (old side). Pairs of the first pass that are out of
//! order (not on a longest increasing run of old positions) are marked moved.
//!
//! Inside a changed block, [`word_diff`] says which words went and which came (the `similar`
//! crate's word diff), as plain text runs the page shows as text.

use serde::Serialize;

use crate::markdown::Block;

/// The least similarity (0 to 1) for an edited block to count as the same block.
pub const SIMILAR: f64 = 0.5;

/// What happened to a block of the new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Same,
    Moved,
    Changed,
    Added,
}

/// The comparison of two versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    /// For each block of the new version: what happened to it, and the old block it pairs with.
    pub new: Vec<(Status, Option<usize>)>,
    /// For each block of the old version: the new block it pairs with, if any.
    pub old: Vec<Option<usize>>,
}

impl Diff {
    /// Old blocks with no counterpart, each with the index of the new block it stood before
    /// (`None`: at the end), so the page can show it where it was.
    pub fn removed(&self) -> Vec<(usize, Option<usize>)> {
        (0..self.old.len())
            .filter(|&i| self.old[i].is_none())
            .map(|i| (i, self.old[i + 1..].iter().find_map(|pair| *pair)))
            .collect()
    }

    pub fn count(&self, status: Status) -> usize {
        self.new.iter().filter(|(s, _)| *s == status).count()
    }

    pub fn removed_count(&self) -> usize {
        self.old.iter().filter(|pair| pair.is_none()).count()
    }

    /// The "+N −M" badge: like a diffstat, a changed block counts once on each side.
    pub fn badge(&self) -> (usize, usize) {
        let changed = self.count(Status::Changed);
        (
            self.count(Status::Added) + changed,
            self.removed_count() + changed,
        )
    }
}

/// What a run of a changed block's text is: kept, removed or added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    Equal,
    Delete,
    Insert,
}

/// One run of a changed block's text, word by word: plain text, never HTML. Inline code (a
/// `` `span` `` of the plan's markdown) is its own run, `code`, without its backticks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    pub op: Op,
    pub text: String,
    pub code: bool,
}

/// The word diff of a block's old text and new text, as runs that read from left to right: within
/// each stretch of change, what went comes before what came (as in a suggested change), and the
/// spaces between two changed words belong to the change rather than splitting it in two. Words,
/// runs of spaces and each punctuation mark are compared apart, so a comma added after a word
/// does not mark the word as changed; a word in inline code differs from the same word outside.
pub fn word_diff(old: &str, new: &str) -> Vec<Segment> {
    let (old, new) = (tokens(old), tokens(new));
    let tokens: Vec<(similar::ChangeTag, Token<'_>)> =
        similar::utils::diff_slices(similar::Algorithm::Patience, &old, &new)
            .into_iter()
            .flat_map(|(tag, run)| run.iter().map(move |token| (tag, *token)))
            .collect();
    let count = tokens.len();
    let mut out: Vec<Segment> = Vec::new();
    let (mut went, mut came) = (Vec::new(), Vec::new());
    let flush = |out: &mut Vec<Segment>, went: &mut Vec<Segment>, came: &mut Vec<Segment>| {
        for segment in went.drain(..).chain(came.drain(..)) {
            push(out, segment.op, segment.code, &segment.text);
        }
    };
    for (i, (tag, token)) in tokens.iter().enumerate() {
        let changed = |t: &(similar::ChangeTag, Token<'_>)| t.0 != similar::ChangeTag::Equal;
        match tag {
            similar::ChangeTag::Delete => push(&mut went, Op::Delete, token.code, token.text),
            similar::ChangeTag::Insert => push(&mut came, Op::Insert, token.code, token.text),
            similar::ChangeTag::Equal => {
                let between = token.text.trim().is_empty()
                    && i > 0
                    && changed(&tokens[i - 1])
                    && i + 1 < count
                    && changed(&tokens[i + 1]);
                if between {
                    push(&mut went, Op::Delete, token.code, token.text);
                    push(&mut came, Op::Insert, token.code, token.text);
                    continue;
                }
                flush(&mut out, &mut went, &mut came);
                push(&mut out, Op::Equal, token.code, token.text);
            }
        }
    }
    flush(&mut out, &mut went, &mut came);
    out
}

/// Adds `text` to the last run when it is of the same kind, else as a run of its own.
fn push(runs: &mut Vec<Segment>, op: Op, code: bool, text: &str) {
    match runs.last_mut() {
        Some(last) if last.op == op && last.code == code => last.text.push_str(text),
        _ => runs.push(Segment {
            op,
            text: text.to_owned(),
            code,
        }),
    }
}

/// A piece of a block's text the word diff compares: its text, and whether it is inline code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Token<'a> {
    code: bool,
    text: &'a str,
}

/// A text cut into tokens: inline code spans (a run of backticks up to the next run of as many,
/// as markdown reads them) without their backticks, each cut as the rest is, into words (letters,
/// digits, `_`), runs of whitespace, and single other characters. A backtick that opens no span
/// is text.
fn tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let ticks = rest[open..].len() - rest[open..].trim_start_matches('`').len();
        let inside = &rest[open + ticks..];
        let fence = &rest[open..open + ticks];
        // The closing run: as many backticks, not part of a longer run.
        let close = inside.match_indices(fence).map(|(at, _)| at).find(|&at| {
            !inside[at + ticks..].starts_with('`') && (at == 0 || !inside[..at].ends_with('`'))
        });
        let Some(close) = close else {
            words(&rest[..open + ticks], false, &mut out);
            rest = &rest[open + ticks..];
            continue;
        };
        words(&rest[..open], false, &mut out);
        words(&inside[..close], true, &mut out);
        rest = &inside[close + ticks..];
    }
    words(rest, false, &mut out);
    out
}

/// `text` cut into words, runs of whitespace and single other characters.
fn words<'a>(text: &'a str, code: bool, out: &mut Vec<Token<'a>>) {
    let class = |c: char| match c {
        c if c.is_alphanumeric() || c == '_' => 0,
        c if c.is_whitespace() => 1,
        _ => 2,
    };
    let mut start = 0;
    let mut previous = None;
    for (at, c) in text.char_indices() {
        let this = class(c);
        if previous.is_some_and(|p| p != this || this == 2) {
            out.push(Token {
                code,
                text: &text[start..at],
            });
            start = at;
        }
        previous = Some(this);
    }
    if start < text.len() {
        out.push(Token {
            code,
            text: &text[start..],
        });
    }
}

/// Compares the blocks of two versions of a plan.
pub fn diff(old: &[Block], new: &[Block]) -> Diff {
    let mut pairs: Vec<Option<usize>> = vec![None; new.len()];
    let mut taken: Vec<Option<usize>> = vec![None; old.len()];

    // 1. Same kind, same text, first come first served.
    for (j, block) in new.iter().enumerate() {
        if let Some(i) = (0..old.len())
            .find(|&i| taken[i].is_none() && old[i].kind == block.kind && old[i].text == block.text)
        {
            pairs[j] = Some(i);
            taken[i] = Some(j);
        }
    }
    let exact: Vec<bool> = pairs.iter().map(Option::is_some).collect();

    // 2. Same kind, similar text: the most similar free old block, the nearest on a tie.
    for j in 0..new.len() {
        if pairs[j].is_some() {
            continue;
        }
        let expected = expected_old_position(&pairs, j);
        let best = (0..old.len())
            .filter(|&i| taken[i].is_none() && old[i].kind == new[j].kind)
            .map(|i| (similarity(&old[i].text, &new[j].text), i))
            .filter(|(score, _)| *score >= SIMILAR)
            .max_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then_with(|| expected.abs_diff(b.1).cmp(&expected.abs_diff(a.1)))
            });
        if let Some((_, i)) = best {
            pairs[j] = Some(i);
            taken[i] = Some(j);
        }
    }

    // 3. Same kind in the same slot between paired neighbours, until nothing more pairs.
    loop {
        let mut paired = false;
        for j in 0..new.len() {
            if pairs[j].is_some() {
                continue;
            }
            let after_previous = j
                .checked_sub(1)
                .and_then(|p| pairs[p])
                .map(|i| i + 1)
                .filter(|&i| i < old.len());
            let before_next = pairs
                .get(j + 1)
                .copied()
                .flatten()
                .and_then(|i| i.checked_sub(1));
            let slot = [after_previous, before_next]
                .into_iter()
                .flatten()
                .find(|&i| taken[i].is_none() && old[i].kind == new[j].kind);
            if let Some(i) = slot {
                pairs[j] = Some(i);
                taken[i] = Some(j);
                paired = true;
            }
        }
        if !paired {
            break;
        }
    }

    let in_order = longest_increasing(&pairs, &exact);
    let statuses = pairs
        .iter()
        .enumerate()
        .map(|(j, pair)| match pair {
            None => (Status::Added, None),
            Some(i) if !exact[j] => (Status::Changed, Some(*i)),
            Some(i) if in_order[j] => (Status::Same, Some(*i)),
            Some(i) => (Status::Moved, Some(*i)),
        })
        .collect();
    Diff {
        new: statuses,
        old: taken,
    }
}

/// Where the old counterpart of new block `j` would be, judged by its nearest paired neighbour.
fn expected_old_position(pairs: &[Option<usize>], j: usize) -> usize {
    let before = (0..j).rev().find_map(|p| pairs[p].map(|i| i + (j - p)));
    let after = (j + 1..pairs.len()).find_map(|n| pairs[n].map(|i| i.saturating_sub(n - j)));
    before.or(after).unwrap_or(j)
}

/// Which exact pairs lie on one longest run of increasing old positions (the rest moved).
fn longest_increasing(pairs: &[Option<usize>], exact: &[bool]) -> Vec<bool> {
    let points: Vec<(usize, usize)> = pairs
        .iter()
        .enumerate()
        .filter(|(j, _)| exact[*j])
        .filter_map(|(j, pair)| pair.map(|i| (j, i)))
        .collect();
    // Patience sorting: tails[k] is the index (in `points`) ending the best run of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut previous: Vec<Option<usize>> = vec![None; points.len()];
    for (p, &(_, old)) in points.iter().enumerate() {
        let k = tails.partition_point(|&t| points[t].1 < old);
        previous[p] = k.checked_sub(1).map(|k| tails[k]);
        if k == tails.len() {
            tails.push(p);
        } else {
            tails[k] = p;
        }
    }
    let mut on_run = vec![false; pairs.len()];
    let mut cursor = tails.last().copied();
    while let Some(p) = cursor {
        on_run[points[p].0] = true;
        cursor = previous[p];
    }
    on_run
}

/// How alike two texts are, from 0 to 1: the better of word overlap and letter-pair overlap
/// (Dice coefficients, case-insensitive).
pub fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    if a == b {
        return 1.0;
    }
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let pairs = |s: &str| -> Vec<String> {
        let chars: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
        chars.windows(2).map(|w| w.iter().collect()).collect()
    };
    dice(words(&a), words(&b)).max(dice(pairs(&a), pairs(&b)))
}

fn dice(mut a: Vec<String>, b: Vec<String>) -> f64 {
    let total = a.len() + b.len();
    if total == 0 {
        return 0.0;
    }
    let mut common = 0;
    for item in b {
        if let Some(at) = a.iter().position(|x| *x == item) {
            a.swap_remove(at);
            common += 1;
        }
    }
    (2 * common) as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::render;

    /// The diff of two markdown plans as readable lines: `status path: text` for every block of
    /// the new version that is not the same, then `removed path: text` for the old blocks that went.
    fn changes(old: &str, new: &str) -> Vec<String> {
        let (old, new) = (render(old).blocks, render(new).blocks);
        let d = diff(&old, &new);
        let mut lines: Vec<String> = d
            .new
            .iter()
            .enumerate()
            .filter(|(_, (status, _))| *status != Status::Same)
            .map(|(j, (status, _))| format!("{status:?} {}: {}", new[j].path, new[j].text))
            .collect();
        lines.extend(
            d.removed()
                .into_iter()
                .map(|(i, _)| format!("Removed {}: {}", old[i].path, old[i].text)),
        );
        lines
    }

    const PLAN: &str = "# Plan\n\nIntro text.\n\n## Steps\n\n1. Read the journal\n2. Write the schema\n3. Switch append\n\n## Schema\n\n```sql\nCREATE TABLE record (\n  id INTEGER PRIMARY KEY,\n  body TEXT NOT NULL\n);\n```\n\n## Risks\n\n| Risk | Mitigation |\n|---|---|\n| torn line | skip it |\n| size | accept |\n";

    #[test]
    fn identical_plans_have_no_changes() {
        assert_eq!(changes(PLAN, PLAN), Vec::<String>::new());
        let blocks = render(PLAN).blocks;
        let d = diff(&blocks, &blocks);
        assert_eq!(d.badge(), (0, 0));
    }

    #[test]
    fn reordered_steps_are_moved_not_rewritten() {
        let new = PLAN.replace(
            "1. Read the journal\n2. Write the schema\n3. Switch append",
            "1. Write the schema\n2. Read the journal\n3. Switch append",
        );
        // One of the two swapped steps is on the longest unchanged run, the other moved.
        assert_eq!(
            changes(PLAN, &new),
            vec!["Moved Steps › 1: Write the schema"]
        );
        let (old, new) = (render(PLAN).blocks, render(&new).blocks);
        assert_eq!(diff(&old, &new).badge(), (0, 0));
    }

    #[test]
    fn a_code_block_edited_in_one_line_marks_that_line() {
        let new = PLAN.replace("  body TEXT NOT NULL", "  body BLOB NOT NULL");
        assert_eq!(
            changes(PLAN, &new),
            vec!["Changed Schema › line 3:   body BLOB NOT NULL"]
        );
        let (old, new) = (render(PLAN).blocks, render(&new).blocks);
        assert_eq!(diff(&old, &new).badge(), (1, 1));
    }

    #[test]
    fn a_table_row_added_is_one_added_block() {
        let new = PLAN.replace(
            "| size | accept |\n",
            "| size | accept |\n| two writers | single-instance lock |\n",
        );
        assert_eq!(
            changes(PLAN, &new),
            vec!["Added Risks › row 3: two writers | single-instance lock"]
        );
        let (old, new) = (render(PLAN).blocks, render(&new).blocks);
        assert_eq!(diff(&old, &new).badge(), (1, 0));
    }

    #[test]
    fn renamed_headings_are_changed_and_their_sections_stay() {
        let new = PLAN
            .replace("## Steps", "## Implementation steps")
            .replace("## Risks", "## What could go wrong");
        assert_eq!(
            changes(PLAN, &new),
            vec![
                "Changed Implementation steps: Implementation steps",
                "Changed What could go wrong: What could go wrong",
            ]
        );
    }

    #[test]
    fn removed_blocks_keep_their_place() {
        let new = PLAN.replace("2. Write the schema\n", "");
        let (old, new_blocks) = (render(PLAN).blocks, render(&new).blocks);
        let d = diff(&old, &new_blocks);
        let removed = d.removed();
        assert_eq!(removed.len(), 1);
        let (i, before) = removed[0];
        assert_eq!(old[i].text, "Write the schema");
        assert_eq!(new_blocks[before.unwrap()].text, "Switch append");
        assert_eq!(d.badge(), (0, 1));
        // The last item renumbered: its path changed, its text did not, so it is the same block.
        assert_eq!(
            changes(PLAN, &new),
            vec!["Removed Steps › 2: Write the schema"]
        );
    }

    #[test]
    fn a_rewritten_step_and_a_new_one_are_told_apart() {
        let new = PLAN.replace(
            "3. Switch append",
            "3. Switch append to a prepared INSERT\n4. Page the History view",
        );
        assert_eq!(
            changes(PLAN, &new),
            vec![
                "Changed Steps › 3: Switch append to a prepared INSERT",
                "Added Steps › 4: Page the History view",
            ]
        );
    }

    #[test]
    fn everything_new_is_added_and_everything_old_removed() {
        let d = diff(&render("a\n\nb\n").blocks, &render("- x\n- y\n").blocks);
        assert_eq!(d.count(Status::Added), 2);
        assert_eq!(d.removed_count(), 2);
        assert_eq!(d.badge(), (2, 2));
        let empty = diff(&[], &[]);
        assert_eq!(empty.badge(), (0, 0));
    }

    /// A word diff as one line: `[-went-]` and `{+came+}` around the changed runs.
    fn words(old: &str, new: &str) -> String {
        word_diff(old, new)
            .into_iter()
            .map(|s| {
                let text = if s.code {
                    format!("‹{}›", s.text)
                } else {
                    s.text
                };
                match s.op {
                    Op::Equal => text,
                    Op::Delete => format!("[-{text}-]"),
                    Op::Insert => format!("{{+{text}+}}"),
                }
            })
            .collect()
    }

    #[test]
    fn a_changed_block_says_which_words_went_and_came() {
        assert_eq!(
            words(
                "Switch `Journal::append` to a prepared `INSERT`, keeping the fsync guarantee.",
                "Switch `Journal::append` to a prepared `INSERT` inside one transaction per second, keeping the fsync guarantee."
            ),
            "Switch ‹Journal::append› to a prepared ‹INSERT›{+ inside one transaction per second+}, keeping the fsync guarantee."
        );
        // Two neighbouring words replaced read as one change, not two split by a kept space.
        assert_eq!(
            words("body TEXT NOT NULL", "body BLOB NULLABLE NULL"),
            "body [-TEXT NOT-]{+BLOB NULLABLE+} NULL"
        );
        assert_eq!(
            words("Read once", "Read once, in pages"),
            "Read once{+, in pages+}"
        );
        assert_eq!(words("same", "same"), "same");
        assert_eq!(words("", "new words"), "{+new words+}");
        // Runs put back together give the old text and the new text exactly.
        let runs = word_diff("a b c d", "a x c y d");
        let side = |keep: Op| -> String {
            runs.iter()
                .filter(|s| s.op == Op::Equal || s.op == keep)
                .map(|s| s.text.as_str())
                .collect()
        };
        assert_eq!(
            (side(Op::Delete), side(Op::Insert)),
            ("a b c d".to_owned(), "a x c y d".to_owned())
        );
    }

    #[test]
    fn inline_code_is_a_run_of_its_own_without_backticks() {
        assert_eq!(
            words(
                "Call `get_history(offset)` once",
                "Call `get_history(offset, limit)` once"
            ),
            "Call ‹get_history(offset›{+‹, limit›+}‹)› once"
        );
        // The same word in code and out of it differs; backticks that open nothing are text.
        assert_eq!(words("use `x`", "use x"), "use [-‹x›-]{+x+}");
        assert_eq!(words("a ` b", "a ` c"), "a ` [-b-]{+c+}");
        // A double-backtick span holds a single backtick.
        assert_eq!(
            words("run ``a`b``", "run ``a`c``"),
            "run ‹a`›[-‹b›-]{+‹c›+}"
        );
        let runs = word_diff("Keep `INSERT` here", "Keep `UPSERT` here");
        assert!(runs.iter().all(|r| !r.text.contains('`')), "{runs:?}");
    }

    #[test]
    fn similarity_reads_words_and_letters() {
        assert_eq!(similarity("Steps", "steps"), 1.0);
        assert!(similarity("Steps", "Implementation steps") >= SIMILAR);
        assert!(similarity("let n: u32 = 42;", "let n: u64 = 42;") >= SIMILAR);
        assert!(similarity("Risks", "Out of scope") < SIMILAR);
        assert_eq!(similarity("", "x"), 0.0);
    }
}
