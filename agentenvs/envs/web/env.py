"""``WebEnv``: our sites and MiniWoB++ in Debian's Chromium, with BrowserGym's actions.

Three kinds of state, each reset cheaply and apart: the browser (one
Chromium per process, a fresh context per episode), the sites (one server
process per site per env, its database copied from the snapshot on every
reset, so parallel episodes never share writes), and the agent's messages.
Grading reads the sites' databases through their control planes and the
typed answer, outside the browser. A site process that dies is infra.
"""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from agentenvs.core.actions import ParsedAction
from agentenvs.core.checks import CheckResult, Verdict, combine
from agentenvs.core.env import AgentEnv, StepOutcome
from agentenvs.core.errors import InfraError
from agentenvs.core.hacks import Hack
from agentenvs.core.spaces import Unicode
from agentenvs.core.task import Task
from agentenvs.envs.web import checks, miniwob
from agentenvs.envs.web.actions import PROMPT, calls_of, tool_schemas
from agentenvs.envs.web.browser import BrowserThread
from agentenvs.envs.web.forks import SiteForks, fork_into
from agentenvs.envs.web.hacks import WEB_HACKS, web_hacks
from agentenvs.envs.web.lanes import Lanes
from agentenvs.envs.web.plans import resolve_plan
from agentenvs.envs.web.proxy import SiteProxy, public_origin
from agentenvs.envs.web.session import BrowserActionError, Page, Session
from agentenvs.envs.web.sites import session_cookie
from agentenvs.envs.web.sites.process import SiteProcess

#: Where the MiniWoB++ pages are, as the agent sees it (the process's static server behind the proxy).
MINIWOB_ORIGIN = public_origin("miniwob")
#: BrowserGym's viewports: a MiniWoB++ page's (its 160 x 210 task area with the instruction) and a site's.
MINIWOB_VIEWPORT = (332, 214)
SITE_VIEWPORT = (1280, 720)


class WebEnv(AgentEnv):
    """A web task. ``screenshot=True`` adds the page's pixels to every observation.

    ``backend="docker"`` runs the sites and Chromium in a ``web`` container (``docker_env.py``).

    Uploads: ``upload_file`` accepts only names of files in the task's ``uploads/`` directory.
    ``prepare_ahead`` (on by default) makes the next episode's context, and loads its MiniWoB++
    page, on a second browser lane while the agent works on this one (``lanes.py``), from the env's
    second episode on (an env made for one episode, as the harness's are, prepares nothing); off,
    one Chromium does everything in turn.
    """

    family = "web"
    native_tools = tool_schemas()
    prompt_description = PROMPT
    family_hacks = WEB_HACKS
    oracle_changes_state = False  # it only reads (snapshot/fork replays skip it)

    def __new__(cls, task_id: str | None = None, *, backend: str = "local", **kwargs: Any) -> WebEnv:
        """``backend="docker"`` makes a ``DockerWebEnv``: the sites and the browser in a container."""
        if backend not in ("local", "docker"):
            raise ValueError(f"the web family's backends are 'local' and 'docker', not {backend!r}")
        if backend == "docker" and cls is WebEnv:
            from agentenvs.envs.web.docker_env import DockerWebEnv

            cls = DockerWebEnv
        # The arguments go on so that the env records them (``fork`` makes another just like it).
        return super().__new__(cls, task_id, backend=backend, **kwargs)

    def __init__(
        self,
        task_id: str | None = None,
        *,
        backend: str = "local",
        screenshot: bool = False,
        viewport: tuple[int, int] | None = None,
        browser: BrowserThread | None = None,
        load_timeout: float = 10.0,
        prepare_ahead: bool = True,
        **kwargs: Any,
    ):
        self.backend = backend
        self.screenshot = screenshot
        #: The longest wait for a page's load event after an action (a page that never loads is shown as it is).
        self.load_timeout_ms = int(load_timeout * 1000)
        self.prepare_ahead = prepare_ahead
        self._viewport = None if viewport is None else (int(viewport[0]), int(viewport[1]))
        super().__init__(task_id, **kwargs)
        self._lanes = Lanes(browser)
        #: Episodes begun on this env: the next one is prepared ahead only once the env is reused.
        self._episodes = 0
        self._sites: dict[str, SiteProcess] = {}
        self._session: Session | None = None
        self._messages: list[str] = []
        self._infeasible = False
        self._utterance: str | None = None
        self._last_error = ""
        self._last_tree = ""
        self._forks = SiteForks()
        self._proxy: SiteProxy | None = None
        #: A MiniWoB++ episode's tab and the mark its started document carries (only it is scored).
        self._miniwob_page: Any = None
        self._miniwob_mark = ""

    @property
    def viewport(self) -> tuple[int, int]:
        """The page's size (w, h), fixed for the env's life: ``viewport=`` if given, else BrowserGym's
        for the env's task: MiniWoB++'s 332 x 214 (its task area and instruction) or 1280 x 720 for sites."""
        if self._viewport is not None:
            return self._viewport
        task = self._default_task
        return MINIWOB_VIEWPORT if task is not None and task.params.get("kind") == "miniwob" else SITE_VIEWPORT

    def _extra_spaces(self) -> dict[str, spaces.Space[Any]]:
        extra: dict[str, spaces.Space[Any]] = {
            "url": Unicode(8192),
            "tabs": Unicode(65536),
            "last_action_error": Unicode(8192),
        }
        if self.screenshot:
            w, h = self.viewport
            extra["screenshot"] = spaces.Box(0, 255, shape=(h, w, 3), dtype=np.uint8)
        return extra

    # -- the browser and the sites ----------------------------------------------

    @property
    def browser(self) -> BrowserThread:
        """The browser thread the current episode runs on."""
        return self._lanes.thread()

    def _call(self, fn: Any) -> Any:
        """Run ``fn(browser)`` on the browser thread; Chromium dying under it is infra, not the agent's doing.

        The agent cannot close its context or the browser (only tabs, and the env replaces a
        last closed tab), so a closed target means the browser went away.
        """
        try:
            return self.browser.call(fn)
        except InfraError:
            raise
        except Exception as exc:
            if type(exc).__name__ == "TargetClosedError" or not self.browser.connected():
                raise InfraError(f"Chromium is gone: {exc}") from exc
            raise

    def site(self, name: str) -> SiteProcess:
        """The env's server for a site, restarted if it died (a reset recovers from infra failures)."""
        proc = self._sites.get(name)
        if proc is None or not proc.alive():
            if proc is not None:
                proc.close()
            proc = self._sites[name] = SiteProcess(name)
        return proc

    @property
    def proxy(self) -> SiteProxy:
        """This env's proxy: the stable origins (``http://shop.web.test``) mapped to this env's own servers."""
        if self._proxy is None:
            self._proxy = SiteProxy(lambda name: self._upstream(name))
        return self._proxy

    def _upstream(self, name: str) -> tuple[str, int] | None:
        """The loopback server behind ``http://<name>.web.test`` for this env's current task only (proxy
        threads call it). The context's route does not see a redirect's next hop, so a site's redirect
        to another site this env runs (from an earlier task) reached it until the proxy also kept to the task."""
        task = self._task
        if task is None:
            return None
        if name == "miniwob":
            return ("127.0.0.1", int(miniwob.origin().rsplit(":", 1)[1])) if task.params["kind"] == "miniwob" else None
        if name not in task.params.get("sites", []):
            return None
        proc = self._sites.get(name)
        return ("127.0.0.1", proc.app_port) if proc is not None and proc.alive() else None

    def site_url(self, ref: str) -> str:
        """``shop:/cart`` -> this episode's URL of the shop's ``/cart``."""
        name, _, path = ref.partition(":")
        return self.site(name).origin + path

    # -- hooks -------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """``options={"fork": env.fork_sites()}`` starts the episode from another episode's site state."""
        self._forks.pending = dict((options or {}).get("fork") or {})
        return super().reset(seed=seed, options=options)

    def fork_sites(self) -> dict[str, str]:
        """Copy this episode's site databases (a consistent SQLite backup) for branching rollouts.

        The parent is not touched; pass the result as ``reset(options={"fork": ...})`` of any
        env running the same task. Only server state is forked: the branch starts a fresh browser.
        ``fork()`` (every family's) instead makes a new env in this episode's whole state, browser too.
        """
        if self._task is None:
            raise RuntimeError("call reset() before fork_sites()")
        return fork_into((self.site(name) for name in self._task.params.get("sites", [])), self._forks.home())

    def _begin(self, task: Task, seed: int) -> StepOutcome:
        spec = task.params
        self._messages, self._infeasible, self._last_error, self._utterance = [], False, "", None
        fork = self._forks.for_task(task)
        self.proxy  # started before any context is made with it
        if spec["kind"] == "miniwob":
            url = f"{MINIWOB_ORIGIN}/miniwob/{spec['name']}.html"
            max_ms = int(task.config.agent.timeout_sec * 1000)
            self._session = self._fresh_session(url, {MINIWOB_ORIGIN}, [], None)
            self._miniwob_page, self._miniwob_mark = self._session.page, secrets.token_hex(16)
            self._utterance = self._call(lambda b: miniwob.start(self._miniwob_page, seed, max_ms, self._miniwob_mark))
        else:
            cookies = []
            for name in spec["sites"]:
                site = self.site(name)
                site.control("/reset")
                if name in fork:
                    site.adopt(Path(fork[name]))
                if spec.get("persona"):
                    sid = site.control("/session", {"user": spec["persona"]})["sid"]
                    cookies.append({"name": session_cookie(name), "value": sid, "url": site.origin})
            allowed = {self.site(n).origin for n in spec["sites"]}
            self._session = self._fresh_session(None, allowed, cookies, task.dir("uploads"))
            start = self.site_url(spec["start"])
            self._call(lambda b: self._session.goto(start))
        outcome = self._outcome()
        self._episodes += 1
        if self.prepare_ahead and self._episodes > 1:
            # The next episode (guessed to be this task again) is made on the other lane while the agent works;
            # from an env's second episode on: one made for a single episode (the harness's) would be thrown away.
            self._lanes.prepare(self._spare_key(task), lambda b, t=task: self._open(b, t))
        return outcome

    def _spare_key(self, task: Task) -> str | None:
        """What a prepared session is good for: a MiniWoB++ task's page, or any site task (``None``)."""
        return f"{MINIWOB_ORIGIN}/miniwob/{task.params['name']}.html" if task.params["kind"] == "miniwob" else None

    def _open(self, browser: Any, task: Task) -> Session:
        """A fresh context for ``task`` (on the browser thread); a MiniWoB++ task's page loaded in it."""
        session = Session.open(browser, self.viewport, self.load_timeout_ms, self.proxy.server)
        try:
            url = self._spare_key(task)
            if url is not None:
                session.activate({MINIWOB_ORIGIN}, [], None)
                miniwob.load(session, url)
            if self.screenshot:
                session.cdp(session.page)
        except BaseException:
            session.close()  # a spare that failed (its page refused once the env moved to another task) leaves nothing
            raise
        return session

    def _fresh_session(
        self, page: str | None, allowed: set[str], cookies: list[dict[str, Any]], uploads: Path | None
    ) -> Session:
        """The session prepared ahead if it was made for ``page``, else a new one; opened to the episode's origins."""
        spare = self._lanes.take(page)
        if spare is not None:
            try:
                # A round trip first: a Chromium that died since the spare was made is noticed here.
                self._call(lambda b: (spare.page.evaluate("0"), spare.activate(allowed, cookies, uploads)))
                return spare
            except InfraError:
                self._lanes.retire(spare)
        self._lanes.revive()  # a reset after Chromium died gets a new one (that episode ended as infra)
        session = self._call(lambda b: Session.open(b, self.viewport, self.load_timeout_ms, self.proxy.server))
        self._call(lambda b: session.activate(allowed, cookies, uploads))
        if page is not None:
            self._call(lambda b: miniwob.load(session, page))
        return session

    def _observation(self, outcome: StepOutcome) -> dict[str, Any]:
        obs = super()._observation(outcome)
        if self._utterance is not None:
            obs["instruction"] = f"{self._task.instruction}\n\n{self._utterance}" if self._task else self._utterance
        return obs

    def _outcome(self, terminated: bool = False, info: dict[str, Any] | None = None) -> StepOutcome:
        self._ensure_sites_alive()
        if not self._call(lambda b: b.is_connected()):
            raise InfraError("Chromium is gone")
        page: Page = self._call(lambda b: self._session.observe(self.screenshot))
        self._last_tree = page.tree
        extras: dict[str, Any] = {"url": page.url, "tabs": page.tabs, "last_action_error": self._last_error}
        for key, value in extras.items():
            # Within the declared spaces: a goto with a long query made ``url`` longer than its 8,192.
            limit = self.observation_space[key].max_length
            extras[key] = value if len(value) <= limit else value[: limit - 16] + " [... cut ...]"
        if self.screenshot:
            extras["screenshot"] = page.screenshot_at(self.viewport)
        return StepOutcome(text=page.render(self._last_error), extras=extras, terminated=terminated, info=info or {})

    def _ensure_sites_alive(self) -> None:
        for name in self._task.params.get("sites", []) if self._task else []:
            proc = self._sites.get(name)
            if proc is None or not proc.alive():
                raise InfraError(f"the {name} site process is gone")

    def _act(self, action: ParsedAction) -> StepOutcome:
        calls = calls_of(action)
        self._last_error = ""
        terminated = False
        for call in calls:
            if call.name == "send_msg_to_user":
                self._messages.append(call.args["text"])
                continue
            if call.name == "report_infeasible":
                self._infeasible = True
                self._messages.append(call.args["reason"])
                terminated = True
                break
            try:
                self._call(lambda b, c=call: self._session.act(c))
            except BrowserActionError as exc:
                self._last_error = str(exc)
                break
        info = {"action_error": self._last_error, "error_kind": "agent"} if self._last_error else {}
        if self._task is not None and self._task.params["kind"] == "miniwob":
            state = self._miniwob_state()
            terminated = terminated or bool(state["done"])
            info["miniwob"] = {
                "raw_reward": state["raw"],
                "decayed_reward": miniwob.decayed(state),
                "reason": state["reason"],
            }
        return self._outcome(terminated, info)

    def _miniwob_state(self) -> dict[str, Any]:
        """The episode's own page's MiniWoB++ state: never another tab's, nor a page the agent loaded
        (another task's, or this one re-rolled; they share the origin), which reads as not done."""
        return self._call(lambda b: miniwob.state(self._miniwob_page, self._miniwob_mark))

    def _context(self, final_action: ParsedAction | None = None) -> checks.Context:
        answer, infeasible = checks.final_answer(self._messages, self._infeasible, final_action)
        url = self._call(lambda b: self._session.page.url) if self._session else ""
        ctx = checks.Context(sites=self._sites, answer=answer, infeasible=infeasible, url=url)
        if self._task is not None and self._task.params["kind"] == "miniwob":
            ctx.miniwob = self._miniwob_state()
        return ctx

    def _page_text(self, url: str, locator: str) -> str:
        """A page's HTML (or a JS locator's value) in a fresh tab of the episode's context, after the agent is done."""
        target = url if url.startswith("http") else self.site_url(url)
        session = self._session
        assert session is not None
        return self._call(lambda b: session.read_page(target, locator))

    def _check(self, task: Task) -> dict[str, bool]:
        if not task.config.checkpoints:
            return {}
        ctx = self._context()
        return {c.name: checks.run(c, ctx).passed for c in task.config.checkpoints}

    def _verify(self, task: Task, final_action: ParsedAction | None) -> Verdict:
        assert task.config.evaluator is not None
        ctx = self._context(final_action)
        ctx.page_text = self._page_text
        results: list[CheckResult] = [checks.run(spec, ctx) for spec in task.config.evaluator.checks]
        verdict = combine(task.config.evaluator, results)
        if task.params["kind"] == "miniwob":
            state = ctx.miniwob
            metrics = {"raw_reward": float(state["raw"] or 0.0), "decayed_reward": float(miniwob.decayed(state) or 0.0)}
            return Verdict(verdict.score, verdict.success, verdict.detail, metrics=metrics)
        return verdict

    def _state_hash(self) -> str:
        """The sites' databases (rows of every table but sessions) and, for MiniWoB, the page."""
        digest = hashlib.sha256()
        assert self._task is not None
        for name in self._task.params.get("sites", []):
            self.site(name).digest_rows(digest)
        if self._task.params["kind"] == "miniwob":
            digest.update(self._last_tree.encode())
        return digest.hexdigest()

    def audit_hacks(self) -> list[Hack]:
        return web_hacks()

    def oracle_actions(self, variant: str = "oracle") -> list[Any]:
        """The task's reference (or plausible wrong) plan, with element ids resolved on this episode's pages."""
        task = self._task
        if task is None or self._session is None:
            raise RuntimeError("call reset() before oracle_actions()")
        return self._call(lambda b: resolve_plan(self, task, variant))

    def _end(self) -> None:
        self._miniwob_page = None
        if self._session is not None:
            session, self._session = self._session, None
            self._lanes.retire(session)

    def _release(self) -> None:
        self._lanes.release()
        self._forks.close()
        for proc in self._sites.values():
            proc.close()
        self._sites.clear()
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
