"""Evaluate a policy on text environments: the logic behind ``trl-env eval``.

Four kinds of policy play the same seeded games (episode ``i`` of an env is ``reset(seed=seed+i)``
whatever the policy, so results are comparable across policies):

* ``"random"``: a uniformly random *legal-looking* reply drawn by the env itself
  (``env.unwrapped.random_action(rng)``), or a sample of its ``action_space`` for an env without
  one (:class:`trl_env._policies.RandomPolicy`).
* ``"oracle"``: the env's own solver, ``env.unwrapped.oracle_action()``
  (:class:`trl_env._policies.OraclePolicy`).
* one of the env's own scripted players by name (``frequency``: Hangman's fixed letter order;
  :class:`trl_env._policies.ScriptedPolicy`).
* a model (a local directory or a Hugging Face Hub id): episodes are played in batches by the
  rollout of the TRL bridge (:func:`trl_env.trl._model_play.play_model`), the exact code that
  plays training episodes. Needs ``pip install "trl-env[trl]"``, imported only then.

Every policy plays through the one play loop, :func:`trl_env._play.run_episodes`, and every
episode is a :class:`trl_env._episode.Episode`; :func:`trl_env._summary.summarize` makes the
statistics.

With ``samples=k`` every seed is also played ``k`` more times, by a sampling policy (a model at
``sample_temperature``, ``k`` independently seeded random policies, or the oracle, which plays
the same game every time), and each summary gets pass@k and avg@k
(:func:`trl_env._summary.add_samples`).

Example:
    >>> from trl_env._eval import evaluate
    >>> report = evaluate(["TextWordle-v0"], "oracle", episodes=20)
    >>> report.summaries["TextWordle-v0"].success_rate
    1.0
"""

from __future__ import annotations

import difflib
import numbers
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

# _load stays importable from here for `trl-env list` (private, not in __all__).
from trl_env._checks import _load, check_env_id, make_text_env  # noqa: F401
from trl_env._episode import Episode, Task
from trl_env._eval_report import EvalReport, format_table, write_outputs
from trl_env._model_options import ModelOptions
from trl_env._play import run_episodes
from trl_env._policies import (
    OraclePolicy,
    Policy,
    RandomPolicy,
    ScriptedPolicy,
    has_oracle,
    oracle_action,
    random_action,
)
from trl_env._progress import _Progress, _TurnCounter
from trl_env._scripted import is_scripted_player
from trl_env._summary import EnvSummary, add_samples, confidence_interval, summarize
from trl_env.error import Error, MissingExtraError, NoOracleError, UsageError  # noqa: F401
from trl_env.utils._hub import is_hub_id

__all__ = [
    "EnvSummary",
    "EpisodeResult",
    "EvalReport",
    "ModelOptions",
    "NoOracleError",
    "UsageError",
    "check_env_id",
    "confidence_interval",
    "evaluate",
    "find_oracle",
    "format_table",
    "policy_kind",
    "random_action",
    "summarize",
    "write_outputs",
]

EpisodeResult = Episode
"""The old name of :class:`trl_env._episode.Episode` (one record for every way of playing)."""


_REMOVED = {
    "ORACLES": "oracle_action()",
    "RANDOM_ACTIONS": "random_action(rng)",
}


def __getattr__(name: str) -> Any:
    # The per-env policy tables of 0.2 are gone: every env now owns its policies.
    if name in _REMOVED:
        raise AttributeError(
            f"trl_env._eval.{name} was removed in 0.3: an env's policies are its own methods "
            f"now; define {_REMOVED[name]} on your env class (see trl_env._policies and "
            "docs/writing_a_game.md)"
        )
    raise AttributeError(f"module 'trl_env._eval' has no attribute {name!r}")


def find_oracle(env_id: str) -> Callable[[gym.Env[str, str]], str] | None:
    """The oracle of ``env_id`` (``function(env) -> action text``), or ``None`` if it has none.

    An env has an oracle when ``env.unwrapped`` has an ``oracle_action()`` method.
    """
    check_env_id(env_id)
    env = gym.make(env_id)
    try:
        return oracle_action if has_oracle(env) else None
    finally:
        env.close()


_POLICY_NAMES = ("random", "oracle")


def policy_kind(policy: str, env_ids: Sequence[str] = ()) -> str:
    """``"random"``, ``"oracle"``, ``"scripted"`` (a scripted player of every env of ``env_ids``,
    see :func:`~trl_env._policies.scripted_policies`) or ``"model"``; a :class:`UsageError` for a
    policy that is none.

    A model is an existing path or a string shaped like a Hub id (``org/name`` or ``name``); a
    near miss of ``random``/``oracle`` that is not an existing path is taken for a typo.
    """
    if policy in _POLICY_NAMES:
        return policy
    if is_scripted_player(policy, env_ids):
        return "scripted"
    if os.path.exists(policy):
        return "model"
    close = difflib.get_close_matches(policy.lower(), _POLICY_NAMES, n=1, cutoff=0.7)
    if close:
        raise UsageError(f"unknown policy {policy!r}. Did you mean {close[0]!r}?")
    if not is_hub_id(policy):
        raise UsageError(
            f"model path {policy!r} does not exist and is not a Hugging Face Hub id (like "
            "'Qwen/Qwen3-0.6B'). --policy takes random, oracle, a scripted player of the env, a "
            "model directory, a Hub id, a .gguf file, a LoRA adapter or a trl-env run folder."
        )
    return "model"


def _import_bridge() -> None:
    """The ``trl`` extra, or a :class:`MissingExtraError` that names the install."""
    from trl_env.trl._lazy import require_trl  # trl_env.trl itself loads lazily

    require_trl("evaluating a model")


_DEFAULT_TURN_CAP = 1000  # for envs registered without max_episode_steps


def _check_oracles(envs: Mapping[str, gym.Env[str, str]]) -> None:
    missing = [env_id for env_id, env in envs.items() if not has_oracle(env)]
    if missing:
        for env in envs.values():
            env.close()
        one = len(missing) == 1
        raise NoOracleError(
            f"{', '.join(missing)} {'has' if one else 'have'} no oracle, so --policy oracle "
            f"cannot play {'it' if one else 'them'}; use --policy random or a model. "
            f"Envs with an oracle: {_ids_with_an_oracle()} (`trl-env list --oracles` lists them "
            "with a description)."
        )


def _ids_with_an_oracle() -> str:
    """Every registered ID with an oracle, by source; a long source as "every ... but" the few
    without (100 of the 105 reasoning-gym tasks have one). Read from the registry, as
    ``trl-env list --oracles`` reads it: no env is made, no bridged library imported."""
    from trl_env.envs import SOURCES, env_has_oracle, env_specs

    parts = []
    for source in SOURCES:
        oracle = {spec.id: env_has_oracle(spec) for spec in env_specs(source)}
        have = [env_id for env_id, has in oracle.items() if has]
        lack = [env_id for env_id, has in oracle.items() if not has]
        if len(have) > 20 and len(lack) < len(have):
            parts.append(f"every {source} ID" + (f" but {', '.join(lack)}" if lack else ""))
        elif have:
            parts.append(", ".join(have))
    return "; ".join(parts)


_SAMPLE_STREAM = 0x53414D50  # "SAMP": the sampled random policies' seeds, apart from the main one


def _simple_policy(kind: str, seed: int, sample: int | None) -> Policy:
    """The oracle, a scripted player (``kind`` its name), or the random policy of the main run
    (``sample=None``) or of sample ``i``.

    Sample ``i`` gets its own seed drawn from ``(seed, "SAMP", i)``: the ``k`` random policies
    are distinct from each other and from the main run's, and the same in every run."""
    if kind == "oracle":
        return OraclePolicy()
    if kind != "random":
        return ScriptedPolicy(kind)
    if sample is None:
        return RandomPolicy(seed)
    entropy = np.random.SeedSequence([seed, _SAMPLE_STREAM, sample]).generate_state(1)[0]
    return RandomPolicy(int(entropy))


def _play_simple(
    kind: str,
    envs: Mapping[str, gym.Env[str, str]],
    seeds: Sequence[int],
    kwargs: Mapping[str, Any],
    max_turns: int | None,
    bar: _Progress,
    sample: int | None = None,
) -> list[Episode]:
    """Random or oracle episodes, one env at a time, one episode after another."""
    episodes: list[Episode] = []
    for env_id, env in envs.items():
        bar.describe(env_id)
        spec = env.spec
        turn_cap = max_turns or (spec and spec.max_episode_steps) or _DEFAULT_TURN_CAP
        policy = _simple_policy(kind, seeds[0] if seeds else 0, sample)
        for seed in seeds:
            episode = Episode(Task(env_id, seed, dict(kwargs)))
            run_episodes([episode], [env], policy, max_turns=turn_cap)
            episodes.append(episode)
            bar.advance(turns=episode.turns)
    return episodes


def _play_model(
    name: str,
    env_ids: list[str],
    seeds: list[int],
    options: ModelOptions,
    kwargs: dict[str, Any],
    max_turns: int | None,
    progress: bool,
    samples: int,
    sample_temperature: float,
) -> tuple[list[Episode], list[list[Episode]], float]:
    """Episodes of a model policy (the TRL rollout), its ``samples`` sampled episodes per seed
    (one list per sample) and the seconds they took (loading aside)."""
    _import_bridge()
    from trl_env.trl._model_play import load_model_policy, play_model, sampling_generator

    model = load_model_policy(name, options)
    bar = _Progress(len(env_ids) * len(seeds) * (1 + samples), progress, "episodes")
    start = time.perf_counter()
    sampled: list[list[Episode]] = [[] for _ in range(samples)]
    processor, generator = model
    try:
        # Turns count as they are played: a batch's episodes may take minutes to end.
        results = play_model(
            (processor, _TurnCounter(generator, bar.add_turns)), env_ids, seeds, options,
            env_kwargs=kwargs, max_turns=max_turns, on_batch=bar.advance,
        )  # fmt: skip
        if samples:
            clear = getattr(generator, "clear_cache", None)
            if callable(clear):  # the main run's key/value states are not needed any more
                clear()
            sampling = sampling_generator(generator, sample_temperature)
            sampler = (processor, _TurnCounter(sampling, bar.add_turns))
            copies = [seed for seed in seeds for _ in range(samples)]  # a seed's copies batched
            played = play_model(
                sampler, env_ids, copies, options, env_kwargs=kwargs, max_turns=max_turns,
                on_batch=bar.advance,
            )  # fmt: skip
            for i, episode in enumerate(played):
                sampled[i % samples].append(episode)
    finally:
        bar.close()
    return results, sampled, time.perf_counter() - start


def _check_arguments(
    ids: Sequence[str], episodes: int, seed: int, samples: Any, sample_temperature: Any
) -> None:
    if not ids:
        raise UsageError("give at least one environment ID")
    if episodes < 1:
        raise UsageError(f"episodes must be a positive integer, got {episodes}")
    if seed < 0:
        raise UsageError(f"seed must be >= 0, got {seed}")
    if isinstance(samples, bool) or not isinstance(samples, numbers.Integral) or samples < 0:
        raise UsageError(
            f"samples must be an integer >= 0 (k, the sampled episodes per seed for pass@k and "
            f"avg@k; 0 for none), got {samples!r}"
        )
    if (
        isinstance(sample_temperature, bool)
        or not isinstance(sample_temperature, numbers.Real)
        or not 0 < float(sample_temperature) < float("inf")
    ):
        raise UsageError(
            f"sample_temperature must be a finite number above 0, got {sample_temperature!r}; the "
            "samples are drawn at it (1.0: the model's own distribution), the main run keeps "
            "model_options.temperature"
        )


def evaluate(
    env_ids: str | Sequence[str],
    policy: str,
    episodes: int,
    seed: int = 0,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    max_turns: int | None = None,
    model_options: ModelOptions | None = None,
    record_transcripts: bool = True,
    progress: bool = False,
    samples: int = 0,
    sample_temperature: float = 1.0,
) -> EvalReport:
    """Play ``episodes`` episodes of each env with ``policy`` and summarise them.

    With ``samples=k``, every seed is then played ``k`` more times by a sampling policy: a model
    at ``sample_temperature`` (the same loaded model and rollout), ``k`` random policies with
    distinct reproducible seeds, or the oracle (deterministic: its ``k`` samples are the same
    game). Each summary then also has pass@k (the unbiased estimator of
    :func:`trl_env._summary.pass_at_k`: with ``k`` samples, the share of seeds won at least once)
    and avg@k (the mean success of the samples); the main episodes' statistics are unchanged.

    Args:
        env_ids: One registered ID or several.
        policy: ``"random"``, ``"oracle"``, or a model directory / Hugging Face Hub id.
        episodes: Episodes per env; episode ``i`` plays ``reset(seed=seed + i)``.
        seed: Seed of the first episode (and of the random policy's generator).
        env_kwargs: ``gym.make`` keyword arguments applied to every env.
        max_turns: Stop an episode after this many turns (default: the env's own limit, or 1000
            for a random/oracle policy on an env registered without one).
        model_options: Generation settings for a model policy.
        record_transcripts: Keep every episode's transcript in the results.
        progress: Show progress on stderr (episodes done and turns played): a bar on a
            terminal, rate-limited lines otherwise.
        samples: ``k``, the sampled episodes per seed for pass@k and avg@k (0: none). They are
            in :attr:`EvalReport.sampled_episodes`, one list per sample.
        sample_temperature: The temperature of a model's samples (above 0; ignored by the
            random and oracle policies).

    Raises:
        UsageError: Unknown ID, non-text env, no oracle, bad policy, kwargs, ``samples`` or
            ``sample_temperature``.
        MissingExtraError: A model policy without the ``[trl]`` extra.
        Error: The model cannot be loaded, or ``use_vllm`` without a GPU.
    """
    ids = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    _check_arguments(ids, episodes, seed, samples, sample_temperature)
    kind, options = policy_kind(policy, ids), model_options or ModelOptions()
    specs = {env_id: check_env_id(env_id) for env_id in dict.fromkeys(ids)}
    if options.use_vllm and kind != "model":
        raise UsageError("--use-vllm only applies when --policy is a model")
    kwargs, samples = dict(env_kwargs or {}), int(samples)
    seeds = list(range(seed, seed + episodes))
    played = _play(kind, policy, list(specs), seeds, kwargs, max_turns, options, progress,
                   samples, sample_temperature)  # fmt: skip
    temperature = float(sample_temperature) if samples and kind == "model" else None
    return _report(policy, seed, episodes, kwargs, played, samples, temperature, record_transcripts)


def _report(
    policy: str,
    seed: int,
    episodes: int,
    kwargs: dict[str, Any],
    played: tuple[list[Episode], list[list[Episode]], float],
    samples: int,
    sample_temperature: float | None,
    record_transcripts: bool,
) -> EvalReport:
    """The report of the played episodes: each env's statistics (pass@k and avg@k with samples),
    and the episodes (without their transcripts unless ``record_transcripts``)."""
    results, sampled, elapsed = played
    if not record_transcripts:
        for episode in [*results, *(e for group in sampled for e in group)]:
            episode.transcript = None
    env_ids = list(dict.fromkeys(e.env_id for e in results))
    summaries = {e: summarize(e, [r for r in results if r.env_id == e]) for e in env_ids}
    if samples:
        for env_id, summary in summaries.items():
            add_samples(summary, [r for g in sampled for r in g if r.env_id == env_id], samples)
    return EvalReport(
        policy=policy,
        seed=seed,
        episodes_per_env=episodes,
        summaries=summaries,
        episodes=results,
        elapsed_s=elapsed,
        env_kwargs=kwargs,
        samples=samples,
        sample_temperature=sample_temperature,
        sampled_episodes=sampled,
    )


def _play(
    kind: str,
    policy: str,
    env_ids: list[str],
    seeds: list[int],
    kwargs: dict[str, Any],
    max_turns: int | None,
    options: ModelOptions,
    progress: bool,
    samples: int,
    sample_temperature: float,
) -> tuple[list[Episode], list[list[Episode]], float]:
    """Every episode of the eval: the main ones, the ``samples`` sampled ones per seed (one list
    per sample), and the seconds they took (loading a model aside)."""
    envs = {env_id: make_text_env(env_id, kwargs) for env_id in env_ids}
    if kind == "oracle":
        _check_oracles(envs)
    if kind == "model":
        for env in envs.values():  # checked; the rollout makes (and pools) its own
            env.close()
        return _play_model(
            policy, env_ids, seeds, options, kwargs, max_turns, progress, samples,
            sample_temperature,
        )  # fmt: skip
    bar = _Progress(len(env_ids) * len(seeds) * (1 + samples), progress, env_ids[0])
    start = time.perf_counter()
    try:
        # `policy` is random, oracle or a scripted player's name.
        results = _play_simple(policy, envs, seeds, kwargs, max_turns, bar)
        sampled = [
            _play_simple(policy, envs, seeds, kwargs, max_turns, bar, sample=i)
            for i in range(samples)
        ]
    finally:
        bar.close()
        for env in envs.values():
            env.close()
    return results, sampled, time.perf_counter() - start
