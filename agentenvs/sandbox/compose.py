"""A Harbor task's ``environment/docker-compose.yaml``, read into a plan the docker backend can start.

Harbor layers the task's compose file over its own: a service ``main`` built
from ``environment/`` (the agent's container) plus whatever services the
task adds. We read the same file, interpolate the same variables
(``MAIN_IMAGE_NAME``, ``CONTEXT_DIR``, ``CPUS``, ``MEMORY`` and the task's
``[environment] env``), and keep the subset real tasks use. Any other key is
refused, naming it, rather than silently run differently (``ports`` would
publish to the host, ``privileged`` would hand out the host).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentenvs.core.errors import TaskFormatError

#: The one name Harbor reads (a ``.yml`` or ``compose.yaml`` beside a Dockerfile is ignored there, and here).
COMPOSE_FILES = ("docker-compose.yaml",)
MAIN = "main"

#: Keys run as compose runs them.
SUPPORTED = {"build", "image", "environment", "env_file", "command", "entrypoint", "depends_on", "healthcheck",
             "working_dir", "volumes", "user"}  # fmt: skip
#: Keys with no effect here: every service is on the one private network and reachable on every port,
#: limits are the task's, names and restarts are ours.
IGNORED = {"expose", "networks", "links", "container_name", "hostname", "restart", "deploy", "ulimits", "labels",
           "init", "tty", "stdin_open", "pull_policy", "platform", "logging", "stop_grace_period", "stop_signal",
           "shm_size"}  # fmt: skip
TOP_LEVEL = {"services", "volumes", "networks", "version", "name"}
CONDITIONS = ("service_started", "service_healthy", "service_completed_successfully")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)")
_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class Volume(BaseModel):
    """A mount: a named volume of the episode (``kind="volume"``; anonymous ones get a name) or a
    read-only bind of a path inside ``environment/``."""

    model_config = ConfigDict(frozen=True)
    kind: str
    source: str
    target: str
    read_only: bool = False


class Healthcheck(BaseModel):
    """Docker's healthcheck, durations in seconds."""

    model_config = ConfigDict(frozen=True)
    test: list[str]
    interval: float = 30.0
    timeout: float = 30.0
    retries: int = 3
    start_period: float = 0.0

    def engine(self) -> dict[str, Any]:
        """The engine API's form (durations in nanoseconds)."""
        ns = 1_000_000_000
        return {
            "test": self.test,
            "interval": int(self.interval * ns),
            "timeout": int(self.timeout * ns),
            "retries": self.retries,
            "start_period": int(self.start_period * ns),
        }


class Service(BaseModel):
    """One service, its relative paths resolved against ``environment/``."""

    model_config = ConfigDict(frozen=True)
    name: str
    image: str = ""
    build_context: Path | None = None
    dockerfile: str = "Dockerfile"
    build_args: dict[str, str] = {}
    environment: dict[str, str] = {}
    command: list[str] | None = None
    entrypoint: list[str] | None = None
    depends_on: dict[str, str] = {}
    healthcheck: Healthcheck | None = None
    working_dir: str = ""
    user: str = ""
    volumes: list[Volume] = []


class ComposePlan(BaseModel):
    """The services of a compose task: ``main`` (the agent's) and the others, in start order."""

    model_config = ConfigDict(frozen=True)
    path: Path
    main: Service
    services: list[Service]
    volumes: list[str]


def compose_file(environment: Path | None) -> Path | None:
    """The task's compose file, if its ``environment/`` has one."""
    if environment is None:
        return None
    return next((environment / n for n in COMPOSE_FILES if (environment / n).is_file()), None)


def load_compose(path: Path, variables: dict[str, str]) -> ComposePlan:
    """Read, interpolate and check ``path``; a TaskFormatError names the first key we cannot run."""
    try:
        import yaml
    except ImportError:
        raise TaskFormatError(path, "compose tasks need PyYAML: pip install 'agentenvs[docker]'") from None
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise TaskFormatError(path, f"not readable as YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("services"), dict) or not doc["services"]:
        raise TaskFormatError(path, "a compose file needs a non-empty `services` mapping", "services")
    doc = _interpolate(doc, variables, path)
    for key in doc:
        if key not in TOP_LEVEL and not str(key).startswith("x-"):
            raise TaskFormatError(path, f"top-level key {key!r} is not supported", key)
    for section in ("volumes", "networks"):
        for name, spec in (doc.get(section) or {}).items():
            if isinstance(spec, dict) and spec.get("external"):
                raise TaskFormatError(path, f"external {section[:-1]} {name!r}: only the episode's own are supported",
                                      f"{section}.{name}.external")  # fmt: skip
    reader = _Reader(path, set((doc.get("volumes") or {}).keys()))
    services = {str(name): reader.service(str(name), spec or {}) for name, spec in doc["services"].items()}
    main = services.pop(MAIN, None) or Service(name=MAIN)
    for service in [main, *services.values()]:
        for dep in service.depends_on:
            if dep != MAIN and dep not in services:
                raise TaskFormatError(path, f"service {service.name!r} depends on unknown service {dep!r}",
                                      f"services.{service.name}.depends_on")  # fmt: skip
        if MAIN in service.depends_on:
            raise TaskFormatError(path, f"service {service.name!r} depends on main, which starts last here",
                                  f"services.{service.name}.depends_on")  # fmt: skip
        if service is not main and not service.image and service.build_context is None:
            raise TaskFormatError(
                path, f"service {service.name!r} needs `image` or `build`", f"services.{service.name}"
            )
    return ComposePlan(path=path, main=main, services=_start_order(path, services), volumes=reader.named)


def _start_order(path: Path, services: dict[str, Service]) -> list[Service]:
    ordered: list[Service] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if any(s.name == name for s in ordered):
            return
        if name in visiting:
            raise TaskFormatError(path, f"depends_on has a cycle through {name!r}", f"services.{name}.depends_on")
        visiting.add(name)
        for dep in services[name].depends_on:
            visit(dep)
        visiting.discard(name)
        ordered.append(services[name])

    for name in services:
        visit(name)
    return ordered


def _interpolate(value: Any, variables: dict[str, str], path: Path) -> Any:
    """Compose's ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?err}``, ``$VAR`` and ``$$``."""
    if isinstance(value, dict):
        return {k: _interpolate(v, variables, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, variables, path) for v in value]
    if not isinstance(value, str):
        return value

    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1) or match.group(4)
        op, arg = match.group(2), match.group(3) or ""
        current = variables.get(name)
        if op in (":-", "-"):
            return arg if current is None or (op == ":-" and not current) else current
        if op in (":?", "?") and (current is None or (op == ":?" and not current)):
            raise TaskFormatError(path, f"variable {name} is required: {arg or 'unset'}")
        return current or ""

    return _VAR.sub(sub, value)


class _Reader:
    """Turns one service's mapping into a ``Service``, refusing what we cannot run."""

    def __init__(self, path: Path, declared: set[str]):
        self.path = path
        self.environment = path.parent.resolve()
        self.declared = declared
        self.named: list[str] = sorted(str(v) for v in declared)

    def fail(self, service: str, key: str, why: str) -> TaskFormatError:
        return TaskFormatError(self.path, f"service {service!r}: `{key}` {why}", f"services.{service}.{key}")

    def service(self, name: str, spec: Any) -> Service:
        if not isinstance(spec, dict):
            raise TaskFormatError(self.path, f"service {name!r} must be a mapping", f"services.{name}")
        for key in spec:
            if key not in SUPPORTED and key not in IGNORED:
                raise self.fail(name, key, "is not supported (see docs/task-format.md, Differences from Harbor)")
        fields: dict[str, Any] = {"name": name, "image": str(spec.get("image") or "")}
        build = spec.get("build")
        if build is not None:
            build = {"context": build} if isinstance(build, str) else build
            if not isinstance(build, dict):
                raise self.fail(name, "build", "must be a path or a mapping")
            unknown = set(build) - {"context", "dockerfile", "args"}
            if unknown:
                raise self.fail(name, "build", f"key {sorted(unknown)[0]!r} is not supported")
            fields["build_context"] = self.inside(name, "build", str(build.get("context") or "."))
            fields["dockerfile"] = str(build.get("dockerfile") or "Dockerfile")
            fields["build_args"] = self.mapping(name, "build.args", build.get("args"))
        env = self.env_file(name, spec.get("env_file"))
        env.update(self.mapping(name, "environment", spec.get("environment")))
        fields["environment"] = env
        for key in ("command", "entrypoint"):
            if spec.get(key) is not None:
                fields[key] = self.argv(name, key, spec[key])
        fields["depends_on"] = self.depends_on(name, spec.get("depends_on"))
        if spec.get("healthcheck") is not None:
            fields["healthcheck"] = self.healthcheck(name, spec["healthcheck"])
        fields["working_dir"] = str(spec.get("working_dir") or "")
        fields["user"] = str(spec.get("user") or "")
        fields["volumes"] = [self.volume(name, v) for v in spec.get("volumes") or []]
        return Service(**fields)

    def inside(self, service: str, key: str, rel: str) -> Path:
        """A host path named by the task: it must lie inside ``environment/``."""
        resolved = (self.environment / Path(rel).expanduser()).resolve()
        if not resolved.is_relative_to(self.environment):
            raise self.fail(service, key, f"names {rel!r}, outside the task's environment/ directory")
        return resolved

    def mapping(self, service: str, key: str, value: Any) -> dict[str, str]:
        if value is None:
            return {}
        if isinstance(value, list):
            pairs = [str(item).partition("=") for item in value]
            return {k: v for k, sep, v in pairs if sep}
        if isinstance(value, dict):
            return {str(k): "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
                    for k, v in value.items()}  # fmt: skip
        raise self.fail(service, key, "must be a list of KEY=VALUE or a mapping")

    def env_file(self, service: str, value: Any) -> dict[str, str]:
        env: dict[str, str] = {}
        for item in [value] if isinstance(value, (str, dict)) else value or []:
            rel = item.get("path", "") if isinstance(item, dict) else str(item)
            file = self.inside(service, "env_file", rel)
            if not file.is_file():
                raise self.fail(service, "env_file", f"names {rel!r}, which is not a file")
            for line in file.read_text().splitlines():
                key, sep, val = line.strip().partition("=")
                if sep and not key.startswith("#"):
                    env[key.strip()] = val.strip().strip("'\"")
        return env

    def argv(self, service: str, key: str, value: Any) -> list[str]:
        if isinstance(value, str):
            return ["/bin/sh", "-c", value] if key == "command" else [value]
        if isinstance(value, list):
            return [str(v) for v in value]
        raise self.fail(service, key, "must be a string or a list")

    def depends_on(self, service: str, value: Any) -> dict[str, str]:
        if value is None:
            return {}
        if isinstance(value, list):
            return {str(v): "service_started" for v in value}
        if not isinstance(value, dict):
            raise self.fail(service, "depends_on", "must be a list or a mapping")
        deps: dict[str, str] = {}
        for dep, cond in value.items():
            condition = (
                (cond or {}).get("condition", "service_started") if isinstance(cond, dict) else "service_started"
            )
            if condition not in CONDITIONS:
                raise self.fail(service, "depends_on", f"condition {condition!r} is not one of {', '.join(CONDITIONS)}")
            deps[str(dep)] = condition
        return deps

    def healthcheck(self, service: str, value: Any) -> Healthcheck | None:
        if not isinstance(value, dict):
            raise self.fail(service, "healthcheck", "must be a mapping")
        if value.get("disable"):
            return Healthcheck(test=["NONE"])
        test = value.get("test")
        if isinstance(test, str):
            test = ["CMD-SHELL", test]
        if not isinstance(test, list) or not test or test[0] not in ("CMD", "CMD-SHELL", "NONE"):
            raise self.fail(service, "healthcheck", "needs a `test`: a string, or a list starting CMD or CMD-SHELL")
        fields: dict[str, Any] = {"test": [str(t) for t in test]}
        for key in ("interval", "timeout", "start_period"):
            if value.get(key) is not None:
                fields[key] = self.duration(service, key, value[key])
        if value.get("retries") is not None:
            fields["retries"] = int(value["retries"])
        return Healthcheck(**fields)

    def duration(self, service: str, key: str, value: Any) -> float:
        if isinstance(value, (int, float)):
            return float(value)
        text = str(value).strip()
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise self.fail(service, "healthcheck", f"{key} {value!r} is not a duration such as 5s or 1m30s")
        return sum(float(n) * _UNITS[u] for n, u in parts)

    def volume(self, service: str, value: Any) -> Volume:
        if isinstance(value, dict):
            kind = str(value.get("type") or "volume")
            source, target = str(value.get("source") or ""), str(value.get("target") or "")
            read_only = bool(value.get("read_only"))
        else:
            parts = str(value).split(":")
            if len(parts) == 1:
                source, target, mode = "", parts[0], ""
            else:
                source, target, mode = parts[0], parts[1], parts[2] if len(parts) > 2 else ""
            kind = "bind" if source.startswith((".", "/", "~")) else "volume"
            read_only = "ro" in mode.split(",")
        if not target.startswith("/"):
            raise self.fail(service, "volumes", f"target {target!r} must be an absolute path")
        if kind == "bind":
            inside = self.inside(service, "volumes", source)
            return Volume(kind="bind", source=str(inside), target=target, read_only=True)
        if kind != "volume":
            raise self.fail(service, "volumes", f"type {kind!r} is not supported (named or anonymous volumes, binds)")
        if source and source not in self.declared:
            raise self.fail(service, "volumes", f"names volume {source!r}, not declared under top-level `volumes`")
        if not source:
            source = f"anon-{service}-{len([n for n in self.named if n.startswith(f'anon-{service}-')])}"
            self.named.append(source)
        return Volume(kind="volume", source=source, target=target, read_only=read_only)
