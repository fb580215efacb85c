"""cases.py: runs the cases of the pixel suites (test_lifecycle.py, test_wayland.py), which have no pytest:
one PASS or FAIL line each, a traceback for a failure, the counts at the end."""

import time
import traceback


class Tally:
    """Counts the cases run in one suite and prints how each went."""

    def __init__(self, only=None):
        self.only = only
        self.passed = 0
        self.failed = 0

    def selected(self, cases):
        """The cases to run: those whose name holds `-k`'s text, or all of them."""
        return [case for case in cases if not self.only or self.only in case.__name__]

    def run(self, case, where, run, end):
        """Runs `case(run)` and reports it under `where` (a window manager or a compositor); `end` tidies up
        after it, passed or failed."""
        label = case.__name__[len("case_"):]
        started = time.time()
        try:
            case(run)
            self.passed += 1
            print(f"PASS {label} [{where}] ({time.time() - started:.1f}s)", flush=True)
        except Exception as e:  # noqa: BLE001 - report and go on
            self.fail(f"{label} [{where}]", e)
        finally:
            end()

    def fail(self, what, error):
        """Counts a failure outside a case (a window manager that did not start)."""
        self.failed += 1
        print(f"FAIL {what}: {type(error).__name__}: {str(error)[:1200]}", flush=True)
        traceback.print_exc()

    def summary(self):
        """Prints the counts; the exit status: 0 when something ran and nothing failed."""
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 and self.passed > 0 else 1
