"""Where actions execute: the Sandbox protocol, its backends, and the persistent shell.

``create_sandbox("local", spec)`` (the default, bubblewrap on this host) or
``create_sandbox("docker", spec)``; more backends plug in with
:func:`register_backend`. Backends are imported on first use, so the docker
SDK is only needed by those who ask for it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenvs.sandbox.base import Capabilities, ExecResult, Sandbox, SandboxSpec, Shell
from agentenvs.sandbox.local_transport import LocalTransport
from agentenvs.sandbox.shell import PersistentShell, Transport

SandboxFactory = Callable[..., Sandbox]


def _local(
    spec: SandboxSpec | None = None,
    *,
    environment: str | Path | None = None,
    image: str | None = None,
    **kwargs: Any,
) -> Sandbox:
    from agentenvs.sandbox.local import LocalSandbox

    if image is not None:
        from agentenvs.sandbox.layers import image_root

        return LocalSandbox(spec, image=image_root(image), **kwargs)
    if environment is None:
        return LocalSandbox(spec, **kwargs)
    from agentenvs.sandbox.templates import local_template

    return local_template(environment, spec).sandbox()


def _docker(spec: SandboxSpec | None = None, **kwargs: Any) -> Sandbox:
    from agentenvs.sandbox.docker import DockerSandbox

    return DockerSandbox(spec, **kwargs)


_BACKENDS: dict[str, SandboxFactory] = {"local": _local, "docker": _docker}


def register_backend(name: str, factory: SandboxFactory) -> None:
    """Make ``create_sandbox(name, ...)`` call ``factory(spec, **kwargs)``."""
    _BACKENDS[name] = factory


def backends() -> list[str]:
    return sorted(_BACKENDS)


def create_sandbox(backend: str, spec: SandboxSpec | None = None, **kwargs: Any) -> Sandbox:
    """A new sandbox from the named backend. ``local`` also takes ``image=`` (an image of the docker
    engine, run over as layers) or ``environment=`` (a task's ``environment/`` directory, applied
    once without docker into a cached template)."""
    try:
        factory = _BACKENDS[backend]
    except KeyError:
        raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(backends())}") from None
    return factory(spec, **kwargs)


__all__ = [
    "Capabilities",
    "ExecResult",
    "LocalTransport",
    "PersistentShell",
    "Sandbox",
    "SandboxSpec",
    "Shell",
    "Transport",
    "backends",
    "create_sandbox",
    "register_backend",
]
