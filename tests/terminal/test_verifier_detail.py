"""The verdict's detail: the end of the verifier's output, cut at a line start (what the report shows)."""

from __future__ import annotations

from agentenvs.envs.terminal.verifier import DETAIL_CHARS, _tail


def test_the_verifier_output_kept_is_its_end_from_a_line_start():
    output = "".join(f"PASS check_{n}: fine\n" for n in range(1000))
    kept = _tail(output)
    head, _, tail = kept.partition("\n")
    assert tail.startswith("PASS check_") and output.endswith(tail) and len(tail) <= DETAIL_CHARS
    assert head == f"[... {len(output) - len(tail)} earlier characters]"
    assert _tail("short\n") == "short\n"
