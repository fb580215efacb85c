//! git's command line as rules read it: its global options, the configuration given on it (`-c`,
//! `--config-env`) and the aliases that configuration defines, the configuration keys whose
//! values git runs as programs (from git-config(1)), and the options of git's own commands that
//! run a command.
//!
//! An answer rule never applies to a git command that sets such a key (`git -c core.pager=x`,
//! `git config core.fsmonitor x`), moves git's programs (`--exec-path=dir`), runs a command
//! through an option (`rebase --exec`), or has a global option not read here; a deny sees the
//! command with the global options off and an alias the line defines expanded.

use crate::runners::{self, Inner, Kind, Runner};
use crate::shell::Escape;

/// Sections all of whose keys name programs, commands, trusted places or code git loads, from
/// git-config(1): `alias.*` (a `!` alias is a shell command), `filter.*` (clean and smudge
/// commands), `include.*` and `includeIf.*` (more configuration), `pager.*`, `credential.*`
/// (helpers), `difftool.*`, `mergetool.*`, `guitool.*`, `browser.*`, `man.*` (their commands
/// and paths), `sendemail.*` (`smtpServer` may be a program, `toCmd`, ...), `gpg.*` (signing
/// programs), `protocol.*` (`ext::` runs commands), `url.*` (rewrites where git connects),
/// `safe.*` (which repositories' configuration is trusted), `hook.*` (configured hooks),
/// `instaweb.*`.
pub const CODE_SECTIONS: &[&str] = &[
    "alias",
    "browser",
    "credential",
    "difftool",
    "filter",
    "gpg",
    "guitool",
    "hook",
    "include",
    "includeif",
    "instaweb",
    "man",
    "mergetool",
    "pager",
    "protocol",
    "safe",
    "sendemail",
    "url",
];

/// Key names (the part after the last dot) that name a program or a command in any section, or
/// a place git runs programs or hooks from, from git-config(1): `core.editor`,
/// `sequence.editor`, `core.pager`, `core.fsmonitor`, `core.sshCommand`, `core.askPass`,
/// `core.gitProxy`, `core.hooksPath`, `core.alternateRefsCommand`, `core.worktree`,
/// `diff.external`, `diff.<driver>.command` and `.textconv`, `merge.<driver>.driver`,
/// `interactive.diffFilter`, `imap.tunnel`, `init.templateDir`, `remote.<name>.uploadpack`,
/// `.receivepack`, `.vcs` and `.proxy`, `http.proxy`, `submodule.<name>.update`,
/// `uploadpack.packObjectsHook`, `trailer.<token>.command`, `web.browser`, `*.path` (tool and
/// include paths), ...; matched at the end of the name, so new keys spelt the same way count.
pub const CODE_NAME_ENDINGS: &[&str] = &[
    "askpass",
    "browser",
    "cmd",
    "command",
    "driver",
    "editor",
    "external",
    "filter",
    "fsmonitor",
    "helper",
    "hook",
    "insteadof",
    "pager",
    "path",
    "program",
    "proxy",
    "receivepack",
    "templatedir",
    "textconv",
    "tunnel",
    "update",
    "uploadpack",
    "vcs",
    "worktree",
];

/// Whether a configuration key (`section.name` or `section.subsection.name`, any case) names a
/// program git runs or configuration and places it trusts.
pub fn runs_code(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let section = key.split('.').next().unwrap_or_default();
    let name = key.rsplit('.').next().unwrap_or_default();
    CODE_SECTIONS.contains(&section)
        || (key.contains('.') && CODE_NAME_ENDINGS.iter().any(|e| name.ends_with(e)))
}

/// git's global options that take a value, as the next word or after `=`.
const VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--list-cmds",
    "--attr-source",
    "--config-env",
];

/// git's global options that take none (`--exec-path` without a value prints it).
const FLAGS: &[&str] = &[
    "-p",
    "--paginate",
    "-P",
    "--no-pager",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-optional-locks",
    "--no-advice",
    "--bare",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--exec-path",
    "--html-path",
    "--man-path",
    "--info-path",
    "-v",
    "--version",
    "-h",
    "--help",
];

/// The options of git's commands that run a command (`!`), or code or programs from elsewhere
/// (`%`), read as [`Runner`]s are, named by the command: from git-rebase(1), git-bisect(1),
/// git-submodule(1), git-difftool(1), git-filter-branch(1), git-clone(1), git-fetch(1),
/// git-push(1), git-archive(1), git-grep(1), git-send-email(1), git-instaweb(1).
const COMMANDS: &[Runner] = &[
    command(&["rebase"], Kind::Options, "-x! --exec!"),
    command(&["bisect"], Kind::Subcommand(&["run"]), ""),
    Runner {
        text: true,
        ..command(&["submodule"], Kind::Subcommand(&["foreach"]), "")
    },
    command(&["difftool"], Kind::Options, "-x! --extcmd!"),
    command(
        &["filter-branch"],
        Kind::Options,
        "--env-filter! --tree-filter! --index-filter! --parent-filter! --msg-filter! \
         --commit-filter! --tag-name-filter!",
    ),
    command(
        &["clone"],
        Kind::Options,
        "-u! --upload-pack! --template% --recurse-submodules% --recursive%",
    ),
    command(&["init"], Kind::Options, "--template%"),
    command(
        &["fetch", "pull", "ls-remote"],
        Kind::Options,
        "--upload-pack!",
    ),
    command(&["push"], Kind::Options, "--receive-pack! --exec!"),
    command(&["archive"], Kind::Options, "--exec!"),
    command(&["grep"], Kind::Options, "-O! --open-files-in-pager!"),
    command(
        &["send-email"],
        Kind::Options,
        "--smtp-server! --to-cmd! --cc-cmd! --header-cmd! --sendmail-cmd!",
    ),
    command(
        &["instaweb"],
        Kind::Options,
        "-d! --httpd! -b! --browser! -m% --module-path%",
    ),
];

const fn command(names: &'static [&'static str], kind: Kind, options: &'static str) -> Runner {
    Runner {
        source: "git",
        ..runners::other(names, kind, options)
    }
}

/// One git command line read: the configuration given on it, where its command starts, and
/// whether every global option was understood.
struct Git<'w> {
    /// `-c key=value` (a key alone is `true`) and `--config-env key=ENV` (value unknown).
    config: Vec<(String, Option<String>)>,
    /// The global options as written.
    globals: &'w [String],
    /// The command and its words.
    rest: &'w [String],
    understood: bool,
    /// `--exec-path=dir`: git's own programs run from elsewhere.
    exec_path: bool,
}

fn parse(words: &[String]) -> Git<'_> {
    let mut git = Git {
        config: Vec::new(),
        globals: &[],
        rest: &[],
        understood: true,
        exec_path: false,
    };
    let mut i = 1;
    while let Some(word) = words.get(i) {
        if !word.starts_with('-') {
            break;
        }
        let (name, attached) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (word.as_str(), None),
        };
        if name == "--exec-path" && attached.is_some() {
            git.exec_path = true;
            i += 1;
        } else if VALUED.contains(&name) {
            let value = match attached {
                Some(value) => value,
                None => {
                    i += 1;
                    words.get(i).cloned().unwrap_or_default()
                }
            };
            i += 1;
            match name {
                "-c" => git.config.push(match value.split_once('=') {
                    Some((key, value)) => (key.to_owned(), Some(value.to_owned())),
                    None => (value, Some("true".to_owned())),
                }),
                "--config-env" => {
                    let key = value.split_once('=').map_or(value.as_str(), |(k, _)| k);
                    git.config.push((key.to_owned(), None));
                }
                _ => {}
            }
        } else if FLAGS.contains(&word.as_str()) {
            i += 1;
        } else {
            git.understood = false;
            break;
        }
    }
    let at = i.min(words.len());
    git.globals = &words[1..at];
    git.rest = &words[at..];
    git
}

/// Why an answer rule may not apply to this git command line, if it may not.
pub fn escape(words: &[String]) -> Option<Escape> {
    let git = parse(words);
    if !git.understood {
        return Some(Escape::Program);
    }
    if git.exec_path || git.config.iter().any(|(key, _)| runs_code(key)) {
        return Some(Escape::Config);
    }
    let command = git.rest.first()?.as_str();
    if command == "config" {
        return config_escape(&git.rest[1..]);
    }
    if command == "clone" && clone_config(git.rest).any(|key| runs_code(&key)) {
        return Some(Escape::Config);
    }
    COMMANDS
        .iter()
        .find(|c| c.names.contains(&command))
        .is_some_and(|c| c.runs_code(git.rest))
        .then_some(Escape::Program)
}

/// The keys `git clone -c key=value` and `--config key=value` set.
fn clone_config(rest: &[String]) -> impl Iterator<Item = String> + '_ {
    rest.iter().enumerate().filter_map(|(i, word)| {
        let value = match word.as_str() {
            "-c" | "--config" => rest.get(i + 1)?.as_str(),
            _ => word.strip_prefix("--config=")?,
        };
        Some(value.split_once('=').map_or(value, |(k, _)| k).to_owned())
    })
}

/// `git config`'s options that take a value.
const CONFIG_VALUED: &[&str] = &[
    "-f",
    "--file",
    "--blob",
    "--type",
    "--default",
    "--comment",
    "--value",
    "--url",
];

/// `git config`'s options that take none; those that read are in [`CONFIG_READS`].
const CONFIG_FLAGS: &[&str] = &[
    "--global",
    "--system",
    "--local",
    "--worktree",
    "--replace-all",
    "--add",
    "--unset",
    "--unset-all",
    "--rename-section",
    "--remove-section",
    "--bool",
    "--int",
    "--bool-or-int",
    "--path",
    "--expiry-date",
    "--no-type",
    "-z",
    "--null",
    "--name-only",
    "--show-origin",
    "--show-scope",
    "--includes",
    "--no-includes",
    "--fixed-value",
    "--all",
    "--regexp",
];

/// `git config`'s options and commands that only read.
const CONFIG_READS: &[&str] = &[
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--get-color",
    "--get-colorbool",
    "-l",
    "--list",
    "get",
    "list",
];

/// Why an answer may not apply to `git config WORDS`: it edits the file in an editor, has an
/// option not read here, or writes, renames or removes a key or section that runs code. A key
/// alone (`git config core.pager`) and the reading options and commands only read.
fn config_escape(words: &[String]) -> Option<Escape> {
    let mut operands = Vec::new();
    let mut reads = false;
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let name = word.split_once('=').map_or(word.as_str(), |(n, _)| n);
        if matches!(word.as_str(), "-e" | "--edit") || (operands.is_empty() && word == "edit") {
            return Some(Escape::Program);
        }
        if CONFIG_READS.contains(&word.as_str()) && (word.starts_with('-') || operands.is_empty()) {
            reads = true;
        } else if CONFIG_VALUED.contains(&name) {
            i += usize::from(!word.contains('='));
        } else if word.starts_with('-') && !CONFIG_FLAGS.contains(&word.as_str()) && word != "--" {
            return Some(Escape::Program);
        } else if !word.starts_with('-') {
            operands.push(word.as_str());
        }
        i += 1;
    }
    let key_alone = operands.len() == 1;
    if reads || key_alone {
        return None;
    }
    operands
        .iter()
        .any(|operand| {
            runs_code(operand) || CODE_SECTIONS.contains(&operand.to_ascii_lowercase().as_str())
        })
        .then_some(Escape::Config)
}

/// Adds what a git command line runs to `inner`: the command with the global options taken off,
/// the command an alias given on the line stands for (a `!` alias is a shell script), and what
/// the command's own options run. An alias the line's configuration may define without showing
/// it (`--config-env`, an included file) makes the line run something unknown.
pub fn inner(words: &[String], inner: &mut Inner) {
    let git = parse(words);
    if !git.understood {
        // Options not read: any later word may start the command.
        for start in 1..words.len() {
            let mut command = vec!["git".to_owned()];
            command.extend_from_slice(&words[start..]);
            inner.commands.push(command);
        }
        return;
    }
    let Some(command) = git.rest.first() else {
        return;
    };
    let mut bare = vec!["git".to_owned()];
    bare.extend_from_slice(git.rest);
    inner.commands.push(bare);
    let alias = format!("alias.{}", command.to_ascii_lowercase());
    for (key, value) in &git.config {
        let key = key.to_ascii_lowercase();
        match value {
            Some(value) if key == alias => expand(&git, value, inner),
            // An alias from the environment (any of them: aliases name aliases), or a file of
            // configuration that may define one.
            None if key.starts_with("alias.") => inner.unknown = true,
            _ if key.starts_with("include.") || key.starts_with("includeif.") => {
                inner.unknown = true
            }
            _ => {}
        }
    }
    if let Some(runner) = COMMANDS
        .iter()
        .find(|c| c.names.contains(&command.as_str()))
    {
        runner.read(git.rest, inner);
    }
}

/// The command an alias stands for: a `!` alias is a shell script given the words after it;
/// another is git with the alias's words in place of its name (the global options kept, so
/// an alias of an alias is expanded in turn).
fn expand(git: &Git<'_>, value: &str, inner: &mut Inner) {
    let args = &git.rest[1..];
    if let Some(script) = value.strip_prefix('!') {
        inner.scripts.push(script.to_owned());
        if !args.is_empty() {
            inner.scripts.push(format!("{script} {}", args.join(" ")));
        }
        return;
    }
    let mut command = vec!["git".to_owned()];
    command.extend_from_slice(git.globals);
    command.extend(value.split_whitespace().map(str::to_owned));
    command.extend_from_slice(args);
    inner.commands.push(command);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glob::Glob;
    use crate::shell::{allows, catches, read};

    /// A key of every kind [`runs_code`] names: one per section, one per name ending, and the
    /// keys git-config(1) documents as running a program.
    fn code_keys() -> Vec<String> {
        let mut keys: Vec<String> = CODE_SECTIONS
            .iter()
            .map(|section| format!("{section}.x.y"))
            .chain(
                CODE_NAME_ENDINGS
                    .iter()
                    .map(|ending| format!("core.{ending}")),
            )
            .chain(
                CODE_NAME_ENDINGS
                    .iter()
                    .map(|ending| format!("diff.x.{ending}")),
            )
            .collect();
        keys.extend(
            [
                "core.fsmonitor",
                "core.pager",
                "core.sshCommand",
                "core.editor",
                "core.hooksPath",
                "core.askPass",
                "core.gitProxy",
                "core.alternateRefsCommand",
                "credential.helper",
                "credential.https://x.helper",
                "diff.external",
                "diff.tool.command",
                "diff.x.textconv",
                "merge.x.driver",
                "sequence.editor",
                "gpg.program",
                "gpg.ssh.defaultKeyCommand",
                "pager.log",
                "alias.p",
                "filter.lfs.smudge",
                "uploadpack.packObjectsHook",
                "include.path",
                "includeIf.gitdir:~/x.path",
                "remote.origin.uploadpack",
                "remote.origin.receivepack",
                "remote.origin.vcs",
                "protocol.ext.allow",
                "protocol.allow",
                "url.ext::sh.insteadOf",
                "http.proxy",
                "interactive.diffFilter",
                "imap.tunnel",
                "init.templateDir",
                "submodule.x.update",
                "sendemail.smtpServer",
                "safe.directory",
                "hook.pre-commit.command",
                "trailer.sign.cmd",
                "web.browser",
                "difftool.x.cmd",
                "mergetool.x.path",
                "core.worktree",
                "CORE.PAGER",
            ]
            .map(str::to_owned),
        );
        keys
    }

    fn no_allow(line: &str) {
        for glob in ["*", "git *"] {
            assert!(
                !allows(&Glob::new(glob).unwrap(), line),
                "{glob:?} allows {line:?}"
            );
        }
        assert!(read(line).escape.is_some(), "{line:?}");
    }

    #[test]
    fn configuration_that_runs_a_program_is_never_allowed() {
        for key in code_keys() {
            assert!(runs_code(&key), "{key}");
            for line in [
                format!("git -c {key}=x status"),
                format!("git -c {key} status"),
                format!("git --config-env={key}=E status"),
                format!("git --config-env {key}=E status"),
                format!("git config {key} x"),
                format!("git config --global {key} x"),
                format!("git config --file .x --add {key} x"),
                format!("git config --replace-all {key} x y"),
                format!("git config set {key} x"),
                format!("git -C . config --system {key} x"),
                format!("git clone -c {key}=x https://example.com/r"),
                format!("git clone --config={key}=x https://example.com/r"),
            ] {
                no_allow(&line);
            }
        }
        for line in [
            "git --exec-path=/tmp status",
            "git config -e",
            "git config --edit --global",
            "git config edit",
            "git config --frobnicate core.x y",
            "git --frobnicate status",
            "git config --rename-section x alias",
        ] {
            no_allow(line);
        }
        // What names no such key is read as any other command.
        let git = Glob::new("git *").unwrap();
        for line in [
            "git status",
            "git -c user.name=me commit -m x",
            "git config user.email me@example.com",
            "git config core.pager",
            "git config --get core.fsmonitor",
            "git config get alias.p",
            "git config --list",
            "git --exec-path",
            "git --no-pager log -p",
        ] {
            assert!(allows(&git, line), "{line:?}");
        }
        for key in ["user.name", "core.autocrlf", "color.ui", "push.default"] {
            assert!(!runs_code(key), "{key}");
        }
    }

    #[test]
    fn a_deny_sees_the_alias_a_line_defines_and_the_command_an_option_runs() {
        let push = Glob::new("*git push*").unwrap();
        for line in [
            "git -c alias.p=push p",
            "git -c alias.P=push p origin",
            "git -c Alias.p='push --force' p",
            "git -c alias.p=q -c alias.q=push p",
            "git -c 'alias.p=!git push' p",
            "git -c 'alias.p=!f() { git push; }; f' p",
            "git --config-env=alias.p=X p",
            "git -c include.path=/tmp/x p",
            "git -C . -c alias.p=push --no-pager p",
        ] {
            assert!(catches(&push, line), "{line:?}");
            no_allow(line);
        }
        assert!(!catches(&push, "git -c alias.p=pull p"));
        assert!(catches(
            &Glob::new("git -c alias.p=p p").unwrap(),
            "git -c alias.p=p p"
        ));

        let rm = Glob::new("rm -rf*").unwrap();
        for command in COMMANDS {
            for name in command.names {
                let options = command.options.split_whitespace();
                let mut lines: Vec<String> = options
                    .filter_map(|token| token.strip_suffix('!'))
                    .map(|option| match option {
                        _ if option.starts_with("--") => format!("git {name} {option}='rm -rf x'"),
                        _ => format!("git {name} {option} 'rm -rf x'"),
                    })
                    .collect();
                if let Kind::Subcommand(subcommands) = command.kind {
                    lines.extend(
                        subcommands
                            .iter()
                            .map(|s| format!("git {name} {s} 'rm -rf x'")),
                    );
                    lines.extend(
                        subcommands
                            .iter()
                            .map(|s| format!("git {name} {s} rm -rf x")),
                    );
                }
                for line in lines {
                    assert!(catches(&rm, &line), "{line:?}");
                    no_allow(&line);
                }
                for token in command
                    .options
                    .split_whitespace()
                    .filter(|t| t.ends_with('%'))
                {
                    no_allow(&format!("git {name} {} x", token.trim_end_matches('%')));
                }
            }
        }
    }
}
