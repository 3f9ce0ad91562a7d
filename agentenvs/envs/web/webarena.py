"""Tasks written in WebArena's config format, run against our sites.

A config is WebArena's JSON (``intent``, ``sites``, ``start_url`` with
``__SHOPPING__``-style placeholders, ``require_login``, ``eval`` with
``eval_types`` ``string_match`` / ``url_match`` / ``program_html``) plus one
key of ours, ``agentenvs``: the persona to sign in and the oracle and wrong
plans (WebArena ships no reference solution). Our shop, forum and tracker
play WebArena's shopping, reddit and gitlab. What the format needs that we
do not support (the LLM judge ``fuzzy_match``, ``func:`` helpers, other
sites, ``prep_actions``) fails at load with a ``TaskFormatError`` naming it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentenvs.core.errors import TaskFormatError

SITES = {"shopping": "shop", "reddit": "forum", "gitlab": "tracker"}
PLACEHOLDERS = {"__SHOPPING__": "shop:", "__REDDIT__": "forum:", "__GITLAB__": "tracker:"}
EVAL_TYPES = ("string_match", "url_match", "program_html")


def _ref(url: str, source: str, field: str) -> str:
    """``__SHOPPING__/cart`` -> ``shop:/cart``."""
    for placeholder, site in PLACEHOLDERS.items():
        if url.startswith(placeholder):
            return site + (url[len(placeholder) :] or "/")
    raise TaskFormatError(source, f"{url!r} names no site we host (use {', '.join(PLACEHOLDERS)})", field)


def _unsupported(value: Any, source: str, field: str) -> None:
    if isinstance(value, str) and value.startswith("func:"):
        raise TaskFormatError(source, f"func: helpers ({value[:60]!r}) run WebArena's Python; not supported", field)


def load_config(path: Path) -> dict[str, Any]:
    """A WebArena config as a template spec (the shape ``templates_shop`` builders return)."""
    source = str(path)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TaskFormatError(source, f"not a readable JSON config: {exc}") from None
    sites = config.get("sites") or []
    if len(sites) != 1 or sites[0] not in SITES:
        raise TaskFormatError(source, f"sites {sites!r}: one of {', '.join(SITES)} is supported", "sites")
    ours = config.get("agentenvs") or {}
    if not ours.get("oracle") or not ours.get("wrong"):
        raise TaskFormatError(source, "every task needs agentenvs.oracle and agentenvs.wrong plans", "agentenvs")
    evaluation = config.get("eval") or {}
    types = evaluation.get("eval_types") or []
    if not types or any(t not in EVAL_TYPES for t in types):
        raise TaskFormatError(source, f"eval_types {types!r}: supported are {', '.join(EVAL_TYPES)}", "eval.eval_types")
    site = SITES[sites[0]]
    checks: list[dict[str, Any]] = []
    if "string_match" in types:
        answers = evaluation.get("reference_answers") or {}
        if "fuzzy_match" in answers:
            raise TaskFormatError(
                source, "fuzzy_match needs an LLM judge; we grade without one", "eval.reference_answers"
            )
        known = {k: answers[k] for k in ("exact_match", "must_include") if k in answers}
        if not known or set(answers) - set(known):
            raise TaskFormatError(
                source, "reference_answers takes exact_match and must_include", "eval.reference_answers"
            )
        checks.append({"check": "web.string_match", "args": known})
    if "url_match" in types:
        if evaluation.get("url_note", "GOLD in PRED") != "GOLD in PRED":
            raise TaskFormatError(source, "url_note: only 'GOLD in PRED' is defined", "eval.url_note")
        refs = [_ref(u.strip(), source, "eval.reference_url") for u in evaluation["reference_url"].split("|OR|")]
        checks.append(
            {"check": "web.url_match", "args": {"site": site, "references": [r.split(":", 1)[1] for r in refs]}}
        )
    for k, target in enumerate(evaluation.get("program_html") or [] if "program_html" in types else []):
        field = f"eval.program_html[{k}]"
        _unsupported(target.get("url"), source, f"{field}.url")
        _unsupported(target.get("locator"), source, f"{field}.locator")
        if target.get("prep_actions"):
            raise TaskFormatError(source, "prep_actions are not supported", f"{field}.prep_actions")
        url = target["url"] if target["url"] == "last" else _ref(target["url"], source, f"{field}.url")
        contents = target.get("required_contents") or {}
        if not contents or set(contents) - {"exact_match", "must_include"}:
            raise TaskFormatError(source, "required_contents takes exact_match or must_include", f"{field}")
        checks.append(
            {"check": "web.program_html", "args": {"url": url, "locator": target.get("locator", ""), **contents}}
        )
    return {
        "instruction": config["intent"],
        "persona": ours.get("persona") if config.get("require_login") else None,
        "start": _ref(config["start_url"], source, "start_url"),
        "tags": ["webarena-format", *ours.get("tags", [])],
        "difficulty": ours.get("difficulty", "medium"),
        "site": site,
        "evaluator": [*checks, {"check": "web.infeasible", "args": {"expected": False}}],
        "oracle": ours["oracle"],
        "wrong": ours["wrong"],
    }
