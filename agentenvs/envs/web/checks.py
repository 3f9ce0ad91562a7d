"""The web family's checkers: site state through the control plane, the typed answer, the URL.

They run in the env process, outside the browser: the agent's page cannot
change what they read. ``web.sql`` asks a site's control plane (a read-only
connection to the episode's database); ``web.answer`` grades the last
message sent to the user by normalised exact match (no LLM judge); a number
answer must contain exactly one number, so a list of guesses never matches.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentenvs.core.actions import ParsedAction
from agentenvs.core.checks import CheckResult
from agentenvs.core.errors import InfraError
from agentenvs.core.task import CheckSpec
from agentenvs.envs.web.sites.process import SiteProcess

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
#: A whole answer that is one number: ``12``, ``$12.50``, ``1,200``, ``-3``.
ONLY_NUMBER = re.compile(rf"\$?\s*(?:{NUMBER.pattern})")


@dataclass
class Context:
    """What checkers may read: the sites' control planes, the answer, the final report, the page."""

    sites: dict[str, SiteProcess]
    answer: str | None = None
    infeasible: bool = False
    url: str = ""
    miniwob: dict[str, Any] = field(default_factory=dict)
    #: ``(url, js_locator) -> text`` read in a fresh tab after the agent is done (WebArena's program_html).
    page_text: Callable[[str, str], str] | None = None


def normalise(text: str) -> str:
    text = " ".join(text.strip().split()).casefold()
    return text.strip("\"'`").rstrip(".!").strip()


def numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in NUMBER.findall(text.replace("$", ""))]


def _compare(value: Any, op: str, expected: Any) -> bool:
    if isinstance(value, (int, float)) and isinstance(expected, (int, float)) and op == "==":
        return abs(value - expected) < 1e-6
    ops: dict[str, Callable[[Any, Any], bool]] = {
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
        ">=": lambda a, b: a is not None and a >= b,
        "<=": lambda a, b: a is not None and a <= b,
    }
    return ops[op](value, expected)


def sql(ctx: Context, site: str, sql: str, expect: Any, params: list[Any] | None = None, op: str = "==") -> CheckResult:
    """The first column of the query's first row (None when no row) compared with ``expect``."""
    if site not in ctx.sites:
        raise InfraError(f"web.sql: the task's site {site!r} is not running")
    rows = ctx.sites[site].query(sql, params or [])
    value = rows[0][0] if rows else None
    passed = _compare(value, op, expect)
    return CheckResult(passed, 1.0 if passed else 0.0, f"{site}: got {value!r}, want {op} {expect!r}")


def answer(ctx: Context, expected: Any, match: str = "exact") -> CheckResult:
    """The last message to the user against ``expected`` (``exact``, ``number`` or ``set``)."""
    got = ctx.answer
    if got is None:
        return CheckResult(False, 0.0, "no answer was sent to the user")
    if match == "number":
        # The tasks ask for "the number only": a sentence that happens to hold one number (a claim
        # of success ending "(exit 0)") is not an answer, or it scores wherever the count is 0.
        found = numbers(got) if ONLY_NUMBER.fullmatch(got.strip().rstrip(".").strip()) else []
        passed = len(found) == 1 and abs(found[0] - float(expected)) < 1e-6
    elif match == "set":
        items = {normalise(p) for p in re.split(r",|;|\n|\band\b", got) if normalise(p)}
        passed = items == {normalise(str(e)) for e in expected}
    else:
        passed = normalise(got) == normalise(str(expected))
    return CheckResult(passed, 1.0 if passed else 0.0, f"answer {got[:100]!r} {'matches' if passed else 'is wrong'}")


def final_answer(messages: list[str], infeasible: bool, final_action: ParsedAction | None) -> tuple[str | None, bool]:
    """The answer graded and whether the task was reported infeasible: the last message to the user
    (none once the agent reported the task infeasible), unless the final action submits a text or fails."""
    said = messages[-1] if messages and not infeasible else None
    if final_action is not None and final_action.kind == "submit" and final_action.text:
        said = final_action.text
    if final_action is not None and final_action.kind == "fail":
        infeasible = True
    return said, infeasible


def infeasible(ctx: Context, expected: bool) -> CheckResult:
    passed = ctx.infeasible == expected
    said = "reported the task infeasible" if ctx.infeasible else "did not report the task infeasible"
    return CheckResult(passed, 1.0 if passed else 0.0, f"the agent {said}")


def url(ctx: Context, site: str, pattern: str) -> CheckResult:
    """The active tab shows ``site`` at a path (with query) that fully matches ``pattern``."""
    parts = urllib.parse.urlsplit(ctx.url)
    origin = ctx.sites[site].origin if site in ctx.sites else None
    here = parts.path + (f"?{parts.query}" if parts.query else "")
    passed = (
        origin is not None and f"{parts.scheme}://{parts.netloc}" == origin and re.fullmatch(pattern, here) is not None
    )
    return CheckResult(passed, 1.0 if passed else 0.0, f"final page {here!r}")


def miniwob_success(ctx: Context) -> CheckResult:
    """MiniWoB++'s own success: the episode ended with the full raw reward (partial credit is not success)."""
    raw = ctx.miniwob.get("raw")
    passed = bool(ctx.miniwob.get("done")) and raw is not None and raw >= 1.0
    return CheckResult(passed, 1.0 if passed else 0.0, f"raw reward {raw}, reason {ctx.miniwob.get('reason')!r}")


def _clean(text: str) -> str:
    """WebArena's ``clean_answer``: stripped, outer quotes removed, lower-cased."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text.lower()


def _includes(text: str, wanted: list[str], tokens: bool) -> bool:
    """Every item present (``a |OR| b`` alternatives); a single reference matches whole tokens, as WebArena's NLTK."""
    words = re.findall(r"\w+(?:[.,]\w+)*|[^\w\s]", text) if tokens else []
    return all(
        any((alt in words) if tokens else (alt in text) for alt in (_clean(a) for a in item.split("|OR|")))
        for item in wanted
    )


def string_match(ctx: Context, exact_match: str | None = None, must_include: list[str] | None = None) -> CheckResult:
    """WebArena's string_match on the last message: exact_match and must_include, no LLM judge."""
    if ctx.answer is None:
        return CheckResult(False, 0.0, "no answer was sent to the user")
    got = _clean(ctx.answer)
    passed = (exact_match is None or got == _clean(exact_match)) and (
        must_include is None or _includes(got, must_include, tokens=len(must_include) == 1)
    )
    return CheckResult(
        passed, 1.0 if passed else 0.0, f"answer {ctx.answer[:100]!r} {'matches' if passed else 'is wrong'}"
    )


def url_match(ctx: Context, site: str, references: list[str]) -> CheckResult:
    """WebArena's 'GOLD in PRED': the final page's path equals a reference's, with each reference query value."""
    parts = urllib.parse.urlsplit(ctx.url)
    origin = ctx.sites[site].origin if site in ctx.sites else None
    query = urllib.parse.parse_qs(parts.query)
    passed = False
    if origin is not None and f"{parts.scheme}://{parts.netloc}" == origin:
        for ref in references:
            gold = urllib.parse.urlsplit(ref)
            wanted = urllib.parse.parse_qs(gold.query)
            if gold.path.rstrip("/") == parts.path.rstrip("/") and all(
                set(v) & set(query.get(k, [])) for k, v in wanted.items()
            ):
                passed = True
    return CheckResult(passed, 1.0 if passed else 0.0, f"final page {ctx.url!r}")


def program_html(
    ctx: Context, url: str, locator: str = "", exact_match: str | None = None, must_include: list[str] | None = None
) -> CheckResult:
    """WebArena's program_html: a page's content (or a locator's value) after the agent is done."""
    if ctx.page_text is None:
        return CheckResult.error("program_html needs the browser")
    text = _clean(ctx.page_text(ctx.url if url == "last" else url, locator))
    passed = (exact_match is None or text == _clean(exact_match)) and (
        must_include is None or _includes(text, must_include, tokens=False)
    )
    return CheckResult(passed, 1.0 if passed else 0.0, f"{url} {locator[:60]!r}: {'found' if passed else 'missing'}")


CHECKERS: dict[str, Callable[..., CheckResult]] = {
    "web.sql": sql,
    "web.answer": answer,
    "web.infeasible": infeasible,
    "web.url": url,
    "miniwob.success": miniwob_success,
    "web.string_match": string_match,
    "web.url_match": url_match,
    "web.program_html": program_html,
}


def run(spec: CheckSpec, ctx: Context) -> CheckResult:
    fn = CHECKERS.get(spec.check)
    if fn is None:
        return CheckResult.error(f"unknown web check {spec.check!r}; known: {', '.join(CHECKERS)}")
    return fn(ctx, **spec.args)
