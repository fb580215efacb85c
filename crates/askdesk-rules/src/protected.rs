//! What no rule may allow for the person: a change to askdesk's own configuration, to the agents'
//! settings and hooks, to shell start-up files or git hooks, and a command that runs askdesk or
//! names any of those. An answer rule simply does not apply there; the person is asked.

use std::path::{Component, Path, PathBuf};

use askdesk_core::{meta, AgentInfo};

use crate::shell;

/// Shell start-up files: protected wherever they are (`ZDOTDIR`, another home).
const STARTUP_FILES: &[&str] = &[
    ".bash_login",
    ".bash_logout",
    ".bash_profile",
    ".bashrc",
    ".cshrc",
    ".kshrc",
    ".login",
    ".logout",
    ".mkshrc",
    ".profile",
    ".tcshrc",
    ".zlogin",
    ".zlogout",
    ".zprofile",
    ".zshenv",
    ".zshrc",
    "bash.bashrc",
    "config.fish",
];

/// Directories of agents' settings, wherever they are: Claude Code reads hooks from
/// `~/.claude/settings.json` and from a project's `.claude/settings.json`, Codex from
/// `~/.codex/` (its `hooks.json` and `config.toml`).
const AGENT_DIRS: &[&str] = &[".claude", ".codex"];

/// System-wide shell start-up files and directories.
const SYSTEM_STARTUP: &[&str] = &[
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/environment",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/zsh",
    "/etc/zshenv",
    "/etc/zshrc",
    "/etc/zprofile",
    "/etc/zlogin",
];

/// Where the protected files are for one user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    home: PathBuf,
    /// Directories protected whole: askdesk's configuration (`$XDG_CONFIG_HOME/askdesk` and
    /// `~/.config/askdesk`), Claude Code's and Codex's configuration (`$CLAUDE_CONFIG_DIR`,
    /// `$CODEX_HOME`).
    dirs: Vec<PathBuf>,
}

impl Protected {
    /// The protected places of a user whose home is `home`, at their default locations.
    pub fn new(home: &Path) -> Protected {
        Protected {
            home: home.to_owned(),
            dirs: vec![
                home.join(".config").join("askdesk"),
                home.join(".claude"),
                home.join(".codex"),
            ],
        }
    }

    /// The protected places of this process's user: `HOME`, and where `XDG_CONFIG_HOME`,
    /// `CLAUDE_CONFIG_DIR` and `CODEX_HOME` move them.
    pub fn from_env() -> Protected {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let mut protected = Protected::new(&var("HOME").unwrap_or_else(|| PathBuf::from("/")));
        if let Some(config) = var("XDG_CONFIG_HOME") {
            protected.dirs.push(config.join("askdesk"));
        }
        protected.dirs.extend(var("CLAUDE_CONFIG_DIR"));
        protected.dirs.extend(var("CODEX_HOME"));
        protected
    }

    /// Whether a change to `path` could change what askdesk, an agent's hooks, a shell or git
    /// runs: askdesk's rules and configuration, the agents' settings (a project's `.claude`
    /// too), a shell start-up file, a repository's `.git` directory, its `hooks` and `config`
    /// (which can move the hooks). `~` is the home; a relative path is read as it stands (its
    /// names alone decide), and `..` is resolved by name, the path as written counting too.
    pub fn covers(&self, path: &Path) -> bool {
        let path = match path.strip_prefix("~") {
            Ok(rest) => self.home.join(rest),
            Err(_) => path.to_owned(),
        };
        self.names_protected(&path) || self.names_protected(&lexical(&path))
    }

    fn names_protected(&self, path: &Path) -> bool {
        let names: Vec<&str> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => name.to_str(),
                _ => None,
            })
            .collect();
        let startup = names.last().is_some_and(|n| STARTUP_FILES.contains(n));
        let agent = names.iter().any(|n| AGENT_DIRS.contains(n));
        let askdesk = names.windows(2).any(|w| w == [".config", "askdesk"]);
        let git = names.last() == Some(&".git")
            || names
                .windows(2)
                .any(|w| w[0] == ".git" && matches!(w[1], "hooks" | "config"));
        let fish = names.windows(2).any(|w| w == [".config", "fish"]);
        startup
            || agent
            || askdesk
            || git
            || fish
            || self.dirs.iter().any(|dir| path.starts_with(dir))
            || SYSTEM_STARTUP.iter().any(|system| path.starts_with(system))
    }

    /// Whether a word of a command names something protected, or askdesk itself: the word, each
    /// part of it after a `=` or `:` (`--output=x`), each read as a path (relative to `cwd`
    /// too), and any mention of `askdesk` or of git's `core.hooksPath`.
    pub fn mentioned_in(&self, word: &str, cwd: Option<&Path>) -> bool {
        let lower = word.to_lowercase();
        if lower.contains("askdesk") || lower.contains("hookspath") {
            return true;
        }
        std::iter::once(word)
            .chain(word.split(['=', ':']))
            .filter(|part| !part.is_empty())
            .any(|part| {
                let path = Path::new(part);
                self.covers(path) || cwd.is_some_and(|cwd| self.covers(&cwd.join(path)))
            })
    }

    /// Whether an answer must not be given to a command line: it cannot be read statically
    /// (what it runs or writes is not known until it runs), or a word or redirection target of
    /// it names something protected.
    pub fn refuses_command(&self, line: &str, cwd: Option<&Path>) -> bool {
        self.refuses_reading(&shell::read(line), cwd)
    }

    /// [`Protected::refuses_command`] for a line already read.
    pub fn refuses_reading(&self, reading: &shell::Reading, cwd: Option<&Path>) -> bool {
        reading.escape.is_some() || reading.words().any(|word| self.mentioned_in(word, cwd))
    }
}

/// Whether no answer may be given to this agent's permission prompt, whatever a rule says: its
/// `meta.command` fails [`Protected::refuses_command`], or its `meta.path` (relative to
/// `meta.cwd`) names a protected place, leads to one (every link followed, as
/// [`crate::target::resolve`] does: a link in the project to `~/.bashrc` is `~/.bashrc`) or cannot
/// be resolved for sure; the places are this process's user's.
pub fn refuses_answer(agent: Option<&AgentInfo>) -> bool {
    refuses_answer_with(agent, None)
}

/// [`refuses_answer`] with the agent's `meta.command` as `read` has read it already: one
/// request's line is read once for every rule tried on it. A `read` of another line is not used.
pub(crate) fn refuses_answer_with(
    agent: Option<&AgentInfo>,
    read: Option<&shell::Line<'_>>,
) -> bool {
    let Some(meta) = agent.and_then(|a| a.meta.as_ref()) else {
        return false;
    };
    let text = |key: &str| meta.get(key).and_then(|v| v.as_str());
    let own;
    let command = match (text(meta::COMMAND), read) {
        (Some(line), Some(read)) if read.text() == line => Some(read),
        (Some(line), _) => {
            own = shell::Line::new(line);
            Some(&own)
        }
        (None, _) => None,
    };
    let path = text(meta::PATH);
    if command.is_none() && path.is_none() {
        return false;
    }
    let protected = Protected::from_env();
    let cwd = text(meta::CWD);
    command.is_some_and(|line| protected.refuses_reading(line.reading(), cwd.map(Path::new)))
        || path.is_some_and(|path| {
            protected.mentioned_in(path, cwd.map(Path::new))
                || crate::target::resolve(path, cwd).is_none_or(|real| protected.covers(&real))
        })
}

/// Whether a change to `path` is one no rule may allow, for a user whose home is `home` (the
/// default locations; [`Protected::from_env`] adds those the environment moves).
pub fn is_protected(path: &Path, home: &Path) -> bool {
    Protected::new(home).covers(path)
}

/// `.` dropped and `..` taking the name before it off, without the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut resolved = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop();
            }
            other => resolved.push(other),
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> Protected {
        let mut protected = Protected::new(Path::new("/home/me"));
        protected.dirs.push(PathBuf::from("/opt/codex"));
        protected
    }

    #[test]
    fn protected_paths() {
        let me = me();
        for path in [
            "/home/me/.config/askdesk/rules.toml",
            "/home/me/.config/askdesk",
            "~/.config/askdesk/rules.toml",
            "/home/me/.claude/settings.json",
            "/home/me/src/app/.claude/settings.local.json",
            "/home/me/.codex/hooks.json",
            "/home/me/.codex/config.toml",
            "/opt/codex/hooks.json",
            "/home/me/.bashrc",
            "/home/me/.profile",
            "/home/me/.zshrc",
            "/home/me/zdot/.zshenv",
            "~/.bash_profile",
            "/home/me/.config/fish/config.fish",
            "/etc/profile.d/x.sh",
            "/home/me/src/app/.git/hooks/pre-commit",
            "/home/me/src/app/.git/config",
            "/home/me/src/app/.git",
            ".git/hooks/pre-push",
            "/home/me/src/app/x/../.git/hooks/pre-push",
            "/home/me/src/../.bashrc",
            "/home/me/src/./../.config/askdesk/rules.toml",
            ".bashrc",
        ] {
            assert!(me.covers(Path::new(path)), "{path}");
        }
        for path in [
            "/home/me/src/app/src/main.rs",
            "/home/me/.config/other/x.toml",
            "/home/me/src/app/.gitignore",
            "/home/me/src/app/.github/hooks.yml",
            "/home/me/bashrc.md",
            "/home/me/src/app/git/hooks/x",
        ] {
            assert!(!me.covers(Path::new(path)), "{path}");
        }
        assert!(is_protected(
            Path::new("/home/me/.claude/settings.json"),
            Path::new("/home/me")
        ));
        assert!(!is_protected(
            Path::new("/opt/codex/hooks.json"),
            Path::new("/home/me")
        ));
    }

    #[test]
    fn no_rule_answers_a_prompt_that_would_widen_the_rules() {
        use askdesk_core::{Question, QuestionOption};
        use serde_json::{json, Value};

        let set = crate::RuleSet::parse(
            "[[rule]]\nname = \"any bash\"\nmatch.tool = \"Bash\"\nanswer = \"Allow once\"\n\n\
             [[rule]]\nname = \"any edit\"\nmatch.tool = \"Edit\"\nanswer = \"Allow once\"\n",
        )
        .unwrap();
        let prompt = [Question {
            id: "q".into(),
            question: "Allow?".into(),
            header: None,
            detail: None,
            options: ["Allow once", "Deny"]
                .map(|label| QuestionOption {
                    label: label.into(),
                    description: None,
                })
                .to_vec(),
            multi_select: false,
            intent: None,
        }];
        let acting = |meta: Value| {
            let agent = AgentInfo {
                id: "a".into(),
                label: None,
                meta: meta.as_object().cloned(),
            };
            set.evaluate(Some(&agent), &prompt)
                .acting
                .map(|(rule, _)| rule.name.clone())
        };
        let bash = |command: &str| json!({ "tool": "Bash", "command": command, "cwd": "/w" });
        let edit = |path: &str| json!({ "tool": "Edit", "path": path, "cwd": "/w/app" });
        assert_eq!(acting(bash("ls -la")).as_deref(), Some("any bash"));
        assert_eq!(acting(edit("src/main.rs")).as_deref(), Some("any edit"));
        for meta in [
            bash("askdesk rules list"),
            bash("echo x >> /home/me/.bashrc"),
            bash("ls $(cat x)"),
            edit("/home/me/.zshrc"),
            edit("../.git/hooks/pre-commit"),
            edit(".claude/settings.json"),
            edit("/home/me/.config/askdesk/rules.toml"),
        ] {
            assert_eq!(acting(meta.clone()), None, "{meta}");
        }
    }

    #[test]
    fn a_file_is_judged_where_it_leads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let app = root.join("app");
        std::fs::create_dir_all(app.join("src")).unwrap();
        std::fs::write(root.join(".bashrc"), "").unwrap();
        std::fs::write(app.join("src/lib.rs"), "").unwrap();
        std::os::unix::fs::symlink(root.join(".bashrc"), app.join("notes.txt")).unwrap();
        std::os::unix::fs::symlink(root.join(".zshrc"), app.join("dangling")).unwrap();
        std::os::unix::fs::symlink(root.join(".git"), app.join("vcs")).unwrap();
        let refused = |path: &str, cwd: Option<&std::path::Path>| {
            let mut meta = serde_json::json!({ "tool": "Edit", "path": path });
            if let Some(cwd) = cwd {
                meta["cwd"] = cwd.display().to_string().into();
            }
            let agent = AgentInfo {
                id: "a".into(),
                label: None,
                meta: meta.as_object().cloned(),
            };
            refuses_answer(Some(&agent))
        };
        assert!(!refused("src/lib.rs", Some(&app)));
        assert!(!refused(
            &app.join("src/new.rs").display().to_string(),
            None
        ));
        for path in [
            "notes.txt",
            "dangling",
            "vcs/hooks/pre-commit",
            "../.bashrc",
        ] {
            assert!(refused(path, Some(&app)), "{path}");
        }
        assert!(refused("src/lib.rs", None), "a relative path without a cwd");
        assert!(
            refused("missing/../src/lib.rs", Some(&app)),
            "`..` after a missing name"
        );
    }

    #[test]
    fn commands_that_name_protected_things() {
        let me = me();
        let cwd = Some(Path::new("/home/me/src/app"));
        for line in [
            "askdesk rules list",
            "/usr/local/bin/askdesk hook install claude-code",
            "ask''desk serve",
            "cp x /home/me/.bashrc",
            "tee -a .bashrc",
            "sed -i s/a/b/ /home/me/.zshrc",
            "cp hook .git/hooks/pre-commit",
            "git config core.hooksPath /tmp/h",
            "mv x ../../.claude/settings.json",
            "cargo run -- --out=/home/me/.profile",
            "cp x /opt/codex/hooks.json",
            "cat > /dev/null; cp a b:/home/me/.bashrc",
            "cargo test > ~/.bashrc",
            "cargo test $(echo x)",
        ] {
            assert!(me.refuses_command(line, cwd), "{line}");
        }
        for line in ["cargo test", "cp a b", "git commit -m 'x'", "cat .github/x"] {
            assert!(!me.refuses_command(line, cwd), "{line}");
        }
        // Relative to the cwd: `..` from the project reaches the home.
        let home_cwd = Some(Path::new("/home/me"));
        assert!(me.refuses_command("cp x .config/askdesk/rules.toml", home_cwd));
    }
}
