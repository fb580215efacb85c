//! askdesk-view: what the desktop app shows and decides, without the GUI toolkit.
//!
//! The desktop app (`src-tauri`, package `askdesk-desktop`) is a shell around this crate: it owns
//! the Tauri commands, the window, the tray, notifications and memory trimming, and calls in here
//! for everything else. This crate depends on no Tauri, GTK, WebKit or D-Bus crate
//! (`cargo tree -p askdesk-view` lists none), so the sanitizer, the plan threads and the GUI
//! answerer build and run their tests with plain `cargo test` on any machine, display or not.
//! The dependency points one way: `askdesk-desktop` → `askdesk-view` → `askdesk-rules`,
//! `askdesk-broker`, `askdesk-core`.
//!
//! - [`answerer`]: the GUI answerer on the waterfall, the queue the page shows, and the
//!   [`Presenter`](answerer::Presenter) seam the desktop implements.
//! - [`markdown`]: `detail` rendered and sanitized; the only HTML the page inserts.
//! - [`plan_diff`]: the block diff between two versions of a plan.
//! - [`plan_thread`]: plan threads (revisions by agent or session), comments as feedback text.
//! - [`history`]: the History view's entries, search, filters and pages.
//! - [`memory`]: the human's past answers to the same question in the same project.
//! - [`rule_draft`]: rules made from answers, drafted for the page to preview.
//! - [`rules_view`]: the answer rules as the page shows them (the Rules view, shadow suggestions).
//! - [`page`]: the page's events and addresses, and the notes of what rules did.
//! - [`badge`]: the tray icon with the count of waiting questions drawn on it.
//! - [`unsent`]: the page's draft of an answer read back as what the person had chosen and typed,
//!   for a request that ended before they sent it.
//!
//! Within the crate the modules depend on each other one way: `answerer` → `plan_thread`,
//! `rules_view`, `markdown`, `unsent`; `history` → `answerer`, `plan_thread`, `markdown`; `plan_thread` →
//! `plan_diff`, `markdown`; `plan_diff` → `markdown`;
//! `memory`, `rule_draft`, `page`, `badge` and `unsent` use none of the others.

pub mod answerer;
pub mod badge;
pub mod history;
pub mod markdown;
pub mod memory;
pub mod page;
pub mod plan_diff;
pub mod plan_thread;
pub mod rule_draft;
pub mod rules_view;
pub mod unsent;
