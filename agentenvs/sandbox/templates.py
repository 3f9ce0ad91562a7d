"""Build a task's environment once into a template root; each local sandbox starts as a copy.

The cache key is a hash of the environment directory (paths, modes, bytes),
the spec's workdir and env, the template format and the sandbox user's ids,
so editing a task rebuilds its template and nothing else does. Templates keep
the owner of their files (the sandbox user), so a copy needs no chown. Builds of the same
key in parallel processes wait on a file lock instead of racing.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import posixpath
import shutil
from dataclasses import dataclass
from pathlib import Path

from agentenvs.sandbox.base import SandboxSpec
from agentenvs.sandbox.dockerfile import Env, Workdir, apply_dockerfile, expand_vars, parse_dockerfile
from agentenvs.sandbox.local import LocalSandbox
from agentenvs.sandbox.local_storage import copy_tree
from agentenvs.sandbox.local_system import sandbox_ids

#: Bumped when what a template holds changes (2: files owned by the unprivileged sandbox user).
TEMPLATE_FORMAT = 2


def template_dir() -> Path:
    return Path(os.environ.get("AGENTENVS_TEMPLATE_DIR", "/tmp/agentenvs-templates"))


@dataclass(frozen=True)
class LocalTemplate:
    """A built environment: the root to copy, the spec to run it with, and the Dockerfile's ENV."""

    root: Path
    spec: SandboxSpec
    env: dict[str, str]

    def sandbox(self) -> LocalSandbox:
        """A new sandbox starting from this template (a ``cp -a`` of the root)."""
        return LocalSandbox(self.spec, template=self.root, env=self.env)


def _fingerprint(env_dir: Path, spec: SandboxSpec) -> str:
    key = [TEMPLATE_FORMAT, sandbox_ids(), spec.workdir, sorted(spec.env.items())]
    digest = hashlib.sha256(json.dumps(key).encode())
    for here, dirs, files in os.walk(env_dir):
        dirs.sort()
        for name in sorted(files):
            path = Path(here) / name
            digest.update(f"{path.relative_to(env_dir)}\0{path.lstat().st_mode}\0".encode())
            digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return digest.hexdigest()[:20]


def _final_workdir(env_dir: Path, start: str) -> str:
    """The last WORKDIR (what a container from this Dockerfile would start in)."""
    workdir, env = start, {}
    for ins in parse_dockerfile(env_dir / "Dockerfile"):
        if isinstance(ins, Env):
            env.update((key, expand_vars(value, env)) for key, value in ins.pairs)
        elif isinstance(ins, Workdir):
            workdir = posixpath.normpath(posixpath.join(workdir, expand_vars(ins.path, env)))
    return workdir


def local_template(env_dir: str | Path, spec: SandboxSpec | None = None, *, timeout: float = 600.0) -> LocalTemplate:
    """The cached template for ``env_dir`` (a Harbor ``environment/``), built if missing.

    With a Dockerfile, it is applied (see :mod:`agentenvs.sandbox.dockerfile`);
    without one, the directory's files are copied into the workdir.
    """
    env_dir = Path(env_dir).resolve()
    spec = spec or SandboxSpec()
    if not env_dir.is_dir():
        raise FileNotFoundError(f"no environment directory at {env_dir}")
    has_dockerfile = (env_dir / "Dockerfile").is_file()
    if has_dockerfile:
        spec = dataclasses.replace(spec, workdir=_final_workdir(env_dir, spec.workdir))
    cache = template_dir()
    cache.mkdir(parents=True, exist_ok=True)
    key = _fingerprint(env_dir, spec)
    home = cache / key
    with open(cache / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        meta_file = home / "meta.json"
        if not meta_file.is_file():
            _build(env_dir, spec, home, has_dockerfile, timeout)
        env = json.loads(meta_file.read_text())["env"]
    return LocalTemplate(root=home / "root", spec=spec, env=env)


def _build(env_dir: Path, spec: SandboxSpec, home: Path, has_dockerfile: bool, timeout: float) -> None:
    staging = home.with_name(f"{home.name}.build-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    env: dict[str, str] = {}
    with LocalSandbox(spec) as sandbox:
        if has_dockerfile:
            env = apply_dockerfile(sandbox, env_dir, timeout=timeout).env
        else:
            sandbox.put(env_dir, spec.workdir)
        sandbox.kill_all()  # nothing the build started may change the files while they are copied
        staging.mkdir(parents=True)
        copy_tree(sandbox.root, staging / "root")
    (staging / "meta.json").write_text(json.dumps({"env": env, "workdir": spec.workdir}))
    shutil.rmtree(home, ignore_errors=True)
    staging.rename(home)
