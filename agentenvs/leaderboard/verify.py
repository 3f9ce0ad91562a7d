"""``verify``: a bundle against its board, in order of cost; and ``accept``: file it under the board.

Static checks first (integrity, completeness, rules: milliseconds), then,
when the board forbids the oracle, a comparison of successful episodes with
the tasks' reference solutions, then the replay. A bundle that fails the
static checks is not replayed: its record is already wrong.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentenvs.leaderboard.board import Board, find_board
from agentenvs.leaderboard.bundle import MANIFEST, BundleError, open_bundle, pack, read_manifest, sha256_file
from agentenvs.leaderboard.checks import static_checks
from agentenvs.leaderboard.replay import oracle_problems, replay_bundle, replay_problems
from agentenvs.leaderboard.verdict import Verdict

VERDICT_SUFFIX = ".verdict.json"
#: How a board files an accepted bundle.
PACKED = ".tar.gz"
SUBMISSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def verify_dir(root: Path, board: Board, *, replay: bool = True, concurrency: int = 4, label: str = "") -> Verdict:
    """Verify an unpacked bundle directory."""
    verdict = Verdict(board=board.name, bundle=label or str(root), bundle_sha256=sha256_file(root / MANIFEST))
    verdict.problems = static_checks(board, root)
    if verdict.problems:
        return verdict
    if "oracle" in board.rules.forbid_policies:
        verdict.problems += oracle_problems(root)
    if replay and not verdict.problems:
        verdict.episodes = replay_bundle(board, root, concurrency=concurrency)
        verdict.replayed = True
        verdict.problems += replay_problems(verdict.episodes)
    return verdict


def verify(
    bundle: str | Path, board: Board | str | Path | None = None, *, replay: bool = True, concurrency: int = 4
) -> Verdict:
    """Verify ``bundle`` (a directory or ``.tar.gz``) against ``board`` (default: the board it names)."""
    with open_bundle(bundle) as root:
        chosen = board_for(root, board)
        return verify_dir(root, chosen, replay=replay, concurrency=concurrency, label=str(bundle))


def board_for(root: Path, board: Board | str | Path | None) -> Board:
    """``board`` itself, the board it names, or (``None``) the board the bundle was made for."""
    if isinstance(board, Board):
        return board
    return find_board(board if board is not None else read_manifest(root)["board"])


def check_name(name: str) -> None:
    """A submission's name is a directory under ``submissions/``: nothing that could leave it."""
    if not SUBMISSION_NAME.fullmatch(name):
        raise BundleError(
            f"submission name {name!r}: use letters, digits, '.', '_' and '-', starting with a letter or digit"
        )


def accept(bundle: str | Path, board: Board, verdict: Verdict, name: str) -> Path:
    """File an accepted bundle as ``<board>/submissions/<name>.tar.gz`` (one compressed file, whatever
    form it came in) with its verdict beside it."""
    if not verdict.accepted:
        raise BundleError(f"{bundle} was not accepted; only an accepted bundle goes on the board")
    check_name(name)
    target = board.submissions / f"{name}{PACKED}"
    if target.exists() or (board.submissions / name).exists():
        raise BundleError(f"{target} exists; choose another name")
    board.submissions.mkdir(parents=True, exist_ok=True)
    with open_bundle(bundle) as root:
        pack(root, target)
    (board.submissions / f"{name}{VERDICT_SUFFIX}").write_text(verdict.model_dump_json(indent=2), encoding="utf-8")
    return target
