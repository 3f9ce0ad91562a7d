"""OSWorld's task JSON, read natively: placeholders, config and postconfig steps, and the evaluator as data.

Config steps run through the desktop's daemon before the agent acts (the
desktop is still ours then). The evaluator becomes ``osworld`` check
arguments whose getters are data refs, read by the trusted checker after
every agent process is gone: ``vm_file`` a path in the desktop (``multi``
with ``gives``), ``list_directory`` a directory's names, ``audio_in_slide`` the audio a
slide of a PPTX embeds (or links), ``cloud_file`` and
``cache_file`` the task's asset bytes (never the network), ``rule`` the
literal, Chromium's profile getters (``bookmarks``, ``history``, the
Preferences ones) the profile's files, read after the browser has stopped
(``chrome.py``). Anything else is refused when the task loads, naming what.
"""

from __future__ import annotations

import base64
import json
import posixpath
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenvs.core.errors import TaskFormatError
from agentenvs.envs.gui import chrome
from agentenvs.envs.gui.assets import AssetIndex
from agentenvs.sandbox.daemon_client import DaemonClient
from evaluators.osworld_chrome import GETTERS as CHROME_GETTERS

HOME = "/home/user"
CLIENT_PASSWORD = "password"
CONFIG_TYPES = {"download", "open", "launch", "execute", "command", "sleep", "activate_window", "close_window"}
CONFIG_TYPES |= {"chrome_open_tabs"}
COMMAND_GETTERS = ("vm_command_line", "vm_command_error")
#: Getters that read the live desktop (``probe.py``) after the agent's processes are killed.
LIVE_GETTERS = ("accessibility_tree", "vm_window_size", "vm_terminal_output", *chrome.TAB_GETTERS)
GETTERS = {"vm_file", "cloud_file", "cache_file", "rule", "list_directory", "content_from_vm_file", "audio_in_slide"}
GETTERS |= {*COMMAND_GETTERS, *LIVE_GETTERS, *CHROME_GETTERS}
ASSET_GETTERS = ("cloud_file", "cache_file")
MAX_SLEEP = 10.0
#: The system time zone a desktop starts in for a task graded by the metric, set as root from outside
#: (the image's ``timedatectl``) before its config steps; the image's zone, every other task's, is
#: Etc/UTC. Upstream's VM is not at UTC+0, so its `is_utc_0` task asks for a change; on ours doing
#: nothing would pass. America/Los_Angeles is -0800 or -0700, never +0000.
START_ZONES = {"is_utc_0": "America/Los_Angeles"}


def placeholders(width: int, height: int) -> dict[str, str]:
    return {
        "{SCREEN_WIDTH}": str(width),
        "{SCREEN_HEIGHT}": str(height),
        "{SCREEN_WIDTH_HALF}": str(width // 2),
        "{SCREEN_HEIGHT_HALF}": str(height // 2),
        "{CLIENT_PASSWORD}": CLIENT_PASSWORD,
    }


def substitute(value: Any, table: dict[str, str]) -> Any:
    """Replace OSWorld's placeholders in every string of a JSON value."""
    if isinstance(value, str):
        for key, repl in table.items():
            value = value.replace(key, repl)
        return value
    if isinstance(value, list):
        return [substitute(v, table) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, table) for k, v in value.items()}
    return value


def home_path(path: str) -> str:
    """OSWorld resolves relative paths against the user's home."""
    return path if path.startswith("/") else posixpath.join(HOME, path)


def problems(data: dict[str, Any], assets: AssetIndex) -> list[str]:
    """Every config type, getter, metric or asset this task needs that we lack (asset reasons start "asset")."""
    from evaluators.osworld import LIMITS, METRICS, load_metrics

    load_metrics()
    evaluator = data.get("evaluator", {})
    found: list[str] = []

    def need(url: str) -> None:
        try:
            if assets.resolve(url) is None:
                found.append(f"asset for {url}")
        except TaskFormatError as exc:
            found.append(f"asset ambiguous: {exc}")

    for step in [*data.get("config", []), *evaluator.get("postconfig", [])]:
        if step.get("type") not in CONFIG_TYPES:
            found.append(f"config type {step.get('type')!r}")
        for file in step.get("parameters", {}).get("files", []) if step.get("type") == "download" else []:
            need(file["url"])
    if evaluator.get("func") == "infeasible":
        return found
    funcs = listed(evaluator.get("func"))
    options = evaluator.get("options") or {}
    expecteds = listed(evaluator.get("expected"))
    for i, func in enumerate(funcs):
        if func not in METRICS:
            found.append(f"metric {func!r}")
        chosen = (options[i] if i < len(options) else {}) if isinstance(options, list) else options
        expected = expecteds[i] if i < len(expecteds) else None
        rule = expected.get("rules") if isinstance(expected, dict) and expected.get("type") == "rule" else None
        if func in LIMITS:
            found += LIMITS[func](chosen or {}, rule)
    for key in ("result", "expected"):
        for getter in listed(evaluator.get(key)):
            if getter and getter.get("type") not in GETTERS:
                found.append(f"getter {getter.get('type')!r}")
            elif getter and getter.get("type") == "content_from_vm_file":
                if (getter.get("file_type"), getter.get("file_content")) != ("xlsx", "last_row"):
                    found.append("getter 'content_from_vm_file' other than an xlsx's last_row")
            elif getter and getter.get("type") in ASSET_GETTERS:
                for url in listed(getter["path"]):
                    need(url)
    return found


class OSWorldTask:
    """One task JSON plus the assets tree its URLs are resolved in (``AssetIndex``)."""

    def __init__(self, path: Path, assets: Path | None):
        self.path = path
        self.assets = AssetIndex(assets)
        try:
            self.data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise TaskFormatError(str(path), f"not readable OSWorld task JSON: {exc}") from None
        found = problems(self.data, self.assets)
        if found:
            raise TaskFormatError(str(path), "unsupported: " + "; ".join(found))

    @property
    def evaluator(self) -> dict[str, Any]:
        return self.data.get("evaluator", {})

    @property
    def infeasible(self) -> bool:
        return self.evaluator.get("func") == "infeasible"

    def root_setup(self) -> list[list[str]]:
        """Commands run as root in a new desktop before the config steps: the start zone of ``START_ZONES``."""
        funcs = [] if self.infeasible else listed(self.evaluator.get("func"))
        zones = [START_ZONES[f] for f in funcs if f in START_ZONES]
        return [["timedatectl", "set-timezone", zones[0]]] if zones else []

    def _asset(self, url: str) -> Path:
        found = self.assets.resolve(url)
        assert found is not None  # checked at load
        return found

    # -- running steps --------------------------------------------------------------

    def run_steps(
        self,
        client: DaemonClient,
        steps: list[dict[str, Any]],
        table: dict[str, str],
        write: Callable[[str, bytes], None] | None = None,
    ) -> list[str]:
        """Run config or postconfig steps; return the files an ``open`` step opened whose window never
        showed, each with the windows and processes the desktop had instead. ``write`` puts a
        ``download`` step's file in place (by default the daemon writes it as the desktop's user)."""
        unshown = []
        for step in substitute(steps, table):
            params = step.get("parameters", {})
            kind = step["type"]
            if chrome.is_port_forward(step):
                continue
            if chrome.writes_upstream_profile(step):  # upstream's profile path, made ours before the step edits it
                client.call("run", command=chrome.LINK_PROFILE, shell=True, deadline=30, timeout=20)
            if chrome.is_stop_chrome(step):
                client.call("run", command=chrome.STOP_BROWSER, shell=True, deadline=40, timeout=30)
            elif kind == "download":
                for file in params["files"]:
                    data = self._asset(file["url"]).read_bytes()
                    if write is not None:
                        write(home_path(file["path"]), data)
                    else:
                        client.call("write", path=home_path(file["path"]), data_b64=base64.b64encode(data).decode())
            elif kind == "open":
                head, _ = client.call("open", deadline=90, path=home_path(params["path"]), timeout=60)
                if head.get("window") is None:
                    seen = f"windows {head.get('windows')}, processes {head.get('processes')}"
                    unshown.append(f"{params['path']} ({seen[:600]})")
            elif kind == "launch":
                client.call("launch", command=params["command"], shell=bool(params.get("shell")))
            elif kind in ("execute", "command"):
                client.call(
                    "run", command=params["command"], shell=bool(params.get("shell")), deadline=150, timeout=120
                )
            elif kind == "sleep":
                time.sleep(min(float(params.get("seconds", 1)), MAX_SLEEP))
            elif kind in ("activate_window", "close_window"):
                client.call(kind, **params)
            elif kind == "chrome_open_tabs":
                chrome.open_tabs(client, [str(u) for u in params.get("urls_to_open", [])])
        return unshown

    def postconfig_files(self, table: dict[str, str]) -> dict[str, bytes]:
        """What the postconfig downloads, by absolute path: the verifier puts it back once the agent is gone."""
        steps = substitute(self.evaluator.get("postconfig", []), table)
        files = [f for s in steps if s.get("type") == "download" for f in s["parameters"]["files"]]
        return {home_path(f["path"]): self._asset(f["url"]).read_bytes() for f in files}

    # -- the evaluator as check arguments ------------------------------------------------

    def check_args(self) -> dict[str, Any]:
        """The ``osworld`` checker's arguments: metrics with their getters reduced to data refs."""
        ev = self.evaluator
        funcs = listed(ev["func"])
        results, expecteds = listed(ev.get("result")), listed(ev.get("expected"))
        options = ev.get("options", {})
        options = options if isinstance(options, list) else [options] * len(funcs)
        metrics = []
        for i, func in enumerate(funcs):
            item: dict[str, Any] = {"func": func, "result": self._ref(results[i]), "options": options[i] or {}}
            if i < len(expecteds) and expecteds[i]:
                item["expected"] = self._expected_ref(expecteds[i])
            metrics.append(item)
        return {"metrics": metrics, "conj": ev.get("conj", "and")}

    def _expected_ref(self, getter: dict[str, Any]) -> dict[str, Any]:
        """An expected ``vm_file`` the config downloaded is the task's bytes, not the desktop's copy, which the
        agent can rewrite (upstream's Impress audio task compares the slide's audio with the MP3 it gave:
        emptied, and junk in the slide, both are unreadable and score 1). Any other getter as ``_ref``."""
        if getter.get("type") == "vm_file" and not getter.get("multi"):
            steps = self.data.get("config", [])
            given = {
                home_path(f["path"]): f["url"]
                for s in steps
                if s.get("type") == "download"
                for f in s["parameters"]["files"]
            }
            url = given.get(home_path(getter["path"]))
            if url is not None:
                return {"data_b64": base64.b64encode(self._asset(url).read_bytes()).decode()}
        return self._ref(getter)

    def _ref(self, getter: dict[str, Any]) -> dict[str, Any]:
        kind = getter["type"]
        if kind in ("vm_file", *ASSET_GETTERS) and getter.get("multi"):
            refs = [self._ref({**getter, "multi": False, "path": p}) for p in getter["path"]]
            gives = getter.get("gives", [0])
            return {"list": [refs[i] for i in gives]} if len(gives) > 1 else refs[gives[0]]
        if kind == "vm_file":
            return {"file": home_path(getter["path"])}
        if kind == "list_directory":
            return {"listdir": home_path(getter["path"])}
        if kind in COMMAND_GETTERS:
            spec = {
                "command": getter["command"],
                "shell": bool(getter.get("shell")),
                "stderr": kind == COMMAND_GETTERS[1],
            }
            return {"command": spec}
        if kind == "content_from_vm_file":
            return {"last_row": home_path(getter["path"])}
        if kind == "audio_in_slide":
            return {"slide_audio": home_path(getter["ppt_file_path"]), "slide_index": int(getter.get("slide_index", 0))}
        if kind == "accessibility_tree":
            return {"live": {"a11y": True}}
        if kind == "vm_window_size":
            return {"live": {"window": str(getter["app_class_name"])}}
        if kind == "vm_terminal_output":
            return {"live": {"terminal": True}}
        if kind in chrome.TAB_GETTERS:
            return {"live": {"tabs": kind, "getter": getter}}
        if kind in CHROME_GETTERS:
            return {"chrome": kind, "profile": chrome.PROFILE}
        if kind in ASSET_GETTERS:
            return {"data_b64": base64.b64encode(self._asset(getter["path"]).read_bytes()).decode()}
        return {"value": getter.get("rules")}


def _refs(args: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for item in args["metrics"]:
        for ref in (item["result"], item.get("expected")):
            out += ref["list"] if isinstance(ref, dict) and "list" in ref else [ref] if isinstance(ref, dict) else []
    return out


def needs_commands(args: dict[str, Any]) -> bool:
    """Whether a getter runs a command (``vm_command_line``/``vm_command_error``)."""
    return any("command" in ref for ref in _refs(args))


def run_commands(
    args: dict[str, Any], run: Callable[[str | list[str]], tuple[str, str]], table: dict[str, str]
) -> None:
    """Replace each command getter by its output (stdout, or stderr for ``vm_command_error``), in place.

    ``run`` executes in the sealed verifier's container: the pristine image with the agent's
    files copied in as data, none of its processes and none of its changes to the tools.
    """
    for ref in _refs(args):
        if "command" in ref:
            spec = ref.pop("command")
            command = substitute(spec["command"], table)
            if isinstance(command, list) and spec["shell"]:
                command = " ".join(command)
            stdout, stderr = run(command if spec["shell"] or isinstance(command, list) else shlex.split(command))
            ref["value"] = stderr if spec["stderr"] else stdout


def needs_profile(args: dict[str, Any]) -> bool:
    """Whether a getter reads Chromium's profile (the browser must stop first: it writes its files on exit)."""
    return any("chrome" in ref for ref in _refs(args))


def needs_live(args: dict[str, Any]) -> dict[str, Any]:
    """What the live getters need the probe to read: ``{"a11y", "windows", "terminal"}`` flags, and ``tabs`` the
    DevTools port when a getter reads Chromium's tabs (empty: none)."""
    live = [ref["live"] for ref in _refs(args) if "live" in ref]
    if not live:
        return {}
    kinds = {"a11y": "a11y", "windows": "window", "terminal": "terminal"}
    want: dict[str, Any] = {want: any(key in x for x in live) for want, key in kinds.items()}
    if any("tabs" in x for x in live):
        want["tabs"] = chrome.DEVTOOLS_PORT
    return want


def fill_live(args: dict[str, Any], seen: dict[str, Any]) -> None:
    """Replace each live getter by what the probe saw, in place (None when it saw nothing).

    ``vm_window_size`` is the first window whose WM_CLASS instance or class is
    the app's class name (case-insensitive), as ``{"width", "height"}``.
    """
    for ref in _refs(args):
        spec = ref.pop("live", None)
        if spec is None:
            continue
        if "tabs" in spec:
            ref["value"] = chrome.tab_value(spec["tabs"], spec["getter"], seen.get("tabs"))
            continue
        if "a11y" in spec or "terminal" in spec:
            ref["value"] = seen.get("a11y" if "a11y" in spec else "terminal")
            continue
        name = spec["window"].lower()
        match = [w for w in seen.get("windows") or [] if name in str(w["class"]).lower().split(".")]
        ref["value"] = {"width": match[0]["width"], "height": match[0]["height"]} if match else None


def listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]
