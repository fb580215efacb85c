//! The words that make a command run another command, kept here as data with where each list
//! comes from: every bash builtin and the keywords that take a command, classified; the programs
//! that run a command they are given (wrappers), a script given as text (shells), code in another
//! language (interpreters) or a command through one of their options; and how each one's command
//! is found among its words, so that a deny rule sees it.
//!
//! The tests hold the lists to their sources: every builtin a real bash lists (`compgen -b`) is
//! classified, every program of the installed coreutils, util-linux, findutils, procps and
//! bsdutils whose synopsis takes a command is a runner, and every option such a program's
//! `--help` lists is in its grammar.

use crate::git;
use crate::shell::{is_assignment, program, Escape};

/// What a bash builtin or keyword does with its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// Runs nothing and evaluates nothing: read as any program is.
    Plain,
    /// May take variable names, and bash evaluates an array subscript in one as arithmetic,
    /// running the command substitutions in it (`test -v 'a[$(id)]'`, `printf -v 'a[$(id)]' x`):
    /// refused when a word after it holds `[`.
    Names,
    /// [`Builtin::Names`], and sets the variable named after this option (`printf -v`,
    /// `wait -p`), which can change what later commands of the line run (`printf -v PATH /tmp`):
    /// refused when the option is given too.
    Assigns(&'static str),
    /// Runs a command, a script given as text or in a file, a job, or code it loads
    /// (`enable -f`), or makes a command run later (`trap`, `bind -x`, `complete -C`).
    Runs,
    /// Changes how the shell reads or runs what follows (options, aliases, variables it sets,
    /// `read 'a[$(id)]'` included, the command hash), or evaluates its words as arithmetic
    /// (`let`): refused.
    State,
}

/// Every bash builtin, from bash 5.2's `compgen -b`, and the keywords of `compgen -k` that run
/// the command after them (`coproc`, `time`); the other keywords are constructs the shell reading
/// refuses.
pub const BUILTINS: &[(&str, Builtin)] = {
    use Builtin::*;
    &[
        (".", Runs),
        (":", Plain),
        ("[", Names),
        ("alias", State),
        ("bg", Runs),
        ("bind", Runs),
        ("break", Plain),
        ("builtin", Runs),
        ("caller", Plain),
        ("cd", Plain),
        ("command", Runs),
        ("compgen", Runs),
        ("complete", Runs),
        ("compopt", State),
        ("continue", Plain),
        ("coproc", Runs),
        ("declare", State),
        ("dirs", Plain),
        ("disown", Plain),
        ("echo", Plain),
        ("enable", Runs),
        ("eval", Runs),
        ("exec", Runs),
        ("exit", Plain),
        ("export", State),
        ("false", Plain),
        ("fc", Runs),
        ("fg", Runs),
        ("getopts", State),
        ("hash", State),
        ("help", Plain),
        ("history", State),
        ("jobs", Runs),
        ("kill", Plain),
        ("let", State),
        ("local", State),
        ("logout", Plain),
        ("mapfile", Runs),
        ("popd", Plain),
        ("printf", Assigns("-v")),
        ("pushd", Plain),
        ("pwd", Plain),
        ("read", State),
        ("readarray", Runs),
        ("readonly", State),
        ("return", Plain),
        ("set", State),
        ("shift", Plain),
        ("shopt", State),
        ("source", Runs),
        ("suspend", Plain),
        ("test", Names),
        ("time", Runs),
        ("times", Plain),
        ("trap", Runs),
        ("true", Plain),
        ("type", Plain),
        ("typeset", State),
        ("ulimit", Plain),
        ("umask", Plain),
        ("unalias", State),
        ("unset", State),
        ("wait", Assigns("-p")),
    ]
};

/// bash's reserved words, from `compgen -k`: those not in [`BUILTINS`] start a construct, and a
/// simple command named by one is refused (bash would not run it as a program).
pub const KEYWORDS: &[&str] = &[
    "!", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while", "{", "}",
];

/// The class of a bash builtin or keyword, if `name` is one.
pub fn builtin(name: &str) -> Option<Builtin> {
    BUILTINS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|&(_, class)| class)
}

/// How a program's words say what else it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `NAME [OPTION]... [OPERAND]... COMMAND [ARG]...`: the command starts after the options, at
    /// most `operands` words later (`timeout 5 CMD`, `chroot DIR CMD`, `chrt -o 0 CMD`).
    Wrapper,
    /// A shell: `-c` (alone or among other letters, `-lc`) makes its first operand a script;
    /// otherwise it runs a file of commands or its input.
    Shell,
    /// Runs code in another language given to an option marked `%` (`python3 -c`, `perl -e`), or
    /// from a file; nothing in that code is read.
    Interpreter,
    /// Runs a command through the options marked `!` (a script) and no other way (`tar
    /// --to-command`, `rsync -e`); otherwise it is an ordinary program.
    Options,
    /// Each of the actions named runs the words after it up to `;` or `+` as a command
    /// (`find -exec`, `fd -x`).
    Actions(&'static [&'static str]),
    /// Runs a command after one of the subcommands named (`uv run CMD`, `npm exec CMD`): every
    /// word after it may start the command.
    Subcommand(&'static [&'static str]),
    /// Runs a command found in a way not modelled here: every later word may start it.
    Any,
}

/// A program that runs another command, and how.
#[derive(Debug, Clone, Copy)]
pub struct Runner {
    pub names: &'static [&'static str],
    pub kind: Kind,
    /// Its options, separated by spaces: `-x` or `--long` takes no value (`--long=x` is still
    /// read), `-x=` or `--long=` takes one (the next word, or attached: `-n5`, `--long=5`), `-x!`
    /// takes a script run by a shell, `-x%` code in another language; `-#` stands for `-NUM`, and
    /// `-^` says the first word may be letters of options without their dash (`tar cIf ...`).
    pub options: &'static str,
    /// How many operands may come before the command (`timeout`'s duration, `chroot`'s root).
    pub operands: usize,
    /// Whether `NAME=value` words may come among the options (`env`, `sudo`).
    pub assignments: bool,
    /// Whether it gives its command to a shell as text, its words joined (`watch`, `ssh`).
    pub text: bool,
    /// Where the entry comes from: a package whose program it is, or `checkers` (the wrappers
    /// other command checkers unwrap).
    pub source: &'static str,
}

const fn wrapper(
    names: &'static [&'static str],
    options: &'static str,
    operands: usize,
    source: &'static str,
) -> Runner {
    Runner {
        names,
        kind: Kind::Wrapper,
        options,
        operands,
        assignments: false,
        text: false,
        source,
    }
}

/// A runner found by other command checkers, read as `kind` says.
pub(crate) const fn other(
    names: &'static [&'static str],
    kind: Kind,
    options: &'static str,
) -> Runner {
    Runner {
        names,
        kind,
        options,
        operands: 0,
        assignments: false,
        text: false,
        source: "checkers",
    }
}

const fn in_bash(names: &'static [&'static str], kind: Kind, options: &'static str) -> Runner {
    Runner {
        source: "bash",
        ..other(names, kind, options)
    }
}

/// The programs that run another command. Wrappers from the synopses `PROGRAM [OPTION]...
/// COMMAND [ARG]...` of coreutils, util-linux, findutils, procps, bsdutils, debianutils and
/// `time`; then the runners other command checkers (Claude Code's, Codex's) unwrap or refuse:
/// privilege and sandbox wrappers, tracers, shells, interpreters with inline code, and the
/// options of common programs that run a command.
pub const RUNNERS: &[Runner] = &[
    // bash's builtins and keywords that run a command (see [`BUILTINS`]).
    wrapper(&["command"], "-p -v -V", 0, "bash"),
    wrapper(&["builtin"], "", 0, "bash"),
    wrapper(&["exec"], "-a= -c -l", 0, "bash"),
    wrapper(&["coproc"], "", 1, "bash"),
    Runner {
        text: true,
        ..wrapper(&["eval"], "", 0, "bash")
    },
    Runner {
        text: true,
        ..in_bash(&["trap"], Kind::Any, "")
    },
    in_bash(&["mapfile", "readarray"], Kind::Options, "-C!"),
    in_bash(&["compgen", "complete"], Kind::Options, "-C!"),
    in_bash(&["bind"], Kind::Options, "-x!"),
    in_bash(
        &[".", "source", "fc", "jobs", "bg", "fg", "enable"],
        Kind::Any,
        "",
    ),
    // coreutils
    Runner {
        assignments: true,
        ..wrapper(
            &["env"],
            "-i --ignore-environment -0 --null -u= --unset= -C= --chdir= -S! --split-string! \
             --block-signal --default-signal --ignore-signal --list-signal-handling -v --debug \
             -a= --argv0=",
            0,
            "coreutils",
        )
    },
    wrapper(
        &["chroot"],
        "--groups= --userspec= --skip-chdir",
        1,
        "coreutils",
    ),
    wrapper(&["nice"], "-n= --adjustment= -#", 0, "coreutils"),
    wrapper(&["nohup"], "", 0, "coreutils"),
    wrapper(
        &["runcon"],
        "-c --compute -u= --user= -r= --role= -t= --type= -l= --range=",
        1,
        "coreutils",
    ),
    wrapper(
        &["stdbuf"],
        "-i= --input= -o= --output= -e= --error=",
        0,
        "coreutils",
    ),
    wrapper(
        &["timeout"],
        "--preserve-status --foreground -k= --kill-after= -s= --signal= -v --verbose",
        1,
        "coreutils",
    ),
    // util-linux
    wrapper(
        &["chrt"],
        "-a --all-tasks -b --batch -d --deadline -e --ext -f --fifo -i --idle -o --other -r --rr \
         -R --reset-on-fork -T= --sched-runtime= -P= --sched-period= -D= --sched-deadline= \
         -m --max -p --pid -v --verbose",
        1,
        "util-linux",
    ),
    wrapper(&["choom"], "-n= --adjust= -p= --pid=", 0, "util-linux"),
    Runner {
        kind: Kind::Any,
        ..wrapper(
            &["flock"],
            "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -w= --wait= --timeout= \
         -E= --conflict-exit-code= -o --close -c! --command! -F --no-fork --verbose",
            1,
            "util-linux",
        )
    },
    wrapper(
        &["ionice"],
        "-c= --class= -n= --classdata= -p= --pid= -P= --pgid= -t --ignore -u= --uid=",
        0,
        "util-linux",
    ),
    wrapper(
        &["nsenter"],
        "-a --all -t= --target= -m --mount -u --uts -i --ipc -n --net -p --pid -C --cgroup \
         -U --user -T --time -S= --setuid= -G= --setgid= --preserve-credentials -r --root -w \
         --wd -W= --wdns= -e --env -F --no-fork -Z --follow-context -c --join-cgroup",
        0,
        "util-linux",
    ),
    wrapper(
        &["prlimit"],
        "-p= --pid= -o= --output= --noheadings --raw --verbose -c --core -d --data -e --nice \
         -f --fsize -i --sigpending -l --memlock -m --rss -n --nofile -q --msgqueue -r --rtprio \
         -s --stack -t --cpu -u --nproc -v --as -x --locks -y --rttime",
        0,
        "util-linux",
    ),
    Runner {
        kind: Kind::Any,
        ..wrapper(
            &["runuser", "su"],
            "-c! --command! --session-command! -u= --user= -g= --group= -G= --supp-group= \
             -w= --whitelist-environment= -s= --shell= -m -p --preserve-environment -l --login \
             -f --fast -P --pty",
            0,
            "util-linux",
        )
    },
    Runner {
        kind: Kind::Any,
        ..wrapper(
            &["script", "scriptlive"],
            "-c! --command! -I= --log-in= -O= --log-out= -B= --log-io= -T= --log-timing= -t \
             --timing -m= --logging-format= -a --append -e --return -f --flush --force -E= \
             --echo= -o= --output-limit= -q --quiet",
            0,
            "util-linux",
        )
    },
    wrapper(
        &[
            "setarch", "linux32", "linux64", "i386", "x86_64", "uname26", "ppc32", "ppc64",
            "sparc32", "sparc64", "s390", "s390x", "parisc", "arm", "aarch64",
        ],
        "-B --32bit -F --fdpic-funcptrs -I --short-inode -L --addr-compat-layout -R \
         --addr-no-randomize -S --whole-seconds -T --sticky-timeouts -X --read-implies-exec -Z \
         --mmap-page-zero -3 --3gb --4gb --uname-2.6 -v --verbose --list",
        1,
        "util-linux",
    ),
    wrapper(
        &["setpriv"],
        "-d --dump --nnp --no-new-privs --ambient-caps= --inh-caps= --bounding-set= --ruid= \
         --euid= --rgid= --egid= --reuid= --regid= --clear-groups --keep-groups --init-groups \
         --groups= --securebits= --pdeathsig= --selinux-label= --apparmor-profile= \
         --landlock-access= --landlock-rule= --seccomp-filter= --reset-env",
        0,
        "util-linux",
    ),
    wrapper(
        &["setsid"],
        "-c --ctty -f --fork -w --wait",
        0,
        "util-linux",
    ),
    wrapper(
        &["taskset"],
        "-a --all-tasks -p --pid -c --cpu-list",
        1,
        "util-linux",
    ),
    wrapper(
        &["uclampset"],
        "-m= -M= -a --all-tasks -p= --pid= -s --system -R --reset-on-fork -v --verbose",
        0,
        "util-linux",
    ),
    wrapper(
        &["unshare"],
        "-m --mount -u --uts -i --ipc -n --net -p --pid -U --user -C --cgroup -T --time -f \
         --fork --map-user= --map-group= -r --map-root-user -c --map-current-user --map-auto \
         --map-users= --map-groups= --kill-child --mount-proc --mount-binfmt --propagation= \
         --setgroups= --keep-caps -R= --root= -w= --wd= -S= --setuid= -G= --setgid= \
         --monotonic= --boottime= -l --load-interp=",
        0,
        "util-linux",
    ),
    Runner {
        kind: Kind::Any,
        ..wrapper(
            &["enosys", "coresched", "setpgid", "waitpid"],
            "",
            0,
            "util-linux",
        )
    },
    // findutils
    wrapper(
        &["xargs"],
        "-0 --null -a= --arg-file= -d= --delimiter= -E= -e --eof -I= -i --replace -L= \
         --max-lines= -l -n= --max-args= -o --open-tty -P= --max-procs= -p --interactive \
         --process-slot-var= -r --no-run-if-empty -s= --max-chars= --show-limits -t --verbose \
         -x --exit",
        0,
        "findutils",
    ),
    other(
        &["find"],
        Kind::Actions(&["-exec", "-execdir", "-ok", "-okdir"]),
        "",
    ),
    // procps
    Runner {
        text: true,
        ..wrapper(
            &["watch"],
            "-b --beep -c --color -C --no-color -d --differences -e --errexit -g --chgexit \
             -q= --equexit= -n= --interval= -p --precise -t --no-title -w --no-wrap -x --exec -v \
             -r --no-rerun -s= --shotsdir=",
            0,
            "procps",
        )
    },
    // debianutils
    other(&["run-parts"], Kind::Any, ""),
    // time
    wrapper(
        &["time"],
        "-a --append -f= --format= -o= --output= -p --portability -q --quiet -v --verbose",
        0,
        "time",
    ),
    // Privilege, sandbox and session wrappers.
    Runner {
        assignments: true,
        ..wrapper(
            &["sudo", "sudoedit"],
            "-A --askpass -b --background -B --bell -C= --close-from= -D= --chdir= -E \
             --preserve-env -e --edit -g= --group= -H --set-home -h= --host= -i --login -K \
             --remove-timestamp -k --reset-timestamp -l --list -N --no-update -n \
             --non-interactive -P --preserve-groups -p= --prompt= -R= --chroot= -r= --role= \
             -S --stdin -s --shell -t= --type= -T= --command-timeout= -U= --other-user= -u= \
             --user= -v --validate",
            0,
            "checkers",
        )
    },
    wrapper(&["doas"], "-n -s -L -a= -C= -u=", 0, "checkers"),
    wrapper(
        &["pkexec"],
        "--user= --disable-internal-agent --keep-cwd",
        0,
        "checkers",
    ),
    other(
        &[
            "sg",
            "newgrp",
            "chpst",
            "setuidgid",
            "envuidgid",
            "envdir",
            "softlimit",
            "fakeroot",
            "fakechroot",
            "proot",
            "schroot",
            "firejail",
            "bwrap",
            "flatpak-spawn",
            "systemd-run",
            "systemd-nspawn",
            "machinectl",
            "run0",
            "dbus-run-session",
            "dbus-launch",
            "xvfb-run",
            "xinit",
            "startx",
            "catchsegv",
            "nocache",
            "eatmydata",
            "numactl",
            "hwloc-bind",
            "cpulimit",
            "torsocks",
            "torify",
            "proxychains",
            "proxychains4",
            "tsocks",
            "unbuffer",
            "daemonize",
            "start-stop-daemon",
            "chronic",
            "ifne",
            "pee",
            "entr",
            "caffeinate",
            "busybox",
            "toybox",
            "at",
            "batch",
            "crontab",
            "nix-shell",
        ],
        Kind::Any,
        "",
    ),
    // Tracers, debuggers, profilers and timers.
    other(
        &[
            "strace",
            "ltrace",
            "gdb",
            "lldb",
            "valgrind",
            "perf",
            "hyperfine",
            "heaptrack",
            "rr",
            "uftrace",
        ],
        Kind::Any,
        "",
    ),
    // Commands run through a shell, given as text: remotely, in parallel, in a terminal.
    Runner {
        text: true,
        ..other(
            &[
                "ssh", "parallel", "sem", "tmux", "screen", "expect", "rsh", "rlogin", "mosh",
                "dtach", "abduco",
            ],
            Kind::Any,
            "",
        )
    },
    // Shells.
    other(
        &[
            "sh", "bash", "rbash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "oksh", "ash",
            "yash", "posh", "fish", "csh", "tcsh", "rc", "es", "elvish", "nu", "xonsh",
        ],
        Kind::Shell,
        "",
    ),
    other(
        &["pwsh", "powershell"],
        Kind::Interpreter,
        "-c% -Command% -e% -EncodedCommand% -ec% -f% -File%",
    ),
    // Interpreters, with the options that take code as text.
    other(
        &[
            "python", "python2", "python3", "pypy", "pypy3", "jython", "ipython", "ipython3",
        ],
        Kind::Interpreter,
        "-c%",
    ),
    other(&["perl", "perl5"], Kind::Interpreter, "-e% -E%"),
    other(&["ruby", "jruby"], Kind::Interpreter, "-e%"),
    other(
        &["node", "nodejs", "bun", "deno"],
        Kind::Interpreter,
        "-e% --eval% -p% --print% -r% --require% --import% --loader%",
    ),
    other(&["php"], Kind::Interpreter, "-r% -B% -R% -E% -F%"),
    other(
        &[
            "lua",
            "luajit",
            "Rscript",
            "R",
            "julia",
            "osascript",
            "groovy",
            "elixir",
            "racket",
            "scala",
        ],
        Kind::Interpreter,
        "-e% -E% --eval%",
    ),
    other(&["erl", "escript"], Kind::Interpreter, "-eval% -e%"),
    other(&["guile", "tclsh", "wish"], Kind::Interpreter, "-c% -e%"),
    other(&["sbcl", "clisp", "ecl"], Kind::Interpreter, "--eval% -x%"),
    other(
        &["emacs"],
        Kind::Interpreter,
        "--eval% -l% --load% -f% --funcall%",
    ),
    other(
        &["vim", "vi", "nvim", "ex", "view", "gvim", "rvim"],
        Kind::Interpreter,
        "-c% --cmd% -S% -u% +%",
    ),
    // Programs that run a command given to one of their options.
    other(
        &["tar", "gtar", "bsdtar"],
        Kind::Options,
        "-^ --to-command! -I! --use-compress-program! --checkpoint-action! -F! --info-script! \
         --new-volume-script! --rsh-command!",
    ),
    other(&["rsync"], Kind::Options, "-e! --rsh! --rsync-path!"),
    other(&["scp", "sftp"], Kind::Options, "-S! -o! -F! -D!"),
    other(&["sort"], Kind::Options, "--compress-program!"),
    other(&["split"], Kind::Options, "--filter!"),
    other(
        &["rg", "ripgrep"],
        Kind::Options,
        "--pre! --hostname-bin! -z! --search-zip!",
    ),
    other(&["man"], Kind::Options, "-P! --pager! -H! --html!"),
    other(&["less", "more"], Kind::Options, "+!"),
    other(&["zip"], Kind::Options, "-TT! --unzip-command!"),
    other(
        &["nc", "ncat", "netcat"],
        Kind::Options,
        "-e! -c! --exec! --sh-exec! --lua-exec!",
    ),
    other(&["socat"], Kind::Options, "EXEC! SYSTEM!"),
    other(&["wget"], Kind::Options, "--use-askpass!"),
    other(&["apt", "apt-get"], Kind::Options, "-o! --option!"),
    other(
        &["fd", "fdfind"],
        Kind::Actions(&["-x", "--exec", "-X", "--exec-batch"]),
        "",
    ),
    // Tools that run a command after a subcommand.
    other(
        &[
            "uv",
            "poetry",
            "pipenv",
            "pdm",
            "hatch",
            "rye",
            "conda",
            "mamba",
            "micromamba",
            "pixi",
        ],
        Kind::Subcommand(&["run", "exec", "shell"]),
        "",
    ),
    other(
        &["npm", "pnpm", "yarn"],
        Kind::Subcommand(&["exec", "dlx", "x"]),
        "",
    ),
    other(&["npx", "pnpx", "bunx", "uvx", "pipx"], Kind::Any, ""),
    other(&["bundle", "bundler"], Kind::Subcommand(&["exec"]), ""),
    other(
        &["direnv", "mise", "asdf", "rtx"],
        Kind::Subcommand(&["exec", "x"]),
        "",
    ),
    other(&["nix"], Kind::Subcommand(&["develop", "shell", "run"]), ""),
    other(
        &[
            "docker", "podman", "kubectl", "oc", "flatpak", "lxc", "incus",
        ],
        Kind::Subcommand(&["run", "exec", "debug"]),
        "",
    ),
];

/// The runner a program name (without its directory) is, if any.
pub fn runner(name: &str) -> Option<&'static Runner> {
    RUNNERS.iter().find(|r| r.names.contains(&name))
}

/// What a simple command runs besides itself, as far as its words tell: what a deny rule reads.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Inner {
    /// Commands it runs, as their words.
    pub commands: Vec<Vec<String>>,
    /// Scripts it gives a shell as text.
    pub scripts: Vec<String>,
    /// It runs something its words do not show (an alias git reads from the environment or a
    /// file): a deny is to catch it.
    pub unknown: bool,
}

/// The commands and scripts a simple command of `words` runs: the same words with the program
/// named without its directory (`/usr/bin/git` is `git`), and what a runner among [`BUILTINS`]
/// and [`RUNNERS`] runs, its options read by its grammar; a wrapper whose options are not all
/// understood may run a command starting at any later word, and each is one.
pub fn inner(words: &[String]) -> Inner {
    let mut inner = Inner::default();
    let Some(first) = words.first() else {
        return inner;
    };
    let name = program(first);
    if name != first {
        let mut plain = vec![name.to_owned()];
        plain.extend_from_slice(&words[1..]);
        inner.commands.push(plain);
    }
    if name == "git" {
        git::inner(words, &mut inner);
    } else if let Some(runner) = runner(name) {
        runner.read(words, &mut inner);
    }
    inner
}

/// Why an answer rule may not apply to a simple command of `words`, if it may not: it runs
/// another command or code ([`Escape::Program`]), changes the shell's state
/// ([`Escape::Construct`]), gives a builtin a subscripted name ([`Escape::Subscript`]), or gives
/// git configuration that runs a program ([`Escape::Config`]).
pub fn escape(words: &[String]) -> Option<Escape> {
    let name = program(words.first()?);
    match builtin(name) {
        Some(Builtin::Runs) => return Some(Escape::Program),
        Some(Builtin::State) => return Some(Escape::Construct),
        Some(Builtin::Names | Builtin::Assigns(_))
            if words[1..].iter().any(|w| w.contains('[')) =>
        {
            return Some(Escape::Subscript)
        }
        Some(Builtin::Assigns(option)) if words[1..].iter().any(|w| w.starts_with(option)) => {
            return Some(Escape::Assignment)
        }
        None if KEYWORDS.contains(&name) => return Some(Escape::Construct),
        _ => {}
    }
    if name == "git" {
        return git::escape(words);
    }
    runner(name)
        .is_some_and(|runner| runner.runs_code(words))
        .then_some(Escape::Program)
}

/// What an option takes, as a runner's `options` spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    Value,
    Script,
    Code,
}

/// A value an option took: a script for a shell, or code in another language.
struct Taken {
    takes: Takes,
    value: String,
    /// The index of the word after the value.
    after: usize,
}

impl Runner {
    /// What the option `name` (`-x`, `--long`, `-eval`, `+`, `EXEC`) takes, if it is one.
    fn option(&self, name: &str) -> Option<Takes> {
        let numeric = name.len() > 1
            && name.starts_with('-')
            && name[1..].bytes().all(|b| b.is_ascii_digit());
        self.options.split_whitespace().find_map(|token| {
            let (spelt, takes) = match token.as_bytes().last() {
                Some(b'=') if token.len() > 1 => (&token[..token.len() - 1], Takes::Value),
                Some(b'!') if token.len() > 1 => (&token[..token.len() - 1], Takes::Script),
                Some(b'%') if token.len() > 1 => (&token[..token.len() - 1], Takes::Code),
                _ => (token, Takes::Nothing),
            };
            (spelt == name || (numeric && spelt == "-#")).then_some(takes)
        })
    }

    /// Reads the option word at `i`: how many words it spans and the value it took, or `None`
    /// when it is not one of the runner's options. A short option may be one of several letters
    /// in one word (`-lc`), its value attached (`-n5`) or the next word; `lenient` skips the
    /// letters of such a word that are not options.
    fn read_option(
        &self,
        words: &[String],
        i: usize,
        lenient: bool,
    ) -> Option<(usize, Option<Taken>)> {
        let word = &words[i];
        let taken = |takes: Takes, attached: Option<&str>| {
            if takes == Takes::Nothing {
                return (1, None);
            }
            let (value, span) = match attached {
                Some(value) => (value.to_owned(), 1),
                None => (words.get(i + 1).cloned().unwrap_or_default(), 2),
            };
            let after = (i + span).min(words.len());
            (
                span,
                Some(Taken {
                    takes,
                    value,
                    after,
                }),
            )
        };
        if let Some(takes) = self.option(word) {
            return Some(taken(takes, None));
        }
        if word.starts_with("--") {
            let (name, attached) = match word.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (word.as_str(), None),
            };
            let takes = self.option(name)?;
            // A flag with a value attached is an option whose value is optional.
            return Some(taken(takes, attached.filter(|_| takes != Takes::Nothing)));
        }
        if let Some(command) = word.strip_prefix('+') {
            // `less +cmd`, `vim +cmd`.
            if let Some(takes) = self.option("+") {
                return Some(taken(takes, Some(command)));
            }
        }
        if let Some(letters) = word.strip_prefix(['-', '+']).filter(|l| !l.is_empty()) {
            let sign = &word[..1];
            for (at, letter) in letters.char_indices() {
                let takes = match self.option(&format!("{sign}{letter}")) {
                    Some(takes) => takes,
                    // Scanning for a few options among unknown ones: the next letter may be one.
                    None if lenient => continue,
                    None => return None,
                };
                if takes != Takes::Nothing {
                    let rest = &letters[at + letter.len_utf8()..];
                    return Some(taken(takes, Some(rest).filter(|r| !r.is_empty())));
                }
            }
            return Some((1, None));
        }
        // An address such as socat's `EXEC:command`.
        let (name, value) = word.split_once(':')?;
        let takes = self.option(&name.to_ascii_uppercase())?;
        Some(taken(takes, Some(value)))
    }

    /// The values the options marked `!` or `%` took, wherever they are among the words.
    fn scan(&self, words: &[String]) -> Vec<Taken> {
        let mut found = Vec::new();
        let mut i = 1;
        while i < words.len() {
            let read = if i == 1 && !words[1].starts_with('-') && self.option("-^").is_some() {
                let mut dashed = words.to_vec();
                dashed[1].insert(0, '-');
                self.read_option(&dashed, i, true)
            } else {
                self.read_option(words, i, true)
            };
            match read {
                Some((span, taken)) => {
                    found.extend(taken);
                    i += span;
                }
                None => i += 1,
            }
        }
        found
    }

    /// Where a wrapper's options end, and the values they took; `None` when an option is not
    /// one of its own.
    fn options_end(&self, words: &[String]) -> Option<(usize, Vec<Taken>)> {
        let mut found = Vec::new();
        let mut i = 1;
        while let Some(word) = words.get(i) {
            if word == "--" {
                return Some((i + 1, found));
            }
            if self.assignments && is_assignment(word) {
                i += 1;
                continue;
            }
            if !word.starts_with('-') || word == "-" {
                break;
            }
            let (span, taken) = self.read_option(words, i, false)?;
            found.extend(taken);
            i += span;
        }
        Some((i, found))
    }

    /// Whether the words run another command or code.
    pub(crate) fn runs_code(&self, words: &[String]) -> bool {
        match self.kind {
            Kind::Wrapper | Kind::Shell | Kind::Any => true,
            Kind::Interpreter | Kind::Options => !self.scan(words).is_empty(),
            Kind::Actions(names) | Kind::Subcommand(names) => {
                words[1..].iter().any(|w| names.contains(&w.as_str()))
            }
        }
    }

    /// Adds what the words run to `inner`.
    pub(crate) fn read(&self, words: &[String], inner: &mut Inner) {
        match self.kind {
            Kind::Wrapper => match self.options_end(words) {
                Some((end, taken)) => {
                    scripts(words, taken, inner);
                    for start in end..=end + self.operands {
                        self.command_at(words, start, inner);
                    }
                }
                None => self.any(words, inner),
            },
            Kind::Shell => {
                if let Some(script) = shell_script(words) {
                    inner.scripts.push(script);
                }
            }
            Kind::Interpreter => {}
            Kind::Options => scripts(words, self.scan(words), inner),
            Kind::Actions(names) => {
                for (at, _) in words
                    .iter()
                    .enumerate()
                    .filter(|(_, w)| names.contains(&w.as_str()))
                {
                    let command: Vec<String> = words[at + 1..]
                        .iter()
                        .take_while(|w| !matches!(w.as_str(), ";" | "+"))
                        .cloned()
                        .collect();
                    if !command.is_empty() {
                        inner.commands.push(command);
                    }
                }
            }
            Kind::Subcommand(names) => {
                if let Some(at) = words.iter().position(|w| names.contains(&w.as_str())) {
                    for start in at + 1..words.len() {
                        self.command_at(words, start, inner);
                    }
                }
            }
            Kind::Any => self.any(words, inner),
        }
    }

    /// A command not found by a grammar: the scripts its `!` options took, and one starting at
    /// every later word.
    fn any(&self, words: &[String], inner: &mut Inner) {
        scripts(words, self.scan(words), inner);
        for start in 1..words.len() {
            self.command_at(words, start, inner);
        }
    }

    /// The command starting at word `start`, and its text as a script when the runner gives it
    /// to a shell as text.
    fn command_at(&self, words: &[String], start: usize, inner: &mut Inner) {
        let Some(command) = words.get(start..).filter(|c| !c.is_empty()) else {
            return;
        };
        if self.text {
            inner.scripts.push(command.join(" "));
        }
        inner.commands.push(command.to_vec());
    }
}

/// The scripts options took, each alone and followed by the words after it (`env -S 'git' push`
/// runs `git push`); code in another language is not read.
fn scripts(words: &[String], taken: Vec<Taken>, inner: &mut Inner) {
    for taken in taken.into_iter().filter(|t| t.takes == Takes::Script) {
        if let Some(rest) = words.get(taken.after..).filter(|r| !r.is_empty()) {
            inner
                .scripts
                .push(format!("{} {}", taken.value, rest.join(" ")));
        }
        inner.scripts.push(taken.value);
    }
}

/// The script a shell runs as text: its first operand when `-c` is among its options (`-c`,
/// `-lc`, `--command`), its options read as bash reads its own (`-o`, `-O`, `+o`, `+O`,
/// `--rcfile` and `--init-file` take a value).
fn shell_script(words: &[String]) -> Option<String> {
    let mut command = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        if word == "--" || word == "-" {
            i += 1;
            break;
        }
        if let Some(script) = word.strip_prefix("--command=") {
            return Some(script.to_owned());
        }
        if !word.starts_with(['-', '+']) {
            break;
        }
        command |= word == "--command" || (!word.starts_with("--") && word[1..].contains('c'));
        let valued = matches!(
            word.as_str(),
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file"
        );
        i += if valued { 2 } else { 1 };
    }
    command.then(|| words.get(i).cloned()).flatten()
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::glob::Glob;
    use crate::shell::{allows, catches, read};

    fn output(program: &str, args: &[&str]) -> String {
        let out = Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {program}: {e}"));
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    fn no_allow(line: &str) {
        let every = Glob::new("*").unwrap();
        assert!(!allows(&every, line), "`*` allows {line:?}");
        assert!(read(line).escape.is_some(), "{line:?} reads statically");
    }

    fn denied(line: &str) {
        let deny = Glob::new("rm -rf*").unwrap();
        assert!(catches(&deny, line), "`rm -rf*` misses {line:?}");
    }

    #[test]
    fn every_builtin_and_keyword_bash_lists_is_classified() {
        let builtins = output("bash", &["-c", "compgen -b"]);
        let names: Vec<&str> = builtins.lines().collect();
        assert!(
            names.contains(&"eval"),
            "bash lists its builtins: {builtins}"
        );
        for name in names {
            assert!(
                builtin(name).is_some(),
                "bash's builtin {name:?} is not classified"
            );
        }
        // A keyword is a construct the reading refuses, or a builtin that runs the command
        // after it.
        for keyword in output("bash", &["-c", "compgen -k"]).lines() {
            assert!(
                KEYWORDS.contains(&keyword),
                "bash's keyword {keyword:?} is not listed"
            );
            let line = format!("{keyword} rm -rf x");
            assert!(
                builtin(keyword) == Some(Builtin::Runs) || read(&line).escape.is_some(),
                "bash's keyword {keyword:?} is read as a plain program"
            );
        }
    }

    #[test]
    fn a_builtin_that_runs_a_command_is_never_allowed_and_a_deny_reads_it() {
        for &(name, class) in BUILTINS {
            if class == Builtin::Plain {
                continue;
            }
            if class == Builtin::Runs {
                assert!(
                    runner(name).is_some(),
                    "{name:?} runs a command: give its grammar"
                );
            }
            no_allow(&format!("{name} 'a[$(id)]'"));
            no_allow(&format!("{name} -v 'a[$(id)]' x"));
        }
        for line in [
            "printf -v 'a[$(id)]' x",
            "let 'a[$(id)]=1'",
            "test -v 'a[$(id)]'",
            "[ -v 'a[$(id)]' ]",
            "read 'a[$(id)]'",
            "wait -p 'a[$(id)]'",
            "getopts ab 'a[$(id)]'",
            "printf -v PATH /tmp",
            "printf -vPATH /tmp",
            "wait -n -p PATH",
            "read PATH",
            "mapfile -C 'rm -rf x' -c 1 a",
            "readarray -C 'rm -rf x' a",
            "trap 'rm -rf x' EXIT",
            "coproc rm -rf x",
            "time rm -rf x",
            "command rm -rf x",
            "builtin eval 'rm -rf x'",
            "eval 'rm -rf x'",
            "complete -C 'rm -rf x' git",
            "compgen -C 'rm -rf x' a",
            "tar cIf 'rm -rf x' a.tar .",
            "tar -cI 'rm -rf x' -f a.tar .",
            "tar --to-command='rm -rf x' -xf a.tar",
        ] {
            no_allow(line);
        }
        // The rest are read as any program.
        let every = Glob::new("*").unwrap();
        for line in [
            "echo hi",
            "printf '%s\\n' x",
            "test -f Cargo.toml",
            "wait",
            "cd src",
            "pwd",
        ] {
            assert!(allows(&every, line), "{line:?}");
        }
        for line in [
            "mapfile -C 'rm -rf x' -c 1 a",
            "readarray -C 'rm -rf x' a",
            "trap 'rm -rf x' EXIT",
            "coproc rm -rf x",
            "time -p rm -rf x",
            "command -p rm -rf x",
            "builtin eval 'rm -rf x'",
            "exec -a y rm -rf x",
            "complete -C 'rm -rf x' git",
        ] {
            denied(line);
        }
    }

    /// A line that runs `rm -rf x` through the runner `name`, as its grammar reads it.
    fn through(runner: &Runner, name: &str) -> Vec<String> {
        let scripts = || {
            runner.options.split_whitespace().filter_map(|token| {
                let option = token.strip_suffix('!')?;
                Some(match option {
                    _ if option.starts_with("--") => format!("{name} {option}='rm -rf x'"),
                    _ if option.starts_with(['-', '+']) => format!("{name} {option} 'rm -rf x'"),
                    _ => format!("{name} {option}:'rm -rf x'"),
                })
            })
        };
        match runner.kind {
            Kind::Wrapper => {
                let operands = "1 ".repeat(runner.operands);
                let mut lines = vec![format!("{name} {operands}rm -rf x")];
                lines.extend(scripts());
                lines
            }
            Kind::Shell => vec![format!("{name} -c 'rm -rf x'")],
            Kind::Any => vec![format!("{name} -q 1 rm -rf x")],
            Kind::Options => scripts().collect(),
            Kind::Actions(actions) => actions
                .iter()
                .map(|a| format!("{name} . {a} rm -rf x ';'"))
                .collect(),
            Kind::Subcommand(subcommands) => subcommands
                .iter()
                .map(|s| format!("{name} {s} rm -rf x"))
                .collect(),
            Kind::Interpreter => Vec::new(),
        }
    }

    #[test]
    fn every_runner_is_never_allowed_and_a_deny_sees_the_command_it_runs() {
        for runner in RUNNERS {
            for name in runner.names {
                for line in through(runner, name) {
                    no_allow(&line);
                    denied(&line);
                    denied(&format!("/usr/bin/{line}"));
                    denied(&format!("nice -n 5 {line}"));
                }
                if runner.kind == Kind::Interpreter {
                    for token in runner.options.split_whitespace() {
                        let option = token.trim_end_matches('%');
                        no_allow(&format!("{name} {option} 'code'"));
                    }
                }
            }
        }
    }

    #[test]
    fn wrappers_come_off_by_their_grammar_and_fail_closed_otherwise() {
        for line in [
            "chrt -o 0 rm -rf x",
            "chrt --other 0 rm -rf x",
            "nice -n 5 rm -rf x",
            "nice -5 rm -rf x",
            "timeout 5 rm -rf x",
            "timeout -s KILL 5 rm -rf x",
            "timeout --signal=KILL 5 rm -rf x",
            "env A=1 rm -rf x",
            "env -u A -C / rm -rf x",
            "env -S 'rm -rf x'",
            "find . -exec rm -rf {} +",
            "find . -name x -execdir rm -rf {} ';'",
            "find . -ok rm -rf {} \\;",
            "xargs -0 -n 1 rm -rf",
            "setpriv --reuid=1 --clear-groups rm -rf x",
            "unshare -r -m rm -rf x",
            "flock /tmp/l rm -rf x",
            "flock -w 5 /tmp/l -c 'rm -rf x'",
            "taskset 0x1 rm -rf x",
            "taskset -c 0-3 rm -rf x",
            "ionice -c 3 rm -rf x",
            "stdbuf -oL rm -rf x",
            "watch -n 1 'rm -rf x'",
            "sudo -u root -- rm -rf x",
            "su -c 'rm -rf x' root",
            "script -q -c 'rm -rf x' /dev/null",
            "ssh host 'cd y; rm -rf x'",
            "busybox rm -rf x",
            "strace -f -e trace=all rm -rf x",
            "parallel rm -rf ::: x",
            "setsid -f rm -rf x",
            // Options not understood: every later word may start the command.
            "timeout --unheard-of 5 rm -rf x",
            "chrt -Q 0 rm -rf x",
            "sh -c 'timeout 5 rm -rf x'",
            "bash -lc 'eval rm -rf x'",
        ] {
            no_allow(line);
            denied(line);
        }
        // What a wrapper's options take is not its command.
        let deny = Glob::new("rm*").unwrap();
        assert!(!catches(&deny, "timeout -s rm 5 ls"));
        assert!(!catches(&deny, "nice -n 5 ls rm"));
    }

    /// The programs an installed package's files hold.
    fn programs_of(packages: &[&str]) -> Vec<String> {
        let listed = output("dpkg", &[&["-L"][..], packages].concat());
        let programs: Vec<String> = listed
            .lines()
            .filter(|path| path.contains("bin/"))
            .filter(|path| std::path::Path::new(path).is_file())
            .map(str::to_owned)
            .collect();
        assert!(
            programs.iter().any(|p| p.ends_with("/timeout")),
            "the packages are installed: {listed}"
        );
        programs
    }

    /// The synopsis lines of a program's `--help` (`Usage: NAME ...`, ` NAME [options] ...`).
    fn synopsis(path: &str) -> Vec<String> {
        let name = program(path);
        output("timeout", &["5", path, "--help"])
            .lines()
            .map(|line| {
                line.trim_start_matches("Usage:")
                    .trim_start_matches("or:")
                    .trim()
            })
            .filter(|line| {
                line.split_whitespace()
                    .next()
                    .is_some_and(|first| program(first) == name)
            })
            .map(str::to_owned)
            .collect()
    }

    /// Packages whose programs' synopses are read.
    const PACKAGES: &[&str] = &["coreutils", "util-linux", "findutils", "procps", "bsdutils"];

    /// Programs whose synopsis names a command that is not one they run.
    const NOT_RUNNERS: &[(&str, &str)] = &[
        ("blkzone", "its command is a subcommand of its own"),
        ("true", "it ignores its arguments"),
        ("false", "it ignores its arguments"),
    ];

    #[test]
    fn every_installed_program_whose_synopsis_takes_a_command_is_a_runner() {
        let mut checked = 0;
        for path in programs_of(PACKAGES) {
            let name = program(&path);
            let takes_command = synopsis(&path).iter().any(|line| {
                line.split_whitespace().skip(1).any(|word| {
                    let word = word.trim_matches(['[', ']', '<', '>', '.', '|']);
                    matches!(word, "COMMAND" | "command" | "PROGRAM" | "program")
                })
            });
            if takes_command && !NOT_RUNNERS.iter().any(|(n, _)| *n == name) {
                assert!(runner(name).is_some(), "{path} runs a command: list it");
                checked += 1;
            }
        }
        assert!(checked >= 10, "only {checked} wrappers found");
    }

    #[test]
    fn every_option_an_installed_wrapper_lists_is_in_its_grammar() {
        // ` -n, --adjustment=N`, ` -w, --timeout <secs>`, ` -m, --mount[=<file>]`: the short
        // and long spellings, and what follows them.
        let option = regex::Regex::new(
            r"^\s+(?:(-[A-Za-z0-9])[,.]?\s+)?(--?[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9])?(\S*)(?: (\S+))?",
        )
        .unwrap();
        let wrappers = RUNNERS
            .iter()
            .filter(|r| PACKAGES.contains(&r.source) && r.kind == Kind::Wrapper);
        for runner in wrappers {
            let name = runner.names[0];
            let help = output("timeout", &["5", name, "--help"]);
            assert!(help.contains(name), "{name} --help: {help}");
            for line in help.lines() {
                let Some(found) = option.captures(line) else {
                    continue;
                };
                let after = found.get(3).map_or("", |m| m.as_str());
                let next = found.get(4).map_or("", |m| m.as_str());
                // A value it must be given: `=N`, ` <secs>`, ` NAME`; `[=...]` is optional.
                let valued = after.starts_with('=')
                    || (after.is_empty()
                        && (next.starts_with('<')
                            || (next.len() > 1
                                && next.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))));
                for spelt in [found.get(1), found.get(2)].into_iter().flatten() {
                    let spelt = spelt.as_str();
                    if matches!(spelt, "-h" | "--help" | "-V" | "--version") {
                        continue;
                    }
                    let takes = runner.option(spelt);
                    assert!(
                        takes.is_some(),
                        "{name}'s option {spelt} is not in its grammar ({line:?})"
                    );
                    if valued {
                        assert_ne!(
                            takes,
                            Some(Takes::Nothing),
                            "{name}'s option {spelt} takes a value ({line:?})"
                        );
                    }
                }
            }
        }
    }
}
