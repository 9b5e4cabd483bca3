"""``trl-env eval --samples K`` with a model policy: the model is loaded once, the main run keeps
its (greedy) decoding, and the samples come from a sampling twin of the same generator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

import trl_env.trl._model_play as model_policy
from trl_env._eval import ModelOptions, evaluate
from trl_env.cli import main
from trl_env.error import Error, UsageError
from trl_env.trl._model_play import load_model_policy, sampling_generator
from trl_env.trl.models import TransformersGenerator

ENVS = ["TextLargestNumber-v0", "TextGuessNumber-v0"]
OPTIONS = ModelOptions(
    max_new_tokens_per_turn=4, max_completion_length=64, temperature=0, batch_size=8
)


def test_sampling_generator_is_a_twin_on_the_same_model(tiny_model_dir: str) -> None:
    processor, greedy = load_model_policy(tiny_model_dir, OPTIONS)
    assert isinstance(greedy, TransformersGenerator)
    sampler = sampling_generator(greedy, 0.7)
    assert isinstance(sampler, TransformersGenerator)
    assert sampler._model is greedy._model  # nothing loaded again
    assert sampler.generation_config.do_sample is True
    assert sampler.generation_config.temperature == 0.7 and sampler.temperature == 0.7
    assert sampler.prefix_cache is not greedy.prefix_cache
    assert greedy.generation_config.do_sample is False  # the original is left as it was
    prompt = [processor.initial_prompt_ids(None, "Say a number.")] * 8
    first, _ = greedy.generate(prompt, 6)
    assert all(ids == first[0] for ids in first)  # greedy: the same reply every time
    samples, logprobs = sampler.generate(prompt, 6)
    assert len({tuple(ids) for ids in samples}) > 1  # sampled: the replies differ
    assert all(len(lp) == len(ids) for lp, ids in zip(logprobs, samples, strict=True))
    again, _ = greedy.generate(prompt, 6)
    assert again == first  # sampling in between changed nothing


def test_sampling_generator_errors(tiny_model_dir: str) -> None:
    _, greedy = load_model_policy(tiny_model_dir, OPTIONS)
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(UsageError, match="above 0"):
            sampling_generator(greedy, bad)

    class Other:
        def generate(self, inputs: Any, max_new_tokens: int) -> Any:
            return [], []

    with pytest.raises(Error, match="cannot make a sampling twin of a Other"):
        sampling_generator(Other(), 1.0)


def test_evaluate_a_model_with_samples(
    tiny_model_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[str] = []
    real_load = model_policy._load_model

    def counting(name: str, options: Any) -> Any:
        loads.append(name)
        return real_load(name, options)

    monkeypatch.setattr(model_policy, "_load_model", counting)
    report = evaluate(
        ENVS, tiny_model_dir, episodes=3, seed=4, model_options=OPTIONS, max_turns=2,
        samples=3, sample_temperature=1.5,
    )  # fmt: skip
    assert loads == [tiny_model_dir]  # loaded once for the main run and the samples
    assert report.samples == 3 and report.sample_temperature == 1.5
    assert len(report.sampled_episodes) == 3
    for group in report.sampled_episodes:
        assert [(e.env_id, e.seed) for e in group] == [(e.env_id, e.seed) for e in report.episodes]
        assert all(e.completion_ids for e in group)
    for env_id, summary in report.summaries.items():
        assert summary.episodes == 3 and summary.samples == 3
        assert summary.pass_at_k is not None and summary.avg_at_k is not None
        assert 0.0 <= summary.avg_at_k <= summary.pass_at_k <= 1.0
        sampled = [e for g in report.sampled_episodes for e in g if e.env_id == env_id]
        assert summary.avg_at_k == pytest.approx(sum(e.success for e in sampled) / 9)
    # The main run is greedy: the same as without samples.
    plain = evaluate(ENVS, tiny_model_dir, episodes=3, seed=4, model_options=OPTIONS, max_turns=2)
    assert [e.completion_ids for e in plain.episodes] == [e.completion_ids for e in report.episodes]
    for env_id, summary in plain.summaries.items():
        assert summary.success_rate == report.summaries[env_id].success_rate
    # The samples are sampled: not all of them replay the greedy reply.
    greedy = [e.completion_ids for e in report.episodes]
    assert any([e.completion_ids for e in group] != greedy for group in report.sampled_episodes)
    data = report.to_json()
    assert data["samples"] == 3 and data["sample_temperature"] == 1.5


def test_cli_model_samples(
    tiny_model_dir: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["eval", ENVS[0], "--policy", tiny_model_dir, "--episodes", "2", "--samples", "2",
            "--sample-temperature", "0.7", "--temperature", "0", "--max-new-tokens", "4",
            "--max-completion-length", "64", "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "pass@2" in captured.out and "samples: 2 per seed at temperature 0.7" in captured.out
    results = json.loads((out / "results.json").read_text("utf-8"))
    assert results["samples"] == 2 and results["sample_temperature"] == 0.7
    assert results["envs"][ENVS[0]]["samples"] == 2
    assert results["envs"][ENVS[0]]["pass_at_k"] is not None
    lines = (out / "transcripts.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line).get("sample") for line in lines] == [None, None, 0, 0, 1, 1]
