"""test_clients: askdesk driven by the real agent CLIs (Claude Code, Codex, Gemini CLI), end to end.

Starts `askdesk serve` on a private socket, a scripted answerer on it (tests/pyclient), and the
scripted model server (tests/clients/mock_model.py) in this process; then runs each scenario's
client against the mock, sandboxed (its own HOME and config folders under a temporary folder,
dummy keys, the mock as base URL, a proxy that leads nowhere for anything but 127.0.0.1,
telemetry and updates off). Print mode where the client allows it, a tmux pane where it does not.
Every scenario checks what askdesk was asked (the answerer records it) and what the client then
did (a file made or not, the tool result the mock received).

EXPECTS says, for the scenarios that guard a behaviour users once missed, what each expects; a
failure prints it.

Usage: test_clients.py --askdesk BIN --clients NODE_MODULES_BIN [-k SUBSTRING] [--keep]
Prints one line per scenario and a closing 'N passed, N failed' line; exits non-zero on a failure.
"""
import argparse
import json
import os
import re
import shlex
import socket
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pyclient"))
sys.path.insert(0, HERE)
from askdesk_client import HOLD, Conn, ScriptedAnswerer  # noqa: E402
from mock_model import Mock  # noqa: E402

API_KEY = "sk-ant-test-askdesk-0000000000000000"
# Ceilings: generous, since the suite shares two cores with other work; waits end at the event.
CLIENT_CEILING = 120
EVENT_CEILING = 60


class Failed(AssertionError):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


# ----- the answerer -----
class Answerer(ScriptedAnswerer):
    """The scripted answerer of the scenarios, its policy and records set afresh by each one."""

    def __init__(self, path):
        super().__init__(path, "client-suite-answerer")
        self.requests = []  # every user-questions/request's params, as received
        self.cancels = []  # the request ids of every $/cancelRequest
        self.lock = threading.Lock()
        self.start()

    def reset(self, policy):
        with self.lock:
            self.policy = policy
            self.requests = []
            self.cancels = []

    def _on_request(self, msg):
        with self.lock:
            self.requests.append({"id": msg["id"], **msg["params"]})

    def _on_cancel(self, request_id):
        with self.lock:
            self.cancels.append(request_id)

    def wait_requests(self, count, timeout=EVENT_CEILING):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.requests) >= count:
                    return list(self.requests)
            time.sleep(0.05)
        with self.lock:
            return list(self.requests)

    def cancelled(self, request_id):
        with self.lock:
            return request_id in self.cancels


def item(question, selected=(), custom=None):
    out = {"id": question["id"], "selected": list(selected)}
    if custom is not None:
        out["custom"] = custom
    return out


def choose(label):
    """A policy that selects `label` in every question (the first question's option of that name)."""
    return lambda params: {"answers": [item(q, [label]) for q in params["questions"]]}


def feedback(text):
    """A policy that answers every question with free text only."""
    return lambda params: {"answers": [item(q, [], text) for q in params["questions"]]}


def describe(requests):
    return json.dumps(
        [{k: r.get(k) for k in ("questions", "agent")} for r in requests], indent=1
    )[:6000]


# ----- the world: broker, answerer, mock, tmux -----
class Trap(threading.Thread):
    """The proxy every client is given: it refuses every connection and records where it was
    meant to go, so nothing but the mock on 127.0.0.1 is reached and the report names the rest."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.hosts = {}  # host -> the scenarios whose clients tried it
        self.scenario = "start-up"
        self.start()

    def run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            try:
                conn.settimeout(2)
                first = conn.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace").split()
                target = first[1] if len(first) > 1 else "?"
                host = re.sub(r"^https?://", "", target).split("/", 1)[0]
                self.hosts.setdefault(host, set()).add(self.scenario)
            except OSError:
                pass
            finally:
                conn.close()

    def stop(self):
        self.sock.close()


class World:
    """The suite's private folder, the broker and its answerer, the mock, the trap, and the
    current scenario's folder and what its failure report shows."""

    def __init__(self, askdesk, clients, keep):
        self.askdesk = askdesk
        self.clients = clients
        self.keep = keep
        self.dir = tempfile.mkdtemp(prefix="askdesk-clients-")
        os.chmod(self.dir, 0o700)
        self.socket = os.path.join(self.dir, "run", "askdesk.sock")
        self.trap = Trap()
        self.base_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "XDG_RUNTIME_DIR": os.path.join(self.dir, "run"),
            "XDG_DATA_HOME": os.path.join(self.dir, "data"),
            "XDG_CONFIG_HOME": os.path.join(self.dir, "config"),
            "XDG_CACHE_HOME": os.path.join(self.dir, "cache"),
            # Nothing leaves the machine: every host but the mock's goes to the trap.
            "HTTPS_PROXY": self.trap.url,
            "HTTP_PROXY": self.trap.url,
            "https_proxy": self.trap.url,
            "http_proxy": self.trap.url,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        for key in ("XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.makedirs(self.base_env[key], exist_ok=True)
        os.chmod(self.base_env["XDG_RUNTIME_DIR"], 0o700)
        self.mock = Mock(os.path.join(self.dir, "mock.jsonl")).start()
        self.broker_log = open(os.path.join(self.dir, "broker.log"), "wb")
        self.broker = subprocess.Popen(
            [askdesk, "--socket", self.socket, "serve"],
            env={**self.base_env, "ASKDESK_LOG": "info"},
            stdout=self.broker_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while True:
            check(self.broker.poll() is None, f"askdesk serve exited with {self.broker.returncode}")
            try:
                Conn(self.socket, timeout=2).close()
                break
            except OSError:
                check(time.monotonic() < deadline, "askdesk serve never opened its socket")
                time.sleep(0.05)
        self.answerer = Answerer(self.socket)
        self.tmux_socket = os.path.join(self.dir, "tmux.sock")
        self.scenario_dir = None
        self.artifacts = []  # (title, text) shown when a scenario fails

    # --- per scenario ---
    def begin(self, name, script, policy):
        self.scenario_dir = os.path.join(self.dir, name)
        os.makedirs(self.scenario_dir)
        self.work = os.path.join(self.scenario_dir, "work")
        os.makedirs(self.work)
        # A script may be a function of the scenario's work folder.
        self.mock.set_script(script(self.work) if callable(script) else script)
        self.answerer.reset(policy)
        self.trap.scenario = name
        self.artifacts = []
        self.log_start = os.path.getsize(self.mock.log_path) if os.path.exists(self.mock.log_path) else 0

    def home(self, client):
        home = os.path.join(self.scenario_dir, f"home-{client}")
        os.makedirs(home, exist_ok=True)
        return home

    def run(self, argv, env, cwd=None, timeout=CLIENT_CEILING, title=None):
        """Runs a command to its end; its output is kept for the failure report."""
        started = time.monotonic()
        try:
            proc = subprocess.run(
                argv, env=env, cwd=cwd or self.work, stdin=subprocess.DEVNULL, capture_output=True,
                timeout=timeout, start_new_session=True,
            )
        except subprocess.TimeoutExpired as expired:
            self.artifacts.append((title or argv[0], f"timed out after {timeout} s\n{expired.stdout!r}\n{expired.stderr!r}"))
            raise Failed(f"{title or argv[0]} did not finish within {timeout} s")
        out = proc.stdout.decode(errors="replace")
        err = proc.stderr.decode(errors="replace")
        self.artifacts.append(
            (title or " ".join(argv[:3]), f"exit {proc.returncode} after {time.monotonic() - started:.1f} s\n--- stdout\n{out[-4000:]}\n--- stderr\n{err[-4000:]}")
        )
        proc.out, proc.err = out, err
        return proc

    def askdesk_cmd(self, *args):
        return [self.askdesk, "--socket", self.socket, *args]

    def mock_requests(self):
        """The mock's log entries of this scenario."""
        out = []
        if not os.path.exists(self.mock.log_path):
            return out
        with open(self.mock.log_path, encoding="utf-8") as f:
            f.seek(self.log_start)
            for line in f:
                out.append(json.loads(line))
        return out

    def failure_report(self):
        lines = []
        for title, text in self.artifacts:
            lines.append(f"--- {title}\n{text}")
        lines.append("--- askdesk was asked\n" + describe(self.answerer.requests))
        lines.append(f"--- cancels: {self.answerer.cancels}")
        lines.append("--- tool results the mock received\n" + json.dumps(self.mock.results, indent=1)[:4000])
        summary = []
        for entry in self.mock_requests():
            summary.append(
                f"{entry.get('path')} main={entry.get('main')} turn={json.dumps(entry.get('turn'))[:200]}"
            )
        lines.append("--- requests the mock got\n" + "\n".join(summary[-30:]))
        return "\n".join(lines)

    def close(self, failed):
        """Stops everything the suite started; returns the pids of processes that were left
        (ended now, by their process group). The folder goes, unless a scenario `failed`: then
        its logs stay."""
        self.answerer.stop()
        self.broker.terminate()
        try:
            self.broker.wait(10)
        except subprocess.TimeoutExpired:
            self.broker.kill()
        self.broker_log.close()
        self.mock.stop()
        subprocess.run(["tmux", "-S", self.tmux_socket, "kill-server"], capture_output=True)
        self.trap.stop()
        left = [(pid, _cmdline(pid)) for pid in processes_of(self.dir)]
        end_processes(self.dir)
        if self.keep:
            return left
        if failed:
            # The logs stay for a look; the copies of Codex's daemon (hundreds of MB) do not.
            for name in os.listdir(self.dir):
                shutil.rmtree(os.path.join(self.dir, name, "home-codex", ".codex", "packages"), ignore_errors=True)
            self.keep = True
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        return left


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


class Pane:
    """One client in a tmux window: started from a script that sets its whole environment."""

    def __init__(self, world, name, argv, env, cwd):
        self.world = world
        self.name = name
        script = os.path.join(world.scenario_dir, f"{name}.sh")
        with open(script, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n# Starts one client of the real-client suite in its sandbox.\n")
            f.write(f"cd {shlex.quote(cwd)} || exit 1\n")
            f.write("exec env -i " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + " ")
            f.write(" ".join(shlex.quote(a) for a in argv) + "\n")
        os.chmod(script, 0o700)
        self.tmux("new-session", "-d", "-s", name, "-x", "200", "-y", "50", script)
        self.tmux("set-option", "-t", name, "remain-on-exit", "on")
        world.artifacts.append((f"tmux pane {name}", self))

    def tmux(self, *args):
        return subprocess.run(
            ["tmux", "-S", self.world.tmux_socket, *args], capture_output=True, text=True, timeout=30
        )

    def capture(self):
        return self.tmux("capture-pane", "-p", "-t", self.name, "-S", "-200").stdout

    def __str__(self):
        return self.capture()

    def wait_for(self, pattern, timeout=EVENT_CEILING):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.capture()):
                return True
            time.sleep(0.2)
        raise Failed(f"the {self.name} pane never showed {pattern!r} within {timeout} s")

    def keys(self, *keys):
        self.tmux("send-keys", "-t", self.name, *keys)

    def pid(self):
        out = self.tmux("list-panes", "-t", self.name, "-F", "#{pane_pid}").stdout.strip()
        return int(out) if out.isdigit() else None

    def kill(self):
        self.tmux("kill-session", "-t", self.name)


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise Failed(f"{what} did not happen within {timeout} s")


# ----- Claude Code -----
def claude_setup(world, hook=True, mcp=False, socket=None):
    """A sandboxed Claude Code: config folder, onboarding done, the work folder trusted."""
    home = world.home("claude")
    config = os.path.join(home, ".claude")
    os.makedirs(config, exist_ok=True)
    with open(os.path.join(config, ".claude.json"), "w", encoding="utf-8") as f:
        json.dump(
            {
                "hasCompletedOnboarding": True,
                "lastOnboardingVersion": "2.1.328",
                "theme": "dark",
                "autoUpdates": False,
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                "projects": {world.work: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
            },
            f,
        )
    env = {
        **world.base_env,
        "HOME": home,
        "CLAUDE_CONFIG_DIR": config,
        "ANTHROPIC_BASE_URL": world.mock.url,
        "ANTHROPIC_API_KEY": API_KEY,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # Every tool in every request, so the mock sees the one it calls (no deferred tool search).
        "ENABLE_TOOL_SEARCH": "false",
    }
    if hook:
        install = world.run(
            [world.askdesk, "--socket", socket or world.socket, "hook", "install", "claude-code", "--config", os.path.join(config, "settings.json")],
            env, title="askdesk hook install claude-code",
        )
        check(install.returncode == 0, f"askdesk hook install claude-code failed: {install.err}")
    if mcp:
        add = world.run(
            [os.path.join(world.clients, "claude"), "mcp", "add", "askdesk", "--", *world.askdesk_cmd("mcp")],
            env, title="claude mcp add",
        )
        check(add.returncode == 0, f"claude mcp add failed: {add.err}")
    return env


def claude_print(world, env, prompt, *extra):
    """`claude -p`, which must end by itself and print the model's last words."""
    proc = world.run(
        [os.path.join(world.clients, "claude"), "-p", prompt, "--debug-file", os.path.join(world.scenario_dir, "claude-debug.txt"), *extra],
        env, title="claude -p",
    )
    check(proc.returncode == 0, f"claude -p exited {proc.returncode}")
    return proc


def finished(proc, words):
    check(words in proc.out, f"the client did not print the model's last words {words!r}")


def gemini_print(world, env, prompt):
    """`gemini -p`, which must end by itself and print the model's last words."""
    proc = world.run([os.path.join(world.clients, "gemini"), "-p", prompt], env, title="gemini -p")
    check(proc.returncode == 0, f"gemini -p exited {proc.returncode}")
    finished(proc, "Thanks.")
    return proc


def claude_tui(world, env, prompt, *extra):
    return Pane(world, "claude", [os.path.join(world.clients, "claude"), *extra, prompt], env, world.work)


def results_for(world, count, timeout=EVENT_CEILING):
    results = world.mock.wait_results(count, timeout)
    check(len(results) >= count, f"the mock received {len(results)} tool results, expected {count}")
    return results


def only_request(world, count=1):
    requests = world.answerer.wait_requests(count)
    check(len(requests) == count, f"askdesk was asked {len(requests)} times, expected {count}")
    return requests


def shell_script(path):
    return [{"shell": f"touch {path}"}, {"text": "Finished."}]


def bash_script(path):
    return [
        {"tool": "Bash", "input": {"command": f"touch {path}", "description": "Create the marker file"}},
        {"text": "Finished."},
    ]


def scenario_claude_print_allow(world):
    world.begin("claude-print-bash-allow", lambda work: bash_script(os.path.join(work, "allowed.txt")), choose("Allow once"))
    target = os.path.join(world.work, "allowed.txt")
    env = claude_setup(world)
    proc = claude_print(world, env, "Create the marker file.")
    finished(proc, "Finished.")
    (request,) = only_request(world)
    question = request["questions"][0]
    check(question["question"] == "Allow Bash?", f"asked {question['question']!r}")
    check(f"touch {target}" in question.get("detail", ""), "the command is not in the question's detail")
    check(request["agent"]["meta"].get("via") == "hook", "the agent is not the hook's")
    check(os.path.exists(target), "the allowed command did not create its file")
    (result,) = results_for(world, 1)
    check(not result["is_error"], f"the tool result is an error: {result['text']!r}")


def scenario_claude_print_deny(world):
    world.begin("claude-print-bash-deny", lambda work: bash_script(os.path.join(work, "denied.txt")), choose("Deny"))
    target = os.path.join(world.work, "denied.txt")
    env = claude_setup(world)
    finished(claude_print(world, env, "Create the marker file."), "Finished.")
    only_request(world)
    (result,) = results_for(world, 1)
    check(not os.path.exists(target), "the denied command created its file")
    check(result["is_error"], "the tool result is not an error")
    check("The user denied this Bash call." in result["text"], f"the mock got {result['text']!r}")


def scenario_claude_print_feedback(world):
    words = "Name the file notes.txt instead, please."
    world.begin("claude-print-bash-feedback", lambda work: bash_script(os.path.join(work, "feedback.txt")), feedback(words))
    target = os.path.join(world.work, "feedback.txt")
    env = claude_setup(world)
    finished(claude_print(world, env, "Create the marker file."), "Finished.")
    only_request(world)
    (result,) = results_for(world, 1)
    check(not os.path.exists(target), "the command ran although the answer was feedback")
    check(words in result["text"], f"the mock got {result['text']!r}, without the feedback")


def scenario_claude_print_fail_open(world):
    world.begin("claude-print-fail-open", lambda work: bash_script(os.path.join(work, "fail-open.txt")), choose("Allow once"))
    target = os.path.join(world.work, "fail-open.txt")
    nowhere = os.path.join(world.scenario_dir, "no-broker", "askdesk.sock")
    env = claude_setup(world, socket=nowhere)
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    started = time.monotonic()
    claude_print(world, env, "Create the marker file.")
    took = time.monotonic() - started
    check(took < 60, f"claude -p took {took:.0f} s with no broker")
    check(not world.answerer.requests, "the running broker was asked, not the missing one")
    check(not os.path.exists(target), "the command ran though nobody allowed it")
    (result,) = results_for(world, 1)
    check(result["is_error"], "Claude Code's own handling did not refuse the call in print mode")
    with open(os.path.join(world.scenario_dir, "claude-debug.txt"), encoding="utf-8", errors="replace") as f:
        debug = f.read()
    lines = re.findall(r"askdesk hook: [^\\\n\"]*", debug)
    world.artifacts.append(("askdesk hook stderr lines", "\n".join(lines)))
    check(len(lines) == 1, f"askdesk printed {len(lines)} stderr lines, expected one")
    check("Claude Code shows its own prompt instead" in lines[0], f"the line was {lines[0]!r}")


# ----- Claude Code in its terminal UI -----
PLAN = "# Marker plan\n\n1. Create the marker file\n2. Check that it exists\n"


def plan_script():
    return [
        {"tool": "Write", "input": {"file_path": "{plan_file}", "content": PLAN}},
        {"tool": "ExitPlanMode", "input": {}},
        {"text": "Plan handled."},
    ]


def plan_request(world):
    requests = world.answerer.wait_requests(1)
    plans = [r for r in requests if (r["questions"][0].get("intent") or {}).get("kind") == "plan-review"]
    check(plans, "askdesk was never asked to review the plan:\n" + describe(requests))
    question = plans[0]["questions"][0]
    check("Check that it exists" in (question.get("detail") or ""), "the plan is not the question's detail")
    return question


def scenario_claude_tui_plan_approve(world):
    world.begin("claude-tui-plan-approve", plan_script(), choose("Approve, ask before edits"))
    env = claude_setup(world)
    pane = claude_tui(world, env, "Plan the marker file.", "--permission-mode", "plan")
    plan_request(world)
    results = results_for(world, 2)
    pane.wait_for(r"Plan handled\.")
    exit_result = results[1]
    check(not exit_result["is_error"], f"ExitPlanMode's result is an error: {exit_result['text']!r}")
    check(re.search(r"approved", exit_result["text"], re.I), f"the mock got {exit_result['text']!r}")
    check("Check that it exists" in exit_result["text"], "the approved plan is not in the tool result")


def scenario_claude_tui_plan_feedback(world):
    words = "Split step 2 into a check and a report."
    world.begin("claude-tui-plan-feedback", plan_script(), feedback(words))
    env = claude_setup(world)
    pane = claude_tui(world, env, "Plan the marker file.", "--permission-mode", "plan")
    plan_request(world)
    results = results_for(world, 2)
    pane.wait_for(r"Plan handled\.")
    check(results[1]["is_error"], "ExitPlanMode's result is not a refusal")
    check(words in results[1]["text"], f"the mock got {results[1]['text']!r}, without the feedback")


ASKED = [
    {
        "question": "Which colour should the marker be?",
        "header": "Colour",
        "multiSelect": False,
        "options": [{"label": "Blue", "description": "Calm"}, {"label": "Green", "description": "Fresh"}],
    },
    {
        "question": "Which checks should run?",
        "header": "Checks",
        "multiSelect": True,
        "options": [
            {"label": "Lint", "description": "Style"},
            {"label": "Unit", "description": "Fast tests"},
            {"label": "Fuzz", "description": "Slow tests"},
        ],
    },
    {
        "question": "What should the file be called?",
        "header": "Name",
        "multiSelect": False,
        "options": [{"label": "marker.txt", "description": "The default"}, {"label": "flag.txt", "description": "Short"}],
    },
]


def scenario_claude_tui_ask_user_question(world):
    def policy(params):
        qs = params["questions"]
        return {"answers": [item(qs[0], ["Green"]), item(qs[1], ["Lint", "Fuzz"]), item(qs[2], [], "beacon.txt")]}

    world.begin(
        "claude-tui-ask-user-question",
        [{"tool": "AskUserQuestion", "input": {"questions": ASKED}}, {"text": "Thanks."}],
        policy,
    )
    env = claude_setup(world)
    pane = claude_tui(world, env, "Ask me about the marker file.")
    (request,) = only_request(world)
    pane.wait_for(r"Thanks\.")
    asked = request["questions"]
    check([q["question"] for q in asked] == [q["question"] for q in ASKED], "askdesk was asked other questions")
    check(asked[1].get("multiSelect") is True, "the multi-select question is not multi-select in askdesk")
    check([o["label"] for o in asked[1]["options"]] == ["Lint", "Unit", "Fuzz"], "the options differ")
    (result,) = results_for(world, 1)
    text = result["text"]
    check(not result["is_error"], f"the tool result is an error: {text!r}")
    check("Green" in text, f"the single-select answer is not in {text!r}")
    check("Lint" in text and "Fuzz" in text and "Unit" not in text, f"the multi-select answer is not in {text!r}")
    check("beacon.txt" in text, f"the free-text answer is not in {text!r}")


# ----- Codex in its terminal UI -----
def codex_setup(world):
    home = world.home("codex")
    codex_home = os.path.join(home, ".codex")
    os.makedirs(codex_home, exist_ok=True)
    with open(os.path.join(codex_home, "config.toml"), "w", encoding="utf-8") as f:
        f.write(
            f'''# The real-client suite's Codex: the mock as its model provider, nothing else.
model = "mock-model"
model_provider = "mock"
approval_policy = "on-request"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{world.mock.url}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"

[projects.{json.dumps(world.work)}]
trust_level = "trusted"

[analytics]
enabled = false

[feedback]
enabled = false
'''
        )
    env = {**world.base_env, "HOME": home, "CODEX_HOME": codex_home, "MOCK_API_KEY": "dummy-key"}
    install = world.run(
        world.askdesk_cmd("hook", "install", "codex", "--config", os.path.join(codex_home, "hooks.json")),
        env, title="askdesk hook install codex",
    )
    check(install.returncode == 0, f"askdesk hook install codex failed: {install.err}")
    return env, codex_home


def processes_of(marker):
    """Pids of the processes that name `marker` (a folder of ours) in their command line or
    environment: what a scenario started, however it was detached."""
    found = []
    marker = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            if not cmdline:
                continue  # a zombie, or a kernel thread
            environ = b""
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    environ = f.read()
            except OSError:
                pass
            if marker in cmdline or marker in environ:
                found.append(int(entry))
        except OSError:
            continue
    return found


def end_processes(marker):
    """Ends every process of `marker` by its process group (TERM, then KILL); returns what was left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in processes_of(marker):
            try:
                os.killpg(os.getpgid(pid), sig)
            except OSError:
                pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and processes_of(marker):
            time.sleep(0.1)
        if not processes_of(marker):
            return []
    return processes_of(marker)


def stop_codex(world, pane, codex_home):
    """Ends the Codex TUI and its app-server daemon (each process group); checks none is left."""
    world.artifacts.append(("tmux pane codex, before it was closed", pane.capture()))
    pane.keys("C-c")
    pane.kill()
    left = end_processes(codex_home)
    check(not left, f"Codex processes left after the scenario: {left}")
    # What pgrep sees too: nothing of this Codex, daemon included.
    seen = subprocess.run(["pgrep", "-f", codex_home], capture_output=True, text=True).stdout.split()
    check(not seen, f"pgrep still finds Codex processes: {seen}")


def codex_run(world):
    env, codex_home = codex_setup(world)
    pane = Pane(world, "codex", [os.path.join(world.clients, "codex"), "Create the marker file."], env, world.work)
    try:
        # New hooks need the user's trust: the start-up dialog's "Trust all and continue".
        pane.wait_for(r"Hooks need review|Trust all and continue")
        # The digit moves the selection (Enter confirms it), or confirms it at once. A key sent
        # while the dialog is still starting up is lost, so each is sent again until the screen
        # moves on; the dialog is done when it is gone.
        deadline = time.monotonic() + EVENT_CEILING
        sent = 0.0
        while "Hooks need review" in pane.capture():
            check(time.monotonic() < deadline, "Codex's hook trust dialog did not go away")
            if time.monotonic() - sent > 1:
                pane.keys("Enter" if re.search(r"› 2\. Trust all", pane.capture()) else "2")
                sent = time.monotonic()
            time.sleep(0.2)
        only_request(world)
        world.mock.wait_results(1, EVENT_CEILING)
        wait_until(lambda: world.mock.wait_final(1), EVENT_CEILING, "Codex's last model request")
    finally:
        stop_codex(world, pane, codex_home)


def scenario_codex_tui_allow(world):
    world.begin("codex-tui-shell-allow", lambda work: shell_script(os.path.join(work, "codex-allowed.txt")), choose("Allow once"))
    target = os.path.join(world.work, "codex-allowed.txt")
    codex_run(world)
    (request,) = world.answerer.requests
    check(request["agent"]["meta"].get("client") == "codex", "the agent is not Codex's hook")
    check(f"touch {target}" in request["questions"][0].get("detail", ""), "the command is not in the detail")
    check(os.path.exists(target), "the allowed command did not create its file")
    (result,) = results_for(world, 1)
    check("exited with code 0" in result["text"] or result["text"].strip() == "", f"the mock got {result['text']!r}")


def scenario_codex_tui_deny(world):
    world.begin("codex-tui-shell-deny", lambda work: shell_script(os.path.join(work, "codex-denied.txt")), choose("Deny"))
    target = os.path.join(world.work, "codex-denied.txt")
    codex_run(world)
    check(len(world.answerer.requests) == 1, "askdesk was not asked exactly once")
    check(not os.path.exists(target), "the denied command created its file")
    (result,) = results_for(world, 1)
    check("The user denied this Bash call." in result["text"], f"the mock got {result['text']!r}")


# ----- MCP -----
QUESTION = {"questions": [{"id": "colour", "question": "Which colour should the marker be?", "options": [{"label": "Blue"}, {"label": "Green"}]}]}


def verdict_in_words(text):
    """Whether a review_plan result says the verdict in words (not only as an `approved` key)."""
    return re.search(r"approved", re.sub(r'"approved"\s*:', "", text), re.I) is not None


def scenario_claude_mcp_ask(world):
    world.begin("claude-mcp-ask-user-question", [{"tool": "ask_user_question", "input": QUESTION}, {"text": "Thanks."}], choose("Green"))
    env = claude_setup(world, hook=False, mcp=True)
    finished(claude_print(world, env, "Ask me the colour.", "--allowedTools", "mcp__askdesk"), "Thanks.")
    (request,) = only_request(world)
    check(request["agent"]["meta"].get("via") == "mcp", "the agent is not the MCP session's")
    check(request["questions"][0]["question"] == QUESTION["questions"][0]["question"], "askdesk was asked another question")
    (result,) = results_for(world, 1)
    check("Green" in result["text"], f"the answer is not in {result['text']!r}")


def scenario_claude_mcp_review_plan(world):
    world.begin("claude-mcp-review-plan", [{"tool": "review_plan", "input": {"plan": PLAN}}, {"text": "Thanks."}], choose("Approve"))
    env = claude_setup(world, hook=False, mcp=True)
    finished(claude_print(world, env, "Review my plan.", "--allowedTools", "mcp__askdesk"), "Thanks.")
    (request,) = only_request(world)
    check(request["questions"][0].get("intent", {}).get("kind") == "plan-review", "not asked as a plan review")
    (result,) = results_for(world, 1)
    check(verdict_in_words(result["text"]), f"the verdict is not in words in {result['text']!r}")


def gemini_setup(world):
    home = world.home("gemini")
    os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
    with open(os.path.join(home, ".gemini", "settings.json"), "w", encoding="utf-8") as f:
        json.dump(
            {
                "mcpServers": {"askdesk": {"command": world.askdesk, "args": ["--socket", world.socket, "mcp"], "trust": True}},
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "telemetry": {"enabled": False},
                "privacy": {"usageStatisticsEnabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            },
            f,
        )
    return {
        **world.base_env,
        "HOME": home,
        "GEMINI_API_KEY": "dummy-key",
        "GOOGLE_GEMINI_BASE_URL": world.mock.url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


def scenario_gemini_mcp_ask(world):
    world.begin("gemini-mcp-ask-user-question", [{"tool": "ask_user_question", "input": QUESTION}, {"text": "Thanks."}], choose("Green"))
    env = gemini_setup(world)
    gemini_print(world, env, "Ask me the colour.")
    (request,) = only_request(world)
    check(request["agent"]["meta"].get("via") == "mcp", "the agent is not the MCP session's")
    (result,) = results_for(world, 1)
    check("Green" in result["text"], f"the answer is not in {result['text']!r}")


def scenario_gemini_mcp_review_plan(world):
    world.begin("gemini-mcp-review-plan", [{"tool": "review_plan", "input": {"plan": PLAN}}, {"text": "Thanks."}], choose("Approve"))
    env = gemini_setup(world)
    gemini_print(world, env, "Review my plan.")
    only_request(world)
    (result,) = results_for(world, 1)
    check(verdict_in_words(result["text"]), f"the verdict is not in words in {result['text']!r}")


# ----- behaviours users once missed (EXPECTS) -----
def scenario_claude_tui_terminal_answer_withdraws(world):
    world.begin("claude-tui-terminal-answer-withdraws", lambda work: bash_script(os.path.join(work, "terminal.txt")), lambda params: HOLD)
    target = os.path.join(world.work, "terminal.txt")
    env = claude_setup(world)
    # The terminal UI's default is auto mode, which asks nobody: the classic mode asks.
    pane = claude_tui(world, env, "Create the marker file.", "--permission-mode", "default")
    (request,) = only_request(world)
    prompt = r"Do you want to (proceed|make this edit|create)|1\. Yes"
    pane.wait_for(prompt)
    # "Yes" in the terminal: Enter, sent again should the prompt not have taken it yet.
    deadline = time.monotonic() + EVENT_CEILING
    sent = 0.0
    while not os.path.exists(target):
        check(time.monotonic() < deadline, "the command allowed in the terminal did not run")
        if time.monotonic() - sent > 2 and re.search(prompt, pane.capture()):
            pane.keys("Enter")
            sent = time.monotonic()
        time.sleep(0.2)
    # Withdrawn: the answerer is told ($/cancelRequest), or at least the broker holds it no more.
    def withdrawn():
        if world.answerer.cancelled(request["id"]):
            return True
        status = subprocess.run(world.askdesk_cmd("status", "--json"), capture_output=True, text=True, timeout=30)
        return status.returncode == 0 and not json.loads(status.stdout).get("pending")

    wait_until(withdrawn, 10, "withdrawing the askdesk question answered in the terminal (no $/cancelRequest, still pending)")


def mcp_stdio_call(world, tool, arguments):
    """One `tools/call` through `askdesk mcp` over stdio; returns the call's result."""
    proc = subprocess.Popen(
        world.askdesk_cmd("mcp"), env={**world.base_env}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        def send(msg):
            proc.stdin.write((json.dumps(msg) + "\n").encode())
            proc.stdin.flush()

        def receive(want_id):
            while True:
                line = proc.stdout.readline()
                check(line, "askdesk mcp closed its output")
                msg = json.loads(line)
                if msg.get("id") == want_id:
                    return msg

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "client-suite", "version": "1"}}})
        receive(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        return receive(2)["result"]
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def scenario_mcp_review_plan_verdict_in_words(world):
    world.begin("mcp-review-plan-verdict-in-words", [], choose("Approve"))
    result = mcp_stdio_call(world, "review_plan", {"plan": PLAN})
    structured = result.get("structuredContent")
    world.artifacts.append(("review_plan result", json.dumps(result, indent=1)))
    check(structured is not None, "review_plan's result has no structuredContent")
    words = [v for v in structured.values() if isinstance(v, str)]
    check(
        any(re.search(r"approved", w, re.I) for w in words),
        f"structuredContent carries no verdict in words: {json.dumps(structured)}",
    )


def scenario_claude_hook_plan_file_only(world):
    world.begin("claude-hook-plan-file-only", [], choose("Approve, ask before edits"))
    plan_file = os.path.join(world.scenario_dir, "plan.md")
    with open(plan_file, "w", encoding="utf-8") as f:
        f.write(PLAN)
    # The hook input Claude Code sends for ExitPlanMode when the plan lives only in its file.
    hook_input = {
        "session_id": "plan-file-session",
        "transcript_path": os.path.join(world.scenario_dir, "transcript.jsonl"),
        "cwd": world.work,
        "permission_mode": "plan",
        "hook_event_name": "PermissionRequest",
        "tool_name": "ExitPlanMode",
        "tool_input": {"planFilePath": plan_file},
    }
    proc = subprocess.run(
        world.askdesk_cmd("hook", "claude-code", "--no-launch"), input=json.dumps(hook_input).encode(),
        env={**world.base_env}, capture_output=True, timeout=EVENT_CEILING,
    )
    world.artifacts.append(("askdesk hook claude-code", f"exit {proc.returncode}\n{proc.stdout.decode()}\n{proc.stderr.decode()}"))
    check(world.answerer.requests, "askdesk was not asked: " + proc.stderr.decode().strip())
    question = world.answerer.requests[0]["questions"][0]
    check("Check that it exists" in (question.get("detail") or ""), "the plan file's plan is not shown")
    decision = json.loads(proc.stdout.decode() or "{}")
    check(decision.get("hookSpecificOutput", {}).get("decision", {}).get("behavior") == "allow", "the approval was not printed")


def scenario_claude_mcp_with_hook_asks_once(world):
    def policy(params):
        q = params["questions"][0]
        if q["question"].startswith("Allow"):
            return {"answers": [item(q, ["Allow once"])]}
        return {"answers": [item(q, ["Green"])]}

    world.begin("claude-mcp-with-hook-asks-once", [{"tool": "ask_user_question", "input": QUESTION}, {"text": "Thanks."}], policy)
    env = claude_setup(world, hook=True, mcp=True)
    claude_print(world, env, "Ask me the colour.")
    requests = world.answerer.wait_requests(1)
    results_for(world, 1)
    asked = [r["questions"][0]["question"] for r in world.answerer.requests]
    check(asked, "askdesk was never asked")
    check(
        not any(a.startswith("Allow") and "ask_user_question" in json.dumps(r) for a, r in zip(asked, requests)),
        f"ask_user_question was first asked as a permission: {asked}",
    )
    check(asked == [QUESTION["questions"][0]["question"]], f"askdesk was asked {asked}")


SCENARIOS = [
    ("claude-print-bash-allow", scenario_claude_print_allow),
    ("claude-print-bash-deny", scenario_claude_print_deny),
    ("claude-print-bash-feedback", scenario_claude_print_feedback),
    ("claude-print-fail-open", scenario_claude_print_fail_open),
    ("claude-tui-plan-approve", scenario_claude_tui_plan_approve),
    ("claude-tui-plan-feedback", scenario_claude_tui_plan_feedback),
    ("claude-tui-ask-user-question", scenario_claude_tui_ask_user_question),
    ("codex-tui-shell-allow", scenario_codex_tui_allow),
    ("codex-tui-shell-deny", scenario_codex_tui_deny),
    ("claude-mcp-ask-user-question", scenario_claude_mcp_ask),
    ("claude-mcp-review-plan", scenario_claude_mcp_review_plan),
    ("gemini-mcp-ask-user-question", scenario_gemini_mcp_ask),
    ("gemini-mcp-review-plan", scenario_gemini_mcp_review_plan),
    ("claude-tui-terminal-answer-withdraws", scenario_claude_tui_terminal_answer_withdraws),
    ("mcp-review-plan-verdict-in-words", scenario_mcp_review_plan_verdict_in_words),
    ("claude-hook-plan-file-only", scenario_claude_hook_plan_file_only),
    ("claude-mcp-with-hook-asks-once", scenario_claude_mcp_with_hook_asks_once),
]

# What the scenarios guarding a behaviour users once missed expect, printed when one fails.
EXPECTS = {
    "claude-tui-terminal-answer-withdraws": "answering Claude Code's prompt in its terminal withdraws the askdesk question ($/cancelRequest to the answerer)",
    "mcp-review-plan-verdict-in-words": "review_plan's structuredContent says the verdict in words, not only {\"approved\": true}",
        "claude-mcp-review-plan": "Claude Code gives the model review_plan's structuredContent, so it must say the verdict in words",
    "claude-hook-plan-file-only": "ExitPlanMode with planFilePath and no plan shows the file's plan in askdesk",
    "claude-mcp-with-hook-asks-once": "with the hook and MCP both installed, ask_user_question is not first asked as \"Allow the MCP tool …\"",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--askdesk", required=True)
    parser.add_argument("--clients", required=True, help="the node_modules/.bin folder with claude, codex, gemini")
    parser.add_argument("-k", dest="only", help="run the scenarios whose name holds this")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    for tool in ("tmux",):
        if shutil.which(tool) is None:
            print(f"test_clients.py: {tool} is needed (scripts/test.sh installs it)", file=sys.stderr)
            return 1
    world = World(os.path.abspath(args.askdesk), os.path.abspath(args.clients), args.keep)
    passed, failed = [], []
    try:
        for name, scenario in SCENARIOS:
            if args.only and args.only not in name:
                continue
            started = time.monotonic()
            try:
                scenario(world)
            except Exception as error:  # every failure is reported with what the scenario saw
                took = time.monotonic() - started
                failed.append(name)
                why = str(error) if isinstance(error, Failed) else traceback.format_exc()
                print(f"FAIL  {name} ({took:.1f} s): {why}", flush=True)
                if name in EXPECTS:
                    print(f"      expects: {EXPECTS[name]}", flush=True)
                report = world.failure_report() if world.scenario_dir else ""
                print("      " + report.replace("\n", "\n      "), flush=True)
                if world.scenario_dir:
                    with open(os.path.join(world.scenario_dir, "failure.txt"), "w", encoding="utf-8") as f:
                        f.write(f"{why}\n{report}\n")
            else:
                passed.append(name)
                print(f"PASS  {name} ({time.monotonic() - started:.1f} s)", flush=True)
            finally:
                # Every process the scenario started ends with it (a client that outlives its
                # pane, a daemon, an MCP server).
                subprocess.run(["tmux", "-S", world.tmux_socket, "kill-server"], capture_output=True)
                if world.scenario_dir:
                    end_processes(world.scenario_dir)
    finally:
        left = world.close(failed)
    # The suite cleans up after itself: nothing it started may outlive it.
    if left:
        failed.append("no-process-left")
        print("FAIL  no-process-left: processes outlived the suite (ended now):", flush=True)
        for pid, cmdline in left:
            print(f"      {pid} {cmdline[:300]}", flush=True)
    else:
        passed.append("no-process-left")
        print("PASS  no-process-left", flush=True)
    if world.trap.hosts:
        refused = "; ".join(f"{host} ({', '.join(sorted(names))})" for host, names in sorted(world.trap.hosts.items()))
        print(f"note: connections kept from leaving the machine: {refused}")
    if world.keep:
        print(f"logs kept in {world.dir} (failure.txt in each failed scenario's folder, mock.jsonl, broker.log)")
    print(f"{len(passed)} passed, {len(failed)} failed")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
