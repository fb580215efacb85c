"""mock_model: the scripted model server of the real-client suite (Python 3 standard library only).

One HTTP server on 127.0.0.1 speaks the three wire formats the agent CLIs use:

- Anthropic Messages (`POST /v1/messages`, streamed as SSE or one JSON body; `count_tokens`),
  for Claude Code;
- OpenAI Responses (`POST /v1/responses`, SSE), for Codex;
- Gemini (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, `:generateContent`,
  `:countTokens`), for Gemini CLI.

A scenario sets a *script*: a list of turns, each `{"tool": NAME, "input": {...}}` (a tool call),
`{"shell": COMMAND}` (Codex's shell tool, in the form the request's tool list asks for) or
`{"text": TEXT}`. A request is the conversation's main request when it declares the tool of the
script's first turn; its turn is the number of tool results the conversation carries, so the
client's answer to turn N is what asks for turn N + 1. Past the script's end the model says
"Done.". A tool name matches a declared tool with that name or ending in `_NAME` (MCP tools are
declared as `mcp__askdesk__ask_user_question`, `mcp_askdesk_ask_user_question`, ...). Every other
request (titles, quota checks, next-speaker checks, token counts) is a side request, answered with
short text that satisfies the usual JSON shapes.

Every request is appended to a JSON-lines log (`path`, `format`, `main`, `body`), and every tool
result a main request carried is kept in `results` for the scenario to check.

Run alone: `mock_model.py --port-file F --log F [--script F]` serves until killed.
"""
import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLAN_FILE = re.compile(r"/[^\s\"'\\]*/plans/[^\s\"'\\]+\.md")
SIDE_TEXT = json.dumps(
    {
        "title": "Test session",
        "isNewTopic": False,
        "next_speaker": "user",
        "reasoning": "The model finished its turn.",
        "model_choice": "flash",
    }
)


def _text_of(content):
    """The text of a tool result's content: a string, blocks with `text`, or JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                parts.append(json.dumps(block))
        return "\n".join(parts)
    return json.dumps(content)


class Mock:
    """The server's state: the script, the request log and the tool results seen."""

    def __init__(self, log_path):
        self.lock = threading.Lock()
        self.log_path = log_path
        self.script = []
        self.results = []  # {"format", "tool", "text", "is_error"} per tool result, in order
        self.main_requests = 0
        self.plan_file = None
        self.ids = iter(range(1, 1 << 30))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def set_script(self, turns):
        with self.lock:
            self.script = list(turns)
            self.results = []
            self.main_requests = 0
            self.plan_file = None

    def wait_results(self, count, timeout):
        """Waits until `count` tool results arrived; returns them (maybe fewer, at the deadline)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.results) >= count:
                    return list(self.results)
            time.sleep(0.1)
        with self.lock:
            return list(self.results)

    def wait_final(self, timeout):
        """Waits until a main request was answered past the script's last turn."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.script and len(self.results) >= self._tool_turns():
                    if self.main_requests > self._tool_turns():
                        return True
            time.sleep(0.1)
        return False

    def _tool_turns(self):
        return sum(1 for turn in self.script if "tool" in turn or "shell" in turn)

    def log(self, entry):
        with self.lock:
            with open(self.log_path, "a", encoding="utf-8") as out:
                out.write(json.dumps(entry) + "\n")

    def next_id(self, prefix):
        with self.lock:
            return f"{prefix}_{next(self.ids)}"

    def turn_for(self, declared, results, body):
        """The turn a main request asks for, or None for a side request. Records new results.

        `{plan_file}` in a turn's input becomes the plan file Claude Code's plan mode names in the
        request (its system text says where to write the plan)."""
        found = PLAN_FILE.search(json.dumps(body))
        with self.lock:
            if found:
                self.plan_file = found.group(0)
            if not self.script:
                return None
            first = self.script[0]
            wanted = first.get("tool") or ("shell" if "shell" in first else None)
            if wanted is not None and _match(wanted, declared) is None and not (
                wanted == "shell" and _shell_tool(declared)
            ):
                return None
            if wanted is None and not declared:
                return None
            self.main_requests += 1
            index = len(results)
            # Keep the results this conversation carries that were not seen yet.
            for result in results[len(self.results):]:
                self.results.append(result)
            turn = self.script[index] if index < len(self.script) else {"text": "Done."}
            if self.plan_file and "input" in turn:
                text = json.dumps(turn["input"]).replace("{plan_file}", self.plan_file)
                turn = {**turn, "input": json.loads(text)}
            return turn


def _match(name, declared):
    for candidate in declared:
        if candidate == name or candidate.endswith("_" + name):
            return candidate
    return None


def _shell_tool(declared):
    for name in ("shell_command", "exec_command", "shell"):
        if name in declared:
            return name
    return None


def _shell_call(command, declared):
    """Codex's shell tool call, asking to run outside the sandbox: that is what needs approval."""
    tool = _shell_tool(declared) or "shell"
    escalate = {"sandbox_permissions": "require_escalated", "justification": "Create the test file?"}
    if tool == "shell_command":
        return tool, {"command": command, **escalate}
    if tool == "exec_command":
        return tool, {"cmd": command, **escalate}
    return tool, {"command": ["bash", "-lc", command], **escalate}


def _resolve(turn, declared):
    """(tool name, input) for a tool turn, in the names this client declared."""
    if "shell" in turn:
        return _shell_call(turn["shell"], declared)
    return _match(turn["tool"], declared) or turn["tool"], turn.get("input", {})


# ----- Anthropic Messages -----
def _anthropic_results(body):
    out = []
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out.append(
                    {
                        "format": "anthropic",
                        "tool": block.get("tool_use_id"),
                        "text": _text_of(block.get("content", "")),
                        "is_error": bool(block.get("is_error")),
                    }
                )
    return out


def _anthropic_blocks(mock, turn, declared):
    if turn is None or "text" in turn:
        text = SIDE_TEXT if turn is None else turn["text"]
        return [{"type": "text", "text": text}], "end_turn"
    name, args = _resolve(turn, declared)
    return [{"type": "tool_use", "id": mock.next_id("toolu"), "name": name, "input": args}], "tool_use"


def _anthropic_sse(message_id, model, blocks, stop):
    events = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 1},
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            )
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}})
            )
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 20}})
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


# ----- OpenAI Responses -----
def _openai_results(body):
    out = []
    items = body.get("input")
    if not isinstance(items, list):
        return out
    for item in items:
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            if isinstance(output, dict):
                output = output.get("content", output)
            out.append({"format": "openai", "tool": item.get("call_id"), "text": _text_of(output), "is_error": False})
    return out


def _openai_sse(mock, turn, declared):
    response_id = mock.next_id("resp")
    if turn is None or "text" in turn:
        text = SIDE_TEXT if turn is None else turn["text"]
        item = {
            "type": "message",
            "role": "assistant",
            "id": mock.next_id("msg"),
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        deltas = [{"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text}]
    else:
        name, args = _resolve(turn, declared)
        item = {
            "type": "function_call",
            "id": mock.next_id("fc"),
            "call_id": mock.next_id("call"),
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }
        deltas = []
    events = [{"type": "response.created", "response": {"id": response_id, "status": "in_progress", "output": []}}]
    events.append({"type": "response.output_item.added", "output_index": 0, "item": {**item, "status": "in_progress"}})
    events.extend(deltas)
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    events.append(
        {
            "type": "response.completed",
            "response": {
                "id": response_id,
                "status": "completed",
                "output": [item],
                "usage": {
                    "input_tokens": 12,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 20,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 32,
                },
            },
        }
    )
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


# ----- Gemini -----
def _gemini_declared(body):
    names = []
    for tool in body.get("tools") or []:
        for decl in (tool or {}).get("functionDeclarations") or []:
            if isinstance(decl, dict) and decl.get("name"):
                names.append(decl["name"])
    return names


def _gemini_results(body):
    out = []
    for content in body.get("contents") or []:
        for part in (content or {}).get("parts") or []:
            if isinstance(part, dict) and "functionResponse" in part:
                response = part["functionResponse"]
                out.append(
                    {
                        "format": "gemini",
                        "tool": response.get("name"),
                        "text": json.dumps(response.get("response")),
                        "is_error": False,
                    }
                )
    return out


def _from_schema(schema):
    """A value of a side request's JSON schema (Gemini's routing and checks ask for JSON)."""
    kind = str(schema.get("type", "object")).lower()
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: _from_schema(sub) for name, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    return "user" if "speaker" in json.dumps(schema) else "ok"


def _side_text(body):
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    return json.dumps(_from_schema(schema)) if isinstance(schema, dict) else SIDE_TEXT


def _gemini_chunk(turn, declared, body):
    if turn is None or "text" in turn:
        part = {"text": _side_text(body) if turn is None else turn["text"]}
    else:
        name, args = _resolve(turn, declared)
        part = {"functionCall": {"name": name, "args": args}}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 20, "totalTokenCount": 32},
        "modelVersion": "gemini-2.5-pro",
    }


def _handler(mock):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # the request log is the JSON-lines file
            pass

        def _send(self, status, body, content_type="application/json"):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _json(self, value, status=200):
            self._send(status, json.dumps(value))

        def do_GET(self):
            mock.log({"method": "GET", "path": self.path})
            if "/models" in self.path:
                self._json({"data": [], "models": [], "object": "list"})
            else:
                self._json({})

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"unparsed": raw.decode(errors="replace")}
            path = self.path
            try:
                if re.search(r"/messages/count_tokens", path):
                    mock.log({"path": path, "format": "anthropic", "main": False, "body": body})
                    return self._json({"input_tokens": 42})
                if re.search(r"/v1/messages", path):
                    return self._anthropic(path, body)
                if re.search(r"/responses", path):
                    return self._openai(path, body)
                if ":countTokens" in path:
                    mock.log({"path": path, "format": "gemini", "main": False, "body": body})
                    return self._json({"totalTokens": 42})
                if ":streamGenerateContent" in path or ":generateContent" in path:
                    return self._gemini(path, body)
                mock.log({"path": path, "format": "unknown", "main": False, "body": body})
                self._json({"error": {"message": f"mock: no route for {path}"}}, 404)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _anthropic(self, path, body):
            declared = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
            turn = mock.turn_for(declared, _anthropic_results(body), body)
            mock.log({"path": path, "format": "anthropic", "main": turn is not None, "turn": turn, "body": body})
            blocks, stop = _anthropic_blocks(mock, turn, declared)
            model = body.get("model", "claude-mock")
            message_id = mock.next_id("msg")
            if body.get("stream"):
                self._send(200, _anthropic_sse(message_id, model, blocks, stop), "text/event-stream")
            else:
                self._json(
                    {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": blocks,
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 12, "output_tokens": 20},
                    }
                )

        def _openai(self, path, body):
            declared = []
            for tool in body.get("tools") or []:
                if isinstance(tool, dict):
                    declared.append(tool.get("name") or (tool.get("function") or {}).get("name"))
            declared = [name for name in declared if name]
            turn = mock.turn_for(declared, _openai_results(body), body)
            mock.log({"path": path, "format": "openai", "main": turn is not None, "turn": turn, "body": body})
            self._send(200, _openai_sse(mock, turn, declared), "text/event-stream")

        def _gemini(self, path, body):
            declared = _gemini_declared(body)
            turn = mock.turn_for(declared, _gemini_results(body), body)
            mock.log({"path": path, "format": "gemini", "main": turn is not None, "turn": turn, "body": body})
            chunk = _gemini_chunk(turn, declared, body)
            if ":streamGenerateContent" in path:
                self._send(200, f"data: {json.dumps(chunk)}\n\n", "text/event-stream")
            else:
                self._json(chunk)

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--script")
    args = parser.parse_args()
    mock = Mock(args.log)
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            mock.set_script(json.load(f))
    mock.start()
    with open(args.port_file, "w", encoding="utf-8") as f:
        f.write(str(mock.port))
    mock.thread.join()


if __name__ == "__main__":
    main()
