//! What no rule may allow for the person: a change to what runs code or holds trust for askdesk,
//! the agents, the shells and git (each place in [`PLACES`], with who reads it), and a command
//! that runs askdesk or names any of those. An answer rule simply does not apply there; the person
//! is asked. A path is judged where it leads: as written, with `..` taken by name, and resolved
//! through every link ([`crate::target::lead`]); a file with other hard links is judged by its
//! inode too.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use askdesk_core::{meta, AgentInfo};

use crate::shell;
use crate::target::Lead;

/// Where a protected place is. Each place covers everything under it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Wherever it is: any path holding these names in a row (`.bashrc`, `.config/fish`, a
    /// project's `.claude`), so another home, `ZDOTDIR` or a project counts as the home does.
    Named(&'static str),
    /// Under the folder an environment variable names, when it is set (`""`: the folder itself).
    Env(&'static str, &'static str),
    /// A name right inside a bare repository's folder (one whose name ends in `.git`).
    InBareRepository(&'static str),
    /// An absolute path of the system.
    System(&'static str),
}

/// A protected place and who reads it: what a change to it could make run or trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub place: Place,
    /// The message that says who reads it ([`Entry::read_by`]).
    pub read_by_id: &'static str,
}

impl Entry {
    /// Who reads the place, in the person's language.
    pub fn read_by(&self) -> String {
        askdesk_i18n::current().get(self.read_by_id, None)
    }
}

const fn named(name: &'static str, read_by: &'static str) -> Entry {
    Entry {
        place: Place::Named(name),
        read_by_id: read_by,
    }
}

const fn env(var: &'static str, name: &'static str, read_by: &'static str) -> Entry {
    Entry {
        place: Place::Env(var, name),
        read_by_id: read_by,
    }
}

const fn bare(name: &'static str, read_by: &'static str) -> Entry {
    Entry {
        place: Place::InBareRepository(name),
        read_by_id: read_by,
    }
}

const fn system(path: &'static str, read_by: &'static str) -> Entry {
    Entry {
        place: Place::System(path),
        read_by_id: read_by,
    }
}

// Who reads each place: the message ids of `rules.ftl` that say it ([`Entry::read_by`]).
const ASKDESK_CONFIG: &str = "rules-place-askdesk-config";
const ASKDESK_DATA: &str = "rules-place-askdesk-data";
const CLAUDE_CODE: &str = "rules-place-claude-code";
const CLAUDE_STATE: &str = "rules-place-claude-state";
const CLAUDE_MCP: &str = "rules-place-claude-mcp";
const CLAUDE_MANAGED: &str = "rules-place-claude-managed";
const CODEX: &str = "rules-place-codex";
const CODEX_MANAGED: &str = "rules-place-codex-managed";
const GEMINI: &str = "rules-place-gemini";
const GEMINI_SYSTEM: &str = "rules-place-gemini-system";
const GIT_DIR: &str = "rules-place-git-dir";
const GIT_CONFIG: &str = "rules-place-git-config";
const GIT_XDG: &str = "rules-place-git-xdg";
const GIT_SYSTEM: &str = "rules-place-git-system";
const BASH: &str = "rules-place-bash";
const BASH_SOURCED: &str = "rules-place-bash-sourced";
const READLINE: &str = "rules-place-readline";
const ZSH: &str = "rules-place-zsh";
const OH_MY_ZSH: &str = "rules-place-oh-my-zsh";
const FISH: &str = "rules-place-fish";
const SH: &str = "rules-place-sh";
const CSH: &str = "rules-place-csh";
const SESSION: &str = "rules-place-session";
const SSH: &str = "rules-place-ssh";
const SHELLS_SYSTEM: &str = "rules-place-shells-system";

/// Every protected place, with who reads it. Derived from what each reads at start-up or before
/// it runs a command: askdesk, Claude Code, Codex, Gemini CLI, git, and bash, zsh, fish, sh, ksh
/// and csh. Not protected, as they run nothing by themselves: instructions to an agent
/// (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, which it still asks before acting on), a project's
/// `.gitattributes` (it names filters and drivers only a protected config defines) and
/// `.gitmodules` (git refuses its `update = !command`).
pub const PLACES: &[Entry] = &[
    named(".config/askdesk", ASKDESK_CONFIG),
    env("XDG_CONFIG_HOME", "askdesk", ASKDESK_CONFIG),
    named(".local/share/askdesk", ASKDESK_DATA),
    env("XDG_DATA_HOME", "askdesk", ASKDESK_DATA),
    named(".claude", CLAUDE_CODE),
    env("CLAUDE_CONFIG_DIR", "", CLAUDE_CODE),
    named(".claude.json", CLAUDE_STATE),
    named(".mcp.json", CLAUDE_MCP),
    system("/etc/claude-code", CLAUDE_MANAGED),
    named(".codex", CODEX),
    env("CODEX_HOME", "", CODEX),
    system("/etc/codex", CODEX_MANAGED),
    named(".gemini", GEMINI),
    system("/etc/gemini-cli", GEMINI_SYSTEM),
    env("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "", GEMINI_SYSTEM),
    env("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "", GEMINI_SYSTEM),
    named(".git", GIT_DIR),
    bare("hooks", GIT_DIR),
    bare("config", GIT_DIR),
    bare("config.worktree", GIT_DIR),
    bare("info", GIT_DIR),
    bare("modules", GIT_DIR),
    bare("worktrees", GIT_DIR),
    named(".gitconfig", GIT_CONFIG),
    named(".config/git", GIT_XDG),
    env("XDG_CONFIG_HOME", "git", GIT_XDG),
    system("/etc/gitconfig", GIT_SYSTEM),
    named(".bashrc", BASH),
    named(".bash_profile", BASH),
    named(".bash_login", BASH),
    named(".bash_logout", BASH),
    named(".profile", BASH),
    named("bash.bashrc", BASH),
    named(".bash_aliases", BASH_SOURCED),
    named(".bashrc.d", BASH_SOURCED),
    named(".inputrc", READLINE),
    named(".zshenv", ZSH),
    named(".zprofile", ZSH),
    named(".zshrc", ZSH),
    named(".zlogin", ZSH),
    named(".zlogout", ZSH),
    named(".oh-my-zsh", OH_MY_ZSH),
    named(".config/fish", FISH),
    named("config.fish", FISH),
    env("XDG_CONFIG_HOME", "fish", FISH),
    named(".kshrc", SH),
    named(".mkshrc", SH),
    named(".cshrc", CSH),
    named(".tcshrc", CSH),
    named(".login", CSH),
    named(".logout", CSH),
    named(".xprofile", SESSION),
    named(".xsessionrc", SESSION),
    named(".xinitrc", SESSION),
    named(".pam_environment", SESSION),
    named(".config/autostart", SESSION),
    named(".config/environment.d", SESSION),
    named(".config/systemd/user", SESSION),
    env("XDG_CONFIG_HOME", "autostart", SESSION),
    env("XDG_CONFIG_HOME", "environment.d", SESSION),
    env("XDG_CONFIG_HOME", "systemd/user", SESSION),
    named(".ssh", SSH),
    system("/etc/profile", SHELLS_SYSTEM),
    system("/etc/profile.d", SHELLS_SYSTEM),
    system("/etc/bash.bashrc", SHELLS_SYSTEM),
    system("/etc/bashrc", SHELLS_SYSTEM),
    system("/etc/environment", SHELLS_SYSTEM),
    system("/etc/inputrc", SHELLS_SYSTEM),
    system("/etc/zsh", SHELLS_SYSTEM),
    system("/etc/zshenv", SHELLS_SYSTEM),
    system("/etc/zshrc", SHELLS_SYSTEM),
    system("/etc/zprofile", SHELLS_SYSTEM),
    system("/etc/zlogin", SHELLS_SYSTEM),
    system("/etc/zlogout", SHELLS_SYSTEM),
    system("/etc/fish", SHELLS_SYSTEM),
    system("/etc/csh.cshrc", SHELLS_SYSTEM),
    system("/etc/csh.login", SHELLS_SYSTEM),
];

/// The `Named` places of [`PLACES`], each split into its names.
static NAMED: LazyLock<Vec<Vec<&'static str>>> = LazyLock::new(|| {
    PLACES
        .iter()
        .filter_map(|entry| match entry.place {
            Place::Named(name) => Some(name.split('/').collect()),
            _ => None,
        })
        .collect()
});

/// The most files and folders looked at to find the other names of a hard-linked file; past it,
/// such a file is refused unexamined.
const INODE_WALK_LIMIT: usize = 20_000;

/// Where the protected places are for one user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    home: PathBuf,
    /// The [`Place::Env`] and [`Place::System`] places, absolute: as named, and where they lead.
    roots: Vec<PathBuf>,
}

impl Protected {
    /// The protected places of a user whose home is `home`, with no environment variable set.
    pub fn new(home: &Path) -> Protected {
        let roots = PLACES
            .iter()
            .filter_map(|entry| match entry.place {
                Place::System(path) => Some(PathBuf::from(path)),
                _ => None,
            })
            .collect();
        Protected {
            home: home.to_owned(),
            roots,
        }
    }

    /// The protected places of this process's user: `HOME`, and the [`Place::Env`] places of the
    /// variables set (`XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`,
    /// Gemini CLI's system settings paths).
    pub fn from_env() -> Protected {
        Protected::with_env(|name| std::env::var_os(name))
    }

    /// [`Protected::from_env`] with the environment read through `var`.
    pub fn with_env(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Protected {
        let set = |name: &str| {
            var(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let mut protected = Protected::new(&set("HOME").unwrap_or_else(|| PathBuf::from("/")));
        for entry in PLACES {
            let Place::Env(name, under) = entry.place else {
                continue;
            };
            let Some(dir) = set(name) else { continue };
            let root = if under.is_empty() {
                dir
            } else {
                dir.join(under)
            };
            // A folder reached through a link is protected where it leads too.
            if let Some(real) = crate::target::lead(&root, None).filter(|l| l.path != root) {
                protected.roots.push(real.path);
            }
            protected.roots.push(root);
        }
        protected
    }

    /// Each protected place of this user as a path: the named places in the home, the places of
    /// the environment and the system's (the bare-repository places have no path of their own).
    pub fn places(&self) -> Vec<PathBuf> {
        PLACES
            .iter()
            .filter_map(|entry| match entry.place {
                Place::Named(name) => Some(self.home.join(name)),
                _ => None,
            })
            .chain(self.roots.iter().cloned())
            .collect()
    }

    /// Whether a change to `path` could change what askdesk, an agent, a shell or git runs or
    /// trusts: it is in or under a place of [`PLACES`]. `~` is the home; a relative path is read
    /// as it stands (its names alone decide), and `..` is resolved by name, the path as written
    /// counting too. Links are not followed here: [`Protected::leads_to_protected`] does.
    pub fn covers(&self, path: &Path) -> bool {
        let path = match path.strip_prefix("~") {
            Ok(rest) => self.home.join(rest),
            Err(_) => path.to_owned(),
        };
        self.names_protected(&path) || self.names_protected(&crate::target::fold_dots(&path))
    }

    fn names_protected(&self, path: &Path) -> bool {
        let names: Vec<&str> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => name.to_str(),
                _ => None,
            })
            .collect();
        let named = NAMED
            .iter()
            .any(|place| names.windows(place.len()).any(|w| w == place.as_slice()));
        let bare = names.windows(2).any(|w| {
            w[0].ends_with(".git")
                && PLACES
                    .iter()
                    .any(|e| matches!(e.place, Place::InBareRepository(name) if name == w[1]))
        });
        named || bare || self.roots.iter().any(|root| path.starts_with(root))
    }

    /// Whether `path` (relative to `cwd`) leads to a protected place: resolved through every link,
    /// a link to a place not there yet followed too (a write through it creates that place), and
    /// `..` taken as the system takes it; or it is a file with other hard links, one of which is
    /// a protected file (by device and inode).
    pub fn leads_to_protected(&self, path: &Path, cwd: Option<&Path>) -> bool {
        crate::target::lead(path, cwd)
            .is_some_and(|lead| self.covers(&lead.path) || self.hard_links_protected(&lead.path))
    }

    /// Whether no rule may answer for a change to the file `path` (relative to `cwd`): it names a
    /// protected place or askdesk ([`Protected::mentioned_in`]), leads to one
    /// ([`Protected::leads_to_protected`]), or cannot be resolved for sure
    /// ([`crate::target::resolve`]).
    pub fn refuses_path(&self, path: &str, cwd: Option<&str>) -> bool {
        let lead = crate::target::lead(Path::new(path), cwd.map(Path::new));
        self.refuses_led(path, cwd, lead.as_ref())
    }

    /// [`Protected::refuses_path`] with where the path leads worked out already.
    pub(crate) fn refuses_led(&self, path: &str, cwd: Option<&str>, lead: Option<&Lead>) -> bool {
        self.names(path, cwd.map(Path::new))
            || lead.is_none_or(|lead| {
                !lead.sure || self.covers(&lead.path) || self.hard_links_protected(&lead.path)
            })
    }

    /// Whether `real`, a resolved path, is a file with more than one name, one of them in a
    /// protected place. The places with a path ([`Protected::places`]) and those of the folders
    /// above `real` are searched; when there are too many files to search, it is taken to be.
    fn hard_links_protected(&self, real: &Path) -> bool {
        let Ok(meta) = std::fs::metadata(real) else {
            return false;
        };
        if !meta.is_file() || meta.nlink() < 2 {
            return false;
        }
        let mut roots: Vec<PathBuf> = self.places();
        for folder in real.ancestors().skip(1) {
            roots.extend(NAMED.iter().map(|names| folder.join(names.join("/"))));
        }
        match linked_files(roots) {
            Some(inodes) => inodes.contains(&(meta.dev(), meta.ino())),
            None => true,
        }
    }

    /// Whether a word of a command names something protected, or askdesk itself: the word, each
    /// part of it after a `=` or `:` (`--output=x`), each read as a path (relative to `cwd`
    /// too), any mention of `askdesk` or of git's `core.hooksPath`; or the word leads to a
    /// protected place ([`Protected::leads_to_protected`]).
    pub fn mentioned_in(&self, word: &str, cwd: Option<&Path>) -> bool {
        self.names(word, cwd)
            || parts(word).any(|part| self.leads_to_protected(Path::new(part), cwd))
    }

    /// [`Protected::mentioned_in`] by the word's text alone, links not followed.
    fn names(&self, word: &str, cwd: Option<&Path>) -> bool {
        let lower = word.to_lowercase();
        if lower.contains("askdesk") || lower.contains("hookspath") {
            return true;
        }
        parts(word).any(|part| {
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

/// A command word and each part of it after a `=` or `:` (`--output=x`), each of which may name
/// a path.
fn parts(word: &str) -> impl Iterator<Item = &str> {
    std::iter::once(word)
        .chain(word.split(['=', ':']))
        .filter(|part| !part.is_empty())
}

/// The device and inode of every file with more than one name under `roots` (links not
/// followed, git's object stores skipped); `None` past [`INODE_WALK_LIMIT`] entries.
fn linked_files(roots: Vec<PathBuf>) -> Option<HashSet<(u64, u64)>> {
    let mut inodes = HashSet::new();
    let mut seen = HashSet::new();
    let mut stack = roots;
    let mut looked = 0;
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        looked += 1;
        if looked > INODE_WALK_LIMIT {
            return None;
        }
        if meta.is_file() && meta.nlink() > 1 {
            inodes.insert((meta.dev(), meta.ino()));
        } else if meta.is_dir()
            && path.file_name() != Some(std::ffi::OsStr::new("objects"))
            && seen.insert((meta.dev(), meta.ino()))
        {
            let Ok(entries) = std::fs::read_dir(&path) else {
                continue;
            };
            stack.extend(entries.flatten().map(|e| e.path()));
        }
    }
    Some(inodes)
}

/// Whether no answer may be given to this agent's permission prompt, whatever a rule says: its
/// `meta.command` fails [`Protected::refuses_command`], or its `meta.path` (relative to
/// `meta.cwd`) fails [`Protected::refuses_path`]; the places are this process's user's.
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
        || path.is_some_and(|path| protected.refuses_path(path, cwd))
}

/// Whether a change to `path` is one no rule may allow, for a user whose home is `home` (the
/// default locations; [`Protected::from_env`] adds those the environment moves).
pub fn is_protected(path: &Path, home: &Path) -> bool {
    Protected::new(home).covers(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> Protected {
        Protected::with_env(|name| match name {
            "HOME" => Some("/home/me".into()),
            "CODEX_HOME" => Some("/opt/codex".into()),
            _ => None,
        })
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
            // Submodules' git folders, nested ones too, and a bare repository's.
            "/home/me/src/app/.git/modules/lib/hooks/pre-commit",
            "/home/me/src/app/.git/modules/lib/config",
            "/home/me/src/app/.git/modules/a/modules/b/hooks/post-checkout",
            "/home/me/src/app/.git/worktrees/w/config.worktree",
            "/srv/repo.git/hooks/post-receive",
            "/srv/repo.git/config",
            // The agents' trust and MCP servers.
            "/home/me/.claude.json",
            "/home/me/src/app/.mcp.json",
            "/home/me/.gemini/settings.json",
            "/home/me/src/app/.gemini/settings.json",
            "/home/me/src/app/.codex/config.toml",
            "/etc/claude-code/managed-settings.json",
            // git's own configuration.
            "/home/me/.gitconfig",
            "/home/me/.config/git/config",
            "/home/me/.config/git/attributes",
            "/etc/gitconfig",
            // What the shells' start-up files source.
            "/home/me/.bash_aliases",
            "/home/me/.bashrc.d/10-path.sh",
            "/home/me/.inputrc",
            "/home/me/.bash_login",
            "/home/me/.zprofile",
            "/home/me/.config/fish/conf.d/x.fish",
            "/home/me/.oh-my-zsh/custom/x.zsh",
            // askdesk's history.
            "/home/me/.local/share/askdesk/history.jsonl",
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
            "/home/me/src/app/CLAUDE.md",
            "/home/me/src/app/AGENTS.md",
            "/home/me/src/app/.gitattributes",
            "/home/me/src/app/.gitmodules",
            "/srv/repo.git.md/hooks/x",
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
            options: ["Allow once", "Deny"]
                .map(|label| QuestionOption {
                    label: label.into(),
                    ..Default::default()
                })
                .to_vec(),
            ..Default::default()
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

    #[test]
    fn every_place_says_who_reads_it_in_every_language() {
        for language in askdesk_i18n::languages() {
            let messages = askdesk_i18n::Messages::new(language);
            for entry in PLACES {
                let said = messages.get(entry.read_by_id, None);
                assert!(
                    said != entry.read_by_id && !said.is_empty(),
                    "{language} has no {}",
                    entry.read_by_id
                );
            }
        }
        assert_eq!(
            askdesk_i18n::english().get(PLACES[0].read_by_id, None),
            "askdesk: the rules file and settings"
        );
    }

    #[test]
    fn every_place_of_the_list_is_protected_where_the_environment_puts_it() {
        let env = |name: &str| match name {
            "HOME" => Some("/home/me".into()),
            "XDG_CONFIG_HOME" => Some("/cfg".into()),
            "XDG_DATA_HOME" => Some("/data".into()),
            "CLAUDE_CONFIG_DIR" => Some("/cc".into()),
            "CODEX_HOME" => Some("/cx".into()),
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH" => Some("/gm/settings.json".into()),
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH" => Some("/gm/defaults.json".into()),
            _ => None,
        };
        let me = Protected::with_env(env);
        let places = me.places();
        for entry in PLACES {
            let found = match entry.place {
                Place::Named(name) => places.contains(&Path::new("/home/me").join(name)),
                Place::Env(var, under) => {
                    let dir = PathBuf::from(env(var).unwrap());
                    places.contains(&if under.is_empty() {
                        dir
                    } else {
                        dir.join(under)
                    })
                }
                Place::System(path) => places.contains(&PathBuf::from(path)),
                Place::InBareRepository(name) => me.covers(&Path::new("/srv/r.git").join(name)),
            };
            assert!(found, "{entry:?}");
            assert!(!entry.read_by().is_empty());
        }
        for place in places {
            assert!(me.covers(&place), "{}", place.display());
            assert!(me.covers(&place.join("x")), "{}/x", place.display());
        }
    }

    /// A home with a project in it, judged with `Protected::new(home)`.
    fn home_with_project() -> (tempfile::TempDir, PathBuf, Protected) {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        for folder in [".config/askdesk", ".local/share/askdesk", "src/app/src"] {
            std::fs::create_dir_all(home.join(folder)).unwrap();
        }
        for file in [
            ".bashrc",
            ".config/askdesk/rules.toml",
            "notes.md",
            "src/app/src/lib.rs",
        ] {
            std::fs::write(home.join(file), "").unwrap();
        }
        let protected = Protected::new(&home);
        (dir, home, protected)
    }

    #[test]
    fn a_protected_place_reached_through_a_link_is_protected() {
        let (_dir, home, me) = home_with_project();
        let app = home.join("src/app");
        std::os::unix::fs::symlink(home.join(".local/share/askdesk"), app.join("data")).unwrap();
        std::os::unix::fs::symlink(home.join(".config/askdesk"), app.join("cfg")).unwrap();
        std::os::unix::fs::symlink(home.join(".profile"), app.join("later")).unwrap();
        for path in [
            "data/history.jsonl",
            "cfg/rules.toml",
            "cfg/new.toml",
            "later",
        ] {
            assert!(me.leads_to_protected(Path::new(path), Some(&app)), "{path}");
            for line in [format!("cp x {path}"), format!("cargo run -- --out={path}")] {
                assert!(me.refuses_command(&line, Some(&app)), "{line}");
            }
        }
        assert!(!me.leads_to_protected(Path::new("src/lib.rs"), Some(&app)));
        assert!(!me.refuses_command("cp x src/lib.rs", Some(&app)));
    }

    #[test]
    fn a_hard_link_to_a_protected_file_is_protected() {
        let (_dir, home, me) = home_with_project();
        let app = home.join("src/app");
        std::fs::hard_link(home.join(".bashrc"), app.join("notes.txt")).unwrap();
        std::fs::hard_link(
            home.join(".config/askdesk/rules.toml"),
            app.join("src/rules.rs"),
        )
        .unwrap();
        std::fs::hard_link(home.join("notes.md"), app.join("src/notes.md")).unwrap();
        for path in ["notes.txt", "src/rules.rs"] {
            assert!(me.leads_to_protected(Path::new(path), Some(&app)), "{path}");
            let cwd = app.display().to_string();
            assert!(me.refuses_path(path, Some(&cwd)), "{path}");
        }
        assert!(
            !me.leads_to_protected(Path::new("src/notes.md"), Some(&app)),
            "two names, neither protected"
        );
    }

    #[test]
    fn an_environment_folder_reached_through_a_link_is_protected_where_it_leads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real/askdesk")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("config")).unwrap();
        let config = root.join("config");
        let me = Protected::with_env(|name| match name {
            "HOME" => Some("/home/me".into()),
            "XDG_CONFIG_HOME" => Some(config.clone().into()),
            _ => None,
        });
        assert!(me.covers(&root.join("config/askdesk/rules.toml")));
        assert!(me.covers(&root.join("real/askdesk/rules.toml")));
        assert!(!me.covers(&root.join("real/other.toml")));
    }
}
