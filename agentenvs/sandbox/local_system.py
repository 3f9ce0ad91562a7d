"""What every local sandbox on this host shares: the unprivileged user its root is, and its own /etc.

**The user.** A sandbox's root is the host user ``agentenvs-sandbox`` (a
system user with no home and no shell, made by ``scripts/install-system.sh``
or here on first use): bubblewrap runs as that user and maps it to uid 0 in a
new user namespace. So an agent is root in its sandbox but, to the host
kernel, an unprivileged user: it cannot read root's files, change sysctls,
or signal host processes. One uid is shared by every sandbox: they are kept
apart by namespaces (each sees only its own processes, mounts, IPC and, with
the network off, sockets), and templates and snapshots copy with ``cp -a``
keeping that owner, so no chown pass is needed per sandbox.

**/etc.** The host's /etc holds secrets (shadow, sudoers, ssh host keys, apt,
pip and docker credentials). A sandbox gets its own: generated passwd, group,
hosts, hostname and nsswitch.conf, plus an allowlist of harmless host files
the tools need (the loader cache, alternatives, CA certificates, Python's
site config, terminfo). It is built once per process into a directory named
by its content in :func:`system_dir` (next to ``SANDBOX_PARENT``, out of
reach of the sweep of leftovers) and bound read-only. The checkers
(``evaluators/``) are staged there the same way, so every path bubblewrap
binds is one the sandbox user can reach whatever the install path.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pwd
import shutil
import stat
import subprocess
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from agentenvs.core.errors import SandboxError
from agentenvs.sandbox.base import HOSTNAME

SANDBOX_USER = "agentenvs-sandbox"

#: Generated files: a root and a nobody, nothing else of the host's accounts.
GENERATED = {
    "passwd": "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    "group": "root:x:0:\nnogroup:x:65534:\n",
    "hosts": f"127.0.0.1\tlocalhost\n127.0.1.1\t{HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n",
    "hostname": f"{HOSTNAME}\n",
    "nsswitch.conf": "".join(
        f"{db}:\t{src}\n"
        for db, src in (
            ("passwd", "files"),
            ("group", "files"),
            ("shadow", "files"),
            ("hosts", "files dns"),
            ("networks", "files"),
            ("protocols", "files"),
            ("services", "files"),
            ("ethers", "files"),
            ("rpc", "files"),
        )
    ),
}

#: Host files and directories copied as they are (symlinks stay symlinks). Nothing here holds a secret.
ALLOWED = (
    "alternatives",
    "bash.bashrc",
    "chromium",
    "chromium.d",
    "debian_version",
    "ethertypes",
    "fonts",
    "gai.conf",
    "host.conf",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "magic",
    "magic.mime",
    "mime.types",
    "networks",
    "os-release",
    "profile",
    "protocols",
    "python3",
    "resolv.conf",
    "rpc",
    "services",
    "shells",
    "ssl/certs",
    "ssl/openssl.cnf",
    "terminfo",
    "timezone",
)
#: Directories matched by prefix (``python3.11``, ...).
ALLOWED_PREFIXES = ("python3.",)

_lock = threading.Lock()
_cache: dict[str, Path] = {}
_ids: tuple[int, int] | None = None


def sandbox_ids() -> tuple[int, int]:
    """The host uid and gid a sandbox's root is; the user is created on first use (we are root)."""
    global _ids
    with _lock:
        if _ids is None:
            _ids = _ensure_user()
        return _ids


def _ensure_user() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam(SANDBOX_USER)
    except KeyError:
        useradd = shutil.which("useradd", path="/usr/sbin:/usr/bin:/sbin:/bin")
        if useradd is None:
            raise SandboxError(f"no user {SANDBOX_USER!r} and no useradd to make it: run scripts/install-system.sh")
        system_dir().mkdir(parents=True, exist_ok=True)
        with open(system_dir() / "user.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be making it right now
            try:
                entry = pwd.getpwnam(SANDBOX_USER)
            except KeyError:
                done = subprocess.run(
                    [useradd, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent"]
                    + ["--shell", "/usr/sbin/nologin", SANDBOX_USER],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                if done.returncode not in (0, 9):  # 9: made by someone else meanwhile
                    raise SandboxError(f"could not create the sandbox user {SANDBOX_USER!r}: {done.stderr.strip()}")
                entry = pwd.getpwnam(SANDBOX_USER)
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise SandboxError(f"the sandbox user {SANDBOX_USER!r} must not be root (uid {entry.pw_uid})")
    return entry.pw_uid, entry.pw_gid


def system_dir() -> Path:
    """``<SANDBOX_PARENT>.system``: shared by every sandbox and process, root-owned, never swept."""
    from agentenvs.sandbox.local_resources import SANDBOX_PARENT

    return SANDBOX_PARENT.with_name(SANDBOX_PARENT.name + ".system")


def sandbox_etc() -> Path:
    """The read-only /etc every sandbox of this process binds (built on first use)."""
    return _staged("etc", _etc_files)


def staged_evaluators(source: Path) -> Path:
    """A root-owned, world-readable copy of the checkers the sandbox user can bind wherever ``source`` lives."""
    return _staged("evaluators", lambda dest: _copy_evaluators(source, dest)) / "evaluators"


def _staged(kind: str, fill: Callable[[Path], None]) -> Path:
    """Build ``kind`` into a temporary directory, then keep it under a name made of its content."""
    with _lock:
        cached = _cache.get(kind)
        if cached is not None and cached.is_dir():  # rebuilt if someone cleaned /tmp meanwhile
            return cached
        parent = system_dir()
        parent.mkdir(parents=True, exist_ok=True)
        st = parent.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
            raise SandboxError(f"{parent} must be a directory owned by root and writable by root only")
        parent.chmod(0o755)
        staging = parent / f".{kind}-{uuid.uuid4().hex}"
        staging.mkdir(mode=0o755)
        try:
            fill(staging)
            final = parent / f"{kind}-{_digest(staging)}"
            try:
                staging.rename(final)
            except OSError:  # the same content is already there (this or another process)
                pass
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        _cache[kind] = final
        return final


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for here, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(here) / name
            st = path.lstat()
            h.update(f"{path.relative_to(root)}\0{st.st_mode:o}\0".encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(path).encode())
            elif stat.S_ISREG(st.st_mode):
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _etc_files(dest: Path) -> None:
    host = Path("/etc")
    names = [*ALLOWED, *(p.name for p in host.iterdir() if p.name.startswith(ALLOWED_PREFIXES))]
    for name in names:
        source = host / name
        if not source.exists() and not source.is_symlink():
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_dir():
            shutil.copytree(source, target, symlinks=True, ignore=_unreadable)
        elif source.is_file():
            shutil.copyfile(source, target)
    (dest / "mtab").symlink_to("/proc/self/mounts")
    for name, text in GENERATED.items():
        (dest / name).write_text(text)
    _make_world_readable(dest)


def _unreadable(directory: str, names: list[str]) -> set[str]:
    """Skip what is not readable by everyone on the host: a private key directory, say."""
    skipped = set()
    for name in names:
        st = os.lstat(os.path.join(directory, name))
        if not stat.S_ISLNK(st.st_mode) and not st.st_mode & stat.S_IROTH:
            skipped.add(name)
    return skipped


def _copy_evaluators(source: Path, dest: Path) -> None:
    """The checkers, compiled by the interpreter the sandboxes run (the host's ``/usr/bin/python3``):
    a checker process then starts in ~15 ms instead of compiling every module again (~100 ms).
    Hash-checked bytecode, so a stale ``.pyc`` is never used and the copy's name stays its content."""
    shutil.copytree(source, dest / "evaluators", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is not None:
        argv = [python, "-I", "-m", "compileall", "-q", "--invalidation-mode", "checked-hash", str(dest)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise SandboxError(f"compiling the checkers failed: {(done.stdout + done.stderr)[-400:]}")
    _make_world_readable(dest)


def _make_world_readable(root: Path) -> None:
    for here, dirs, files in os.walk(root):
        os.chmod(here, 0o755)
        for name in files:
            path = os.path.join(here, name)
            if not os.path.islink(path):
                os.chmod(path, 0o644 | (0o111 if os.stat(path).st_mode & 0o100 else 0))
