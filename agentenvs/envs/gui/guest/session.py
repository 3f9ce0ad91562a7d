"""The desktop session: Xvfb, a D-Bus session bus (which brings AT-SPI and dconf), openbox, and the apps' environment.

Xvfb picks its own display number (``-displayfd``; fixed numbers race) and
is read until its trailing newline (closing early kills it). Everything runs
as the daemon's user, so apps never see root.
"""

from __future__ import annotations

import os
import subprocess
import time

APP_ENV = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    # The system's zone (/etc/localtime, Etc/UTC in the image), as on OSWorld's desktop, where no TZ is
    # set: the image's TZ=UTC would hide a zone changed with timedatectl from the apps and `date`.
    "TZ": ":/etc/localtime",
    "SAL_USE_VCLPLUGIN": "gtk3",
    "GTK_OVERLAY_SCROLLING": "0",
    "NO_AT_BRIDGE": "0",
}
#: Where OSWorld's task commands find the session bus (``DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus``).
UPSTREAM_BUS_DIR = "/run/user/1000"


class Session:
    """One X display with its bus and window manager; ``env`` is what apps run with."""

    def __init__(self, width: int, height: int, timeout: float = 20.0):
        self.width, self.height = width, height
        self.procs: list[subprocess.Popen[bytes]] = []
        home = os.environ.get("HOME", "/home/user")
        runtime = f"/tmp/runtime-{os.getuid()}"
        os.makedirs(runtime, mode=0o700, exist_ok=True)
        self.env = {**os.environ, **APP_ENV, "HOME": home, "XDG_RUNTIME_DIR": runtime}
        self.display = self._xvfb(timeout)
        self.env["DISPLAY"] = self.display
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self._dbus(timeout)
        self._openbox(timeout)

    def _xvfb(self, timeout: float) -> str:
        read, write = os.pipe()
        screen = f"{self.width}x{self.height}x24"
        argv = ["Xvfb", "-displayfd", str(write), "-screen", "0", screen, "-nolisten", "tcp", "-noreset"]
        self.procs.append(subprocess.Popen(argv, pass_fds=(write,), stderr=subprocess.DEVNULL, env=self.env))
        os.close(write)
        buf = b""
        deadline = time.monotonic() + timeout
        while not buf.endswith(b"\n") and time.monotonic() < deadline:
            chunk = os.read(read, 64)
            if not chunk:
                break
            buf += chunk
        os.close(read)
        if not buf.strip():
            raise RuntimeError("Xvfb did not report a display")
        return f":{buf.decode().strip()}"

    def _dbus(self, timeout: float) -> str:
        """The session bus, at ``unix:path=/run/user/1000/bus`` when that folder is ours (upstream's commands
        export that address: its user is uid 1000, ours 1001, so it is only a path here)."""
        argv = ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"]
        if os.path.isdir(UPSTREAM_BUS_DIR) and os.access(UPSTREAM_BUS_DIR, os.W_OK | os.X_OK):
            argv.append(f"--address=unix:path={UPSTREAM_BUS_DIR}/bus")
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
        )
        self.procs.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().strip()
        if not line:
            raise RuntimeError("dbus-daemon did not report an address")
        return line

    def _openbox(self, timeout: float) -> None:
        """Openbox with its default configuration plus Ctrl+Alt+T for a terminal, as on OSWorld's Ubuntu."""
        with open("/etc/xdg/openbox/rc.xml", encoding="utf-8") as fh:
            rc = fh.read()
        terminal = '<keybind key="C-A-t"><action name="Execute"><command>gnome-terminal</command></action></keybind>'
        rc = rc.replace("<keyboard>", "<keyboard>" + terminal, 1)
        config = os.path.join(self.env["XDG_RUNTIME_DIR"], "openbox-rc.xml")
        with open(config, "w", encoding="utf-8") as fh:
            fh.write(rc)
        argv = ["openbox", "--config-file", config]
        self.procs.append(subprocess.Popen(argv, env=self.env, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            probe = subprocess.run(["wmctrl", "-m"], env=self.env, capture_output=True)
            if probe.returncode == 0:
                return
            time.sleep(0.02)
        raise RuntimeError("openbox did not start")

    def core_pids(self) -> set[int]:
        """The session's own processes: a reset of the apps keeps these."""
        return {p.pid for p in self.procs if p.poll() is None}
