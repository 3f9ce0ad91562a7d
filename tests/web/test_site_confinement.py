"""On the local backend the sites (they parse what the agent sends) and Chromium run confined
(``envs/web/confined.py``): as the unprivileged sandbox user with no capabilities, seeing only what
each needs, with none of our environment; the task still works through them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentenvs.core.errors import InfraError
from agentenvs.envs.web.confined import REPO as REPO_ROOT
from agentenvs.envs.web.sites.process import SiteProcess
from agentenvs.sandbox.confine import confined_argv
from agentenvs.sandbox.local_system import sandbox_ids
from agentenvs.validate import play


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True, check=True).stdout
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        child, parent = map(int, line.split())
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _argv(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:  # ended meanwhile
        return [b""]


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


def test_a_site_runs_as_the_sandbox_user_and_sees_only_what_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTENVS_TEST_SECRET", "canary-7f3a")
    site = SiteProcess("forum")
    try:
        site.control("/reset")
        assert site.query("SELECT count(*) FROM users")[0][0] > 0  # it serves from its own copy
        servers = [p for p in _descendants(site.pid) if _argv(p)[0] == sys.executable.encode()]
        assert len(servers) == 1
        pid = servers[0]
        status = _status(pid)
        uid, gid = sandbox_ids()
        assert status["Uid"].split() == [str(uid)] * 4 and status["Gid"].split() == [str(gid)] * 4
        assert int(status["CapEff"], 16) == 0 and int(status["CapBnd"], 16) == 0 and status["NoNewPrivs"] == "1"
        assert b"canary-7f3a" not in Path(f"/proc/{pid}/environ").read_bytes()
        root = Path(f"/proc/{pid}/root")
        assert (root / str(REPO_ROOT / "agentenvs" / "__init__.py").lstrip("/")).is_file()
        for hidden in (
            REPO_ROOT / "tasks",
            REPO_ROOT / "tests",
            Path("/var/run/docker.sock"),
            Path("/root/.bash_history"),
        ):
            assert not (root / str(hidden).lstrip("/")).exists(), hidden
    finally:
        site.close()
    # The kernel ends the site's pid namespace once bubblewrap is killed (its init dies with it).
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{p}").exists() for p in servers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{p}").exists() for p in servers)


def test_a_confined_program_writes_only_its_own_directory(tmp_path: Path) -> None:
    own = tmp_path / "own"
    own.mkdir()
    os.chown(own, *sandbox_ids())
    readable = tmp_path / "readable.txt"
    readable.write_text("shared\n")
    readable.chmod(0o644)
    script = (
        "import sys, pathlib\n"
        "own, readable = map(pathlib.Path, sys.argv[1:3])\n"
        "(own / 'out.txt').write_text(readable.read_text())\n"
        "for target in (readable, pathlib.Path(sys.argv[3]) / 'x.txt', pathlib.Path('/etc/x')):\n"
        "    try:\n"
        "        target.write_text('no')\n"
        "        print('WROTE', target)\n"
        "    except OSError:\n"
        "        pass\n"
        "print('secret visible' if pathlib.Path(sys.argv[4]).exists() else 'secret hidden')\n"
    )
    secret = REPO_ROOT / "pyproject.toml"
    argv = confined_argv(
        [sys.executable, "-I", "-c", script, str(own), str(readable), str(REPO_ROOT), str(secret)],
        read_only=sorted({sys.base_prefix, sys.prefix, str(readable)}),
        writable=[str(own)],
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "WROTE" not in done.stdout and "secret hidden" in done.stdout
    assert (own / "out.txt").read_text() == "shared\n"
    assert readable.read_text() == "shared\n"


def test_chromium_runs_confined_and_sees_none_of_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """The browser the agent drives: the sandbox user, no capabilities, our minimal /etc, no repository."""
    import agentenvs
    from agentenvs.envs.web.browser import BrowserThread

    monkeypatch.setenv("AGENTENVS_TEST_SECRET", "canary-7f3a")
    thread = BrowserThread()
    env = agentenvs.make("web/miniwob.click-test", browser=thread, prepare_ahead=False).unwrapped
    try:
        env.reset(seed=0)
        # The browser process and its zygotes live as long as it does (renderers come and go).
        browsers = [
            p
            for p in _descendants(os.getpid())
            if (argv := _argv(p))[0].endswith(b"chromium")
            and not any(a.startswith(b"--type=") and a != b"--type=zygote" for a in argv)
        ]
        assert browsers, "found Chromium's processes"
        uid, _ = sandbox_ids()
        for pid in browsers:
            status = _status(pid)
            assert status["Uid"].split() == [str(uid)] * 4, pid
            assert int(status["CapEff"], 16) == 0 and status["NoNewPrivs"] == "1"
            assert b"canary-7f3a" not in Path(f"/proc/{pid}/environ").read_bytes()
            root = Path(f"/proc/{pid}/root")
            assert not (root / str(REPO_ROOT).lstrip("/")).exists()
            assert not (root / "etc/shadow").exists()  # our minimal /etc, not the host's
        info, _ = play(env, env.oracle_actions())
        assert info["score"] == 1.0  # and the task still works through it
    finally:
        env.close()
        thread.close()


def test_a_confined_chromium_uploads_the_task_file_by_its_bytes(tmp_path: Path) -> None:
    """``upload_file`` sends the file's bytes: the confined browser sees no task directory, and the
    page gets the same name and content; a name the task does not give is refused."""
    import http.server
    import threading

    from agentenvs.envs.web.actions import parse_calls
    from agentenvs.envs.web.browser import BrowserThread
    from agentenvs.envs.web.session import BrowserActionError, Session

    page = b"<html><body><form><input type='file' id='pick' aria-label='Attachment'></form></body></html>"

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    uploads = tmp_path / "uploads"
    uploads.mkdir(mode=0o700)  # closed to the sandbox user, as task folders under /root are
    (uploads / "report.csv").write_bytes(b"id,total\n1,42\n")
    origin = f"http://127.0.0.1:{server.server_port}"
    thread = BrowserThread()

    def upload(browser: object) -> dict[str, object]:
        session = Session.open(browser, (640, 480))
        try:
            session.activate({origin}, [], uploads)
            session.goto(origin + "/")
            tree = session.observe(False).tree
            bid = next(re.search(r"\[(\w+)\]", line)[1] for line in tree.splitlines() if "Attachment" in line)
            session.act(parse_calls(f"upload_file('{bid}', 'report.csv')")[0])
            got = session.page.evaluate(
                "async () => { const f = document.getElementById('pick').files[0]; return {name: f.name, text: await f.text()}; }"
            )
            try:
                session.act(parse_calls(f"upload_file('{bid}', 'secret.txt')")[0])
                got["refused"] = False
            except BrowserActionError:
                got["refused"] = True
            return got
        finally:
            session.close()

    try:
        got = thread.call(upload)
    finally:
        thread.close()
        server.shutdown()
    assert got == {"name": "report.csv", "text": "id,total\n1,42\n", "refused": True}


def test_a_fork_the_site_swapped_for_a_link_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The site owns its directory, so the env copies a fork out of it without following links:
    a (compromised) site that leaves a link to a host file in its place gets an error, not the file."""
    site = SiteProcess("forum")
    try:
        real = site.control

        def control(path: str, body: dict[str, object] | None = None, timeout: float = 30.0) -> object:
            if path == "/fork":
                os.symlink("/etc/hostname", str((body or {})["dest"]))
                return {"ok": True}
            return real(path, body, timeout)

        monkeypatch.setattr(site, "control", control)
        dest = tmp_path / "fork.sqlite"
        with pytest.raises(InfraError, match="could not be read"):
            site.fork_to(dest)
        assert not dest.exists()
    finally:
        site.close()
