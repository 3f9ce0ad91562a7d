"""verl: our agent loop run by verl's own ``AgentLoopWorker``, one task per family.

The worker is verl's (not a Ray actor here, the class itself): it reads the trainer config composed
from verl's own YAML, loads the agent loop from an ``agent_loop_config_path`` file, builds the
tokenizer from a model directory, instantiates our loop with hydra as it does every loop, runs the
batch's rows concurrently and pads, masks and stacks their outputs into the ``DataProto`` a trainer
gets (``rm_scores``, ``rollout_log_probs``, position ids). What it cannot have on a CPU is an
inference server: the ``LLMServerClient`` it is given is a scripted one that answers each request
with the scripted policy's next action, as token ids of a real tokenizer (a byte-level BPE trained
on the episode's own text, the ``tokenizers`` library; no model can be downloaded here) and logprobs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from agentenvs.integrations.common import action_to_text, render_observation, scripted_actions
from tests.integrations.cases import SEED, TERMINAL, TEXTGAME, WEB, direct_run

pytest.importorskip("verl", reason="needs verl: pip install 'agentenvs[verl]' (make verl-venv)")
import verl  # noqa: E402
from hydra import compose, initialize_config_dir  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import PreTrainedTokenizerFast, Qwen2Config  # noqa: E402
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker  # noqa: E402
from verl.protocol import DataProto  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from agentenvs.integrations import common  # noqa: E402
from agentenvs.integrations.verl import dataset_rows  # noqa: E402

END = "<|im_end|>"
#: Qwen's ChatML, as the Qwen2 model type's Continuous Token builder expects it.
CHATML = (
    "{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}"
)
CASES = [TEXTGAME, TERMINAL]
#: The batches the main test runs: a web page's text carries its site's port, so it differs from the
#: same task played directly, and its screenshot (``screenshot=True``) is not for a text model.
BATCHES = [pytest.param(CASES, id="textgame+terminal"), pytest.param([WEB], id="web", marks=pytest.mark.web)]
AGENT_LOOPS_YAML = """\
- name: agentenvs
  _target_: agentenvs.integrations.verl.AgentEnvsAgentLoop
  make_kwargs: {reward_mode: sparse}
"""


def model_dir(path: Path, corpus: list[str]) -> Path:
    """A model directory verl's ``HFModelConfig`` loads: the tokenizer (byte-level BPE trained on
    ``corpus``, Qwen's special tokens, ChatML) and a Qwen2 config. No weights: nothing runs a model."""
    specials = ["<|endoftext|>", "<|im_start|>", END]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2000,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token=END, pad_token="<|endoftext|>")
    fast.chat_template = CHATML
    fast.save_pretrained(path)
    Qwen2Config(
        vocab_size=len(fast), hidden_size=32, num_hidden_layers=1, architectures=["Qwen2ForCausalLM"]
    ).save_pretrained(path)
    return path


def trainer_config(tmp_path: Path, model: Path, response_length: int) -> Any:
    """verl's own ``ppo_trainer`` config, pointed at the model directory and our agent loop's YAML."""
    (tmp_path / "agent_loops.yaml").write_text(AGENT_LOOPS_YAML)
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        config = compose(config_name="ppo_trainer")
    rollout = config.actor_rollout_ref.rollout
    config.actor_rollout_ref.model.path = str(model)
    rollout.name = "vllm"  # which server verl would start; none is started here
    rollout.prompt_length, rollout.response_length = 2048, response_length
    rollout.agent.agent_loop_config_path = str(tmp_path / "agent_loops.yaml")
    config.data.max_prompt_length = rollout.prompt_length
    return config


def logprob(i: int) -> float:
    return -0.125 - i / 1024


class ScriptedServer:
    """verl's ``LLMServerClient`` interface with a scripted policy behind it. A request's task is found by
    its instruction in the prompt; its plan is read from that task's live env (where the oracle
    stages its solution) on the first turn, as the other adapters' scripted policies do; each reply is the
    plan's next action, as token ids and logprobs."""

    def __init__(
        self, tokenizer: PreTrainedTokenizerFast, instructions: dict[str, str], live: list[list], variant: str | None
    ):
        self.tokenizer, self.instructions, self.live, self.variant = tokenizer, instructions, live, variant
        self.calls: dict[str, list[dict[str, Any]]] = {}
        self.plans: dict[str, list[Any]] = {}

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict, **kwargs) -> TokenOutput:
        calls = self.calls.setdefault(request_id, [])
        if request_id not in self.plans:
            prompt = self.tokenizer.decode(prompt_ids)
            (task_id,) = [task_id for task_id, text in self.instructions.items() if text in prompt]
            (env,) = [env for made_id, env, _, _ in self.live if made_id == task_id]
            self.plans[request_id] = scripted_actions(env, self.variant) if self.variant else ["done"]
        plan = self.plans[request_id]
        ids = self.tokenizer.encode(action_to_text(plan[min(len(calls), len(plan) - 1)]) + END)
        calls.append({"task_id": task_id if not calls else calls[0]["task_id"], "prompt_ids": list(prompt_ids)})
        calls[-1].update(token_ids=ids, kwargs=kwargs)
        return TokenOutput(token_ids=ids, log_probs=[logprob(i) for i in range(len(ids))])


def record_envs(monkeypatch, made: list[list[Any]]) -> list[list[Any]]:
    """Every env made from now on, into ``made``: its task id, the env, how many times it was closed, the
    make kwargs."""
    make = common.agentenvs.make

    def recording(task_id: str, **kwargs: Any) -> Any:
        env = make(task_id, **kwargs)
        entry, close = [task_id, env, 0, kwargs], env.close

        def counted() -> None:
            entry[2] += 1
            close()

        env.close = counted
        made.append(entry)
        return env

    monkeypatch.setattr(common.agentenvs, "make", recording)
    return made


def rollout(
    tmp_path: Path,
    monkeypatch,
    variant: str | None,
    response_length: int = 4096,
    server_class: type = ScriptedServer,
    made: list[list[Any]] | None = None,
    cases: list[tuple] = CASES,
) -> dict[str, Any]:
    """One batch (by default a text game and a terminal task) through verl's ``AgentLoopWorker.generate_sequences``."""
    references = {task_id: direct_run(task_id, make_kwargs, variant) for task_id, make_kwargs, _ in cases}
    firsts = {task_id: render_observation(ref[0]["obs"], first=True) for task_id, ref in references.items()}
    instructions = {task_id: ref[0]["obs"]["instruction"] for task_id, ref in references.items()}
    corpus = [*firsts.values(), END, "done"]
    corpus += [render_observation(r["obs"], first=False) for ref in references.values() for r in ref] * 3
    tokenizer_dir = model_dir(tmp_path / "model", corpus)
    config = trainer_config(tmp_path, tokenizer_dir, response_length)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    # The batch as verl's trainer makes it: our rows in Parquet, read by its RLHFDataset, collated.
    task_kwargs = {task_id: make_kwargs for task_id, make_kwargs, _ in cases if make_kwargs}
    rows = dataset_rows([task_id for task_id, _, _ in cases], seeds=[SEED], make_kwargs=task_kwargs)
    pd.DataFrame(rows).to_parquet(tmp_path / "train.parquet")
    dataset = RLHFDataset([str(tmp_path / "train.parquet")], tokenizer, config.data, processor=None)
    batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
    made = record_envs(monkeypatch, [] if made is None else made)
    server = server_class(tokenizer, instructions, made, variant)

    async def run() -> DataProto:
        worker = AgentLoopWorker(config, server)
        return await worker.generate_sequences(batch)

    output = asyncio.run(run())
    return {
        "output": output,
        "server": server,
        "tokenizer": tokenizer,
        "firsts": firsts,
        "references": references,
        "made": made,
    }


def segments(mask: list[int]) -> list[tuple[int, int, int]]:
    """Runs of equal mask values: (value, start, end)."""
    runs, start = [], 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            runs.append((mask[start], start, i))
            start = i
    return runs


@pytest.mark.parametrize("cases", BATCHES)
@pytest.mark.parametrize("variant", ["oracle", None], ids=["oracle", "done-at-once"])
def test_verls_worker_plays_each_family_token_in_token_out(variant, cases, tmp_path, monkeypatch):
    out = rollout(tmp_path, monkeypatch, variant, cases=cases)
    output, server, tokenizer = out["output"], out["server"], out["tokenizer"]
    batch, extra = output.batch, output.non_tensor_batch
    assert len(output) == len(cases)
    prompt_width = batch["prompts"].shape[1]
    for row, (task_id, _, same_text) in enumerate(cases):
        ((request_id, calls),) = [(r, c) for r, c in server.calls.items() if c[0]["task_id"] == task_id]
        expected_score = 1.0 if variant else 0.0

        # The reward: the evaluator's score on the last response token (verl's rm_scores), and the summary.
        attention = batch["attention_mask"][row]
        last = int(attention[prompt_width:].sum()) - 1
        assert batch["rm_scores"][row, last] == expected_score and batch["rm_scores"][row].sum() == expected_score
        summary = extra["agentenvs"][row]
        assert summary["task_id"] == task_id and summary["score"] == expected_score and summary["done"]
        assert summary["steps"] == len(calls) == len(out["references"][task_id]) - 1  # the episode ends the loop
        plan = [action_to_text(action) + END for action in server.plans[request_id]]
        assert [tokenizer.decode(call["token_ids"]) for call in calls] == plan[: len(calls)]
        assert extra["__num_turns__"][row] == 2 * len(calls)

        # The response: the model's tokens (mask 1, their logprobs) and the env's replies (mask 0, logprob 0).
        prompt = batch["prompts"][row][attention[:prompt_width].bool()].tolist()
        response = batch["responses"][row][attention[prompt_width:].bool()].tolist()
        mask = batch["response_mask"][row][: len(response)].tolist()
        logprobs = batch["rollout_log_probs"][row][: len(response)].tolist()
        runs = segments(mask)
        model_runs, env_runs = [r for r in runs if r[0] == 1], [r for r in runs if r[0] == 0]
        assert [response[s:e] for _, s, e in model_runs] == [c["token_ids"] for c in calls]
        for _, s, e in model_runs:
            assert logprobs[s:e] == pytest.approx([logprob(i) for i in range(e - s)])
        observations = [render_observation(r["obs"], first=False) for r in out["references"][task_id][1:-1]]
        replies = [tokenizer.decode(response[s:e]) for _, s, e in env_runs]
        assert len(replies) == len(observations)
        for reply, text in zip(replies, observations):
            assert reply.startswith("\n<|im_start|>user\n") and reply.endswith(f"{END}\n<|im_start|>assistant\n")
            assert reply == f"\n<|im_start|>user\n{text}{END}\n<|im_start|>assistant\n" or not same_text
        assert all(logprobs[i] == 0.0 for _, s, e in env_runs for i in range(s, e))
        assert batch["response_mask"][row][len(response) :].sum() == 0  # padding

        # Token in, token out: each request was exactly the tokens so far, from the prompt rendered once.
        for call in calls:
            assert call["prompt_ids"] == (prompt + response)[: len(call["prompt_ids"])]
        assert calls[-1]["prompt_ids"] + calls[-1]["token_ids"] == prompt + response
        assert (
            tokenizer.decode(prompt).endswith(f"{out['firsts'][task_id]}{END}\n<|im_start|>assistant\n")
            or not same_text
        )
        assert tokenizer.decode(prompt).startswith("<|im_start|>system\n")
        assert all(call["kwargs"]["image_data"] is None for call in calls)  # a text model: no processor, no images

    # Every env the loops made was closed, once.
    assert sorted(task_id for task_id, _, _, _ in out["made"]) == sorted(t for t, _, _ in cases)
    assert [closed for _, _, closed, _ in out["made"]] == [1] * len(cases)
    # The YAML entry's make_kwargs reached the loop (verl's hydra instantiation), the row's were added.
    for task_id, _, _, kwargs in out["made"]:
        assert kwargs == {"reward_mode": "sparse", **dict(case[:2] for case in cases)[task_id]}


def test_the_response_budget_cuts_the_episode_and_the_env_grades_what_was_left(tmp_path, monkeypatch):
    """``response_length`` tokens: the loop stops there, cuts the response, and ends the episode with ``done``."""
    budget = 8
    out = rollout(tmp_path, monkeypatch, "oracle", response_length=budget)
    batch, extra = out["output"].batch, out["output"].non_tensor_batch
    prompt_width = batch["prompts"].shape[1]
    # The text game's first action is a move (0 when graded); the terminal task's is the whole fix (1).
    for row, score in enumerate([0.0, 1.0]):
        assert int(batch["attention_mask"][row, prompt_width:].sum()) == budget == batch["responses"].shape[1]
        assert batch["response_mask"][row].tolist()[:1] == [1]  # the model's first reply, then the env's, cut
        summary = extra["agentenvs"][row]
        assert summary["done"] and summary["steps"] == 2 and summary["score"] == score  # one action, then done
        assert batch["rm_scores"][row, budget - 1] == score == batch["rm_scores"][row].sum()
    assert [closed for _, _, closed, _ in out["made"]] == [1] * len(CASES)


class RefusingServer(ScriptedServer):
    """A server that fails the text game's requests (and serves the others)."""

    async def generate(self, request_id: str, *, prompt_ids: list[int], **kwargs: Any) -> TokenOutput:
        if self.instructions[TEXTGAME[0]] in self.tokenizer.decode(prompt_ids):
            raise RuntimeError("the inference server is down")
        return await super().generate(request_id, prompt_ids=prompt_ids, **kwargs)


def test_every_env_is_closed_when_a_rollout_fails_and_the_others_are_cancelled(tmp_path, monkeypatch):
    live: list[list[Any]] = []
    with pytest.raises(RuntimeError, match="server is down"):
        rollout(tmp_path, monkeypatch, "oracle", server_class=RefusingServer, made=live)
    assert sorted(task_id for task_id, _, _, _ in live) == sorted(t for t, _, _ in CASES)
    assert [closed for _, _, closed, _ in live] == [1] * len(CASES)
