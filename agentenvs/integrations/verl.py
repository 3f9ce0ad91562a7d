"""verl: any agentenvs task as a verl agent loop (``pip install 'agentenvs[verl]'``; verl 0.9).

verl's ``AgentLoopWorker`` runs one agent loop per dataset row: it picks the loop
class by the row's ``agent_name``, builds it with ``hydra.utils.instantiate`` from
the registry (``register``) or from the YAML at
``actor_rollout_ref.rollout.agent.agent_loop_config_path``, and awaits
``run(sampling_params, **row)``. Importing this module registers
``AgentEnvsAgentLoop`` as ``"agentenvs"`` (unless the name is taken); a YAML entry
names it in verl's worker processes, with the loop's arguments::

    - name: agentenvs
      _target_: agentenvs.integrations.verl.AgentEnvsAgentLoop
      make_kwargs: {backend: docker}

A row gives ``agent_name: agentenvs`` and ``extra_info: {"task_id": "<family>/<task-id>",
"seed": 0}`` (or the two as columns of their own), and ``make_kwargs`` there
override the loop's (given to ``agentenvs.make``); its ``prompt`` messages come
first, then (unless they have one) the env's system prompt, then a user message
with the instruction and first observation.

Token in, token out, with verl's own Continuous Token builder (the one
``ToolAgentLoop`` uses): the prompt is rendered once with the chat template;
each turn sends the ids so far to ``server_manager.generate`` and appends the
sampled ids (response mask 1, their logprobs); the model's text is the env's
action (read as ``common.action_from_text`` reads any reply); the env's reply
is appended as a user message's tokens (mask 0, logprob 0). The episode ends
when the env says so, at ``multi_turn.max_assistant_turns``, or when
``response_length`` tokens are used up (the response is cut there). An
episode the model did not end is ended with ``done``, so the evaluator grades
the state it left (``unfinished="zero"`` scores it 0). ``reward_score`` is the
evaluator's final score, which verl puts on the last response token
(``rm_scores``) and so needs no reward function; ``extra_fields["agentenvs"]``
holds the episode's summary (score, success, checks, ``error_kind``: drop
``"infra"`` episodes). The env is closed whatever happens.

Images: when the trainer's model has a multimodal processor (a VL model) and
``images="auto"``, a screenshot goes into the user message as an image block and
into the images passed to ``generate`` and returned in ``multi_modal_data``, as
``ToolAgentLoop`` does with a tool's images. Without a processor, messages are
text only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal
from uuid import uuid4

from agentenvs.integrations.common import (
    ImageMode,
    TextEpisode,
    observation_images,
    render_observation,
    require,
)

_agent_loop = require("verl.experimental.agent_loop.agent_loop", "verl", "verl")
_profiler = require("verl.utils.profiler", "verl", "verl")
_omegaconf = require("omegaconf", "verl", "verl")

AGENT_NAME = "agentenvs"
Unfinished = Literal["grade", "zero"]


def _task(row: dict[str, Any]) -> tuple[str, int | None, dict[str, Any]]:
    """The row's task id, seed and ``make_kwargs``: columns of their own, else in ``extra_info``. A Parquet
    struct column gives every row every key of the column, ``None`` where the row had none: those are dropped."""
    for where in (row, row.get("extra_info") or {}):
        if isinstance(where, dict) and isinstance(where.get("task_id"), str):
            seed = where.get("seed")
            make_kwargs = {key: value for key, value in (where.get("make_kwargs") or {}).items() if value is not None}
            return where["task_id"], None if seed is None else int(seed), make_kwargs
    raise ValueError(
        'the agentenvs agent loop needs a task: give the dataset row extra_info {"task_id": "<family>/<task-id>"}'
        f" (got columns {sorted(row)})"
    )


def dataset_rows(
    task_ids: Sequence[str], seeds: Sequence[int] = (0,), make_kwargs: dict[str, dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Rows for verl's ``RLHFDataset`` (write them to Parquet), one per (task, seed): the env's system prompt
    as ``prompt``, ``agent_name``, and ``extra_info`` with the task, seed, index and, from ``make_kwargs``
    (by task id), the task's own ``agentenvs.make`` arguments."""
    prompts: dict[str, str] = {}
    for task_id in task_ids:
        episode = TextEpisode(task_id, make_kwargs=(make_kwargs or {}).get(task_id))
        prompts[task_id] = episode.system_prompt()
        episode.close()
    rows = []
    for task_id in task_ids:
        for seed in seeds:
            extra_info = {"task_id": task_id, "seed": int(seed), "index": len(rows)}
            if make_kwargs and task_id in make_kwargs:
                extra_info["make_kwargs"] = dict(make_kwargs[task_id])
            rows.append(
                {
                    "data_source": f"agentenvs/{task_id.split('/', 1)[0]}",
                    "prompt": [{"role": "system", "content": prompts[task_id]}],
                    "agent_name": AGENT_NAME,
                    "extra_info": extra_info,
                }
            )
    return rows


class AgentEnvsAgentLoop(_agent_loop.AgentLoopBase):
    """One agentenvs episode per ``run``, token in, token out; see the module docstring."""

    def __init__(
        self,
        *args: Any,
        make_kwargs: dict[str, Any] | None = None,
        images: ImageMode = "auto",
        unfinished: Unfinished = "grade",
        system_prompt: bool = True,
        **kwargs: Any,
    ):
        kwargs.pop("tools", None)  # verl's tool list: the env's actions are ours
        kwargs.pop("name", None)  # the YAML entry's name
        super().__init__(*args, **kwargs)
        if images not in ("auto", "never") or unfinished not in ("grade", "zero"):
            raise ValueError(f"images must be auto/never and unfinished grade/zero, got {images!r}, {unfinished!r}")
        if isinstance(make_kwargs, _omegaconf.DictConfig):  # from the YAML, through hydra
            make_kwargs = _omegaconf.OmegaConf.to_container(make_kwargs, resolve=True)
        self.make_kwargs = dict(make_kwargs or {})
        self.images: ImageMode = images
        self.unfinished: Unfinished = unfinished
        self.add_system_prompt = bool(system_prompt)
        self.response_length = int(self.rollout_config.response_length)
        self.max_turns = self.rollout_config.multi_turn.max_assistant_turns

    def _content(self, obs: dict[str, Any], *, first: bool, pictures: list[Any]) -> str | list[dict[str, Any]]:
        """A user message's content; with a VL processor, image blocks first (their PIL images go to ``pictures``)."""
        text = render_observation(obs, first=first)
        arrays = observation_images(obs) if self.images == "auto" and self.processor is not None else {}
        if not arrays:
            return text
        from PIL import Image

        new = [Image.fromarray(array) for array in arrays.values()]
        pictures.extend(new)
        return [*({"type": "image", "image": image} for image in new), {"type": "text", "text": text}]

    async def _call(self, func: Any, *args: Any, undo: Any = None) -> Any:
        """An env call off the event loop, which every agent loop of the worker shares. If the rollout is
        cancelled meanwhile, the call still finishes before the cancellation goes on (so the env is closed
        after it, never during it) and ``undo`` is given its result (an env made is closed)."""
        future = asyncio.get_running_loop().run_in_executor(None, func, *args)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            await asyncio.wait([future])
            if undo is not None and future.exception() is None:
                undo(future.result())
            raise

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
        """Play the row's task to the end; an ``AgentLoopOutput`` with the evaluator's score as reward."""
        task_id, seed, make_kwargs = _task(kwargs)
        make_kwargs = {**self.make_kwargs, **make_kwargs}
        metrics: dict[str, Any] = {"num_preempted": -1}
        with _profiler.simple_timer("tool_calls", metrics):
            episode = await self._call(
                lambda: TextEpisode(task_id, seed=seed, make_kwargs=make_kwargs), undo=TextEpisode.close
            )
        try:
            return await self._play(episode, sampling_params, kwargs, metrics)
        finally:
            await self._call(episode.close)

    async def _play(
        self, episode: TextEpisode, sampling_params: dict[str, Any], row: dict[str, Any], metrics: dict[str, Any]
    ) -> Any:
        with _profiler.simple_timer("tool_calls", metrics):
            await self._call(episode.reset)
        pictures: list[Any] = []
        messages = [dict(m) for m in row.get("raw_prompt", [])]
        if self.add_system_prompt and not any(m.get("role") == "system" for m in messages):
            messages.insert(0, {"role": "system", "content": episode.system_prompt()})
        messages.append(
            {"role": "user", "content": self._content(episode.last_obs or {}, first=True, pictures=pictures)}
        )
        self._assert_mm_supported(bool(pictures))
        ids = await self.ct_build_initial_tokens(messages, images=pictures or None)
        mask: list[int] = []
        logprobs: list[float] | None = None
        request_id, turns, replies = uuid4().hex, 0, 0
        while not episode.done and len(mask) < self.response_length:
            if self.max_turns and turns >= self.max_turns:
                break
            with _profiler.simple_timer("generate_sequences", metrics):
                out = await self.server_manager.generate(
                    request_id=request_id, prompt_ids=ids, sampling_params=sampling_params, image_data=pictures or None
                )
            turns += 1
            if out.num_preempted is not None:
                metrics["num_preempted"] = max(metrics["num_preempted"], 0) + out.num_preempted
            if out.log_probs and logprobs is None:
                logprobs = [0.0] * len(mask)
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                ids, out.token_ids, mask, logprobs, assistant_logprobs=out.log_probs or None
            )
            ids = merged.token_ids
            text = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
            messages.append({"role": "assistant", "content": text})
            with _profiler.simple_timer("tool_calls", metrics):
                result = await self._call(episode.step, text)
            if result.done or len(mask) >= self.response_length:
                break
            previous = list(messages)
            content = self._content(result.observation, first=False, pictures=pictures)
            messages.append({"role": "user", "content": content})
            self._assert_mm_supported(bool(pictures))
            merged, mask, logprobs = await self.ct_merge_context_msg(previous, messages, ids, mask, logprobs)
            ids, replies = merged.token_ids, replies + 1
        if not episode.done and self.unfinished == "grade":
            with _profiler.simple_timer("tool_calls", metrics):
                await self._call(episode.step, "done")
        summary = episode.summary()  # its score is 0 unless the episode ended
        split = len(ids) - len(mask)
        return _agent_loop.AgentLoopOutput(
            prompt_ids=ids[:split],
            response_ids=ids[split:][: self.response_length],
            response_mask=mask[: self.response_length],
            response_logprobs=logprobs[: self.response_length] if logprobs is not None else None,
            multi_modal_data={"images": pictures} if pictures else {},
            reward_score=summary["score"],
            num_turns=turns + replies + 1,
            metrics=metrics,
            extra_fields={"agentenvs": summary, "turn_scores": [], "tool_rewards": []},
        )


# Under the name unless taken: hydra imports this module while instantiating a YAML entry named
# "agentenvs", and registering again would replace that entry (and its arguments) for later rows.
if AGENT_NAME not in _agent_loop._agent_loop_registry:
    _agent_loop.register(AGENT_NAME)(AgentEnvsAgentLoop)

__all__ = ["AGENT_NAME", "AgentEnvsAgentLoop", "dataset_rows"]
