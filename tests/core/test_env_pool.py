"""The async env pool on real envs: text games (no sandbox) and terminal tasks on the local backend.

No test asserts a duration: where order matters, one env runs ``sleep 1``
while the other runs ``echo``, and only the order of their results is checked.
"""

from __future__ import annotations

import asyncio
import os
import threading

import pytest

import agentenvs
from agentenvs import EnvPool, PoolResult
from agentenvs.pool import EnvBusyError, PoolClosedError, PoolError, UnknownEnvError
from agentenvs.sandbox.local_resources import SANDBOX_PARENT
from tests.core import pool_toy

GAMES = ["textgame/coin-easy-0", "textgame/coin-easy-1", "textgame/keys-easy-2"]
TERMINAL = "terminal/log-error-summary"


@pytest.fixture(scope="module", autouse=True)
def toy_family() -> None:
    pool_toy.register()


def local_sandboxes() -> list[str]:
    return sorted(p.name for p in SANDBOX_PARENT.glob(f"{os.getpid()}-*")) if SANDBOX_PARENT.is_dir() else []


def play_oracle(pool: EnvPool) -> tuple[list[PoolResult], int]:
    """Play every episode of ``pool`` (made with ``oracle=True`` and an ``episodes`` cap) to the end."""
    plans: dict[int, list] = {}
    results: list[PoolResult] = []
    submitted = 0

    def answer(result: PoolResult) -> None:
        nonlocal submitted
        if result.first:
            plans[result.env_id] = list(result.oracle_actions or [])
        if result.needs_action:
            plan = plans[result.env_id]
            pool.submit(result.env_id, plan.pop(0) if plan else "done")
            submitted += 1

    for result in pool.reset_all():
        results.append(result)
        answer(result)
    while not pool.done:
        batch = pool.poll(timeout=60)
        assert batch, "poll returned nothing while envs were still working"
        for result in batch:
            results.append(result)
            answer(result)
    return results, submitted


def test_textgame_every_action_gets_one_result_and_episodes_reset_themselves() -> None:
    with EnvPool(GAMES, size=3, seed=7, episodes=8, oracle=True) as pool:
        results, submitted = play_oracle(pool)
        stats = pool.stats()
    steps = [r for r in results if not r.is_reset]
    resets = [r for r in results if r.is_reset]
    assert all(r.error is None for r in results)
    assert len(steps) == submitted  # exactly one result per submitted action
    assert len(resets) == 8
    # Every episode the pool began was played to its end, once.
    ends = sorted(r.episode for r in steps if r.done)
    assert ends == list(range(8))
    assert sorted(r.episode for r in resets) == list(range(8))
    # The shared queue: episode k plays task k mod n with seed + k, whichever env ran it.
    for r in resets:
        assert r.task_id == GAMES[r.episode % len(GAMES)]
        assert r.info["seed"] == 7 + r.episode
        assert r.step == 0 and r.obs is not None and r.oracle_actions
    # Per env, steps count up from 1 within each episode, and every oracle episode succeeds.
    for env_id in range(3):
        mine = [r for r in results if r.env_id == env_id]
        for prev, cur in zip(mine, mine[1:], strict=False):
            if cur.is_reset:
                assert prev.done
            else:
                assert cur.episode == prev.episode and cur.step == prev.step + 1
    assert all(r.info["score"] == 1.0 for r in steps if r.done)
    # An env resets to its next task on its own: some env played more than one episode.
    assert max(len({r.episode for r in results if r.env_id == e}) for e in range(3)) > 1
    assert sum(r.env_retired for r in results) == 3
    assert stats.episodes == 8 and stats.steps == len(steps) and stats.errors == 0
    assert sum(e.resets for e in stats.envs) == 8
    assert 0 < stats.busy_fraction <= 1 and stats.episodes_per_sec > 0


def test_terminal_results_come_back_out_of_order_and_close_leaves_no_sandbox() -> None:
    with EnvPool([TERMINAL], size=2, backend="local", seed=0) as pool:
        firsts = pool.reset_all()
        assert [(r.env_id, r.is_reset, r.error) for r in firsts] == [(0, True, None), (1, True, None)]
        assert len(local_sandboxes()) == 2
        pool.submit(0, "sleep 1; echo slow")
        pool.submit(1, "echo fast")
        got = pool.poll(timeout=60)
        assert [r.env_id for r in got] == [1]
        assert "fast" in got[0].obs["text"]
        got += pool.poll(timeout=60)
        assert [r.env_id for r in got] == [1, 0]
        assert "slow" in got[1].obs["text"]
        # Ending an episode: the final result, then the next episode's reset on the same env, unasked.
        pool.submit(1, "done")
        end = pool.poll(timeout=120)[0]
        assert end.terminated and end.info["score"] == 0.0 and not end.env_retired
        reset = pool.poll(timeout=120)[0]
        assert reset.env_id == 1 and reset.first and reset.episode == 2 and reset.task_id == TERMINAL
        pool.submit(0, "sleep 30")
        pool.close(timeout=1)  # closes the env under the running command
    assert local_sandboxes() == []


def test_async_variants_under_asyncio_run_leave_the_loop_free() -> None:
    async def main() -> tuple[list[PoolResult], list[str]]:
        events: list[str] = []
        async with EnvPool(GAMES, size=2, seed=1, episodes=4) as pool:
            firsts = await pool.areset_all()
            assert [r.env_id for r in firsts] == [0, 1]
            assert await pool.apoll(timeout=0.05) == []  # envs await actions: apoll waits, up to its timeout

            async def policy(result: PoolResult) -> None:
                await asyncio.sleep(0.01 * (1 + result.env_id))  # a model thinking, on the loop
                commands = result.obs["admissible_commands"].split("\n")
                await pool.asubmit(result.env_id, "done" if result.step >= 3 else commands[0])

            tasks = [asyncio.create_task(policy(r)) for r in firsts]
            results = list(firsts)

            async def ticker() -> None:
                events.append("tick")

            while not pool.done:
                tick = asyncio.create_task(ticker())
                batch = await pool.apoll(timeout=60)
                await tick
                events.append("poll")
                results += batch
                tasks += [asyncio.create_task(policy(r)) for r in batch if r.needs_action]
            await asyncio.gather(*tasks)
        assert pool.closed
        return results, events

    results, events = asyncio.run(main())
    assert events[0] == "tick"  # the ticker ran while apoll waited for the envs
    assert sorted(r.episode for r in results if r.done) == [0, 1, 2, 3]
    assert all(r.info["final_action"] == "done" for r in results if r.done)


def test_bad_env_ids_double_submits_and_use_after_close_raise_clearly() -> None:
    pool = EnvPool(GAMES[:1], size=2)
    with pytest.raises(EnvBusyError, match="call start"):
        pool.submit(0, "look")
    pool.reset_all()
    with pytest.raises(PoolError, match="already started"):
        pool.start()
    for bad in (-1, 2, "0", True, None):
        with pytest.raises(UnknownEnvError, match="env ids run from 0 to 1"):
            pool.submit(bad, "look")
    pool.submit(0, "look")
    with pytest.raises(EnvBusyError, match="env 0 is busy"):
        pool.submit(0, "look")
    assert len(pool.poll(timeout=30)) == 1
    assert pool.poll() == []  # nothing in flight: poll returns at once rather than wait for ever
    pool.close()
    with pytest.raises(PoolClosedError):
        pool.submit(1, "look")
    pool.close()  # idempotent


def test_bad_arguments_fail_at_construction() -> None:
    with pytest.raises(agentenvs.core.errors.TaskNotFoundError):
        EnvPool(["textgame/no-such-game-0"], size=1)
    with pytest.raises(ValueError, match="size"):
        EnvPool(GAMES, size=0)
    with pytest.raises(ValueError, match="empty"):
        EnvPool([], size=1)
    with pytest.raises(TypeError, match="single string"):
        EnvPool("textgame/coin-easy-0", size=1)


def test_an_env_that_raises_is_reported_and_replaced() -> None:
    with EnvPool(["pooltoy/ok"], size=2, seed=0) as pool:
        pool.reset_all()
        pool.submit(0, "crash")
        pool.submit(1, "fine")
        results = pool.poll(timeout=30, min_results=3)
        crash = next(r for r in results if r.env_id == 0)
        assert crash.error == "RuntimeError: step exploded" and crash.error_kind == "exception"
        assert crash.done and not crash.needs_action and crash.obs is None and not crash.env_retired
        # The crashed env was closed; a fresh one begins the next episode and the pool goes on.
        reset = next(r for r in results if r.env_id == 0 and r.is_reset)
        assert reset.first and reset.episode == 2
        assert pool.stats().errors == 1
        pool.submit(0, "fine")
        assert pool.poll(timeout=30)[0].obs["text"] == "did fine"
    assert not pool_toy.LIVE


def test_an_env_whose_reset_keeps_failing_retires() -> None:
    with EnvPool(["pooltoy/crash-reset"], size=1, max_failures=2) as pool:
        results = pool.reset_all()
        results += pool.poll(timeout=30)
        assert [r.error for r in results] == [
            "RuntimeError: reset exploded",
            "RuntimeError: reset exploded (env 0 failed 2 times in a row: retired)",
        ]
        assert [r.env_retired for r in results] == [False, True]
        assert all(r.is_reset and not r.first for r in results)
        assert pool.done and pool.poll(timeout=30) == []
        with pytest.raises(EnvBusyError, match="retired"):
            pool.submit(0, "look")
    assert not pool_toy.LIVE


def test_a_hung_step_is_abandoned_at_the_deadline_and_its_env_closed() -> None:
    with EnvPool(["pooltoy/ok"], size=2, call_timeout=0.5) as pool:
        pool.reset_all()
        pool.submit(0, "hang")
        pool.submit(1, "fine")
        results = pool.poll(timeout=30, min_results=3)
        hung = next(r for r in results if r.env_id == 0 and not r.is_reset)
        assert hung.error_kind == "timeout" and "deadline" in hung.error
        assert any(r.env_id == 0 and r.first for r in results)
        pool.submit(0, "fine")
        assert pool.poll(timeout=30)[0].obs["text"] == "did fine"
    assert not pool_toy.LIVE


def test_close_with_a_call_in_flight_closes_its_env() -> None:
    pool = EnvPool(["pooltoy/ok"], size=1, call_timeout=None)
    pool.reset_all()
    pool.submit(0, "hang")
    pool.close(timeout=0.2)
    assert not pool_toy.LIVE


def test_an_env_still_being_made_when_the_pool_closes_is_closed_once_made() -> None:
    pool_toy.MAKING.clear()
    pool = EnvPool(["pooltoy/ok"], size=1, env_kwargs={"make_delay": 3.0})
    pool.start()
    worker = next(t for t in threading.enumerate() if t.name == "agentenvs-pool-0")
    assert pool_toy.MAKING.wait(30)
    pool.close(timeout=0.05)  # gives up waiting (and one more second); the env is made after this returns
    worker.join(30)
    assert not worker.is_alive()
    assert not pool_toy.LIVE


def test_families_mix_in_one_pool_and_backend_goes_only_to_families_that_take_it() -> None:
    with EnvPool([GAMES[0], TERMINAL], size=1, backend="local", episodes=3) as pool:
        first = pool.reset_all()[0]
        assert first.task_id == GAMES[0]
        seen, sandboxes = [first.task_id], []
        for _ in range(2):
            pool.submit(0, "done")
            results = pool.poll(timeout=120, min_results=2)
            assert results[0].terminated and results[1].first
            seen.append(results[1].task_id)
            sandboxes.append(len(local_sandboxes()))
        assert seen == [GAMES[0], TERMINAL, GAMES[0]]
        # The terminal task had a local sandbox; moving back to a text game closed that env.
        assert sandboxes == [1, 0]
