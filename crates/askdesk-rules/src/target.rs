//! What a tool touches, as rules see it: the file it would change (`match.path`, the agent's
//! `meta.path`) and the URL it would fetch (`match.host`, `match.url_path`, the agent's
//! `meta.url`), each worked out once per request for all the rules tried on it.
//!
//! The path is read once (`PathReadings`) for rules that answer and rules that deny alike. A
//! rule that answers reads it strictly, and fails closed: the path is resolved against the
//! session's directory (`meta.cwd`) with every symbolic link followed (the longest prefix that
//! exists is canonicalized; the rest must be plain names that do not exist yet), so `..` and links
//! cannot lead out of what the glob names; a relative path without an absolute `cwd`, a path that
//! cannot be resolved (a dangling link, a folder that cannot be read, `..` after a name that does
//! not exist) and a URL that is not plain `http`/`https` with a host match no rule that answers.
//! A rule that denies, dismisses or leaves the request to the human reads them generously: it
//! holds when any reading of the path (as given, joined to `cwd` (or to `/` without one) with
//! `..` taken lexically, where it leads, `~/` as the home folder) or of the URL matches.
//!
//! Hosts are read one way for rules and URLs alike ([`normal_host`]): as the URL standard reads
//! them (percent-decoded, IDNA-mapped, IPv4 in any form dotted, IPv4-mapped IPv6 as IPv4, no
//! trailing dot).
//!
//! A rule that names a field never matches a request without it: `path` needs a `meta.path`,
//! `host` and `url_path` a `meta.url`.

use std::cell::OnceCell;
use std::path::{Component, Path, PathBuf};

use askdesk_core::meta;
use askdesk_core::AgentInfo;
use url::Host;

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
    paths: OnceCell<PathReadings>,
    strict_url: OnceCell<Option<UrlParts>>,
    generous_urls: OnceCell<Vec<UrlParts>>,
}

/// One request's path, read once for every rule: where it resolves for sure (what a rule that
/// answers sees, `None` when it cannot be said or is protected), and every reading a rule that
/// denies sees (that one among them).
#[derive(Debug, Default)]
struct PathReadings {
    strict: Option<String>,
    all: Vec<String>,
}

/// A URL's host ([`normal_host`]) and path, as `match.host` and `match.url_path` see them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    pub host: String,
    pub path: String,
}

impl<'a> Targets<'a> {
    pub fn new(agent: Option<&'a AgentInfo>) -> Targets<'a> {
        Targets {
            agent,
            paths: OnceCell::new(),
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
                Reading::Generous => self.paths().all.iter().any(|p| glob.matches(p)),
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
    /// link to `~/.bashrc` is `~/.bashrc`, and so does a hard link to it).
    pub fn strict_path(&self) -> Option<&str> {
        self.paths().strict.as_deref()
    }

    fn paths(&self) -> &PathReadings {
        self.paths.get_or_init(|| {
            let Some(path) = self.meta(meta::PATH) else {
                return PathReadings::default();
            };
            PathReadings::of(path, self.meta(meta::CWD))
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
            if let Ok(url) = url::Url::parse(text) {
                readings.extend(parts(&url));
                // An IPv6 address that carries an IPv4 one is that host too, for a deny.
                if let (Some(Host::Ipv6(address)), Some(parsed)) = (url.host(), parts(&url)) {
                    readings.extend(embedded_ipv4(address).map(|v4| UrlParts {
                        host: v4.to_string(),
                        ..parsed
                    }));
                }
            }
            readings.extend(loose_urls(text));
            readings.dedup();
            readings
        })
    }
}

impl PathReadings {
    fn of(path: &str, cwd: Option<&str>) -> PathReadings {
        let text = |p: PathBuf| p.into_os_string().into_string().ok();
        let led = lead(Path::new(path), cwd.map(Path::new));
        let strict = match &led {
            Some(l) if !Protected::from_env().refuses_led(path, cwd, Some(l)) => {
                text(l.path.clone())
            }
            _ => None,
        };
        let mut all = vec![path.to_owned()];
        all.extend(led.and_then(|l| text(l.path)));
        // Without a session directory, a relative path is read from the root too, so a glob
        // over absolute paths (`*/.env`) still sees its names.
        let base = Path::new(cwd.unwrap_or("/"));
        all.extend(absolute(Path::new(path), Some(base)).and_then(|p| text(fold_dots(&p))));
        if cwd.is_none() {
            all.extend(lead(Path::new(path), Some(base)).and_then(|l| text(l.path)));
        }
        let home = std::env::var("HOME").ok().filter(|h| h.starts_with('/'));
        if let (Some(rest), Some(home)) = (path.strip_prefix("~/"), home) {
            let expanded = Path::new(&home).join(rest);
            all.extend(text(fold_dots(&expanded)));
            all.extend(lead(&expanded, None).and_then(|l| text(l.path)));
        }
        all.extend(strict.clone());
        all.sort_unstable();
        all.dedup();
        PathReadings { strict, all }
    }
}

/// Where a path leads: `sure` when every part of it was resolved by the system or is a plain
/// name that does not exist yet; not sure when a link to a place not there was followed or a
/// `..` came after a name that does not exist (taken by name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lead {
    pub path: PathBuf,
    pub sure: bool,
}

/// The most links followed to places not there, as the kernel's own limit on links in a path.
const MAX_LINK_HOPS: usize = 40;

/// `path` made absolute against `cwd` with every symbolic link resolved as the system resolves
/// it: the longest prefix that exists canonicalized, the rest appended name by name; a link to a
/// place not there is followed (writing through it creates that place). `None` for a relative
/// path without an absolute `cwd`, a loop of links, a folder that cannot be read, or a path
/// under a file.
pub fn lead(path: &Path, cwd: Option<&Path>) -> Option<Lead> {
    let mut joined: PathBuf = absolute(path, cwd)?.components().collect();
    let mut sure = true;
    let mut hops = 0;
    'follow: loop {
        // From the whole path up: the first ancestor that canonicalizes is the prefix that exists.
        let mut missing: Vec<Component<'_>> = Vec::new();
        let mut at: &Path = &joined;
        loop {
            match std::fs::canonicalize(at) {
                Ok(mut real) => {
                    for name in missing.iter().rev() {
                        match name {
                            Component::ParentDir => {
                                sure = false;
                                real.pop();
                            }
                            other => real.push(other),
                        }
                    }
                    return Some(Lead { path: real, sure });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let link = std::fs::symlink_metadata(at);
                    match link {
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Ok(meta) if meta.file_type().is_symlink() => {
                            hops += 1;
                            if hops > MAX_LINK_HOPS {
                                return None;
                            }
                            sure = false;
                            let target = std::fs::read_link(at).ok()?;
                            let mut next = at.parent()?.join(target);
                            for name in missing.iter().rev() {
                                next.push(name);
                            }
                            joined = next.components().collect();
                            continue 'follow;
                        }
                        _ => return None,
                    }
                    let last = at.components().next_back()?;
                    if !matches!(last, Component::Normal(_) | Component::ParentDir) {
                        return None;
                    }
                    missing.push(last);
                    at = at.parent()?;
                }
                Err(_) => return None,
            }
        }
    }
}

/// `path` made absolute against `cwd` with every symbolic link resolved ([`lead`]), when that can
/// be said for sure: not through a link to a place not there, nor `..` after a missing name.
pub fn resolve(path: &str, cwd: Option<&str>) -> Option<PathBuf> {
    lead(Path::new(path), cwd.map(Path::new))
        .filter(|l| l.sure)
        .map(|l| l.path)
}

/// `path`, or `cwd` joined to it when it is relative; `None` without an absolute `cwd`.
fn absolute(path: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    if path.is_absolute() {
        return Some(path.to_owned());
    }
    let cwd = cwd?;
    cwd.is_absolute().then(|| cwd.join(path))
}

/// `path` with `.` dropped and `..` taking off the name before it, without the file system.
pub fn fold_dots(path: &Path) -> PathBuf {
    let mut folded = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                folded.pop();
            }
            other => folded.push(other),
        }
    }
    folded
}

/// A host as the URL standard reads it, for `match.host` and every URL it is matched against
/// alike: percent-decoded, mapped by IDNA (UTS 46: `EXAMPLE` is `example`, `。` is `.`, `bücher`
/// is `xn--bcher-kva`), an IPv4 address in any of its forms (`0x7f.1`, `2130706433`) dotted, an
/// IPv4-mapped IPv6 address (`[::ffff:1.2.3.4]`) as its IPv4 address, any other IPv6 address in
/// brackets, and without trailing dots. `None` when the URL standard reads no host in it.
pub fn normal_host(text: &str) -> Option<String> {
    let host = Host::parse(text).ok()?;
    Some(host_name(&host))
}

fn host_name<S: AsRef<str>>(host: &Host<S>) -> String {
    match host {
        Host::Domain(name) => name.as_ref().trim_end_matches('.').to_owned(),
        Host::Ipv4(address) => address.to_string(),
        Host::Ipv6(address) => match address.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{address}]"),
        },
    }
}

/// The IPv4 address an IPv6 address carries in its last 32 bits when it is IPv4-compatible
/// (`::1.2.3.4`, deprecated but still routed by some stacks) or in NAT64's well-known prefix
/// (`64:ff9b::1.2.3.4`, which a NAT64 gateway forwards to `1.2.3.4`).
fn embedded_ipv4(address: std::net::Ipv6Addr) -> Option<std::net::Ipv4Addr> {
    let segments = address.segments();
    let nat64 = segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    let compatible = segments[..6] == [0; 6] && !address.is_loopback() && !address.is_unspecified();
    (nat64 || compatible).then(|| {
        let [.., a, b, c, d] = address.octets();
        std::net::Ipv4Addr::new(a, b, c, d)
    })
}

/// A `match.host` glob read as [`normal_host`] reads hosts: without `*` or `?`, whole; with one,
/// label by label (split at every dot IDNA maps to `.`), each label without a wildcard mapped by
/// IDNA and the others lowercased. `None` when it is no host name.
pub fn host_pattern(pattern: &str) -> Option<String> {
    if !pattern.contains(['*', '?']) {
        return normal_host(pattern);
    }
    let labels = pattern
        .split(['.', '\u{3002}', '\u{FF0E}', '\u{FF61}'])
        .map(|label| {
            if label.is_empty() || label.contains(['*', '?']) {
                Some(label.to_lowercase())
            } else {
                idna::domain_to_ascii(label).ok()
            }
        })
        .collect::<Option<Vec<_>>>()?;
    Some(labels.join(".").trim_end_matches('.').to_owned())
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
        host: host_name(&url.host()?),
        path: url.path().to_owned(),
    })
}

/// A URL read the simple way (for rules that deny): the host is what follows `//` up to the next
/// `/`, `\`, `?` or `#`, after any `user@` and before any `:port`, read by [`normal_host`] and,
/// when that reads none, as written (lowercase, no trailing dot); the path runs to `?` or `#`.
fn loose_urls(text: &str) -> Vec<UrlParts> {
    let rest = text.split_once("//").map_or(text, |(_, rest)| rest);
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let path = &tail[..tail.find(['?', '#']).unwrap_or(tail.len())];
    let path = if path.is_empty() {
        "/".to_owned()
    } else {
        path.replace('\\', "/")
    };
    let as_written = host.trim_end_matches('.').to_lowercase();
    normal_host(host)
        .into_iter()
        .chain(std::iter::once(as_written))
        .map(|host| UrlParts {
            host,
            path: path.clone(),
        })
        .collect()
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

    /// Ways to write `evil.example`'s address that the URL standard reads as that host.
    const EVIL_SPELLINGS: &[&str] = &[
        "https://evil.example/x",
        "https://EVIL.Example/x",
        "https://evil.example./x",
        "https://evil.example%2E/x",
        "https://evil.example%2e./x",
        "https://evil\u{3002}example/x",
        "https://evil%E3%80%82example/x",
        "https://evil\u{FF0E}example/x",
        "https://evil\u{FF61}example/x",
        "https://%65vil.example/x",
        "https://\u{FF45}vil.example/x",
        "https://user:pw@evil.example:8443/x",
        "HTTPS://evil.example/x",
    ];

    #[test]
    fn every_spelling_of_a_host_is_the_same_host_for_allows_and_denies() {
        let set = rules(
            "[[rule]]\nname = \"allow\"\nmatch = { tool = \"WebFetch\", host = \"evil.example\" }\nanswer = \"Allow once\"\n\
             [[rule]]\nname = \"deny\"\nmatch = { host = \"evil.example\" }\ndeny = \"no\"\n\
             [[rule]]\nname = \"loopback\"\nmatch = { tool = \"WebFetch\", host = \"127.0.0.1\" }\ndeny = \"no\"\n\
             [[rule]]\nname = \"written oddly\"\nmatch = { tool = \"WebFetch\", host = \"*.B\u{00FC}cher\u{3002}DE.\" }\ndeny = \"no\"\n",
        );
        let fetch = |url: &str| agent(json!({ "tool": "WebFetch", "url": url }));
        let holds = |i: usize, url: &str| set.rules[i].matches(Some(&fetch(url)), &[]);
        for url in EVIL_SPELLINGS {
            assert!(holds(0, url), "the allow misses {url}");
            assert!(holds(1, url), "the deny misses {url}");
        }
        for url in [
            "http://127.0.0.1/",
            "http://0x7f.1/",
            "http://0x7f000001/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://127.0.0.1./",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[0:0:0:0:0:ffff:7f00:0001]/",
            "http://[::127.0.0.1]/",
            "http://[64:ff9b::127.0.0.1]/",
        ] {
            assert!(holds(2, url), "the loopback deny misses {url}");
        }
        assert!(
            !holds(2, "http://[::1]/"),
            "IPv6's own loopback is not 127.0.0.1"
        );
        assert!(holds(3, "https://shop.xn--bcher-kva.de/"));
        assert!(holds(3, "https://shop.b\u{00FC}cher.de/"));
        assert!(!holds(3, "https://b\u{00FC}cher.de/"));
        for url in ["https://evil.example.org/", "https://notevil.example/"] {
            assert!(!holds(0, url) && !holds(1, url), "{url}");
        }
        // What the URL standard cannot read is no allow.
        for url in [
            "https://evil.example%/",
            "https://evil exa.mple/",
            "https://[::1/",
        ] {
            assert!(!holds(0, url), "allowed {url}");
        }
    }

    #[test]
    fn hosts_and_host_globs_are_read_one_way() {
        assert_eq!(
            normal_host("EVIL.example.").as_deref(),
            Some("evil.example")
        );
        assert_eq!(
            normal_host("evil%E3%80%82example").as_deref(),
            Some("evil.example")
        );
        assert_eq!(normal_host("0x7f.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(normal_host("[::ffff:102:304]").as_deref(), Some("1.2.3.4"));
        assert_eq!(normal_host("[::1]").as_deref(), Some("[::1]"));
        assert_eq!(normal_host("a b"), None);
        assert_eq!(
            host_pattern("*.GitHub.com.").as_deref(),
            Some("*.github.com")
        );
        assert_eq!(host_pattern("docs.RS").as_deref(), Some("docs.rs"));
        assert_eq!(host_pattern("*").as_deref(), Some("*"));
        assert!(RuleSet::parse(
            "[[rule]]\nname = \"x\"\nmatch = { tool = \"WebFetch\", host = \"a%\" }\nanswer = \"Yes\"\n"
        )
        .is_err());
    }

    #[test]
    fn a_deny_on_a_path_sees_a_relative_path_as_an_allow_does() {
        let set =
            rules("[[rule]]\nname = \"no env\"\nmatch = { path = \"*/.env\" }\ndeny = \"no\"\n");
        let read = |path: &str, cwd: Option<&str>| {
            let mut meta = json!({ "tool": "Read", "path": path });
            if let Some(cwd) = cwd {
                meta["cwd"] = json!(cwd);
            }
            set.rules[0].matches(Some(&agent(meta)), &[])
        };
        for (path, cwd) in [
            (".env", Some("/home/me/app")),
            ("./.env", Some("/home/me/app")),
            ("src/../.env", Some("/home/me/app")),
            (".env", None),
            ("/home/me/app/.env", None),
        ] {
            assert!(read(path, cwd), "{path} in {cwd:?}");
        }
        assert!(!read(".envrc", Some("/home/me/app")));
    }
}
