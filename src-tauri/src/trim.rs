//! Gives the memory an idle app does not need back to the system once its window is dropped, and
//! the heap a window's start left free once its page has loaded.
//!
//! After the window goes, the app still maps the web engine's libraries (and, on machines
//! without a GPU, the software GL stack) with the pages the window touched resident. Read-only
//! file pages are identical to the file, so the process can let go of them: the kernel keeps
//! them in the page cache (reclaimable) and a later window faults them back in without disk
//! reads when the cache still holds them. Freed heap goes back with `malloc_trim`.
//!
//! Only mappings that are not writable and hold no private (copy-on-write) page are released;
//! those are exactly the pages that re-reading the file restores unchanged.
//!
//! The heap is kept in few arenas ([`few_heap_arenas`]): glibc gives threads that start while
//! others allocate arenas of their own, and each keeps the pages it last used, so an app that
//! builds a window and starts short-lived worker threads for every question held about 0.5 MB
//! more after every dropped window (`scripts/bench-desktop.sh`'s drop cycles).

use std::fs;

/// What [`release_clean_pages`] let go of.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    pub mappings: usize,
    pub bytes: u64,
}

/// Caps the heap at two malloc arenas (glibc's default is eight per core). Called before any
/// thread starts; the web engine's own processes keep their defaults.
pub fn few_heap_arenas() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes an allocator setting; it is called before other threads run.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Runs `work` on a thread of its own after `after`, off the main thread and once the web engine
/// has done what it does first (tearing a page down, loading one).
pub fn later(after: std::time::Duration, work: impl FnOnce() + Send + 'static) {
    let spawned = std::thread::Builder::new()
        .name("askdesk-trim".into())
        .spawn(move || {
            std::thread::sleep(after);
            work();
        });
    if let Err(error) = spawned {
        tracing::debug!(%error, "nothing trimmed: no thread for it");
    }
}

/// Returns the heap's free pages to the system after `after`: a window's building and its page's
/// first requests (the catalogue, the queue, the rendered markdown) leave about 1.8 MB of freed
/// heap behind that glibc keeps for later (`scripts/bench-desktop.sh`, the open window). The
/// window stays open; nothing it uses is let go.
pub fn heap_later(after: std::time::Duration) {
    later(after, trim_heap);
}

fn trim_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free heap memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Releases this process's resident read-only file pages and trims the heap.
pub fn release_clean_pages() -> std::io::Result<Released> {
    let smaps = fs::read_to_string("/proc/self/smaps")?;
    let mut released = Released::default();
    for mapping in clean_file_mappings(&smaps) {
        // SAFETY: the range is a whole mapping of this process that is not writable and holds
        // no private page, so dropping its pages loses nothing: the next access reads the same
        // bytes from the file. No Rust reference can be invalidated by it, since the contents
        // stay the same.
        let status = unsafe {
            libc::madvise(
                mapping.start as *mut libc::c_void,
                mapping.len(),
                libc::MADV_DONTNEED,
            )
        };
        if status == 0 {
            released.mappings += 1;
            released.bytes += mapping.rss;
        }
    }
    trim_heap();
    Ok(released)
}

/// The name (`comm`, cut to 15 bytes by the kernel) of WebKit's network process.
const NETWORK_PROCESS: &str = "WebKitNetworkPr";

/// Ends the web engine's network process, left running with no page to serve once the window is
/// dropped. WebKitGTK keeps it for as long as its web context lives, and the context lives as long
/// as the app (Tauri keeps it on Linux so that every window shares one network process), so an app
/// hidden all day would carry it all day: about half of what it costs idle. WebKit starts a new one
/// when the next page loads. Returns the pid it was asked to end, if there was one.
pub fn end_network_process() -> std::io::Result<Option<u32>> {
    let me = std::process::id();
    for entry in fs::read_dir("/proc")? {
        let Ok(pid) = entry?.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        // Gone since the listing: not ours to end.
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if parent_and_name(&stat)
            .is_some_and(|(parent, name)| parent == me && name == NETWORK_PROCESS)
        {
            // SAFETY: kill only sends a signal. The pid is our own child (its parent is this
            // process), and a child's pid is not reused before this process reaps it.
            if unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            return Ok(Some(pid));
        }
    }
    Ok(None)
}

/// The parent pid and the name in a `/proc/<pid>/stat` line: `pid (name) state ppid ...`; the
/// name may hold spaces and parentheses, so it ends at the last `)`.
fn parent_and_name(stat: &str) -> Option<(u32, &str)> {
    let (head, rest) = stat.rsplit_once(')')?;
    let (_, name) = head.split_once('(')?;
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((parent, name))
}

/// One mapping from `/proc/self/smaps` that can be released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mapping {
    start: usize,
    end: usize,
    /// Resident bytes.
    rss: u64,
}

impl Mapping {
    fn len(&self) -> usize {
        self.end - self.start
    }
}

/// The mappings of a file (a path, not `[heap]`, `[vdso]` or an anonymous mapping) that are not
/// writable, have resident pages, and hold no anonymous (copy-on-write) page.
fn clean_file_mappings(smaps: &str) -> Vec<Mapping> {
    let mut found = Vec::new();
    let mut current: Option<(Mapping, bool)> = None;
    let mut anonymous = 0u64;
    let finish = |current: Option<(Mapping, bool)>, anonymous: u64, found: &mut Vec<Mapping>| {
        if let Some((mapping, candidate)) = current {
            if candidate && anonymous == 0 && mapping.rss > 0 {
                found.push(mapping);
            }
        }
    };
    for line in smaps.lines() {
        if let Some(header) = parse_header(line) {
            finish(current.take(), anonymous, &mut found);
            current = Some(header);
            anonymous = 0;
            continue;
        }
        let Some((mapping, _)) = current.as_mut() else {
            continue;
        };
        if let Some(kb) = field_kb(line, "Rss:") {
            mapping.rss = kb * 1024;
        } else if let Some(kb) = field_kb(line, "Anonymous:") {
            anonymous = kb;
        }
    }
    finish(current, anonymous, &mut found);
    found
}

/// A mapping's header line: `start-end perms offset dev inode [path]`. Returns the mapping and
/// whether it may be released (a file, not writable).
fn parse_header(line: &str) -> Option<(Mapping, bool)> {
    let mut parts = line.split_whitespace();
    let (start, end) = parts.next()?.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    let perms = parts.next()?;
    if perms.len() != 4 {
        return None;
    }
    let _offset = parts.next()?;
    let _device = parts.next()?;
    let _inode = parts.next()?.parse::<u64>().ok()?;
    let path = parts.next().unwrap_or("");
    let candidate = path.starts_with('/') && !perms.contains('w');
    Some((Mapping { start, end, rss: 0 }, candidate))
}

fn field_kb(line: &str, name: &str) -> Option<u64> {
    let rest = line.strip_prefix(name)?.trim();
    rest.strip_suffix("kB")?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_its_parent_and_name() {
        assert_eq!(
            parent_and_name("4242 (WebKitNetworkPr) S 4200 4200 4200 0 -1 4194560 1 0"),
            Some((4200, "WebKitNetworkPr"))
        );
        // A name with spaces and a parenthesis ends at the last one.
        assert_eq!(
            parent_and_name("7 (a (b) c) R 1 7 7 0"),
            Some((1, "a (b) c"))
        );
        assert_eq!(parent_and_name("garbage"), None);
    }

    #[test]
    fn no_network_process_is_nothing_to_end() {
        // The test process has no WebKit child.
        assert_eq!(end_network_process().unwrap(), None);
    }

    const SMAPS: &str = "\
55d0c0000000-55d0c0002000 r--p 00000000 08:01 1234 /usr/bin/app
Rss:                   8 kB
Anonymous:             0 kB
55d0c0002000-55d0c0004000 r--p 00002000 08:01 1234 /usr/bin/app
Rss:                   8 kB
Anonymous:             8 kB
55d0c0004000-55d0c0006000 rw-p 00004000 08:01 1234 /usr/bin/app
Rss:                   8 kB
Anonymous:             0 kB
7f0000000000-7f0000010000 r-xp 00000000 08:01 99 /usr/lib/libwebkit.so
Size:                 64 kB
Rss:                  48 kB
Pss:                  20 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
7f0000010000-7f0000020000 r-xp 00010000 08:01 99 /usr/lib/libwebkit.so
Rss:                   0 kB
Anonymous:             0 kB
7f0000020000-7f0000030000 rw-p 00000000 00:00 0 
Rss:                  64 kB
Anonymous:            64 kB
7f0000030000-7f0000031000 r--p 00000000 00:00 0 [vvar]
Rss:                   4 kB
Anonymous:             0 kB
";

    #[test]
    fn only_resident_read_only_file_pages_without_private_copies_are_released() {
        assert_eq!(
            clean_file_mappings(SMAPS),
            vec![
                Mapping {
                    start: 0x55d0c0000000,
                    end: 0x55d0c0002000,
                    rss: 8 * 1024
                },
                Mapping {
                    start: 0x7f0000000000,
                    end: 0x7f0000010000,
                    rss: 48 * 1024
                },
            ]
        );
    }

    #[test]
    fn this_process_keeps_running_after_releasing() {
        let text = String::from("still here");
        let released = release_clean_pages().expect("smaps is readable");
        assert!(released.mappings > 0, "{released:?}");
        // Code and read-only data fault back in unchanged.
        assert_eq!(format!("{text}!"), "still here!");
        assert!(clean_file_mappings("garbage\nRss: 4 kB\n").is_empty());
    }

    /// This process's resident anonymous memory, in KiB.
    fn resident_anonymous_kb() -> u64 {
        let status = fs::read_to_string("/proc/self/status").expect("status is readable");
        status
            .lines()
            .find_map(|line| field_kb(line, "RssAnon:"))
            .expect("RssAnon is there")
    }

    #[cfg(target_env = "gnu")]
    #[test]
    fn trimming_returns_freed_heap_that_glibc_kept() {
        // 20 MB in small blocks, then all freed but the newest, which keeps the heap's top in place:
        // glibc returns nothing of it by itself.
        let mut blocks: Vec<Vec<u8>> = (0..20_000).map(|i| vec![i as u8; 1000]).collect();
        let newest = blocks.pop();
        drop(blocks);
        let kept = resident_anonymous_kb();
        trim_heap();
        let trimmed = resident_anonymous_kb();
        assert!(
            kept.saturating_sub(trimmed) > 10_000,
            "{kept} KiB resident before trimming, {trimmed} KiB after"
        );
        assert_eq!(newest.map(|block| block[0]), Some((19_999 % 256) as u8));
    }
}
