"""tests/remote/bench_remote.py: the phone's figures (issue section 6), on loopback, printed.

Run by scripts/bench-remote.sh against a real `askdesk serve` and `askdesk remote` in a private
home, with headless Chromium (tests/remote/phone.py) as the phone:

1. the remote with no device connected: its RSS against an idle `askdesk answer` (the same binary
   and runtime, no HTTPS server) and its CPU-seconds over a minute at rest, the broker's too;
2. ask -> the phone page shows it: from the ask leaving the agent to the card in the page's DOM, on
   the page's own clock (CDP); beside it, in the same run, a socket member of the `person` group
   (where the desk's dialog stands) receiving the same request;
3. the phone's answer -> the agent has it: from the page's socket sending the signed answer to the
   agent reading the result;
4. 20 phones, 64 requests in flight: 20 more paired devices, each its own key and WebSocket from
   the page's origin speaking the page's protocol, must each hear all 64 requests.

Both machines' clocks are the same clock: the page's `performance.timeOrigin + performance.now()`
and Python's `time.time()` are this host's wall clock, in milliseconds. Ends with one `PASS` or
`MISS` line per target, as scripts/bench-desktop.sh does, and exits 1 when a target is missed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from phone import BINARY, PATIENCE, Browser, Desk, pair_page, until

# The page's own clock, and what it saw when.
PAGE_CLOCK = r"""
window.bench = { shown: {}, sent: {} };
const now = () => performance.timeOrigin + performance.now();
new MutationObserver(() => {
  for (const el of document.querySelectorAll('.request .question-text')) {
    if (!(el.textContent in window.bench.shown)) window.bench.shown[el.textContent] = now();
  }
}).observe(document.getElementById('main'), { childList: true, subtree: true });
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  const message = JSON.parse(data);
  if (message.type === 'answer') window.bench.sent[message.id] = now();
  return send.call(this, data);
};
"""

# Light phones: devices made here, each with its own key, on sockets of the page's origin, speaking
# the page's protocol (a signed hello, then the requests). `lightKeys(n)` makes the keys and gives
# their public halves for the desk's device list; `lightConnect()` opens a socket each and resolves
# once every one is welcomed; `window.light.heard[i]` is the set of request ids socket i heard.
LIGHT = r"""
const b64u = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)))
  .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const canonical = (v) => Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
  : v && typeof v === 'object'
    ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
    : JSON.stringify(v);
window.light = { keys: [], heard: [] };
window.lightKeys = async (n) => {
  for (let i = 0; i < n; i++) {
    const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    window.light.keys.push({ privateKey: pair.privateKey, publicKey: b64u(await crypto.subtle.exportKey('raw', pair.publicKey)) });
  }
  return window.light.keys.map((k) => k.publicKey);
};
window.lightConnect = () => Promise.all(window.light.keys.map((key, i) => new Promise((resolve, reject) => {
  const heard = new Set();
  window.light.heard[i] = heard;
  const socket = new WebSocket(`wss://${location.host}/socket`);
  socket.onmessage = async (e) => {
    const m = JSON.parse(e.data);
    if (m.type === 'challenge') {
      const hello = { challenge: m.challenge, kind: 'askdesk/hello', origin: location.origin, v: 1 };
      const signature = b64u(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key.privateKey,
        new TextEncoder().encode(canonical(hello))));
      socket.send(JSON.stringify({ type: 'hello', publicKey: key.publicKey, signature }));
    } else if (m.type === 'welcome') resolve();
    else if (m.type === 'refused') reject(new Error(m.reason));
    else if (m.type === 'requests') m.requests.forEach((r) => heard.add(r.id));
    else if (m.type === 'request') heard.add(m.request.id);
  };
})));
"""


VERDICTS = []


def verdict(met, what):
    VERDICTS.append(f"{'PASS' if met else 'MISS'} {what}")


def question(text):
    return {"questions": [{"id": "go", "question": text, "options": [{"label": "Yes"}, {"label": "No"}]}]}


def p50(values):
    return statistics.median(values)


def proc(pid):
    """(RSS in KiB, CPU-seconds) of process `pid`."""
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return rss, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status(desk):
    conn = desk.connect("bench")
    try:
        return conn.call("askdesk/status", {})
    finally:
        conn.close()


def idle(desk, seconds):
    """The remote with no device connected, beside an idle `askdesk answer`."""
    anchor = subprocess.Popen([BINARY, "answer", "--policy", "delegate", "--scope", "agents", "--label", "anchor"],
                              env=desk.env, stdout=subprocess.DEVNULL, stderr=desk.log("anchor.log"))
    try:
        desk.start_remote(pair=False)
        until("the anchor and the remote are on the chain",
              lambda: {"anchor", "phone"} <= {a["label"] for a in status(desk)["answerers"]})
        pids = {"remote": desk.remote.pid, "anchor": anchor.pid, "broker": desk.broker.pid}
        before = {name: proc(pid) for name, pid in pids.items()}
        time.sleep(seconds)
        after = {name: proc(pid) for name, pid in pids.items()}
    finally:
        anchor.terminate()
        anchor.wait(PATIENCE)
        desk.stop_remote()
    per_minute = {name: (after[name][1] - before[name][1]) * 60 / seconds for name in pids}
    extra = (after["remote"][0] - after["anchor"][0]) / 1024
    print(f"idle, no device: remote RSS {after['remote'][0] / 1024:.1f} MiB, anchor (askdesk answer) "
          f"{after['anchor'][0] / 1024:.1f} MiB: extra {extra:.1f} MiB (target <= 5)")
    print(f"idle, no device, over {seconds:.0f} s: CPU-seconds per minute remote {per_minute['remote']:.3f}, "
          f"anchor {per_minute['anchor']:.3f}, broker {per_minute['broker']:.3f} (target 0)")
    verdict(extra <= 5, f"remote at rest, no device: {extra:.1f} MiB more than an idle answerer (<= 5)")
    verdict(per_minute["remote"] == 0,
            f"remote at rest, no device: {per_minute['remote']:.3f} CPU-seconds per minute (0, to 0.01 s)")


def latencies(desk, browser, rounds):
    """Ask -> shown on the phone and at a socket member of `person`; the phone's answer -> the agent."""
    member = desk.connect("desk stand-in")
    member.call("answerers/register", {"scope": "all", "label": "desk", "group": "person"})
    browser.evaluate(PAGE_CLOCK)
    agent = desk.connect("agent")
    shown, at_member, answered = [], [], []
    for n in range(rounds):
        text = f"Bench round {n}?"
        asked = time.time() * 1000
        rid = agent.start("user-questions/ask", question(text))
        offered = member.next_incoming(timeout=PATIENCE)
        at_member.append(time.time() * 1000 - asked)
        seen = until("the page shows the round",
                     lambda: browser.evaluate(f"window.bench.shown[{json.dumps(text)}]"))
        shown.append(seen - asked)
        browser.evaluate(f"""(() => {{
          const card = [...document.querySelectorAll('.request')].find((c) => c.textContent.includes({json.dumps(text)}));
          card.querySelector('[data-label="Yes"]').click();
          card.querySelector('.send').click();
        }})()""", await_promise=False)
        agent.wait(rid, timeout=PATIENCE)
        got = time.time() * 1000
        sent = until("the page sent its answer", lambda: browser.evaluate(
            f"(() => {{ const c = [...document.querySelectorAll('.request')].find((c) => c.textContent.includes({json.dumps(text)}));"
            " return window.bench.sent[c.dataset.id]; })()"))
        answered.append(got - sent)
        # The stand-in heard the request was answered elsewhere; ended cards are cleared.
        assert member.next_incoming(timeout=PATIENCE)["params"]["id"] == offered["id"]
        browser.evaluate("document.querySelectorAll('.request.ended .close').forEach((b) => b.click())")
    member.close()
    agent.close()
    print(f"ask -> the phone page shows it: p50 {p50(shown):.1f} ms over {rounds} asks "
          f"(min {min(shown):.1f}, max {max(shown):.1f}); target <= 150")
    print(f"ask -> a socket member of person has it (where the desk dialog stands), same run: "
          f"p50 {p50(at_member):.1f} ms")
    print(f"the phone's answer -> the agent has it: p50 {p50(answered):.1f} ms over {rounds} "
          f"(min {min(answered):.1f}, max {max(answered):.1f}); target <= 50")
    verdict(p50(shown) <= 150, f"ask -> the phone page shows it: p50 {p50(shown):.1f} ms (<= 150)")
    verdict(p50(answered) <= 50, f"the phone's answer -> the agent has it: p50 {p50(answered):.1f} ms (<= 50)")


def fan_out(desk, browser, phones, requests):
    """`phones` more paired devices, `requests` asks in flight: every request reaches every one."""
    browser.evaluate(LIGHT)
    keys = browser.evaluate(f"window.lightKeys({phones})")
    path = os.path.join(desk.dir, "data", "askdesk", "remote", "devices.json")
    with open(path) as f:
        store = json.load(f)
    now = int(time.time())
    store["devices"] += [{"name": f"light {i}", "publicKey": key, "pairedAt": now} for i, key in enumerate(keys)]
    with open(path + ".bench", "w") as f:
        json.dump(store, f)
    os.replace(path + ".bench", path)
    browser.evaluate("window.lightConnect()")
    # At most 64 pending asks per connection: the asks come from several agents.
    agents = [desk.connect(f"agent {i}") for i in range(4)]
    started = time.time()
    asks = [(agents[n % 4], agents[n % 4].start("user-questions/ask", question(f"Fan-out {n}?")))
            for n in range(requests)]
    until("every light phone heard every request", lambda: browser.evaluate(
        f"window.light.heard.every((h) => h.size >= {requests})"), patience=PATIENCE * 4)
    elapsed = (time.time() - started) * 1000
    heard = browser.evaluate("window.light.heard.map((h) => h.size)")
    delivered = sum(min(h, requests) for h in heard)
    print(f"{phones} phones, {requests} requests in flight: {delivered}/{phones * requests} deliveries, "
          f"{phones * requests - delivered} lost, all in {elapsed:.0f} ms")
    verdict(delivered == phones * requests,
            f"{phones} phones, {requests} requests in flight: {phones * requests - delivered} lost (0)")
    for conn, rid in asks:
        conn.notify("$/cancelRequest", {"id": rid})
    for conn in agents:
        conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=60, help="seconds at rest for the idle figures")
    parser.add_argument("--rounds", type=int, default=30, help="asks timed for the latencies")
    parser.add_argument("--phones", type=int, default=20)
    parser.add_argument("--requests", type=int, default=64)
    args = parser.parse_args()
    print(f"askdesk: {BINARY}")
    desk = Desk()
    try:
        idle(desk, args.idle)
        url = desk.start_remote()
        browser = Browser(desk)
        try:
            pair_page(desk, browser, url, "Bench phone")
            latencies(desk, browser, args.rounds)
            fan_out(desk, browser, args.phones, args.requests)
        finally:
            browser.close()
    finally:
        desk.close()
    print()
    print("\n".join(VERDICTS))
    return 1 if any(v.startswith("MISS") for v in VERDICTS) else 0


if __name__ == "__main__":
    sys.exit(main())
