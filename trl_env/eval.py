"""Evaluate a policy on text environments: the logic behind ``trl-env eval`` and ``trl-env play``.

Three kinds of policy play the same seeded games (episode ``i`` of an env is ``reset(seed=seed+i)``
whatever the policy, so results are comparable across policies):

* ``"random"``: a uniformly random *legal-looking* reply for the env (a random dictionary word in
  brackets for Wordle, a random empty cell for tic-tac-toe, ...; see :data:`RANDOM_ACTIONS`),
  or a sample of the env's ``action_space`` for an env this module does not know.
* ``"oracle"``: the env's own solver. Catalogue modules expose ``oracle_action(env) -> str``,
  found from the env's entry point; :data:`ORACLES` adds or overrides oracles by ID prefix
  (Wordle's lives in :mod:`trl_env.envs.wordle_solver`).
* a model (a local directory or a Hugging Face Hub id): episodes are played in batches by the
  rollout of the TRL bridge (:func:`trl_env.trl.rollout.play_episodes`), the exact code that
  plays training episodes. Needs ``pip install "trl-env[trl]"``, imported only then.

Example:
    >>> from trl_env.eval import evaluate
    >>> report = evaluate(["TextWordle-v0"], "oracle", episodes=20)
    >>> report.summaries["TextWordle-v0"].success_rate
    1.0
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import json
import math
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from trl_env.adapters import is_text_space
from trl_env.error import Error, MissingExtraError

__all__ = [
    "ORACLES",
    "RANDOM_ACTIONS",
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

PolicyFn = Callable[[gym.Env[str, str], dict[str, Any], np.random.Generator], str]


class UsageError(Error, ValueError):
    """A command-line argument or option is wrong; the message says what to pass instead."""


class NoOracleError(UsageError):
    """``--policy oracle`` for an environment that has no oracle."""


# --- oracles ------------------------------------------------------------------------------------

ORACLES: dict[str, str | Callable[[gym.Env[str, str]], str]] = {
    "TextWordle": "trl_env.envs.wordle_solver:oracle_action",
}
"""Oracles by env-name prefix (``"TextWordle"`` matches ``TextWordle-v0``): a
``function(env) -> action text`` or its ``"module:function"`` path (imported on first use).
Consulted before the ``oracle_action`` of the env's own module; the longest matching prefix
wins."""


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def _entry_module(spec: gym.envs.registration.EnvSpec) -> str | None:
    """The module that defines the env of ``spec`` (looking through ``register_protocol_env``)."""
    entry: Any = spec.entry_point
    if entry == "trl_env.adapters:ProtocolToGymnasium":
        entry = (spec.kwargs or {}).get("env", entry)
    if isinstance(entry, str):
        return entry.partition(":")[0] or None
    return getattr(entry, "__module__", None)


def _by_prefix(table: Mapping[str, Any], name: str) -> Any:
    matches = [prefix for prefix in table if name.startswith(prefix)]
    return table[max(matches, key=len)] if matches else None


def find_oracle(env_id: str) -> Callable[[gym.Env[str, str]], str] | None:
    """The oracle of ``env_id`` (``function(env) -> action text``), or ``None`` if it has none.

    Looks in :data:`ORACLES` by ID prefix first, then for an ``oracle_action`` that the module
    defining the env defines itself (or lists in its ``__all__``).
    """
    spec = gym.spec(env_id)
    entry = _by_prefix(ORACLES, spec.name)
    if entry is not None:
        return _load(entry) if isinstance(entry, str) else entry
    module_name = _entry_module(spec)
    if module_name is None:
        return None
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    oracle = getattr(module, "oracle_action", None)
    if not callable(oracle):
        return None
    # Defined there, or re-exported on purpose (in __all__): not merely imported for use.
    if getattr(oracle, "__module__", None) == module.__name__:
        return oracle
    return oracle if "oracle_action" in getattr(module, "__all__", ()) else None


# --- random legal-looking actions ---------------------------------------------------------------


def _wordle_random(env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator) -> str:
    from trl_env.envs.wordle import answer_words

    words = answer_words()
    return f"[{words[int(rng.integers(len(words)))]}]"


def _guess_number_random(
    env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator
) -> str:
    game: Any = env.unwrapped
    return f"[{int(rng.integers(game.low, game.high + 1))}]"


def _mastermind_random(
    env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator
) -> str:
    game: Any = env.unwrapped
    code = rng.integers(1, game.num_colors + 1, size=game.code_length).tolist()
    return "[" + " ".join(map(str, code)) + "]"


def _sudoku_random(env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator) -> str:
    game: Any = env.unwrapped
    blanks = [i for i, value in enumerate(game.grid) if value == 0] or [0]
    cell = blanks[int(rng.integers(len(blanks)))]
    digit = int(rng.integers(1, game.size + 1))
    return f"[{cell // game.size + 1} {cell % game.size + 1} {digit}]"


def _countdown_random(
    env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator
) -> str:
    game: Any = env.unwrapped
    numbers = list(game.numbers)
    a, b = rng.choice(len(numbers), size=2, replace=False)
    operator = "+-*/"[int(rng.integers(4))]
    return f"[{numbers[int(a)]} {operator} {numbers[int(b)]}]"


def _hangman_random(env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator) -> str:
    game: Any = env.unwrapped
    tried = set(game.guessed)
    letters = [c for c in "abcdefghijklmnopqrstuvwxyz" if c not in tried] or ["e"]
    return f"[{letters[int(rng.integers(len(letters)))]}]"


RANDOM_ACTIONS: dict[str, PolicyFn] = {
    "TextWordle": _wordle_random,
    "TextGuessNumber": _guess_number_random,
    "TextMastermind": _mastermind_random,
    "TextSudoku": _sudoku_random,
    "TextCountdown": _countdown_random,
    "TextHangman": _hangman_random,
}
"""Random legal-looking replies by env-name prefix, ``function(env, info, rng) -> action text``.
Envs not listed here fall back to :func:`random_action`'s generic rules."""


def random_action(env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator) -> str:
    """A uniformly random legal-looking reply for ``env`` in its current state.

    In order: the env's entry in :data:`RANDOM_ACTIONS`; one of ``info["legal_moves"]``; one of
    the unwrapped env's ``actions`` (the toy-text games); a sample of ``env.action_space``.
    """
    spec = env.spec
    special = _by_prefix(RANDOM_ACTIONS, spec.name) if spec is not None else None
    if special is not None:
        return special(env, info, rng)
    legal = info.get("legal_moves")
    if legal:
        return f"[{legal[int(rng.integers(len(legal)))]}]"
    actions = getattr(env.unwrapped, "actions", None)
    if isinstance(actions, Sequence) and actions and all(isinstance(a, str) for a in actions):
        return f"[{actions[int(rng.integers(len(actions)))]}]"
    return str(env.action_space.sample())


# --- results ------------------------------------------------------------------------------------


@dataclass
class EpisodeResult:
    """One evaluated episode.

    ``ended_by`` is ``"terminated"`` or ``"truncated"`` (the env ended it), ``"max_turns"`` or
    ``"token_budget"`` (a limit of the evaluation did), or ``"error"`` (the env or policy raised).
    The transcript alternates ``{"role": "env", "text", "reward"}`` and
    ``{"role": "agent", "action", ...}`` entries (the rollout's format).
    """

    env_id: str
    seed: int
    episode_return: float
    success: bool
    turns: int
    invalid_actions: int
    ended_by: str
    error: str | None = None
    transcript: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (one line of ``transcripts.jsonl``)."""
        return dataclasses.asdict(self)


@dataclass
class EnvSummary:
    """The statistics of one env's episodes (see :func:`summarize`)."""

    env_id: str
    episodes: int
    success_rate: float
    mean_return: float
    return_ci95: float | None
    mean_turns: float
    invalid_action_rate: float
    errors: int
    ended_by: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self)


@dataclass
class EvalReport:
    """The result of :func:`evaluate`: per-env summaries and every episode."""

    policy: str
    seed: int
    episodes_per_env: int
    summaries: dict[str, EnvSummary]
    episodes: list[EpisodeResult]
    elapsed_s: float
    env_kwargs: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``results.json``: settings and per-env summaries (episodes go to the JSONL file)."""
        from trl_env import __version__

        return {
            "trl_env_version": __version__,
            "policy": self.policy,
            "seed": self.seed,
            "episodes_per_env": self.episodes_per_env,
            "env_kwargs": self.env_kwargs,
            "elapsed_s": round(self.elapsed_s, 4),
            "envs": {env_id: s.to_json() for env_id, s in self.summaries.items()},
        }


# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def confidence_interval(values: Sequence[float]) -> float | None:
    """Half-width of the 95% confidence interval of the mean (Student's t); ``None`` if n < 2.

    Example:
        >>> round(confidence_interval([0.0, 1.0, 0.0, 1.0]), 3)
        0.919
    """
    n = len(values)
    if n < 2:
        return None
    df = n - 1
    t = _T95[df - 1] if df <= len(_T95) else 1.959964 + 2.37 / df
    return float(t * np.std(values, ddof=1) / math.sqrt(n))


def summarize(env_id: str, episodes: Sequence[EpisodeResult]) -> EnvSummary:
    """Success rate, mean return with its 95% CI, mean turns and invalid-action rate.

    The invalid-action rate is invalid replies over all turns played.
    """
    n = len(episodes)
    returns = [e.episode_return for e in episodes]
    turns = sum(e.turns for e in episodes)
    return EnvSummary(
        env_id=env_id,
        episodes=n,
        success_rate=sum(e.success for e in episodes) / n if n else 0.0,
        mean_return=float(np.mean(returns)) if n else 0.0,
        return_ci95=confidence_interval(returns),
        mean_turns=turns / n if n else 0.0,
        invalid_action_rate=sum(e.invalid_actions for e in episodes) / turns if turns else 0.0,
        errors=sum(e.error is not None for e in episodes),
        ended_by=dict(Counter(e.ended_by for e in episodes)),
    )


# --- checks -------------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def check_env_id(env_id: str) -> gym.envs.registration.EnvSpec:
    """The spec of ``env_id``, or a :class:`UsageError` with gymnasium's "Did you mean" hint."""
    try:
        return gym.spec(env_id)
    except gym.error.Error as error:
        message = _one_line(str(error))
        suggested = re.search(r"Did you mean: `([^`]+)`\?", message)
        if suggested:  # gymnasium names the env without its version: add the full IDs
            ids = [i for i, spec in gym.registry.items() if spec.name == suggested.group(1)]
            if ids:
                message = message.replace(
                    suggested.group(0), f"Did you mean: `{suggested.group(1)}` ({', '.join(ids)})?"
                )
        else:
            close = difflib.get_close_matches(env_id, list(gym.registry), n=1, cutoff=0.6)
            if close:
                message = message.rstrip(".") + f". Did you mean: {close[0]}?"
        raise UsageError(
            f"unknown environment ID {env_id!r}: {message} "
            "Run 'trl-env list' to see the registered IDs."
        ) from None


def _make_text_env(env_id: str, env_kwargs: Mapping[str, Any]) -> gym.Env[str, str]:
    try:
        env = gym.make(env_id, **env_kwargs)
    except TypeError as error:
        raise UsageError(f"bad --env-kwargs for {env_id}: {_one_line(str(error))}") from None
    if not (is_text_space(env.observation_space) and is_text_space(env.action_space)):
        env.close()
        raise UsageError(
            f"{env_id} is not a text environment (its spaces are {env.observation_space} and "
            f"{env.action_space}); trl-env evaluates envs with string observations and actions"
        )
    return env


_POLICY_NAMES = ("random", "oracle")
# `org/name` or `name`: the shapes of a Hugging Face Hub repository id (as trl_env.trl.tiny).
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def policy_kind(policy: str) -> str:
    """``"random"``, ``"oracle"`` or ``"model"``; a :class:`UsageError` for a policy that is none.

    A model is an existing path or a string shaped like a Hub id (``org/name`` or ``name``); a
    near miss of ``random``/``oracle`` that is not an existing path is taken for a typo.
    """
    if policy in _POLICY_NAMES:
        return policy
    if os.path.exists(policy):
        return "model"
    close = difflib.get_close_matches(policy.lower(), _POLICY_NAMES, n=1, cutoff=0.7)
    if close:
        raise UsageError(f"unknown policy {policy!r}. Did you mean {close[0]!r}?")
    if not _HUB_ID.match(policy):
        raise UsageError(
            f"model path {policy!r} does not exist and is not a Hugging Face Hub id (like "
            "'Qwen/Qwen3-0.6B'). --policy takes random, oracle, a local model directory or a "
            "Hub id."
        )
    return "model"


# --- progress -----------------------------------------------------------------------------------


class _Progress:
    """A tqdm bar on stderr updated in chunks (about 1% of the total), or nothing."""

    def __init__(self, total: int, enabled: bool, description: str) -> None:
        self._bar: Any = None
        self._pending = 0
        self._chunk = max(1, total // 100)
        if enabled and total > 0:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm comes with transformers; without it, no bar
                return
            self._bar = tqdm(
                total=total,
                desc=description,
                unit="ep",
                file=sys.stderr,
                mininterval=0.1,
                dynamic_ncols=True,
            )

    def advance(self, n: int = 1) -> None:
        if self._bar is None:
            return
        self._pending += n
        if self._pending >= self._chunk:
            self._bar.update(self._pending)
            self._pending = 0

    def describe(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_description_str(text, refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            if self._pending:
                self._bar.update(self._pending)
            self._bar.close()
            self._bar = None


# --- the policy loop (random and oracle) ----------------------------------------------------------


def _success(info: Mapping[str, Any], terminated: bool, reward: float) -> bool:
    # The rollout's definition (trl_env.trl.rollout._success), kept here so that random/oracle
    # evaluation needs no torch: an env that knows what winning is says so; otherwise a positive
    # final reward on termination.
    for key in ("won", "success", "is_success"):
        if key in info:
            return bool(info[key])
    return bool(terminated and reward > 0)


def _play_env(
    env: gym.Env[str, str],
    env_id: str,
    policy: PolicyFn,
    seeds: Sequence[int],
    *,
    max_turns: int,
    record: bool,
    progress: _Progress,
) -> list[EpisodeResult]:
    rng = np.random.default_rng(seeds[0] if seeds else 0)
    env.action_space.seed(seeds[0] if seeds else 0)
    results: list[EpisodeResult] = []
    for seed in seeds:
        transcript: list[dict[str, Any]] | None = [] if record else None
        total, turns, invalid = 0.0, 0, 0
        success, ended_by, problem = False, "max_turns", None
        try:
            observation, info = env.reset(seed=seed)
            if transcript is not None:
                transcript.append({"role": "env", "text": observation})
            while turns < max_turns:
                action = policy(env, info, rng)
                observation, reward, terminated, truncated, info = env.step(action)
                reward = float(reward)
                total += reward
                turns += 1
                invalid += bool(info.get("invalid_action", False))
                if transcript is not None:
                    transcript.append({"role": "agent", "action": action})
                    transcript.append({"role": "env", "text": observation, "reward": reward})
                if terminated or truncated:
                    ended_by = "terminated" if terminated else "truncated"
                    success = _success(info, terminated, reward)
                    break
        except Exception as error:  # one broken episode does not end the evaluation
            ended_by, problem = "error", f"{type(error).__name__}: {error}"
        results.append(
            EpisodeResult(
                env_id=env_id,
                seed=seed,
                episode_return=total,
                success=success,
                turns=turns,
                invalid_actions=invalid,
                ended_by=ended_by,
                error=problem,
                transcript=transcript,
            )
        )
        progress.advance()
    return results


def _oracle_policy(oracle: Callable[[gym.Env[str, str]], str]) -> PolicyFn:
    return lambda env, info, rng: oracle(env)


# --- model policies (the TRL bridge's rollout) ----------------------------------------------------


@dataclass
class ModelOptions:
    """How a model policy generates (``trl-env eval --policy <model>``)."""

    max_new_tokens: int = 256
    """Tokens one model turn may sample."""
    max_completion_length: int = 4096
    """Tokens of a whole episode after the prompt (model and environment turns)."""
    temperature: float | None = None
    """Sampling temperature; 0 is greedy; ``None`` keeps the model's generation config."""
    batch_size: int = 16
    """Episodes played together (one batched generation call per turn)."""
    system_prompt: str | None = None
    """System message of every episode; ``None`` for the rollout's default."""
    use_vllm: bool = False
    """Generate with vLLM (needs a CUDA GPU and ``pip install vllm``)."""


def _import_bridge() -> Any:
    try:
        import trl_env.trl as bridge
    except MissingExtraError:
        raise
    except ImportError as error:  # a broken install: name the extra all the same
        raise MissingExtraError("trl", "evaluating a model", error.name or "trl") from None
    return bridge


def _check_vllm() -> None:
    import torch

    if not torch.cuda.is_available():
        raise Error(
            "--use-vllm needs a CUDA GPU and none is available (torch.cuda.is_available() is "
            "False); drop --use-vllm to generate with transformers instead"
        )
    try:
        import vllm  # noqa: F401
    except ImportError:
        raise Error("--use-vllm needs the vllm package: pip install vllm") from None


class _VLLMEngineGenerator:
    """Batched turns from an offline ``vllm.LLM`` (the rollout's ``Generator`` protocol)."""

    def __init__(self, model: str, eos_token_ids: Iterable[int], temperature: float) -> None:
        from vllm import LLM

        self.llm = LLM(model=model)
        self.eos_token_ids = sorted(int(i) for i in eos_token_ids)
        self.temperature = temperature

    def generate(
        self, inputs: Sequence[Sequence[int]], max_new_tokens: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        if not inputs:
            return [], []
        params = SamplingParams(
            max_tokens=max_new_tokens,
            temperature=self.temperature,
            logprobs=0,
            stop_token_ids=self.eos_token_ids,
        )
        outputs = self.llm.generate(
            [TokensPrompt(prompt_token_ids=list(ids)) for ids in inputs], params, use_tqdm=False
        )
        completions, logprobs = [], []
        for output in outputs:
            sample = output.outputs[0]
            ids = list(sample.token_ids)
            completions.append(ids)
            steps = sample.logprobs or []  # one {token id: Logprob} dict per sampled token
            logprobs.append(
                [float(step[token].logprob) for step, token in zip(steps, ids, strict=False)]
            )
        return completions, logprobs


class _ModelPolicy:
    """A loaded model and how it generates: the rollout's processor and generator."""

    def __init__(self, model_name: str, options: ModelOptions) -> None:
        bridge = _import_bridge()
        from trl_env.trl.tiny import load_model_and_tokenizer

        if options.use_vllm:
            _check_vllm()
        import torch

        try:
            model, tokenizer = load_model_and_tokenizer(model_name)
        except (OSError, ValueError) as error:
            raise Error(f"could not load model {model_name!r}: {_first_line(error)}") from error
        self.processor = bridge.ChatTemplateProcessor(tokenizer)
        self.options = options
        temperature = options.temperature
        if options.use_vllm:
            del model
            self.generator: Any = _VLLMEngineGenerator(
                model_name,
                self.processor.eos_token_ids,
                1.0 if temperature is None else temperature,
            )
            return
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = model.to(device).eval()  # type: ignore[arg-type]
        config = model.generation_config
        updates: dict[str, Any] = {}
        if temperature == 0:
            updates = {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        elif temperature is not None:
            updates = {"do_sample": True, "temperature": temperature}
        if updates:
            config = type(config).from_dict({**config.to_dict(), **updates})
            # generate() fills unset fields from the model's own config: keep the two the same.
            model.generation_config = config
        pad = tokenizer.pad_token_id
        self.generator = bridge.TransformersGenerator(
            model,
            pad_token_id=self.processor.end_of_turn_id if pad is None else pad,
            eos_token_ids=sorted(self.processor.eos_token_ids),
            generation_config=config,
            temperature=temperature or getattr(config, "temperature", None) or 1.0,
        )

    def play(
        self,
        env_ids: Sequence[str],
        seeds: Sequence[int],
        *,
        env_kwargs: Mapping[str, Any],
        max_turns: int | None,
        record: bool,
        progress: _Progress,
    ) -> list[EpisodeResult]:
        """Every (env, seed) episode, ``batch_size`` at a time, with the training rollout."""
        from trl_env.trl.rollout import RolloutConfig, play_episodes
        from trl_env.trl.tasks import Task

        options = self.options
        settings: dict[str, Any] = {
            "max_new_tokens_per_turn": options.max_new_tokens,
            "max_turns": max_turns,
            "log_metrics": False,
        }
        if options.system_prompt is not None:
            settings["system_prompt"] = options.system_prompt or None
        config = RolloutConfig(**settings)
        tasks = [
            Task(env_id=env_id, seed=str(seed), kwargs=dict(env_kwargs))
            for env_id in env_ids
            for seed in seeds
        ]
        results: list[EpisodeResult] = []
        for start in range(0, len(tasks), options.batch_size):
            batch = tasks[start : start + options.batch_size]
            episodes = play_episodes(
                batch,
                self.generator,
                self.processor,
                config,
                max_completion_length=options.max_completion_length,
            )
            for episode in episodes:
                results.append(
                    EpisodeResult(
                        env_id=episode.task.env_id,
                        seed=int(episode.task.seed),
                        episode_return=episode.episode_return,
                        success=episode.success,
                        turns=episode.turns,
                        invalid_actions=episode.invalid_actions,
                        ended_by=episode.ended_by or "error",
                        error=episode.error,
                        transcript=episode.transcript if record else None,
                    )
                )
            progress.advance(len(batch))
        return results


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


# --- the entry point ------------------------------------------------------------------------------

_DEFAULT_TURN_CAP = 1000  # for envs registered without max_episode_steps


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
) -> EvalReport:
    """Play ``episodes`` episodes of each env with ``policy`` and summarise them.

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
        progress: Show a progress bar on stderr.

    Raises:
        UsageError: Unknown ID, non-text env, no oracle, bad policy or kwargs.
        MissingExtraError: A model policy without the ``[trl]`` extra.
        Error: The model cannot be loaded, or ``use_vllm`` without a GPU.
    """
    ids = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    if not ids:
        raise UsageError("give at least one environment ID")
    if episodes < 1:
        raise UsageError(f"episodes must be a positive integer, got {episodes}")
    if seed < 0:
        raise UsageError(f"seed must be >= 0, got {seed}")
    kwargs = dict(env_kwargs or {})
    kind = policy_kind(policy)
    specs = {env_id: check_env_id(env_id) for env_id in dict.fromkeys(ids)}
    oracles: dict[str, Callable[[gym.Env[str, str]], str]] = {}
    if kind == "oracle":
        missing = []
        for env_id in specs:
            oracle = find_oracle(env_id)
            if oracle is None:
                missing.append(env_id)
            else:
                oracles[env_id] = oracle
        if missing:
            have = [e.id for e in _catalogue() if find_oracle(e.id) is not None]
            raise NoOracleError(
                f"{', '.join(missing)} {'has' if len(missing) == 1 else 'have'} no oracle, so "
                f"--policy oracle cannot play {'it' if len(missing) == 1 else 'them'}; use "
                f"--policy random or a model. Envs with an oracle: {', '.join(have)}."
            )
    if (model_options or ModelOptions()).use_vllm and kind != "model":
        raise UsageError("--use-vllm only applies when --policy is a model")
    envs = {env_id: _make_text_env(env_id, kwargs) for env_id in specs}
    model: _ModelPolicy | None = None
    try:
        if kind == "model":
            for env in envs.values():  # checked; the rollout makes (and pools) its own
                env.close()
            envs.clear()
            model = _ModelPolicy(policy, model_options or ModelOptions())
        seeds = list(range(seed, seed + episodes))
        bar = _Progress(len(specs) * episodes, progress, "episodes" if model else next(iter(specs)))
        start = time.perf_counter()
        results: list[EpisodeResult] = []
        try:
            if model is not None:
                results = model.play(
                    list(specs),
                    seeds,
                    env_kwargs=kwargs,
                    max_turns=max_turns,
                    record=record_transcripts,
                    progress=bar,
                )
            else:
                for env_id, spec in specs.items():
                    bar.describe(env_id)
                    turn_cap = max_turns or spec.max_episode_steps or _DEFAULT_TURN_CAP
                    fn = _oracle_policy(oracles[env_id]) if kind == "oracle" else random_action
                    results += _play_env(
                        envs[env_id],
                        env_id,
                        fn,
                        seeds,
                        max_turns=turn_cap,
                        record=record_transcripts,
                        progress=bar,
                    )
        finally:
            bar.close()
    finally:
        for env in envs.values():
            env.close()
    elapsed = time.perf_counter() - start
    summaries = {
        env_id: summarize(env_id, [r for r in results if r.env_id == env_id]) for env_id in specs
    }
    return EvalReport(
        policy=policy,
        seed=seed,
        episodes_per_env=episodes,
        summaries=summaries,
        episodes=results,
        elapsed_s=elapsed,
        env_kwargs=kwargs,
    )


def _catalogue() -> Sequence[Any]:
    from trl_env.envs import REGISTRY

    return REGISTRY


def format_table(report: EvalReport) -> str:
    """The per-env results as a plain-text table (one row per env)."""
    header = ("env", "episodes", "success", "return (95% CI)", "turns", "invalid", "errors")
    rows = []
    for s in report.summaries.values():
        ci = f" ± {s.return_ci95:.3f}" if s.return_ci95 is not None else ""
        rows.append(
            (
                s.env_id,
                str(s.episodes),
                f"{100 * s.success_rate:.1f}%",
                f"{s.mean_return:.3f}{ci}",
                f"{s.mean_turns:.2f}",
                f"{100 * s.invalid_action_rate:.1f}%",
                str(s.errors),
            )
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    title = f"policy: {report.policy}   seeds: {report.seed}..{report.seed + report.episodes_per_env - 1}"
    rule = "-" * len(line(header))
    return "\n".join([title, line(header), rule, *(line(r) for r in rows)])


def write_outputs(report: EvalReport, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``results.json`` (settings and summaries) and ``transcripts.jsonl`` (one episode per
    line, with its transcript when recorded) to ``out_dir`` (created if needed).

    Returns:
        The paths of the two files.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results_path, transcripts_path = out / "results.json", out / "transcripts.jsonl"
    results_path.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    with transcripts_path.open("w", encoding="utf-8") as file:
        for episode in report.episodes:
            record = {"policy": report.policy, **episode.to_json()}
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
    return results_path, transcripts_path
