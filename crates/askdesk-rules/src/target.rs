//! What a tool touches, as rules see it: the file it would change (`match.path`, the agent's
//! `meta.path`) and the URL it would fetch (`match.host`, `match.url_path`, the agent's
//! `meta.url`), each worked out once per request for all the rules tried on it.
//!
//! A rule that answers reads them strictly, and fails closed: the path is resolved against the
//! session's directory (`meta.cwd`) with every symbolic link followed (the longest prefix that
//! exists is canonicalized; the rest must be plain names that do not exist yet), so `..` and links
//! cannot lead out of what the glob names; a relative path without an absolute `cwd`, a path that
//! cannot be resolved (a dangling link, a folder that cannot be read, `..` after a name that does
//! not exist) and a URL that is not plain `http`/`https` with a host match no rule that answers.
//! A rule that denies, dismisses or leaves the request to the human reads them generously: it
//! holds when any reading of the path (as given, joined to `cwd` with `..` taken lexically,
//! resolved, `~/` as the home folder) or of the URL matches.
//!
//! A rule that names a field never matches a request without it: `path` needs a `meta.path`,
//! `host` and `url_path` a `meta.url`.

use std::cell::OnceCell;
use std::path::{Component, Path, PathBuf};

use askdesk_core::meta;
use askdesk_core::AgentInfo;

use crate::file::Match;
use crate::protected::Protected;

/// How a rule reads what a tool touches: strictly when it would answer (an answer may allow),
/// generously when it denies, dismisses or asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    Strict,
    Generous,
}

/// The path and URL of one request, worked out on first use and kept for the other rules.
pub struct Targets<'a> {
    agent: Option<&'a AgentInfo>,
    strict_path: OnceCell<Option<String>>,
    generous_paths: OnceCell<Vec<String>>,
    strict_url: OnceCell<Option<UrlParts>>,
    generous_urls: OnceCell<Vec<UrlParts>>,
}

/// A URL's host (lowercase) and path, as `match.host` and `match.url_path` see them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    pub host: String,
    pub path: String,
}

impl<'a> Targets<'a> {
    pub fn new(agent: Option<&'a AgentInfo>) -> Targets<'a> {
        Targets {
            agent,
            strict_path: OnceCell::new(),
            generous_paths: OnceCell::new(),
            strict_url: OnceCell::new(),
            generous_urls: OnceCell::new(),
        }
    }

    fn meta(&self, key: &str) -> Option<&'a str> {
        self.agent?
            .meta
            .as_ref()?
            .get(key)?
            .as_str()
            .filter(|v| !v.is_empty())
    }

    /// Whether the path and URL fields of `matcher` hold for this request.
    pub fn hold(&self, matcher: &Match, reading: Reading) -> bool {
        if let Some(glob) = &matcher.path {
            let held = match reading {
                Reading::Strict => self.strict_path().is_some_and(|path| glob.matches(path)),
                Reading::Generous => self.generous_paths().iter().any(|p| glob.matches(p)),
            };
            if !held {
                return false;
            }
        }
        if matcher.host.is_none() && matcher.url_path.is_none() {
            return true;
        }
        let fits = |url: &UrlParts| {
            matcher.host.as_ref().is_none_or(|g| g.matches(&url.host))
                && matcher
                    .url_path
                    .as_ref()
                    .is_none_or(|g| g.matches(&url.path))
        };
        match reading {
            Reading::Strict => self.strict_url().is_some_and(fits),
            Reading::Generous => self.generous_urls().iter().any(fits),
        }
    }

    /// The file resolved as a rule that answers sees it, or `None` when it cannot be, or when no
    /// rule may allow changing it ([`crate::protected`]: the place it resolves to counts, so a
    /// link to `~/.bashrc` is `~/.bashrc`).
    pub fn strict_path(&self) -> Option<&str> {
        self.strict_path
            .get_or_init(|| {
                let path = self.meta(meta::PATH)?;
                let resolved = resolve(path, self.meta(meta::CWD))?;
                if Protected::from_env().covers(&resolved) {
                    return None;
                }
                resolved.into_os_string().into_string().ok()
            })
            .as_deref()
    }

    fn generous_paths(&self) -> &[String] {
        self.generous_paths.get_or_init(|| {
            let Some(path) = self.meta(meta::PATH) else {
                return Vec::new();
            };
            let cwd = self.meta(meta::CWD);
            let mut readings = vec![path.to_owned()];
            let home = std::env::var("HOME").ok().filter(|h| h.starts_with('/'));
            let expanded = match (path.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => Some(format!("{home}/{rest}")),
                _ => None,
            };
            for path in std::iter::once(path).chain(expanded.as_deref()) {
                readings
                    .extend(lexical(path, cwd).and_then(|p| p.into_os_string().into_string().ok()));
                readings
                    .extend(resolve(path, cwd).and_then(|p| p.into_os_string().into_string().ok()));
            }
            readings.dedup();
            readings
        })
    }

    /// The URL as a rule that answers sees it, or `None` when it is not a plain web address.
    pub fn strict_url(&self) -> Option<&UrlParts> {
        self.strict_url
            .get_or_init(|| strict_url(self.meta(meta::URL)?))
            .as_ref()
    }

    fn generous_urls(&self) -> &[UrlParts] {
        self.generous_urls.get_or_init(|| {
            let Some(text) = self.meta(meta::URL) else {
                return Vec::new();
            };
            let mut readings = Vec::new();
            if let Some(parsed) = url::Url::parse(text).ok().and_then(|u| parts(&u)) {
                readings.push(parsed);
            }
            readings.push(loose_url(text));
            readings.dedup();
            readings
        })
    }
}

/// `path` made absolute against `cwd` with every symbolic link resolved: the longest prefix
/// that exists canonicalized, the rest plain names that do not exist. `None` when that cannot be
/// said for sure.
pub fn resolve(path: &str, cwd: Option<&str>) -> Option<PathBuf> {
    let path = Path::new(path);
    let joined = if path.is_absolute() {
        path.to_owned()
    } else {
        let cwd = Path::new(cwd?);
        if !cwd.is_absolute() {
            return None;
        }
        cwd.join(path)
    };
    // From the whole path up: the first ancestor that canonicalizes is the prefix that exists.
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    let mut at: &Path = &joined;
    loop {
        match std::fs::canonicalize(at) {
            Ok(mut real) => {
                for name in missing.iter().rev() {
                    real.push(name);
                }
                return Some(real);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Missing indeed, not a link to somewhere missing (which a write would create).
                match std::fs::symlink_metadata(at) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    _ => return None,
                }
                match at.components().next_back()? {
                    Component::Normal(name) => missing.push(name),
                    // `..` or `.` after a name that does not exist: not a place for sure.
                    _ => return None,
                }
                at = at.parent()?;
            }
            Err(_) => return None,
        }
    }
}

/// `path` joined to `cwd` with `.` dropped and `..` taking off the name before it, without
/// looking at the file system.
fn lexical(path: &str, cwd: Option<&str>) -> Option<PathBuf> {
    let path = Path::new(path);
    let joined = match cwd {
        _ if path.is_absolute() => path.to_owned(),
        Some(cwd) if cwd.starts_with('/') => Path::new(cwd).join(path),
        _ => return None,
    };
    let mut out = PathBuf::from("/");
    for component in joined.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    Some(out)
}

/// A plain `http`/`https` URL's host and path; `None` for anything else, and for a path that
/// holds an encoded slash or backslash (`%2F`, `%5C`), which a server may read as a separator.
fn strict_url(text: &str) -> Option<UrlParts> {
    let url = url::Url::parse(text).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let parts = parts(&url)?;
    let lower = parts.path.to_ascii_lowercase();
    if lower.contains("%2f") || lower.contains("%5c") {
        return None;
    }
    Some(parts)
}

fn parts(url: &url::Url) -> Option<UrlParts> {
    Some(UrlParts {
        host: url.host_str()?.to_ascii_lowercase(),
        path: url.path().to_owned(),
    })
}

/// A URL read the simple way (for rules that deny): the host is what follows `//` up to the next
/// `/`, `\`, `?` or `#`, after any `user@` and before any `:port`; the path runs to `?` or `#`.
fn loose_url(text: &str) -> UrlParts {
    let rest = text.split_once("//").map_or(text, |(_, rest)| rest);
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let path = &tail[..tail.find(['?', '#']).unwrap_or(tail.len())];
    UrlParts {
        host: host.trim_end_matches('.').to_ascii_lowercase(),
        path: if path.is_empty() {
            "/".into()
        } else {
            path.replace('\\', "/")
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::RuleSet;
    use serde_json::json;

    fn agent(meta: serde_json::Value) -> AgentInfo {
        serde_json::from_value(json!({ "id": "a", "meta": meta })).unwrap()
    }

    /// A project folder with a file, a folder, a link out of it and a dangling link.
    struct Project {
        dir: tempfile::TempDir,
    }

    impl Project {
        fn new() -> Project {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            std::fs::create_dir_all(root.join("app/src")).unwrap();
            std::fs::create_dir_all(root.join("outside")).unwrap();
            std::fs::write(root.join("app/src/lib.rs"), "").unwrap();
            std::fs::write(root.join("outside/secret"), "").unwrap();
            std::os::unix::fs::symlink(root.join("outside"), root.join("app/out")).unwrap();
            std::os::unix::fs::symlink(root.join("outside/new"), root.join("app/dangling"))
                .unwrap();
            Project { dir }
        }

        fn root(&self) -> String {
            self.dir
                .path()
                .canonicalize()
                .unwrap()
                .display()
                .to_string()
        }
    }

    #[test]
    fn paths_resolve_against_cwd_through_links() {
        let p = Project::new();
        let root = p.root();
        let app = format!("{root}/app");
        let r = |path: &str, cwd: Option<&str>| resolve(path, cwd).map(|p| p.display().to_string());
        assert_eq!(
            r("src/lib.rs", Some(&app)),
            Some(format!("{app}/src/lib.rs"))
        );
        assert_eq!(
            r("./src/../src/lib.rs", Some(&app)),
            Some(format!("{app}/src/lib.rs"))
        );
        // A file not there yet, in folders not there yet.
        assert_eq!(
            r("src/new/mod.rs", Some(&app)),
            Some(format!("{app}/src/new/mod.rs"))
        );
        // `..` and links lead where they lead.
        assert_eq!(
            r("../outside/secret", Some(&app)),
            Some(format!("{root}/outside/secret"))
        );
        assert_eq!(
            r("out/secret", Some(&app)),
            Some(format!("{root}/outside/secret"))
        );
        assert_eq!(
            r("out/brand-new", Some(&app)),
            Some(format!("{root}/outside/brand-new"))
        );
        // What cannot be said for sure is nothing.
        assert_eq!(r("src/lib.rs", None), None, "relative without cwd");
        assert_eq!(r("src/lib.rs", Some("app")), None, "relative cwd");
        assert_eq!(
            r("dangling", Some(&app)),
            None,
            "a link to a file not there"
        );
        assert_eq!(
            r("missing/../src/lib.rs", Some(&app)),
            None,
            "`..` after a missing name"
        );
        assert_eq!(
            r(&format!("{app}/src/lib.rs/x"), None),
            None,
            "under a file"
        );
    }

    fn rules(text: &str) -> RuleSet {
        RuleSet::parse(text).unwrap()
    }

    #[test]
    fn a_path_rule_that_answers_fails_closed_and_one_that_denies_holds_generously() {
        let p = Project::new();
        let root = p.root();
        let app = format!("{root}/app");
        let set = rules(&format!(
            "[[rule]]\nname = \"allow\"\nmatch = {{ tool = \"Edit\", path = \"{app}/*\" }}\nanswer = \"Allow once\"\n\
             [[rule]]\nname = \"deny\"\nmatch = {{ path = \"{root}/outside/*\" }}\ndeny = \"not there\"\n"
        ));
        let (allow, deny) = (&set.rules[0], &set.rules[1]);
        let edit = |path: &str, cwd: Option<&str>| {
            let mut meta = json!({ "tool": "Edit", "path": path });
            if let Some(cwd) = cwd {
                meta["cwd"] = json!(cwd);
            }
            agent(meta)
        };
        let holds = |rule: &crate::file::Rule, a: &AgentInfo| rule.matches(Some(a), &[]);
        assert!(holds(allow, &edit("src/lib.rs", Some(&app))));
        assert!(holds(allow, &edit(&format!("{app}/src/new.rs"), None)));
        // A protected place is never allowed, however it is reached.
        std::fs::create_dir_all(format!("{app}/.git/hooks")).unwrap();
        std::os::unix::fs::symlink(format!("{app}/.git/hooks"), format!("{app}/src/h")).unwrap();
        assert!(!holds(allow, &edit(".git/hooks/pre-commit", Some(&app))));
        assert!(!holds(allow, &edit("src/h/pre-commit", Some(&app))));
        for (path, cwd) in [
            ("src/lib.rs", None),
            ("../outside/secret", Some(app.as_str())),
            ("src/../../outside/secret", Some(app.as_str())),
            ("out/secret", Some(app.as_str())),
            ("dangling", Some(app.as_str())),
            ("missing/../../outside/x", Some(app.as_str())),
        ] {
            assert!(!holds(allow, &edit(path, cwd)), "allowed {path} in {cwd:?}");
        }
        // The deny rule sees through the link and `..`, resolved or not.
        for (path, cwd) in [
            ("out/secret", Some(app.as_str())),
            ("../outside/secret", Some(app.as_str())),
            ("missing/../../outside/x", Some(app.as_str())),
        ] {
            assert!(
                holds(deny, &edit(path, cwd)),
                "not denied: {path} in {cwd:?}"
            );
        }
        assert!(!holds(deny, &edit("src/lib.rs", Some(&app))));
        // No path, no match, either way.
        let bash = agent(json!({ "tool": "Bash", "command": "ls", "cwd": app }));
        assert!(!holds(allow, &bash));
        assert!(!holds(deny, &bash));
    }

    #[test]
    fn urls_by_host_and_path() {
        let set = rules(
            "[[rule]]\nname = \"docs\"\nmatch = { tool = \"WebFetch\", host = \"docs.rs\", url_path = \"/tokio/*\" }\nanswer = \"Allow once\"\n\
             [[rule]]\nname = \"any github\"\nmatch = { tool = \"WebFetch\", host = \"*.GitHub.com\" }\nanswer = \"Allow once\"\n\
             [[rule]]\nname = \"no evil\"\nmatch = { host = \"evil.example\" }\ndeny = \"no\"\n",
        );
        let fetch = |url: &str| agent(json!({ "tool": "WebFetch", "url": url }));
        let holds = |i: usize, url: &str| set.rules[i].matches(Some(&fetch(url)), &[]);
        assert!(holds(0, "https://docs.rs/tokio/latest/tokio/"));
        assert!(holds(0, "https://DOCS.rs:443/tokio/x?y#z"));
        assert!(!holds(0, "https://docs.rs/serde/"));
        assert!(
            !holds(0, "https://docs.rs/tokio/../serde/"),
            "dot segments are taken"
        );
        assert!(!holds(0, "https://docs.rs/tokio/%2e%2e/serde/"));
        assert!(
            !holds(0, "https://docs.rs/tokio/..%2Fserde"),
            "an encoded slash"
        );
        assert!(!holds(0, "https://docs.rs.evil.example/tokio/"));
        assert!(
            !holds(0, "https://docs.rs@evil.example/tokio/"),
            "user info is not the host"
        );
        assert!(!holds(0, "http://evil.example\\@docs.rs/tokio/"));
        assert!(!holds(0, "ftp://docs.rs/tokio/x"), "web addresses only");
        assert!(!holds(0, "docs.rs/tokio/x"), "not a URL");
        assert!(
            holds(1, "https://api.github.com/repos"),
            "the host glob is lowercase"
        );
        assert!(
            !holds(1, "https://github.com/"),
            "*. needs a name before the dot"
        );
        // Denials read the URL every way it could be read.
        assert!(holds(2, "https://user@EVIL.example:8443/x"));
        assert!(holds(2, "evil.example/path"));
        assert!(holds(2, "https://evil.example./"));
        assert!(!holds(2, "https://docs.rs/"));
        assert!(!set.rules[2].matches(Some(&agent(json!({ "tool": "WebFetch" }))), &[]));
    }
}
