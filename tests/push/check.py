# tests/push/check.py: judges a run of tests/push/run.sh: what the desk reported (push_probe's
# output) against what the fake push service received, checked and decrypted.
# Usage: check.py PROBE.json PUSHES.jsonl
import json
import sys

probe = json.load(open(sys.argv[1]))
pushes = [json.loads(line) for line in open(sys.argv[2])]
failures = []


def expect(what, got, wanted):
    if got != wanted:
        failures.append(f"{what}: got {got!r}, wanted {wanted!r}")
    else:
        print(f"ok    {what}")


reports = [(r["device"], r["delivery"]) for r in probe["reports"]]
expect("the text question reached every subscribed phone, as the service answered",
       sorted(reports[:4]), sorted([("ok", "Accepted"), ("gone404", "Gone(404)"), ("gone410", "Gone(410)"), ("busy", "Throttled")]))
expect("the permission prompt reached only the phone whose scope shows prompts",
       reports[4:5], [("ok", "Accepted")])
expect("the settled question was replaced on the phones still subscribed",
       sorted(reports[5:7]), [("busy", "Throttled"), ("ok", "Accepted")])
expect("the settled prompt was replaced on the phone it was shown to",
       reports[7:], [("ok", "Accepted")])
expect("404 and 410 dropped the subscription, 201 and 429 kept it",
       probe["subscribed"], {"ok": True, "gone404": False, "gone410": False, "busy": True})
expect("the desk recorded what the service answered when it dropped a subscription",
       probe["dropped"], {"ok": None, "gone404": 404, "gone410": 410, "busy": None})
expect("the service received every push the desk reported", len(pushes), len(reports))
expect("every push carried a valid VAPID token and decrypted",
       [p.get("error") for p in pushes], [None] * len(pushes))
expect("the VAPID subject is the desk's contact",
       sorted({p["claims"].get("sub") for p in pushes if "claims" in p}), ["mailto:desk@example.invalid"])
to_ok = [(p["payload"]["tag"], p["payload"]["body"]) for p in pushes if p["path"] == "/201/ok"]
expect("the phone saw the question, a count for the prompt, then both replaced",
       to_ok, [("r1", "Deploy to staging?"), ("r2", "An agent is waiting (2)"), ("r1", "Answered on the desk"),
               ("r2", "Answered on the desk")])
expect("each notice names its request's class for the service worker, and whether it was answered",
       [(p["payload"]["class"], p["payload"]["answered"]) for p in pushes if p["path"] == "/201/ok"],
       [("text-and-choices", False), ("permission-prompt", False), ("text-and-choices", True),
        ("permission-prompt", True)])
expect("no push ever held the permission prompt's content",
       [p for p in pushes if "secret" in json.dumps(p.get("payload"))], [])
expect("every payload is titled askdesk",
       {p["payload"]["title"] for p in pushes if "payload" in p}, {"askdesk"})

if failures:
    print("\n".join("FAIL  " + f for f in failures))
    sys.exit(1)
print(f"push: {len(pushes)} pushes checked, all as expected")
