"""askdesk desktop tests: realistic sample requests used by the end-to-end tests (and so by their screenshots)."""

SINGLE = [{
    "id": "migrate",
    "header": "Database",
    "question": "The users table has 2.3M rows. How should I run the migration?",
    "options": [
        {"label": "Online, in batches (Recommended)", "description": "Copies 10k rows at a time; no downtime, takes ~20 min."},
        {"label": "Offline, in one transaction", "description": "Needs a 5-minute maintenance window."},
        {"label": "Skip the migration for now", "description": "Leave the schema as it is and continue with the API work."},
    ],
}]

BATCH = [
    {
        "id": "scope",
        "header": "Refactor scope",
        "question": "Which modules should the error-handling refactor touch?",
        "detail": "The current code mixes `anyhow` and hand-written enums:\n\n"
                  "- `server` returns `anyhow::Result` everywhere\n"
                  "- `journal` has its own `JournalError`\n"
                  "- `client` maps everything to `io::Error`\n\n"
                  "See [the thiserror docs](https://docs.rs/thiserror) for the target style.",
        "multiSelect": True,
        "options": [
            {"label": "server", "description": "12 call sites"},
            {"label": "journal", "description": "4 call sites"},
            {"label": "client", "description": "9 call sites, public API"},
        ],
    },
    {
        "id": "release",
        "header": "Release",
        "question": "Bump the version after the refactor?",
        "options": [
            {"label": "Minor (0.3.0) (Recommended)", "description": "The client's error type changes."},
            {"label": "Patch (0.2.5)"},
        ],
    },
    {
        "id": "notes",
        "question": "Anything the changelog entry must mention?",
    },
]

PLAN = """# Plan: move the journal to SQLite

The JSON-lines journal is read in full for every History view; with 40k records that takes 1.8 s.
This plan replaces it with an embedded SQLite database without changing the wire protocol.

## Goals

- [x] Keep every existing record (migrate on first start)
- [ ] History view under 50 ms for 100k records
- [ ] No new runtime dependency outside the binary

## Steps

1. Add `rusqlite` with the `bundled` feature behind a `journal-sqlite` cargo feature.
2. Write the schema and a one-time importer for `history.jsonl`.
3. Switch `Journal::append` to a prepared `INSERT`, keeping the fsync guarantee (`synchronous=FULL`).
4. Page the History view: `get_history(offset, limit)`.

## Schema

```sql
CREATE TABLE record (
  id          INTEGER PRIMARY KEY,
  asked_at    INTEGER NOT NULL,
  settled_at  INTEGER NOT NULL,
  agent_id    TEXT,
  outcome     TEXT NOT NULL DEFAULT 'answered',
  body        TEXT NOT NULL  -- the JSON record, unchanged
);
CREATE INDEX record_settled ON record (settled_at DESC);
```

## Risks

| Risk | Likelihood | Mitigation |
|---|---|---|
| Importer fails on a torn line | low | skip and log it, as `read()` does today |
| Binary grows by ~1 MB | certain | acceptable; measured 0.9 MB |
| Two app instances write at once | very low | single-instance lock already prevents it |

## Out of scope

~~Full-text search over answers~~ — later, if anyone asks for it.
"""

PLAN_OPTIONS = [
    {"label": "Approve plan (Recommended)", "description": "Start with step 1."},
    {"label": "Keep planning", "description": "Revise the plan before any code changes."},
]

PLAN_REVIEW = [{
    "id": "plan",
    "header": "Plan review",
    "question": "Approve this plan for the journal migration?",
    "detail": PLAN,
    "options": PLAN_OPTIONS,
    "intent": {"kind": "plan-review", "approve": "Approve plan (Recommended)"},
}]

XSS_PLAN = """# Innocent plan

<script>window.__pwned = 'script';</script>
<img src=x onerror="window.__pwned = 'img'">
<iframe src="javascript:window.top.__pwned = 'iframe'"></iframe>
<svg onload="window.__pwned = 'svg'"><script>window.__pwned = 'svg-script'</script></svg>
<a href="javascript:window.__pwned = 'link'">click me</a>
[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)
![remote](https://tracker.invalid/pixel.png)
<div onmouseover="window.__pwned = 'hover'" style="position:fixed;inset:0">cover</div>
<form action="https://evil.invalid/"><input type="text" name="x"></form>

## Real step

- do the work
"""

XSS_REVIEW = [{
    "id": "plan",
    "question": "Approve?",
    "detail": XSS_PLAN,
    "options": [{"label": "Approve"}, {"label": "Reject"}],
    "intent": {"kind": "plan-review", "approve": "Approve"},
}]

MIXED = PLAN_REVIEW + [{
    "id": "tests",
    "header": "Tests",
    "question": "Also add a benchmark for the History view?",
    "options": [{"label": "Yes (Recommended)"}, {"label": "No"}],
}]

AGENTS = {
    "coder": {"id": "coder-7f3a", "label": "claude-code",
              "meta": {"cwd": "/home/dana/src/askdesk", "repo": "askdesk", "branch": "feat/journal-sqlite", "model": "opus"}},
    "reviewer": {"id": "review-bot", "label": "review-bot",
                 "meta": {"cwd": "/home/dana/src/website", "repo": "website", "branch": "main"}},
}

# A revision of PLAN: step 2 dropped, step 3 rewritten, a fifth step added; the schema and risks are unchanged.
PLAN_REVISED = PLAN.replace(
    "2. Write the schema and a one-time importer for `history.jsonl`.\n", "",
).replace(
    "3. Switch `Journal::append` to a prepared `INSERT`, keeping the fsync guarantee (`synchronous=FULL`).",
    "3. Switch `Journal::append` to a prepared `INSERT` inside one transaction per second, keeping the fsync "
    "guarantee (`synchronous=FULL`).",
).replace(
    "4. Page the History view: `get_history(offset, limit)`.\n",
    "4. Page the History view: `get_history(offset, limit)`.\n5. Keep a JSON export: `askdesk history --export`.\n",
)
assert PLAN_REVISED.count("one transaction per second") == 1 and "--export" in PLAN_REVISED and "one-time importer" not in PLAN_REVISED

PLAN_REVIEW_REVISED = [dict(PLAN_REVIEW[0], detail=PLAN_REVISED)]
