// End-to-end test of `askdesk mcp` with the official MCP TypeScript SDK client, configured as the
// README says (progress resets the SDK's 60-second request timeout): a question the user answers
// after 70 seconds still gets its answer. Also checks what this client validates itself: the tool
// list (titles, annotations, output schemas) and the structured result against its output schema.
//
// Usage: node long_wait.mjs ASKDESK_BINARY
// Prints one line per check and a closing 'N passed, N failed' line; exits non-zero on failure.

import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, chmodSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const WAIT_SECONDS = 70;
const binary = process.argv[2];
if (!binary) {
  console.error("usage: node long_wait.mjs ASKDESK_BINARY");
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), "askdesk-mcp-ts-"));
chmodSync(dir, 0o700);
const env = {
  PATH: process.env.PATH,
  HOME: process.env.HOME ?? dir,
  ASKDESK_SOCKET: join(dir, "run", "askdesk.sock"),
  XDG_DATA_HOME: join(dir, "data"),
  XDG_RUNTIME_DIR: dir,
};
const log = openSync(join(dir, "broker.log"), "a");
const children = [];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function start(args) {
  const child = spawn(binary, args, { env, stdio: ["ignore", log, log] });
  children.push(child);
  return child;
}

function status() {
  try {
    return JSON.parse(execFileSync(binary, ["status", "--json"], { env, stdio: ["ignore", "pipe", "ignore"] }));
  } catch {
    return null;
  }
}

async function until(what, ready) {
  const deadline = Date.now() + 30_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`never ${what}`);
    await sleep(100);
  }
}

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed += 1;
    console.log(`ok   ts: ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ts: ${name}\n${detail}`);
  }
}

async function main() {
  start(["serve"]);
  await until("saw the broker", () => status() !== null);
  // The answerer answers the first option after WAIT_SECONDS, as a slow human would.
  const answer = JSON.stringify({ answers: [{ id: "deploy", selected: ["Yes (Recommended)"] }] });
  start(["answer", "--count", "1", "--exec", `cat >/dev/null; sleep ${WAIT_SECONDS}; printf '%s' '${answer}'`]);
  await until("saw the answerer", () => (status()?.answerers ?? []).length > 0);

  const transport = new StdioClientTransport({ command: binary, args: ["mcp", "--no-launch"], env, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => (stderr += chunk));
  const client = new Client({ name: "askdesk-ts-test", version: "1.0.0" });
  await client.connect(transport);

  const { tools } = await client.listTools();
  const ask = tools.find((t) => t.name === "ask_user_question");
  check(
    "tools carry titles, honest annotations and output schemas",
    tools.length === 2 &&
      tools.every((t) => t.title && t.outputSchema?.type === "object" && t.annotations?.readOnlyHint === true && t.annotations?.openWorldHint === true),
    JSON.stringify(tools, null, 1),
  );

  const started = Date.now();
  const progress = [];
  // The README's options for this SDK: ask for progress and let each notification restart the
  // default 60-second timeout.
  const result = await client.callTool(
    {
      name: "ask_user_question",
      arguments: { questions: [{ id: "deploy", question: "Deploy now?", options: [{ label: "Yes (Recommended)" }, { label: "No" }] }] },
    },
    undefined,
    { onprogress: (p) => progress.push({ at: Date.now() - started, ...p }), resetTimeoutOnProgress: true },
  );
  const elapsed = (Date.now() - started) / 1000;
  const expected = { answers: [{ id: "deploy", selected: ["Yes (Recommended)"] }] };
  check(
    `a call answered after ${WAIT_SECONDS}s gets its answer`,
    !result.isError && elapsed >= WAIT_SECONDS && result.content?.[0]?.text === JSON.stringify(expected),
    `after ${elapsed}s: ${JSON.stringify(result)}`,
  );
  check(
    "the structured result is the answer object",
    JSON.stringify(result.structuredContent) === JSON.stringify(expected),
    JSON.stringify(result.structuredContent),
  );
  check(
    "progress arrived from the start and all along",
    progress.length >= WAIT_SECONDS / 5 && progress[0].at < 5000 && progress.every((p, i) => i === 0 || p.at - progress[i - 1].at < 10_000),
    JSON.stringify(progress),
  );
  await client.close();
  check("nothing on stderr", stderr === "", stderr);
}

try {
  await main();
} catch (error) {
  failed += 1;
  console.log(`FAIL ts: ${error?.stack ?? error}`);
} finally {
  for (const child of children) child.kill("SIGTERM");
  await sleep(200);
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || !passed ? 1 : 0);
