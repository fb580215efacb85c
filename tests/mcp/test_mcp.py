"""End-to-end test of `askdesk mcp` with the official MCP Python SDK.

Starts a real `askdesk serve` on a private temporary socket, a scripted answerer on
that socket (tests/pyclient/askdesk_client.py), and `askdesk mcp` as an MCP
stdio server driven by `mcp.ClientSession`. Prints one line per case and a closing
'N passed, N failed' line; exits non-zero when any case fails.

Usage: test_mcp.py ASKDESK_BINARY [-k SUBSTRING]
"""
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
import mcp_types as types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# The project's own protocol client (tests/pyclient/askdesk_client.py).
sys.path.insert(0, os.path.join(HERE, "..", "pyclient"))
from askdesk_client import HOLD, Conn, ScriptedAnswerer  # noqa: E402

CLIENT_INFO = types.Implementation(name="askdesk-mcp-test", version="1.2.3")


class Answerer(ScriptedAnswerer):
    """The scripted answerer of the cases: every request and cancel it got, in queues."""

    def __init__(self, path):
        super().__init__(path, "scripted-answerer")
        self.requests = queue.Queue()  # every user-questions/request, as received
        self.cancels = queue.Queue()  # every $/cancelRequest
        self.start()

    def _on_request(self, msg):
        self.requests.put(msg)

    def _on_cancel(self, request_id):
        self.cancels.put(request_id)


class World:
    """The broker, the answerer and the environment for `askdesk mcp`."""

    def __init__(self, binary):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="askdesk-mcp-")
        os.chmod(self.dir, 0o700)
        self.socket = os.path.join(self.dir, "run", "askdesk.sock")
        self.env = {
            "ASKDESK_SOCKET": self.socket,
            "XDG_DATA_HOME": os.path.join(self.dir, "data"),
            "XDG_RUNTIME_DIR": self.dir,
            "ASKDESK_LOG": "info",
        }
        self.broker_log = open(os.path.join(self.dir, "broker.log"), "wb")
        self._start_broker()

    def _start_broker(self):
        binary = self.binary
        self.broker = subprocess.Popen(
            [binary, "serve"], env={**os.environ, **self.env}, stdout=self.broker_log, stderr=subprocess.STDOUT
        )
        deadline = time.time() + 30
        while True:
            if self.broker.poll() is not None:
                raise RuntimeError(f"askdesk serve exited with {self.broker.returncode}")
            try:
                Conn(self.socket, timeout=2).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("askdesk serve never opened its socket")
                time.sleep(0.05)
        self.answerer = Answerer(self.socket)

    def restart_broker(self):
        """Stops the broker and starts a new one (with a new answerer) on the same socket."""
        self.answerer.stop()
        self.broker.terminate()
        self.broker.wait(10)
        self._start_broker()

    def server(self, *extra, env=None, default_log=False):
        """`askdesk mcp` as a stdio server; with `default_log`, at its own default log level."""
        env = {**self.env, **(env or {})}
        if default_log:
            env.pop("ASKDESK_LOG")
        return StdioServerParameters(command=self.binary, args=["mcp", *extra], env=env, cwd=self.dir)

    def agents(self):
        c = Conn(self.socket)
        c.initialize("probe")
        try:
            return c.call("agents/list", {})["agents"]
        finally:
            c.close()

    def close(self):
        self.answerer.stop()
        self.broker.terminate()
        try:
            self.broker.wait(10)
        except subprocess.TimeoutExpired:
            self.broker.kill()
        self.broker_log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


async def session_call(world, fn, server=None, errlog_name="mcp.log"):
    """Runs `fn(session)` in a fresh MCP session of `askdesk mcp`, its stderr appended to `errlog_name`."""
    errlog = open(os.path.join(world.dir, errlog_name), "a")
    try:
        async with stdio_client(server or world.server(), errlog=errlog) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT_INFO) as session:
                await session.initialize()
                return await fn(session)
    finally:
        errlog.close()


def text_of(result):
    assert len(result.content) == 1, result
    return result.content[0].text


def unportable(schema, at=""):
    """Every construct of `schema` that strict tool converters reject, as 'pointer: problem'."""
    found = []
    if isinstance(schema, dict):
        for key in ("$ref", "$defs", "definitions", "$schema"):
            if key in schema:
                found.append(f"{at}: uses {key}")
        kind = schema.get("type")
        if kind is not None and not isinstance(kind, str):
            found.append(f"{at}: has the type {kind!r}, not one name")
        if kind == "null" or ("default" in schema and schema["default"] is None):
            found.append(f"{at}: admits null")
        for key, child in schema.items():
            if key == "properties" and isinstance(child, dict):
                # Names (one may be "type") mapped to schemas: only the schemas are walked.
                for name, prop in child.items():
                    found += unportable(prop, f"{at}/properties/{name}")
            else:
                found += unportable(child, f"{at}/{key}")
    elif isinstance(schema, list):
        for i, child in enumerate(schema):
            found += unportable(child, f"{at}/{i}")
    return found


def first_option_answer(params):
    return {"answers": [{"id": q["id"], "selected": [q["options"][0]["label"]]} for q in params["questions"]]}


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
async def tools_are_listed_with_schemas(world):
    async def run(session):
        return (await session.list_tools()).tools

    tools = {t.name: t for t in await session_call(world, run)}
    assert set(tools) == {"ask_user_question", "review_plan"}, tools
    ask = tools["ask_user_question"]
    schema = ask.input_schema
    assert schema["type"] == "object" and schema["required"] == ["questions"], schema
    text = json.dumps(schema)
    for field in ("multi_select", "header", "options", "label", "description", "id", "question"):
        assert f'"{field}"' in text, (field, text)
    assert "(Recommended)" in ask.description, ask.description
    plan = tools["review_plan"].input_schema
    assert plan["required"] == ["plan"] and "question" in plan["properties"], plan
    # Portable: self-contained, one type per schema, the description's limits as constraints.
    for tool in tools.values():
        for which, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
            assert schema is not None and schema["type"] == "object", (tool.name, which, schema)
            assert unportable(schema) == [], (tool.name, which, unportable(schema), schema)
    questions = ask.input_schema["properties"]["questions"]
    assert (questions["minItems"], questions["maxItems"]) == (1, 64), questions
    assert questions["items"]["properties"]["options"]["maxItems"] == 64, questions
    assert "1 to 64 questions" in ask.description and "at most 64" in ask.description, ask.description
    assert questions["items"]["properties"]["multi_select"]["type"] == "boolean", questions
    # Structured results and honest annotations.
    assert ask.output_schema["required"] == ["answers"], ask.output_schema
    assert tools["review_plan"].output_schema["required"] == ["approved", "message"], tools["review_plan"].output_schema
    assert tools["review_plan"].output_schema["properties"]["message"]["type"] == "string"
    assert tools["review_plan"].output_schema["properties"]["feedback"]["type"] == "string"
    for tool in tools.values():
        hints = tool.annotations
        assert tool.title and hints.title == tool.title, tool
        assert (hints.read_only_hint, hints.destructive_hint, hints.open_world_hint) == (True, False, True), hints


@case
async def two_questions_answered(world):
    def policy(params):
        by_id = {q["id"]: q for q in params["questions"]}
        assert by_id["langs"]["multiSelect"] is True, by_id
        return {"answers": [
            {"id": "langs", "selected": ["Rust", "Go"]},
            {"id": "cleanup", "selected": ["Yes"]},
        ]}

    world.answerer.policy = policy

    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [
            {"id": "cleanup", "question": "Delete the build cache?", "header": "Cleanup",
             "options": [{"label": "Yes", "description": "frees 2 GB"}, {"label": "No"}]},
            {"id": "langs", "question": "Which languages?", "multi_select": True,
             "options": [{"label": "Rust"}, {"label": "Go"}, {"label": "Python"}]},
        ]})

    result = await session_call(world, run)
    assert not result.is_error, result
    assert text_of(result) == '{"answers":[{"id":"cleanup","selected":["Yes"]},{"id":"langs","selected":["Rust","Go"]}]}', result
    assert result.structured_content == json.loads(text_of(result)), result
    request = world.answerer.requests.get(timeout=5)["params"]
    agent = request["agent"]
    assert agent["label"] == "askdesk-mcp-test 1.2.3", agent
    assert os.path.realpath(agent["meta"]["cwd"]) == os.path.realpath(world.dir), agent
    assert isinstance(agent["meta"]["pid"], int), agent
    assert agent["meta"]["session"].startswith("mcp-"), agent
    assert "multi_select" not in request["questions"][1], request


@case
async def free_text_answer_keeps_custom(world):
    world.answerer.policy = lambda params: {"answers": [{"id": "name", "selected": [], "custom": "Aurora"}]}

    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [{"id": "name", "question": "Release name?"}]})

    result = await session_call(world, run)
    assert not result.is_error and text_of(result) == '{"answers":[{"id":"name","selected":[],"custom":"Aurora"}]}', result
    assert result.structured_content == {"answers": [{"id": "name", "selected": [], "custom": "Aurora"}]}, result


@case
async def empty_batch_is_an_error_text(world):
    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": []})

    result = await session_call(world, run)
    assert result.is_error, result
    assert text_of(result) == "Error: ask_user_question requires at least one question", result


@case
async def no_provider_is_an_error_text(world):
    world.answerer.policy = lambda params: None  # delegate: the chain is exhausted

    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [{"id": "q", "question": "Proceed?"}]})

    result = await session_call(world, run)
    assert result.is_error, result
    assert text_of(result) == "Error: no user-questions answerer accepted the request", result


@case
async def dismissal_is_an_error_text(world):
    world.answerer.policy = lambda params: {"error": {
        "code": -32001, "message": "the user cancelled ask_user_question", "data": {"code": "ASK_CANCELLED"}}}

    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [{"id": "q", "question": "Proceed?"}]})

    result = await session_call(world, run)
    assert result.is_error and text_of(result) == "Error: the user cancelled ask_user_question", result


@case
async def bad_arguments_name_the_field(world):
    async def run(session):
        wrong_type = await session.call_tool("ask_user_question", {"questions": [
            {"id": "a", "question": "?"}, {"id": "b", "question": "?", "multi_select": "yes"}]})
        missing = await session.call_tool("ask_user_question", {"questions": [{"question": "no id"}]})
        plan = await session.call_tool("review_plan", {"plan": 7})
        blank = await session.call_tool("review_plan", {"plan": " \n "})
        return wrong_type, missing, plan, blank

    wrong_type, missing, plan, blank = await session_call(world, run)
    for result in (wrong_type, missing, plan, blank):
        assert result.is_error and result.structured_content is None, result
    assert text_of(blank) == "Error: invalid arguments: plan: there is no plan to review (it is empty)", blank
    assert text_of(wrong_type) == (
        'Error: invalid arguments: questions[1].multi_select: invalid type: string "yes", expected a boolean'), wrong_type
    assert text_of(missing) == "Error: invalid arguments: questions[0]: missing field `id`", missing
    assert text_of(plan) == "Error: invalid arguments: plan: invalid type: integer `7`, expected a string", plan
    assert world.answerer.requests.empty(), "a bad call reached the answerer"


@case
async def review_plan_approved(world):
    plan = "# Plan\n\n- [ ] migrate the schema\n- [ ] backfill\n"

    def policy(params):
        (q,) = params["questions"]
        assert q["intent"] == {"kind": "plan-review", "approve": "Approve"}, q
        assert q["detail"] == plan, q
        assert [o["label"] for o in q["options"]] == ["Approve", "Keep planning"], q
        assert q["question"] == "Ship the migration plan?", q
        return {"answers": [{"id": q["id"], "selected": ["Approve"]}]}

    world.answerer.policy = policy

    async def run(session):
        return await session.call_tool("review_plan", {"plan": plan, "question": "Ship the migration plan?"})

    result = await session_call(world, run)
    assert not result.is_error, result
    assert "APPROVED" in text_of(result) and "NOT" not in text_of(result), result
    # Clients that prefer structured content (Claude Code) show the model only that: it says in
    # words what the text says.
    assert result.structured_content == {"approved": True, "message": text_of(result)}, result


# A 1×1 PNG and a 1×1 GIF, as an agent would attach them.
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
GIF_1X1 = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="


@case
async def plan_images_reach_the_answerer_as_png_only(world):
    import base64
    with open(os.path.join(world.dir, "shot.gif"), "wb") as f:
        f.write(base64.b64decode(GIF_1X1))
    seen = []

    def policy(params):
        (q,) = params["questions"]
        seen.extend(q.get("images", []))
        return {"answers": [{"id": q["id"], "selected": ["Approve"]}]}

    world.answerer.policy = policy

    async def run(session):
        return await session.call_tool("review_plan", {
            "plan": "# Plan\n\n![now](shot.gif) and ![remote](https://example.com/x.png)\n",
            "images": [{"type": "image", "data": PNG_1X1, "mimeType": "image/png"}],
        })

    result = await session_call(world, run)
    assert not result.is_error, result
    # The content image, then the local file the markdown names; the remote one stays a link.
    assert len(seen) == 2, seen
    for image in seen:
        assert set(image) == {"mime", "data"} and image["mime"] == "image/png", image
        assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n"), image


@case
async def a_refused_image_is_an_error_text(world):
    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [
            {"id": "q", "question": "This one?", "images": [{"path": "/dev/zero"}]},
        ]})

    result = await session_call(world, run)
    assert result.is_error, result
    assert text_of(result).startswith('Error: questions[0].images[0]: "/dev/zero" is not a regular file'), result
    assert world.answerer.requests.empty(), "a refused image reached the answerer"


@case
async def an_answers_picture_comes_back_as_image_content(world):
    import base64
    world.answerer.policy = lambda params: {"answers": [
        {"id": "q", "selected": [], "custom": "like this",
         "images": [{"mime": "image/gif", "data": GIF_1X1}]},
    ]}

    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [
            {"id": "q", "question": "Which layout?", "options": [{"label": "A"}, {"label": "B"}]},
        ]})

    result = await session_call(world, run)
    assert not result.is_error, result
    text, image = result.content
    answer = {"answers": [{"id": "q", "selected": [], "custom": "like this", "images": 1}]}
    assert json.loads(text.text) == answer, result
    assert result.structured_content == answer, result
    # The broker re-encoded the answerer's GIF: the agent gets a PNG.
    assert image.type == "image" and image.mime_type == "image/png", image
    assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n"), image


@case
async def plan_feedback_with_a_picture_comes_back_as_image_content(world):
    world.answerer.policy = lambda params: {"answers": [
        {"id": "plan", "selected": [], "custom": "move the button",
         "images": [{"data": PNG_1X1}]},
    ]}

    async def run(session):
        return await session.call_tool("review_plan", {"plan": "# Plan\n- one step\n"})

    result = await session_call(world, run)
    assert not result.is_error, result
    text, image = result.content
    assert text.text.endswith("move the button\n\nThe user attached a picture to the feedback: it follows."), text
    assert image.type == "image" and image.mime_type == "image/png", image
    assert result.structured_content["images"] == 1, result


@case
async def a_malformed_answer_picture_is_an_error_text(world):
    world.answerer.policy = lambda params: {"answers": [
        {"id": "q", "selected": [], "images": [{"data": "R0lGODlhAQAB"}]},
    ]}

    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [{"id": "q", "question": "?"}]})

    result = await session_call(world, run)
    assert result.is_error, result
    assert text_of(result).startswith(
        "Error: the answerer sent a bad answer: answers[0].images[0]: a malformed image/gif"), result


@case
async def review_plan_rejected_with_feedback(world):
    world.answerer.policy = lambda params: {"answers": [
        {"id": params["questions"][0]["id"], "selected": [], "custom": "Split the backfill into batches."}]}

    async def run(session):
        return await session.call_tool("review_plan", {"plan": "# Plan\n- do it all at once"})

    result = await session_call(world, run)
    text = text_of(result)
    assert not result.is_error, result
    assert "did NOT approve" in text and "Split the backfill into batches." in text, text
    assert result.structured_content == {
        "approved": False, "message": text, "feedback": "Split the backfill into batches."}, result
    assert "call review_plan again" in result.structured_content["message"], result


@case
async def progress_starts_at_once_and_goes_on(world):
    released = threading.Event()

    def held(params):  # the human answers only when the test says so
        released.wait(30)
        return first_option_answer(params)

    world.answerer.policy = held
    seen = []
    first = anyio.Event()

    async def on_progress(progress, total, message):
        seen.append((progress, message))
        first.set()

    async def run(session):
        outcome = {}

        async def call():
            outcome["result"] = await session.call_tool(
                "ask_user_question",
                {"questions": [{"id": "q", "question": "Slow?", "options": [{"label": "Yes"}]}]},
                progress_callback=on_progress,
            )

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call)
            # The first notification does not wait for the first 5-second period to end.
            with anyio.fail_after(4):
                await first.wait()
            await anyio.sleep(5.5)  # the next one comes a period later
            released.set()
        return outcome["result"]

    result = await session_call(world, run)
    assert text_of(result) == '{"answers":[{"id":"q","selected":["Yes"]}]}', result
    assert len(seen) >= 2, seen
    assert all("waiting" in (message or "") for _, message in seen), seen
    assert [p for p, _ in seen] == sorted(set(p for p, _ in seen)), seen  # strictly increasing


@case
async def client_mistakes_keep_stderr_quiet(world):
    from mcp import MCPError

    world.answerer.policy = first_option_answer

    async def run(session):
        try:
            await session.call_tool("no_such_tool", {})
        except MCPError as error:
            unknown = error
        else:
            raise AssertionError("an unknown tool should be a protocol error")
        bad = await session.call_tool("ask_user_question", {"questions": "none"})
        good = await session.call_tool("ask_user_question", {"questions": [{"id": "q", "question": "?", "options": [{"label": "A"}]}]})
        return unknown, bad, good

    unknown, bad, good = await session_call(world, run, server=world.server(default_log=True), errlog_name="quiet.log")
    assert unknown.code == -32602 and 'unknown tool "no_such_tool"' in unknown.message, unknown
    assert bad.is_error and text_of(bad).startswith("Error: invalid arguments: questions: "), bad
    assert text_of(good) == '{"answers":[{"id":"q","selected":["A"]}]}', good
    with open(os.path.join(world.dir, "quiet.log")) as f:
        stderr = f.read()
    assert stderr == "", f"askdesk mcp wrote to stderr:\n{stderr}"


@case
async def cancellation_withdraws_the_ask(world):
    world.answerer.policy = lambda params: HOLD

    async def run(session):
        try:
            await session.call_tool(
                "ask_user_question",
                {"questions": [{"id": "q", "question": "Wait forever?"}]},
                read_timeout_seconds=1.5,
            )
        except Exception:  # the SDK raises on its timeout and sends notifications/cancelled
            pass
        else:
            raise AssertionError("the call should have timed out")
        # Still inside the session: the withdrawal must come from the MCP cancellation, not from
        # the session ending.
        request = await anyio.to_thread.run_sync(lambda: world.answerer.requests.get(timeout=5))
        cancelled = await anyio.to_thread.run_sync(lambda: world.answerer.cancels.get(timeout=5))
        assert cancelled == request["id"], (cancelled, request)
        # The session goes on working after a cancelled call.
        world.answerer.policy = first_option_answer
        result = await session.call_tool("ask_user_question", {"questions": [{"id": "n", "question": "?", "options": [{"label": "Next"}]}]})
        assert text_of(result) == '{"answers":[{"id":"n","selected":["Next"]}]}', result

    await session_call(world, run)


@case
async def each_session_names_itself(world):
    # The desktop groups a session's plans into one thread by `meta.session`: two sessions must
    # never share it, even where their agent ids can (pid 1 in two containers).
    world.answerer.policy = first_option_answer
    call = {"questions": [{"id": "q", "question": "?", "options": [{"label": "A"}]}]}

    async def run(session):
        await session.call_tool("ask_user_question", call)
        await session.call_tool("ask_user_question", call)

    await session_call(world, run)
    await session_call(world, run)
    sessions = [world.answerer.requests.get(timeout=5)["params"]["agent"]["meta"]["session"] for _ in range(4)]
    assert sessions[0] == sessions[1] and sessions[2] == sessions[3], sessions
    assert sessions[0] != sessions[2], sessions


def raw_session(world, *args, env=None):
    """`askdesk mcp` on pipes, initialized by hand: for what the SDK's client cannot do."""
    proc = subprocess.Popen([world.binary, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(os.path.join(world.dir, "mcp.log"), "a"),
                            env={**os.environ, **world.env, **(env or {})}, cwd=world.dir)

    def send(message):
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    assert json.loads(proc.stdout.readline())["id"] == 0
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc, send


def call_line(id, arguments, tool="ask_user_question"):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


@case
async def closing_the_input_withdraws_waiting_questions_at_once(world):
    # A client ends a stdio session by closing the server's input: no one is left to read an
    # answer, so the question leaves the human's screen at once.
    world.answerer.policy = lambda params: HOLD
    proc, send = raw_session(world)
    try:
        send(call_line(1, {"questions": [{"id": "q", "question": "Still there?"}]}))
        request = world.answerer.requests.get(timeout=10)
        closed = time.time()
        proc.stdin.close()
        cancelled = world.answerer.cancels.get(timeout=5)
        withdrawn = time.time() - closed
        assert cancelled == request["id"], (cancelled, request)
        assert withdrawn < 1.5, f"withdrawn {withdrawn:.2f} s after the input closed"
        assert proc.wait(timeout=5) == 0
    finally:
        proc.kill()
        proc.wait()


@case
async def an_oversized_call_fails_alone(world):
    # A call whose message is longer than the broker takes fails by itself; the session's other
    # waiting question stays in front of the human and is answered.
    held = []

    def policy(params):
        if not held:
            held.append(params)
            return HOLD
        return first_option_answer(params)

    world.answerer.policy = policy
    proc, send = raw_session(world)
    try:
        send(call_line(1, {"questions": [{"id": "q", "question": "Deploy now?", "options": [{"label": "Yes"}]}]}))
        first = world.answerer.requests.get(timeout=10)
        send(call_line(2, {"plan": "x" * (5 * 1024 * 1024)}, tool="review_plan"))
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 2 and reply["result"]["isError"], reply
        assert "it was not sent" in reply["result"]["content"][0]["text"], reply
        assert world.answerer.cancels.empty(), "the first question was withdrawn"
        world.answerer.conn.reply(first, {"answers": [{"id": "q", "selected": ["Yes"]}]})
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 1 and not reply["result"].get("isError"), reply
        assert reply["result"]["structuredContent"] == {"answers": [{"id": "q", "selected": ["Yes"]}]}, reply
    finally:
        proc.kill()
        proc.wait()


@case
async def malformed_calls_are_invalid_params(world):
    # A tools/call the SDK cannot read is the client's mistake in its params (-32602, with the
    # reason), not an unknown method; an unknown method says which.
    proc, send = raw_session(world)
    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 5}})
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call"})
        send({"jsonrpc": "2.0", "id": 4, "method": "tools/frobnicate"})
        replies = {}
        for _ in range(4):
            reply = json.loads(proc.stdout.readline())
            replies[reply["id"]] = reply["error"]
        assert replies[1] == {"code": -32602, "message": "invalid tools/call params: missing field `name`"}, replies
        assert replies[2]["code"] == -32602 and "expected a string" in replies[2]["message"], replies
        assert replies[3] == {"code": -32602, "message": "invalid tools/call params: they are missing"}, replies
        assert replies[4] == {"code": -32601, "message": "method not found: tools/frobnicate"}, replies
        # The session still works.
        world.answerer.policy = first_option_answer
        send(call_line(5, {"questions": [{"id": "q", "question": "Still fine?", "options": [{"label": "Yes"}]}]}))
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 5 and reply["result"]["structuredContent"] == {"answers": [{"id": "q", "selected": ["Yes"]}]}, reply
    finally:
        proc.kill()
        proc.wait()


@case
async def session_end_unregisters_the_agent(world):
    world.answerer.policy = first_option_answer

    async def run(session):
        await session.call_tool("ask_user_question", {"questions": [{"id": "q", "question": "?", "options": [{"label": "A"}]}]})
        return [a for a in world.agents() if a.get("label") == "askdesk-mcp-test 1.2.3"]

    during = await session_call(world, run)
    assert len(during) == 1 and during[0]["root"] is True, during
    deadline = time.time() + 5
    while any(a.get("label") == "askdesk-mcp-test 1.2.3" for a in world.agents()):
        assert time.time() < deadline, world.agents()
        time.sleep(0.1)


@case
async def broker_restart_is_survived(world):
    world.answerer.policy = first_option_answer
    call = {"questions": [{"id": "q", "question": "?", "options": [{"label": "A"}]}]}

    async def run(session):
        first = await session.call_tool("ask_user_question", call)
        await anyio.to_thread.run_sync(world.restart_broker)
        world.answerer.policy = first_option_answer
        second = await session.call_tool("ask_user_question", call)
        return first, second

    first, second = await session_call(world, run)
    expected = '{"answers":[{"id":"q","selected":["A"]}]}'
    assert text_of(first) == expected and text_of(second) == expected, (first, second)
    agents = [a for a in world.agents() if a.get("label") == "askdesk-mcp-test 1.2.3"]
    assert agents == [], agents  # the session ended: unregistered on the new broker too


@case
async def no_broker_says_how_to_start_one(world):
    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [{"id": "q", "question": "?"}]})

    missing = os.path.join(world.dir, "nowhere", "askdesk.sock")
    result = await session_call(world, run, server=world.server("--no-launch", env={"ASKDESK_SOCKET": missing}))
    text = text_of(result)
    assert result.is_error and text.startswith("Error: no askdesk broker is running"), text
    assert "askdesk serve" in text, text


@case
async def missing_broker_starts_the_desktop_app(world):
    # A stand-in desktop app beside a copy of the binary: it records its pid and runs a broker on
    # the socket it inherits.
    bindir = os.path.join(world.dir, "bin")
    os.mkdir(bindir)
    shutil.copy(world.binary, os.path.join(bindir, "askdesk"))
    pidfile = os.path.join(world.dir, "desktop.pid")
    desktop = os.path.join(bindir, "askdesk-desktop")
    with open(desktop, "w") as f:
        f.write(f"#!/bin/sh\necho $$ > {pidfile}\nexec {bindir}/askdesk serve --no-history\n")
    os.chmod(desktop, 0o755)
    socket = os.path.join(world.dir, "launched", "askdesk.sock")
    params = StdioServerParameters(
        command=os.path.join(bindir, "askdesk"), args=["mcp"], cwd=world.dir,
        env={**world.env, "ASKDESK_SOCKET": socket, "DISPLAY": ":99"},
    )

    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [{"id": "q", "question": "?"}]})

    try:
        result = await session_call(world, run, server=params)
        # The launched broker has no answerer: reaching it at all gives NO_PROVIDER.
        assert result.is_error and text_of(result) == "Error: no user-questions answerer accepted the request", result
        assert os.path.exists(pidfile), "the desktop app was not started"
    finally:
        if os.path.exists(pidfile):
            with open(pidfile) as f:
                os.kill(int(f.read().strip()), 15)


@case
async def a_broker_that_does_not_answer_is_given_up_on(world):
    # Something accepts on the socket and never answers (a suspended or hung broker): a call is
    # answered with that error within seconds, a cancelled call ends at once, and closing the input
    # ends the server while a call is still trying to reach the broker.
    silent_dir = os.path.join(world.dir, "silent")
    os.mkdir(silent_dir, 0o700)
    path = os.path.join(silent_dir, "askdesk.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    held = []

    def accept():
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    proc, send = raw_session(world, "--no-launch", env={"ASKDESK_SOCKET": path})
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()

    def reply():
        try:
            return json.loads(lines.get(timeout=20))
        except queue.Empty:
            raise AssertionError("no reply within 20 s") from None
    question = {"questions": [{"id": "q", "question": "Anyone there?"}]}
    try:
        started = time.time()
        send(call_line(1, question))
        first = reply()
        waited = time.time() - started
        text = first["result"]["content"][0]["text"]
        assert first["id"] == 1 and first["result"]["isError"], first
        assert text == f"Error: the askdesk broker at {path} did not answer within 5 s; it may be stopped or hung", text
        assert waited < 15, f"answered after {waited:.1f} s"
        # A call cancelled while the broker is being reached ends at once: the next reply is the ping's.
        send(call_line(2, question))
        time.sleep(0.3)
        send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
        send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        started = time.time()
        replies = [reply()]
        while replies[-1].get("id") != 3:
            replies.append(reply())
        assert time.time() - started < 3, replies
        assert [r.get("id") for r in replies] == [3], f"the cancelled call was answered: {replies}"
        # The input closes with a call waiting on the broker: the server ends at once.
        send(call_line(4, question))
        time.sleep(0.3)
        closed = time.time()
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        assert time.time() - closed < 3, f"ended {time.time() - closed:.1f} s after its input closed"
    finally:
        proc.kill()
        proc.wait()
        listener.close()
        for conn in held:
            conn.close()


@case
async def no_display_no_launch(world):
    async def run(session):
        return await session.call_tool("ask_user_question", {"questions": [{"id": "q", "question": "?"}]})

    missing = os.path.join(world.dir, "nowhere", "askdesk.sock")
    # No DISPLAY nor WAYLAND_DISPLAY reaches the server (the SDK passes a minimal environment).
    result = await session_call(world, run, server=world.server(env={"ASKDESK_SOCKET": missing}))
    assert result.is_error and text_of(result).startswith("Error: no askdesk broker is running"), result


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(argv[1])
    only = argv[argv.index("-k") + 1] if "-k" in argv else None
    passed = failed = 0
    for fn in CASES:
        if only and only not in fn.__name__:
            continue
        world = None
        try:
            world = World(binary)
            anyio.run(fn, world)
            passed += 1
            print(f"ok   {fn.__name__}", flush=True)
        except BaseException as error:  # noqa: B036 - report every failure, including cancellations
            if isinstance(error, KeyboardInterrupt):
                raise
            failed += 1
            print(f"FAIL {fn.__name__}\n{traceback.format_exc()}", flush=True)
            if world is not None:
                for name in ("broker.log", "mcp.log"):
                    path = os.path.join(world.dir, name)
                    if os.path.exists(path):
                        with open(path, errors="replace") as f:
                            print(f"--- {name} (tail)\n{f.read()[-2000:]}", flush=True)
        finally:
            if world is not None:
                world.close()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
