"""``agentenvs gui import-osworld``: OSWorld's ``evaluation_examples`` tree into our task directories.

Each ``examples/<domain>/<uuid>.json`` becomes ``OUT/osworld-<domain>-<uuid>/``
with the JSON kept verbatim (``task.json``), a ``task.toml`` that points at
it, the instruction, and the assets its URLs need, stored under their URL's
path so that a name reused upstream cannot pick the wrong file. A task that
needs what we lack is not written; ``scan`` says why, and ``coverage`` sums
it up: imported, lacking only assets (which URLs), needing the network at
run time (naming the hosts, or ``apt``), or stopped by an unsupported
getter, metric, config type or app. A task that needs the network is
counted there even when it also needs something we lack, listed after its
hosts ("also ...").
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentenvs.envs.gui import chrome
from agentenvs.envs.gui.assets import AssetIndex
from agentenvs.envs.gui.osworld_task import ASSET_GETTERS, listed, problems

Status = Literal["imported", "assets", "network", "unsupported"]
#: Apps the desktop image does not ship (``related_apps`` as upstream spells them).
MISSING_APPS = {"gimp", "vlc", "vs_code", "vscode", "thunderbird", "nautilus"}
#: Steps and getters that reach live websites or accounts.
NETWORK = {"googledrive", "login", "proxy", *chrome.SITE_GETTERS}


@dataclass
class Scan:
    """What importing one task JSON found."""

    domain: str
    uuid: str
    status: Status
    reasons: list[str] = field(default_factory=list)

    @property
    def task_id(self) -> str:
        return f"osworld-{self.domain}-{self.uuid}"


def examples(src: Path) -> list[tuple[str, Path]]:
    """(domain, file) for every task JSON: ``SRC/examples/<domain>/*.json`` or ``SRC/<domain>/*.json``."""
    root = src / "examples" if (src / "examples").is_dir() else src
    return [(d.name, f) for d in sorted(root.iterdir()) if d.is_dir() for f in sorted(d.glob("*.json"))]


def classify(domain: str, data: dict[str, Any], assets: AssetIndex) -> Scan:
    uuid = str(data.get("id") or "")
    found = problems(data, assets)
    steps = [*data.get("config", []), *data.get("evaluator", {}).get("postconfig", [])]
    types = {s.get("type") for s in steps}
    for key in ("result", "expected"):
        types |= {g.get("type") for g in listed(data.get("evaluator", {}).get(key)) if isinstance(g, dict)}
    network = sorted({n for step in steps for n in chrome.network_needs(step)})
    network += sorted(str(t) for t in types if t in NETWORK)
    network += ["proxy: true"] if data.get("proxy") else []
    apps = sorted({str(a).lower() for a in data.get("related_apps", [])} & MISSING_APPS)
    hard = [r for r in found if not r.startswith("asset")] + [f"app {a!r}" for a in apps]
    hard = [r for r in hard if not any(repr(n) in r for n in NETWORK)]
    if network:
        return Scan(domain, uuid, "network", [f"network: {n}" for n in network] + [f"also {r}" for r in hard])
    if hard:
        return Scan(domain, uuid, "unsupported", hard)
    if found:
        return Scan(domain, uuid, "assets", found)
    return Scan(domain, uuid, "imported")


def _urls(data: dict[str, Any]) -> list[str]:
    urls = []
    for step in [*data.get("config", []), *data.get("evaluator", {}).get("postconfig", [])]:
        if step.get("type") == "download":
            urls += [f["url"] for f in step.get("parameters", {}).get("files", [])]
    for key in ("result", "expected"):
        for getter in listed(data.get("evaluator", {}).get(key)):
            if isinstance(getter, dict) and getter.get("type") in ASSET_GETTERS:
                urls += listed(getter["path"])
    return urls


def write_task(scan: Scan, source: Path, data: dict[str, Any], assets: AssetIndex, out: Path) -> Path:
    """The task directory: the JSON verbatim, its toml and instruction, its assets under their URL paths."""
    target = out / scan.task_id
    (target / "assets").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target / "task.json")
    (target / "instruction.md").write_text(str(data.get("instruction", "")).strip() + "\n", encoding="utf-8")
    toml = (
        f'id = "{scan.task_id}"\nfamily = "gui"\ntags = ["osworld", "{scan.domain}"]\n\n[gui]\nosworld = "task.json"\n'
    )
    (target / "task.toml").write_text(toml, encoding="utf-8")
    for url in _urls(data):
        found = assets.resolve(url)
        assert found is not None  # classify checked it
        dest = (target / "assets" / AssetIndex.mirror_path(url)).resolve()
        if not dest.is_relative_to((target / "assets").resolve()):
            raise ValueError(f"the URL {url!r} leaves the assets directory")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found, dest)
    return target


def import_tree(src: Path, out: Path | None, assets_dir: Path | None) -> list[Scan]:
    """Scan every task under ``src``; with ``out``, write those that import."""
    assets = AssetIndex(assets_dir)
    scans = []
    for domain, path in examples(src):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            scans.append(Scan(domain, path.stem, "unsupported", [f"unreadable JSON: {exc}"]))
            continue
        scan = classify(domain, data, assets)
        scans.append(scan)
        if out is not None and scan.status == "imported":
            write_task(scan, path, data, assets, out)
    return scans


def coverage(scans: list[Scan]) -> str:
    """The ``--check`` report: counts by status, per domain, and the reasons, the asset URLs last."""
    statuses: tuple[Status, ...] = ("imported", "assets", "network", "unsupported")
    by_status = Counter(s.status for s in scans)
    lines = [f"{len(scans)} tasks: " + ", ".join(f"{by_status[k]} {k}" for k in statuses)]
    lines.append(f"{'domain':<22}" + "".join(f"{k:>12}" for k in statuses))
    for domain in sorted({s.domain for s in scans}):
        counts = Counter(s.status for s in scans if s.domain == domain)
        lines.append(f"{domain:<22}" + "".join(f"{counts[k]:>12}" for k in statuses))
    for status, title in (
        ("unsupported", "stopped by"),
        ("network", "need the network"),
        ("assets", "lack only assets"),
    ):
        reasons = Counter(r for s in scans if s.status == status for r in s.reasons)
        if reasons:
            lines.append(f"{title} (tasks per reason):")
            lines += [f"  {n:4d}  {reason}" for reason, n in reasons.most_common()]
    return "\n".join(lines)
