//! The answers of `askdesk hook`'s permission prompts that approve, and which of them grant a
//! standing permission: more than the one call the prompt is about. No rule gives one of those.
//!
//! "Always allow in this session" passes the client's own suggestions back (Claude Code's
//! `updatedPermissions`: rules such as `Bash(npm test:*)`, `acceptEdits` mode, more
//! directories), and "Approve, accept edits" turns on `acceptEdits` mode for the session. After
//! either, the client stops asking for what it was granted, so askdesk never sees those calls
//! again: not the rules, not the person, not the journal. A rule answers one call it matches at a
//! time, so the answer it may give is the one-call answer beside each: `Allow once`, `Approve, ask
//! before edits`. The rules file refuses a rule that answers with a standing one
//! ([`crate::file`]), a rule never picks one for a request ([`crate::matching`]), and no rule is
//! drafted from one ([`crate::draft()`]). The person may still choose them in the app: they see what
//! each grants, and they are the authority rules answer for.

use askdesk_i18n::t;

/// A tool approval for this call only.
pub const ALLOW_ONCE: &str = "Allow once";
/// A tool approval that also adds the client's suggested permissions for the session.
pub const ALLOW_SESSION: &str = "Always allow in this session";
/// A plan approval that leaves plan mode with each edit still asked.
pub const APPROVE_ASK: &str = "Approve, ask before edits";
/// A plan approval that leaves plan mode accepting every edit for the session.
pub const APPROVE_ACCEPT: &str = "Approve, accept edits";

/// Each standing answer, with the answer that approves only the call at hand.
const STANDING: [(&str, &str); 2] = [(ALLOW_SESSION, ALLOW_ONCE), (APPROVE_ACCEPT, APPROVE_ASK)];

/// The one-call answer to give instead when `label` grants a standing permission, else `None`.
/// A label is read as a rule's answer picks an option: exactly, or without a trailing
/// " (Recommended)" on either side.
pub fn one_call_instead(label: &str) -> Option<&'static str> {
    let label = askdesk_core::shown_label(label);
    STANDING
        .iter()
        .find(|(standing, _)| *standing == label)
        .map(|(_, once)| *once)
}

/// Why a rule may not answer `label`, naming the rule, or `None` when it may.
pub fn refusal(rule: &str, label: &str) -> Option<String> {
    let once = one_call_instead(label)?;
    Some(t!(
        "rules-error-standing",
        rule = format!("{rule:?}"),
        label = format!("{label:?}"),
        once = format!("{once:?}")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_standing_answer_has_a_one_call_answer_and_no_other_label_is_standing() {
        assert_eq!(one_call_instead(ALLOW_SESSION), Some(ALLOW_ONCE));
        assert_eq!(one_call_instead(APPROVE_ACCEPT), Some(APPROVE_ASK));
        assert_eq!(
            one_call_instead("Always allow in this session (Recommended)"),
            Some(ALLOW_ONCE)
        );
        assert_eq!(
            one_call_instead("Approve, accept edits  (Recommended) "),
            Some(APPROVE_ASK)
        );
        for label in [ALLOW_ONCE, APPROVE_ASK, "Deny", "Keep planning", "Yes", ""] {
            assert_eq!(one_call_instead(label), None, "{label}");
        }
        let why = refusal("edits", ALLOW_SESSION).unwrap();
        assert!(why.starts_with("rule \"edits\" answers \"Always allow in this session\""));
        assert!(why.contains("answer \"Allow once\""), "{why}");
        assert_eq!(refusal("edits", ALLOW_ONCE), None);
    }
}
