"""``GuiEnv``: OSWorld-style desktop tasks on a real X desktop in a container, no VM.

A reset starts a fresh desktop (its own container: fresh home and app
profiles) and runs the task's OSWorld config steps through the daemon; with
``pool_size`` it takes one that was prepared so while the last episode ran. A
step runs the action in the daemon and waits for the screen to settle.
The final score never comes from the desktop: after OSWorld's postconfig
(e.g. Ctrl+S), every process in the container is killed, and the trusted
checker outside it reads the saved files as data (``evaluators.osworld``).
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import numpy as np
from gymnasium import spaces

from agentenvs.core.actions import ParsedAction
from agentenvs.core.checks import Verdict
from agentenvs.core.env import AgentEnv, StepOutcome
from agentenvs.core.errors import ActionError, AgentFault, SandboxError, TaskFormatError
from agentenvs.core.hacks import Hack
from agentenvs.core.task import CheckSpec, Task
from agentenvs.envs.gui import actions, chrome, observe
from agentenvs.envs.gui.desktop import HOME, USER, Desktop
from agentenvs.envs.gui.hacks import GUI_HACKS
from agentenvs.envs.gui.osworld_task import (
    OSWorldTask,
    fill_live,
    needs_commands,
    needs_live,
    needs_profile,
    placeholders,
    run_commands,
)
from agentenvs.envs.gui.pool import WarmPool
from agentenvs.sandbox.agent_state import DEFAULT_PATH
from agentenvs.sandbox.base import Sandbox
from agentenvs.sandbox.checks import run_checks
from agentenvs.sandbox.daemon_client import DaemonError

PROMPT = (
    "You control a Linux desktop (1 screen) with the mouse and keyboard. Act with pyautogui code "
    "(pyautogui is imported), OSWorld computer_13 JSON actions, or the computer tool. Say WAIT to wait, "
    "DONE when the task is finished, FAIL if it cannot be done."
)

WAIT_SECONDS = 1.0
#: At most this long for the desktop's apps to go idle: after the task's config steps (the agent's
#: first keys reach a loaded app) and before the verifier reads their files.
IDLE_TIMEOUT_S = 20.0
#: At most this long, after an action, for the apps to go idle before the step's checks read files.
STEP_IDLE_TIMEOUT_S = 10.0
#: At most this long for a window after a config that ``launch``es an app (upstream's fixed sleep after
#: launching a terminal is too short under load): the agent's first screen, and the state hash, include it.
LAUNCH_WINDOW_TIMEOUT_S = 15.0


class GuiEnv(AgentEnv):
    """A desktop task. ``observation_type`` is one of OSWorld's four modes."""

    family = "gui"
    native_tools = [actions.PYAUTOGUI_TOOL, actions.COMPUTER_TOOL, actions.COMPUTER_13_TOOL]
    prompt_description = PROMPT
    family_hacks = GUI_HACKS
    oracle_changes_state = False  # it only reads (snapshot/fork replays skip it)
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        task_id: str | None = None,
        *,
        backend: str = "docker",
        screen_size: tuple[int, int] = (1920, 1080),
        observation_type: str = "screenshot_a11y_tree",
        a11y_timeout: float = 5.0,
        settle_timeout: float = 3.0,
        pool_size: int = 0,
        **kwargs: Any,
    ):
        if observation_type not in observe.OBSERVATION_TYPES:
            raise ValueError(f"observation_type must be one of {observe.OBSERVATION_TYPES}")
        self.width, self.height = screen_size
        super().__init__(task_id, **kwargs)
        self.backend = backend
        self.observation_type = observation_type
        self.a11y_timeout, self.settle_timeout = a11y_timeout, settle_timeout
        self._desktop: Desktop | None = None
        self._pool = WarmPool(pool_size)
        self._osworld: OSWorldTask | None = None
        self._frame = np.zeros((self.height, self.width, 3), dtype=np.uint8)

    def _extra_spaces(self) -> dict[str, spaces.Space[Any]]:
        return {"screenshot": spaces.Box(0, 255, shape=(self.height, self.width, 3), dtype=np.uint8)}

    @property
    def desktop(self) -> Desktop:
        if self._desktop is None:
            raise SandboxError("no desktop: call reset() first")
        return self._desktop

    def _osworld_task(self, task: Task) -> OSWorldTask:
        name = task.config.gui.get("osworld", "task.json")
        if task.path is None:
            raise TaskFormatError(task.full_id, "a gui task is a directory holding its OSWorld JSON")
        return OSWorldTask(task.path / name, task.dir("assets"))

    def audit_hacks(self) -> list[Hack]:
        """The common hacks and the desktop's; on an infeasible task ``fail`` is the right answer, not a hack."""
        task = self._task or self._default_task
        infeasible = task is not None and self._osworld_task(task).infeasible
        return [h for h in super().audit_hacks() if not (infeasible and h.name == "fail")]

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        osworld = self._osworld = self._osworld_task(task)
        self._close_desktop()
        self._desktop = self._pool.take(task.full_id, lambda: self._fresh_desktop(osworld))
        return self._observe(settle_timeout=10.0)

    def _fresh_desktop(self, osworld: OSWorldTask, attempts: int = 2) -> Desktop:
        """A new container's desktop with the task's config steps run (the pool may do this ahead of time).

        An app whose window never shows (seen about once in a few hundred starts under load) would leave
        the agent a desktop without its task, scored as the agent's failure: a fresh desktop is made once
        more, then the reset is an infra error. Nothing the agent does runs before this.
        """
        for _ in range(attempts):
            desktop = Desktop(self.backend, width=self.width, height=self.height)
            try:
                for argv in osworld.root_setup():  # as root, from outside, before anything of the task runs
                    done = desktop.sandbox.exec(argv, timeout=30)
                    if done.exit_code != 0:
                        raise SandboxError(f"{' '.join(argv)} failed: {done.output[-300:]}")
                table = placeholders(self.width, self.height)
                unshown = osworld.run_steps(desktop.client, osworld.data.get("config", []), table)
            except BaseException:
                desktop.close()
                raise
            if not unshown:
                # A window shows before its app has loaded the file: keys sent then are lost.
                desktop.sandbox.wait_idle(timeout=IDLE_TIMEOUT_S)
                if any(step.get("type") == "launch" for step in osworld.data.get("config", [])):
                    _await_a_window(desktop, LAUNCH_WINDOW_TIMEOUT_S)
                return desktop
            desktop.close()
        raise SandboxError(f"the window of {', '.join(unshown)} did not show within 60 s on {attempts} fresh desktops")

    def _observe(self, settle_timeout: float | None = None, note: str = "") -> StepOutcome:
        client = self.desktop.client
        mode = self.observation_type
        settle = settle_timeout or self.settle_timeout
        head, frame = client.call("settle", deadline=settle + 10, timeout=settle)
        image = observe.frame_to_rgb(frame, self.width, self.height)
        text = ""
        if mode != "screenshot":
            walk, xml = client.call("a11y", deadline=self.a11y_timeout + 10, timeout=self.a11y_timeout)
            found = observe.nodes(xml.decode("utf-8", "replace"), self.width, self.height)
            text = observe.linearize(found, numbered=mode == "som")
            if walk.get("error"):  # a blocked or broken walk costs a bounded wait and is said, never a hang
                text = f"(accessibility tree unavailable: {str(walk['error'])[-300:]})\n{text}"
            if mode == "som":
                image = observe.draw_marks(image, found)
        if mode == "a11y_tree":
            image = np.zeros_like(image)
        self._frame = image
        info = {"settled": bool(head.get("settled"))}
        return StepOutcome(text=f"{note}\n{text}".strip(), extras={"screenshot": image}, info=info)

    def step(self, action: Any):
        if isinstance(action, dict) and "action_type" in action:  # OSWorld agents pass computer_13 dicts
            action = json.dumps(action)
        return super().step(action)

    def _act(self, action: ParsedAction) -> StepOutcome:
        """One action; a daemon that died or hung while its container lives is the agent's doing.

        Through the GUI the agent has a terminal as the daemon's user (and sudo), so only its
        processes can kill or freeze the daemon or the display; calling that infra would let it
        turn any failing episode into an unscored one. A container gone from outside is infra.
        """
        try:
            return self._act_on_desktop(action)
        except DaemonError as exc:
            if self.desktop.sandbox.alive():
                raise AgentFault(f"the desktop stopped answering while its container runs: {exc}") from exc
            raise

    def _act_on_desktop(self, action: ParsedAction) -> StepOutcome:
        code = self._code(action)
        if code is None:  # WAIT: the agent expects a busy app; an unchanged screen may only mean it has not drawn yet
            time.sleep(WAIT_SECONDS)
            return self._observe(settle_timeout=max(self.settle_timeout, 2.0))
        limits = self._task.config.limits if self._task else None
        timeout = limits.step_timeout_sec if limits else 30.0
        head, _ = self.desktop.client.call("execute", deadline=timeout + 10, code=code, timeout=timeout)
        outcome = self._observe(note=str(head.get("output") or ""))
        if head.get("error"):
            outcome.text = f"Action error: {head['error']}\n{outcome.text}"
            outcome.info.update(action_error=str(head["error"])[-1000:], error_kind="agent")
        return outcome

    def _code(self, action: ParsedAction) -> str | None:
        if action.kind == "tool":
            if action.name == "pyautogui":
                code = action.arguments.get("code")
                if not isinstance(code, str):
                    raise ActionError("pyautogui needs a string argument 'code'")
                return code
            if action.name == "computer":
                return actions.computer_tool(action.arguments)
            if action.arguments.get("action_type") == "WAIT":
                return None
            return actions.computer_13(action.arguments)
        if action.text.strip() == "WAIT":
            return None
        parsed = actions.parse_json_action(action.text)
        if parsed is not None:
            return None if parsed.get("action_type") == "WAIT" else actions.computer_13(parsed)
        return action.text

    def _check(self, task: Task) -> dict[str, bool]:
        checkpoints = task.config.checkpoints
        if not checkpoints:
            return {}
        # The checks read what the apps saved: once they have finished (a save under load outlasts the
        # screen's settling), the same actions give the same checks, as a replay must reproduce them.
        self.desktop.sandbox.wait_idle(timeout=STEP_IDLE_TIMEOUT_S, window=0.1)
        results = run_checks(self.desktop.sandbox, checkpoints)
        return {c.name: r.passed for c, r in zip(checkpoints, results, strict=True)}

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        """OSWorld's rules on FAIL and infeasible; otherwise postconfig, kill everything, read files as data."""
        assert self._osworld is not None
        failed = final_action is not None and final_action.kind == "fail"
        if self._osworld.infeasible or failed:
            score = float(self._osworld.infeasible and failed)
            self.desktop.sandbox.kill_all()
            return Verdict(score=score, success=score >= 1.0, detail=f"infeasible={self._osworld.infeasible}")
        note = ""
        table = placeholders(self.width, self.height)
        # The postconfig's downloads are written from outside, over whatever the agent left at their paths,
        # and again once its processes are gone: a grader script or gold file is never the agent's.
        files = self._osworld.postconfig_files(table)
        sandbox = self.desktop.sandbox
        try:
            postconfig = self._osworld.evaluator.get("postconfig", [])
            self._osworld.run_steps(self.desktop.client, postconfig, table, lambda p, d: _put_back(sandbox, {p: d}))
        except DaemonError as exc:  # the agent's code can kill its own desktop's daemon
            note = f"postconfig did not run: {exc}"
        # The apps finish what the agent (or the postconfig) asked last, a save above all: on a
        # loaded machine that outlasts any fixed sleep, and the score must not depend on the load.
        self.desktop.sandbox.wait_idle(timeout=IDLE_TIMEOUT_S)
        args = self._osworld.check_args()
        live = needs_live(args)
        if live:  # read before every process is killed: the tree and windows exist only while the apps run
            fill_live(args, self.desktop.probe(live))
        if needs_profile(args):  # from outside the agent's reach; Chromium saves its profile as it exits
            self.desktop.sandbox.exec(
                ["sh", "-c", chrome.STOP_BROWSER], timeout=40, user=USER, env=self.desktop.session_env
            )
        if needs_commands(args):
            return self._verify_sealed(args, note, files)
        self.desktop.sandbox.kill_all()
        _put_back(self.desktop.sandbox, files)
        [outcome] = run_checks(self.desktop.sandbox, [CheckSpec(check="osworld", args=args)], timeout=60)
        return _verdict(outcome, note)

    def _verify_sealed(self, args: dict[str, Any], note: str, files: dict[str, bytes]) -> Verdict:
        """Command getters run in a sealed verifier container (the agent's files, none of its processes or tools),
        on the standard PATH: no program in the agent's home is found by name."""
        verifier = self.desktop.sandbox.seal()
        try:
            _put_back(verifier, files)

            def run(command: str | list[str]) -> tuple[str, str]:
                done = verifier.exec(
                    command, timeout=60, user=USER, env={"HOME": HOME, "USER": USER, "PATH": DEFAULT_PATH}
                )
                return done.stdout, done.stderr

            run_commands(args, run, placeholders(self.width, self.height))
            [outcome] = run_checks(verifier, [CheckSpec(check="osworld", args=args)], timeout=60)
        finally:
            verifier.close()
        return _verdict(outcome, note)

    def _state_hash(self) -> str:
        """The task's setup and the windows it opened: pixels vary with timing (a half-drawn app), these do not."""
        windows = self.desktop.client.call("windows")[0].get("windows", [])
        shown = sorted((w["class"], w["title"]) for w in windows)
        setup = self._osworld.data.get("config", []) if self._osworld else []
        return hashlib.sha256(json.dumps([setup, shown], sort_keys=True).encode()).hexdigest()

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        """The task's ``solution/<variant>.json``: a list of actions, placeholders filled in."""
        task = self._task
        solution = task.dir("solution") if task else None
        path = solution / f"{variant}.json" if solution else None
        if path is None or not path.is_file():
            raise NotImplementedError(f"{task.full_id if task else 'gui'} has no solution/{variant}.json")
        text = path.read_text(encoding="utf-8")  # placeholders may stand for numbers: fill them in before parsing
        for key, value in placeholders(self.width, self.height).items():
            text = text.replace(key, value)
        return json.loads(text)

    @property
    def frame(self) -> np.ndarray:
        """The last observed screen (black in ``a11y_tree`` mode, as the agent saw it)."""
        return self._frame

    @property
    def running(self) -> bool:
        """An episode is under way: reset, and not yet ended by the agent, a limit or an error."""
        return self._task is not None and not self._ended

    def render(self) -> Any:
        if self.render_mode == "rgb_array":
            return self._frame.copy()
        return super().render()

    def _close_desktop(self) -> None:
        if self._desktop is not None:
            self._pool.discard(self._desktop)
            self._desktop = None

    def _end(self) -> None:
        self._close_desktop()

    def _release(self) -> None:
        self._close_desktop()
        self._pool.close()


def _await_a_window(desktop: Desktop, timeout: float) -> None:
    """Until the desktop shows a window (at most ``timeout``): what is launched has a window to act on."""
    deadline = time.monotonic() + timeout
    while not desktop.client.call("windows")[0].get("windows") and time.monotonic() < deadline:
        time.sleep(0.1)


#: Run as root before a download is written back (``home_path`` made its path absolute): each folder on
#: the way to ``$1`` under the home that the agent made a symlink or a file becomes a real folder of the
#: desktop's user (root must not write through the agent's links; the image's own links, such as /bin,
#: lie outside the home), then whatever is at ``$1`` goes; prints the mode to keep (a plain file's).
_CLEAR_PATH = f"""set -f; IFS=/; d=
for c in ${{1%/*}}; do
  [ -n "$c" ] || continue; d="$d/$c"
  case "$d/" in {HOME}/?*) ;; *) continue ;; esac
  if [ -L "$d" ] || {{ [ -e "$d" ] && [ ! -d "$d" ]; }}; then rm -rf -- "$d"; fi
  [ -d "$d" ] || {{ mkdir -- "$d" && chown {USER}:{USER} "$d"; }}
done
m=$([ -f "$1" ] && [ ! -L "$1" ] && stat -c %a "$1"); rm -rf -- "$1"; echo "${{m:-644}}"
"""


def _put_back(sandbox: Sandbox, files: dict[str, bytes]) -> None:
    """Write the postconfig's downloads as root over whatever is at their paths (a directory, a read-only
    or root-owned file, a symlink, a symlinked folder on the way), owned by the desktop's user; one the
    postconfig made executable stays so."""
    for path, data in files.items():
        mode = sandbox.exec(["sh", "-c", _CLEAR_PATH, "sh", path], timeout=30).stdout.strip()
        sandbox.put(data, path)
        keep = oct(int(mode, 8) & 0o755 if mode.isdigit() else 0o644)[2:]
        sandbox.exec(["sh", "-c", f'chown {USER}:{USER} "$1" && chmod {keep} "$1"', "sh", path], timeout=30)


def _verdict(outcome: Any, note: str) -> Verdict:
    """The checker's outcome as the episode's verdict; a checker that could not run is infra."""
    if outcome.detail.startswith("checks could not run"):
        raise SandboxError(outcome.detail)
    detail = f"{outcome.detail}; {note}" if note else outcome.detail
    return Verdict(score=outcome.score, success=outcome.score >= 1.0, detail=detail)
