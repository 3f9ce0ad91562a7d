"""The SWE grader's pytest launcher: runs the hidden tests and seals what it saw.

Shipped into the grading sandbox as a standalone script (standard library
only, Python 3.6 or later; it imports nothing from agentenvs) and run as::

    python -I -B sealed_pytest.py SEAL [pytest args...]

- ``-I``: no user site, no ``PYTHON*`` variables, neither the working
  directory nor this script's directory on ``sys.path``. The repository is
  appended at the end of ``sys.path`` instead (``python -m pytest`` would put
  it first, where a module of the patch could shadow the standard library or
  pytest).
- SEAL is a JSON file holding a key and the record's path; it is read and
  deleted before any code under test runs, so neither is on a command line or
  in a file that code could read.
- Each test's outcome is taken from pytest's hooks, in this process, and
  written with pytest's exit code to the record, under an HMAC with the key;
  then the process ends with ``os._exit``, before any atexit hook of the code
  under test. No report file exists for the code under test to rewrite, and a
  run that never writes its record (the code called ``os._exit`` or was
  killed) is not trusted.
- The watch compares pytest's, pluggy's, unittest's and the builtins' objects
  before and after the run and notes plugins registered during it
  ("tampered": the run is not trusted). On Python 3.8+ an audit hook, which
  nothing can remove, also sees attribute writes on those classes and
  functions while the tests run (tampered), and trace functions and
  gc/frame/ctypes introspection (observed: reported, not penalised).
"""

import base64
import builtins
import hashlib
import hmac
import json
import os
import sys

WATCHED = ("pytest", "_pytest", "pluggy", "unittest", "iniconfig")
TAMPER_EVENTS = frozenset(("object.__setattr__", "object.__delattr__"))
OBSERVED_EVENTS = frozenset(
    (
        "sys.settrace",
        "sys.setprofile",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "sys._current_frames",
        "ctypes.dlopen",
        "ctypes.addressof",
        "ctypes.string_at",
    )
)
MAX_NOTES = 20


def _inside(path, root):
    path = os.path.realpath(path)
    return path == root or path.startswith(root + os.sep)


def _ident(value):
    """What identifies a function or class: the object, and its code (``__code__`` can be swapped)."""
    inner = getattr(value, "__func__", None) or getattr(value, "fget", None)
    code = getattr(value, "__code__", None) or getattr(inner, "__code__", None)
    return "%x:%x:%x" % (id(value), id(inner), id(code))


def _tracked(value):
    return isinstance(value, (type, classmethod, staticmethod, property)) or callable(value)


class Watch(object):
    """Records outcomes from pytest's hooks and notices tampering with the framework."""

    def __init__(self, repo):
        self.repo = repo
        self.outcomes = {}
        self.order = []
        self.tampered = []
        self.observed = []
        self.baseline = None
        self.watched_ids = set()
        self.plugins_before = None
        self.active = False
        self.framework_in_repo = False

    # -- the framework's objects, before and after --

    def _modules(self):
        for name, module in list(sys.modules.items()):
            if module is None or name.split(".")[0] not in WATCHED:
                continue
            path = getattr(module, "__file__", None)
            if path and _inside(path, self.repo):
                self.framework_in_repo = True
                continue
            yield name, module

    def snapshot(self):
        state = {}
        ids = set()
        for name, module in self._modules():
            state["sys.modules[%s]" % name] = "%x" % id(module)
            for attr, value in list(vars(module).items()):
                if not _tracked(value):
                    continue
                state["%s.%s" % (name, attr)] = _ident(value)
                ids.add(id(value))
                if isinstance(value, type) and getattr(value, "__module__", None) == name:
                    for cattr, cvalue in list(vars(value).items()):
                        if _tracked(cvalue):
                            state["%s.%s.%s" % (name, attr, cattr)] = _ident(cvalue)
                            ids.add(id(getattr(cvalue, "__func__", cvalue)))
        for attr, value in list(vars(builtins).items()):
            state["builtins.%s" % attr] = _ident(value)
        return state, ids

    def start(self):
        if self.baseline is None:
            self.baseline, self.watched_ids = self.snapshot()
            self.active = True

    def compare(self):
        self.active = False
        if self.baseline is None or self.framework_in_repo:
            return
        after, _ = self.snapshot()
        for key, ident in sorted(self.baseline.items()):
            if after.get(key) != ident:
                self.note(self.tampered, "changed during the run: %s" % key)

    def note(self, bucket, text):
        if len(bucket) < MAX_NOTES and text not in bucket:
            bucket.append(text)

    def audit(self, event, args):
        if not self.active:
            return
        if event in TAMPER_EVENTS:
            target = args[0] if args else None
            if id(target) in self.watched_ids:
                label = getattr(target, "__qualname__", type(target).__name__)
                self.note(self.tampered, "%s on %s.%s" % (event, label, args[1] if len(args) > 1 else "?"))
        elif event in OBSERVED_EVENTS:
            self.note(self.observed, event)

    # -- plugins --

    def check_plugins(self, config):
        if self.plugins_before is None or self.framework_in_repo:
            return
        for plugin in config.pluginmanager.get_plugins():
            if id(plugin) in self.plugins_before or plugin is self:
                continue
            module = plugin if type(plugin).__name__ == "module" else sys.modules.get(type(plugin).__module__)
            name = getattr(module, "__name__", "?")
            path = getattr(module, "__file__", None) or ""
            if name.split(".")[0] in WATCHED and not _inside(path or self.repo, self.repo):
                continue
            if os.path.basename(path) == "conftest.py" and _inside(path, self.repo):
                continue
            self.note(self.tampered, "a plugin was registered during the run: %s" % name)

    # -- outcomes --

    def record(self, nodeid, outcome, message):
        if nodeid not in self.outcomes:
            self.order.append(nodeid)
        rank = {"passed": 0, "xfail": 1, "skipped": 2, "failed": 3, "error": 4}
        current = self.outcomes.get(nodeid)
        if current is None or rank[outcome] > rank[current[0]]:
            self.outcomes[nodeid] = (outcome, message[:500])

    def results(self):
        return [[n, self.outcomes[n][0], self.outcomes[n][1]] for n in self.order]


def _plugin(pytest, watch):
    class SealPlugin(object):
        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_load_initial_conftests(self, early_config, parser, args):
            watch.start()
            yield

        @pytest.hookimpl(trylast=True)
        def pytest_sessionstart(self, session):
            watch.start()
            watch.plugins_before = set(id(p) for p in session.config.pluginmanager.get_plugins())

        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_sessionfinish(self, session, exitstatus):
            watch.check_plugins(session.config)
            yield

        @pytest.hookimpl(trylast=True)
        def pytest_collectreport(self, report):
            if report.failed:
                watch.record(report.nodeid or "<collection>", "error", str(report.longrepr))

        @pytest.hookimpl(trylast=True)
        def pytest_runtest_logreport(self, report):
            message = str(report.longrepr) if report.longrepr is not None else ""
            if report.failed:
                watch.record(report.nodeid, "failed" if report.when == "call" else "error", message)
            elif report.skipped:
                watch.record(report.nodeid, "xfail" if hasattr(report, "wasxfail") else "skipped", message)
            elif report.when == "call":
                watch.record(report.nodeid, "passed", "")

    return SealPlugin()


def _write_record(path, key, body):
    data = json.dumps(body, sort_keys=True)
    mac = hmac.new(key, data.encode("utf-8"), hashlib.sha256).hexdigest()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps({"body": data, "mac": mac}))


def main():
    seal_path = sys.argv[1]
    with open(seal_path) as fh:
        seal = json.load(fh)
    os.unlink(seal_path)
    key = base64.b64decode(seal["key"])
    record_path = seal["record"]
    repo = os.path.realpath(os.getcwd())
    inside = [p for p in sys.path if p and _inside(p, repo)]
    sys.path[:] = [p for p in sys.path if p and not _inside(p, repo)] + inside + [repo]
    for name in list(os.environ):
        if name.startswith("PYTEST_") or name.startswith("PYTHON"):
            del os.environ[name]
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import unittest  # noqa: F401  (its classes belong in the baseline)

    import pytest

    watch = Watch(repo)
    if hasattr(sys, "addaudithook"):
        sys.addaudithook(watch.audit)
    try:
        code = int(pytest.main(sys.argv[2:], plugins=[_plugin(pytest, watch)]))
    except BaseException as exc:  # the code under test may raise anything, SystemExit included
        code = -2
        watch.note(watch.observed, "pytest ended with %s" % type(exc).__name__)
    watch.compare()
    if watch.framework_in_repo:
        watch.note(watch.observed, "the test framework is part of the repository: in-process checks are off")
    body = {"exit": code, "tests": watch.results(), "tampered": watch.tampered, "observed": watch.observed}
    _write_record(record_path, key, body)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if 0 <= code < 256 else 3)


if __name__ == "__main__":
    main()
