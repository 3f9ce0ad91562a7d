"""The substitution table: which local image stands in for a base image that cannot be pulled.

Harbor tasks say ``FROM python:3.12-slim`` or ``FROM golang:1.22``; a machine
without a registry has none of them. Rather than fail, a documented and
user-editable table (``substitutes.toml`` beside this module, then the user's
own file, tried first) names a recipe on our Debian base. The recipe is only
text here; :mod:`agentenvs.sandbox.images` builds it and says in the task's
warnings what stood in for what.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import shlex
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentenvs.core.errors import TaskFormatError

DEFAULT_TABLE = Path(__file__).with_name("substitutes.toml")
USER_TABLE_ENV = "AGENTENVS_SUBSTITUTES"
_PACKAGE = "^[a-z0-9][a-z0-9+.-]*$"


class Substitute(BaseModel):
    """One row: images matching ``match`` are replaced by ``base`` plus Debian ``packages`` and ``run`` lines."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: str = Field(min_length=1)
    base: str = Field(min_length=1)
    packages: tuple[str, ...] = ()
    run: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    note: str = ""

    @field_validator("packages")
    @classmethod
    def _package_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [p for p in value if not re.match(_PACKAGE, p)]
        if bad:
            raise ValueError(f"not Debian package names: {', '.join(bad)}")
        return value

    def fits(self, image: str) -> bool:
        return fnmatch.fnmatchcase(normalize(image), self.match)

    def dockerfile(self) -> str:
        """The recipe as a Dockerfile (its build has the host's package access, like a task's)."""
        lines = [f"FROM {self.base}"]
        if self.packages:
            lines.append(
                "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
                + " ".join(self.packages)
                + " && rm -rf /var/lib/apt/lists/*"
            )
        lines += [f"RUN {line}" for line in self.run]
        if self.env:
            lines.append("ENV " + " ".join(f"{key}={shlex.quote(value)}" for key, value in self.env.items()))
        return "\n".join(lines) + "\n"

    def recipe_hash(self) -> str:
        return hashlib.sha256(self.dockerfile().encode()).hexdigest()

    def describe(self) -> str:
        added = f" + {' '.join(self.packages)}" if self.packages else ""
        return f"{self.base}{added}" + (f" ({self.note})" if self.note else "")


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")

    substitute: list[Substitute] = Field(default_factory=list)


def normalize(image: str) -> str:
    """``docker.io/library/python:3.12`` and ``python`` as the table matches them: ``python:3.12``, ``python:latest``.

    Docker's official images under their mirrors' names (``public.ecr.aws/docker/library/``,
    which Terminal-Bench 2 tasks use to avoid Docker Hub's rate limit, and ``mirror.gcr.io/library/``)
    are the same images, so they match as their short names do.
    """
    for prefix in (
        "docker.io/library/",
        "index.docker.io/library/",
        "registry-1.docker.io/library/",
        "public.ecr.aws/docker/library/",
        "mirror.gcr.io/library/",
        "library/",
    ):
        if image.startswith(prefix):
            image = image[len(prefix) :]
            break
    image = image.split("@", 1)[0]
    last = image.rsplit("/", 1)[-1]
    return image if ":" in last else f"{image}:latest"


def user_table() -> Path:
    """The user's own table: ``$AGENTENVS_SUBSTITUTES``, else ``~/.config/agentenvs/substitutes.toml``."""
    named = os.environ.get(USER_TABLE_ENV)
    if named:
        return Path(named).expanduser()
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "agentenvs" / "substitutes.toml"


def read_table(path: Path) -> list[Substitute]:
    """One table file; a malformed one is an error naming the file and the row, never skipped."""
    try:
        data = tomllib.loads(path.read_text())
        return _Table.model_validate(data).substitute
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(str(path), f"not valid TOML: {exc}") from None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise TaskFormatError(str(path), problems) from None


def table() -> list[Substitute]:
    """The user's rows (if their file exists), then the shipped ones: the first that fits wins."""
    mine = user_table()
    return [*(read_table(mine) if mine.is_file() else []), *read_table(DEFAULT_TABLE)]


def find_substitute(image: str, rows: list[Substitute] | None = None) -> Substitute | None:
    return next((row for row in (table() if rows is None else rows) if row.fits(image)), None)
