"""Leaderboards: submission bundles anyone can verify by replaying them, and the boards they render into.

``make_bundle`` turns a run directory into a bundle, ``verify`` checks it
against a board (complete, within the rules, rewards reproduced by replay),
and ``build`` renders the accepted ones. docs/leaderboards.md describes all three.
"""

from agentenvs.leaderboard.board import Board, BoardFormatError, find_board, load_board
from agentenvs.leaderboard.bundle import BundleError, make_bundle, open_bundle
from agentenvs.leaderboard.render import build
from agentenvs.leaderboard.verdict import EpisodeReplay, Problem, Verdict
from agentenvs.leaderboard.verify import accept, verify

__all__ = [
    "Board",
    "BoardFormatError",
    "BundleError",
    "EpisodeReplay",
    "Problem",
    "Verdict",
    "accept",
    "build",
    "find_board",
    "load_board",
    "make_bundle",
    "open_bundle",
    "verify",
]
