"""Why a build failed, said plainly: the step that failed, and what this machine could not reach.

A Dockerfile's ``RUN curl ... | sh`` passes when the download fails (the pipe
hides it) and a later step fails far from the cause; a pinned package the
mirror lacks looks like any other failure. Reading the whole log for the
hosts that could not be reached and the packages that were not found turns
that into "needs network: astral.sh", an environment error rather than a
mystery, and names the step where each problem showed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

#: What tools print when a host cannot be resolved, reached or verified; group 1 is the host.
_UNREACHABLE = [
    re.compile(p)
    for p in (
        r"Could not resolve host:? '?([A-Za-z0-9.-]+\.[A-Za-z]{2,})",  # curl, git
        r"Temporary failure resolving '([A-Za-z0-9.-]+)'",  # apt
        r"Could not connect to ([A-Za-z0-9.-]+\.[A-Za-z]{2,})",  # apt
        r"Failed to fetch https?://([A-Za-z0-9.-]+)",  # apt
        r"unable to resolve host address '([A-Za-z0-9.-]+)'",  # wget
        r"Could not fetch URL https?://([A-Za-z0-9.-]+)",  # pip
        r"ConnectionPool\(host='([A-Za-z0-9.-]+)'",  # pip, requests
        r"getaddrinfo (?:ENOTFOUND|EAI_AGAIN) ([A-Za-z0-9.-]+)",  # npm, node
        r"dial tcp: lookup ([A-Za-z0-9.-]+)",  # go
        r"Failed to connect to ([A-Za-z0-9.-]+\.[A-Za-z]{2,}) port",  # curl
        r"failed to resolve address for ([A-Za-z0-9.-]+\.[A-Za-z]{2,})",  # cargo (libgit2)
    )
]
#: What package managers print for a package or version the mirror lacks; the groups name it.
_NOT_FOUND = [
    re.compile(p)
    for p in (
        r"No matching distribution found for ([^\s]+)",  # pip
        r"E: Unable to locate package ([^\s]+)",  # apt
        r"E: Version '([^']+)' for '([^']+)' was not found",  # apt
        r"npm (?:ERR!|error) notarget No matching version found for ([^\s]+)",  # npm
    )
]
_STEP = re.compile(r"^Step (\d+/\d+) : (.*)$")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def plain(log: str) -> str:
    """The log without the engine's terminal colours."""
    return _COLOUR.sub("", log)


@dataclass
class BuildDiagnosis:
    """The failing step, and the unreachable hosts and missing packages with the step that showed each."""

    failed_step: str = ""
    hosts: dict[str, str] = field(default_factory=dict)
    packages: dict[str, str] = field(default_factory=dict)

    @property
    def environmental(self) -> bool:
        """The build failed for want of something this machine lacks, not for a mistake in the task."""
        return bool(self.hosts or self.packages)

    def sentence(self, what: object, log_path: Path | None) -> str:
        parts = []
        if self.hosts:
            parts.append(f"needs network: {', '.join(self.hosts)}")
        if self.packages:
            parts.append(f"the package mirror lacks {', '.join(self.packages)}")
        head = "; ".join(parts) + ". " if parts else ""
        text = f"{head}{'B' if head else 'b'}uilding {what} failed" + (
            f" at {self.failed_step}" if self.failed_step else ""
        )
        shown = {**self.hosts, **self.packages}
        earlier = sorted({step for step in shown.values() if step and step != self.failed_step})
        if earlier:
            text += f" (what was missing showed first at {', '.join(earlier)})"
        return text + (f"; the whole log: {log_path}" if log_path else "")


def diagnose(log: str) -> BuildDiagnosis:
    diagnosis = BuildDiagnosis()
    step = ""
    for line in log.splitlines():
        header = _STEP.match(line.strip())
        if header:
            step = f"step {header.group(1)} ({header.group(2)[:120]})"
            continue
        for pattern in _UNREACHABLE:
            for match in pattern.finditer(line):
                diagnosis.hosts.setdefault(match.group(1).rstrip(".").lower(), step)
        for pattern in _NOT_FOUND:
            match = pattern.search(line)
            if match:
                name = "=".join(reversed(match.groups())) if len(match.groups()) == 2 else match.group(1)
                diagnosis.packages.setdefault(name, step)
    diagnosis.failed_step = step
    return diagnosis
