"""askdesk desktop tests: the pytest options run.sh passes, and the fixtures: the app under WebDriver and `ctx`.

run.sh starts the services (Xvfb, a private D-Bus session bus, dunst, dbus-monitor, tauri-driver) and
runs pytest on this folder; each test drives the page through WebDriver, asks over the socket with
askdesk_client, and watches the bus log. One app serves test after test. A test that ends the app
(kill -9, Quit) sets ctx.app_gone, and the next test gets a fresh app in a new WebDriver session; a
test marked `app_args` gets an app of its own, started with those arguments, and the test after it a
fresh one again. pytest runs a file's tests in the order they are written: in test_plan_review.py the
revision test follows the comment test whose plan it revises.
"""
import os
import time

import pytest

from harness import Ctx, settle, start_app

HERE = os.path.dirname(os.path.abspath(__file__))

# Scripts of this folder that are not pytest files: the lifecycle suites have their own runners
# (run-lifecycle.sh, run-wayland.sh), the desktop benchmark is run by scripts/bench-desktop.sh.
collect_ignore = ["test_lifecycle.py", "test_wayland.py", "bench_desktop.py"]


def pytest_addoption(parser):
    group = parser.getgroup("askdesk", "askdesk desktop tests")
    group.addoption("--app", required=True, help="the desktop app binary (askdesk-desktop)")
    group.addoption("--driver", required=True, help="tauri-driver's URL")
    group.addoption("--bus-log", required=True, help="the dbus-monitor log of the session bus")
    group.addoption("--screenshots", help="a folder to save screenshots in")
    group.addoption("--cli", default=os.path.join(HERE, "..", "..", "target", "debug", "askdesk"),
                    help="the askdesk command-line binary (for the hook tests)")


def pytest_configure(config):
    config.addinivalue_line("markers", "app_args(*args): the test gets an app of its own, started with these arguments")
    shots = config.getoption("--screenshots", default=None)
    if shots:
        os.makedirs(shots, exist_ok=True)


class Options:
    """The command line's options, named as the tests read them (`ctx.args.app`, `ctx.args.cli`...)."""

    def __init__(self, config):
        self.app = config.getoption("--app")
        self.driver = config.getoption("--driver")
        self.bus_log = config.getoption("--bus-log")
        self.screenshots = config.getoption("--screenshots")
        self.cli = config.getoption("--cli")


class App:
    """The app under WebDriver, kept from test to test while it is fit to serve the next one."""

    def __init__(self, args):
        self.args = args
        self.page = None
        # Replace the app before the next test: it was ended, or started with arguments of its own.
        self.stale = False

    def page_for(self, app_args):
        if self.page is not None and (self.stale or app_args):
            self.page.quit()
            self.page = None
        if self.page is None:
            self.page = start_app(self.args, app_args)
            self.stale = bool(app_args)
        return self.page

    def quit(self):
        if self.page is not None:
            self.page.quit()
            self.page = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the test, so `ctx` knows at teardown whether the test failed."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture(scope="session")
def app(pytestconfig):
    running = App(Options(pytestconfig))
    yield running
    running.quit()


@pytest.fixture
def ctx(request, app):
    """What every test gets: the page on an empty queue, the socket, the bus log and the helpers (harness.Ctx)."""
    marker = request.node.get_closest_marker("app_args")
    page = app.page_for(tuple(marker.args) if marker else ())
    settle(page)
    context = Ctx(app.args, page)
    try:
        yield context
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed and not context.app_gone:
            leave_a_clean_queue(page)
    finally:
        context.close()
        if context.app_gone:
            app.stale = True


def leave_a_clean_queue(page):
    """After a failed test: back to the queue, every request left on screen dismissed."""
    try:
        page.js("document.getElementById('nav-queue').click()")
        for _ in range(10):
            if not page.find_all("#view-request:not([hidden])"):
                break
            page.click(page.find("#dismiss"))
            time.sleep(0.3)
    except Exception:  # noqa: BLE001 - best effort: the next test's settle() says what was left
        pass
