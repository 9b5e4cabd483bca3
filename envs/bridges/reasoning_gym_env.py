"""reasoning-gym tasks as text environments: one problem per episode, scored by the task itself."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import gymnasium as gym
import numpy as np
from trl_env.envs._common import check_render_mode, count_noun, reset_needed
from trl_env.envs.bridges._answer_grammar import AnswerGrammarError, check_answer
from trl_env.envs.bridges._isolation import import_extra
from trl_env.envs.bridges._scorer_pool import ScorerError, ScorerPool, ScorerTimeout
from trl_env.envs.bridges._tables import REASONING_GYM_ANSWER_GRAMMARS

from trl_env.error import GameGenerationError
from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace

__all__ = ["MAX_ANSWER_CHARS", "ReasoningGymEnv", "StoredAnswerReasoningGymEnv", "extract_answer"]

MAX_ANSWER_CHARS = 20_000
"""Longer answers are refused before scoring: some tasks parse answers with sympy, which would
take minutes on a megabyte of text, and no stored answer of reasoning-gym 0.1.25 comes close."""

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_FORMAT = "Reply with your final answer alone, or put it between <answer> and </answer>."


_GENERATION_ATTEMPTS = 8
"""Problems tried per ``reset`` when a generator fails on its seed (reasoning-gym's ``maze``
does on about 1 seed in 150); the retries draw from the env's own generator, so a seed always
gives the same problem."""


def extract_answer(reply: str) -> str:
    """The answer in a model reply: the last ``<answer>...</answer>`` span, else the whole reply.

    Surrounding whitespace is dropped either way. A reply that opens an answer tag and never
    closes one carries no answer: the result is empty (an invalid reply).

    Example:
        >>> extract_answer("I think 7*6 is <answer> 42 </answer>")
        '42'
        >>> extract_answer("  42\\n")
        '42'
        >>> extract_answer("<answer> 42")
        ''
    """
    spans = _ANSWER_TAG.findall(reply)
    if spans:
        return spans[-1].strip()
    return "" if "<answer>" in reply else reply.strip()


class ReasoningGymEnv(gym.Env[str, str]):
    """One reasoning-gym task as a text env: answer a procedurally generated problem.

    ## Description
    Each ``reset`` draws a problem of the task ``task`` (a reasoning-gym dataset name such as
    ``"countdown"``) from a dataset seeded by ``self.np_random``, so the same ``reset(seed=...)``
    gives the same problem in any process. Registered as
    ``reasoning_gym/<CamelCaseTaskName>-v0``.

    A model's reply is data, never code. reasoning-gym's own generators and scorers run in a
    worker process with a time and a memory limit (``isolate=True``, the default; see the
    Security page of the docs), and for the tasks whose scorer would run the answer as Python
    (``eval`` or ``sympy.parse_expr``) the answer is first checked against a strict grammar
    (Python literals, or plain arithmetic with the task's variables and bounded exponents).

    ## Action Space
    Free text (:class:`trl_env.TextSpace`); the answer is the last ``<answer>...</answer>`` span,
    or the whole reply (see :func:`extract_answer`). An empty answer, an unclosed answer tag, an
    answer longer than :data:`MAX_ANSWER_CHARS`, an answer outside its task's grammar, or one the
    scorer cannot score within its limits is an invalid action (in-band feedback, no score, the
    attempt used).

    ## Observation Space
    Text: the task's question and one line on the reply format; later observations are only the
    feedback on the last answer.

    ## Rewards
    The task's own ``score_answer`` (in ``[0, 1]``; 1 is fully correct) for the last answer of
    the episode, 0 for a wrong answer that leaves attempts, ``-invalid_action_penalty`` for an
    invalid action.

    ## Episode End
    Terminated on a score of 1 or when ``max_attempts`` answers have been given (the task is
    over either way; ``info["won"]`` tells which). Never truncated by the env itself.

    ## Arguments
    ```python
    gym.make("reasoning_gym/Countdown-v0", max_attempts=1, config=None,
             invalid_action_penalty=0.1, isolate=True, score_time_limit=5.0,
             reset_time_limit=60.0, memory_limit_mb=4096, render_mode="ansi")
    ```
    ``config`` overrides fields of the task's reasoning-gym config (difficulty and so on; JSON
    values). ``score_time_limit`` and ``reset_time_limit`` bound one scoring and one problem
    generation in seconds; ``memory_limit_mb`` caps the worker's address space. ``isolate=False``
    runs the library in this process instead: still never executing replies, but with no time or
    memory bound (for debugging).

    ## Info
    ``task``, ``answer`` (the stored answer, when the task has one), ``score`` (of the last
    answer, 0 before any), ``attempts``, ``won``, ``invalid_action`` (with ``error``).

    ## Version History
    * v0: Initial version (reasoning-gym 0.1.25).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    description = "reasoning-gym task {task!r}: answer one generated problem."
    """One line for ``trl-env list``, formatted with the env's arguments (see
    :func:`trl_env.envs.env_description`)."""

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        task: str,
        max_attempts: int = 1,
        config: dict[str, Any] | None = None,
        invalid_action_penalty: float = 0.1,
        isolate: bool = True,
        score_time_limit: float = 5.0,
        reset_time_limit: float = 60.0,
        memory_limit_mb: int = 4096,
    ) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        library = import_extra("reasoning_gym", "reasoning-gym", f"the reasoning-gym task {task!r}")
        datasets = library.factory.DATASETS
        if task not in datasets:
            raise gym.error.Error(
                f"reasoning-gym has no task {task!r}; it has: {', '.join(sorted(datasets))}"
            )
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        for name, value in (
            ("score_time_limit", score_time_limit),
            ("reset_time_limit", reset_time_limit),
        ):
            if not (isinstance(value, (int, float)) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        if not (isinstance(memory_limit_mb, int) and memory_limit_mb >= 0):
            raise ValueError(
                f"memory_limit_mb must be a whole number of megabytes (0 for no cap), got {memory_limit_mb!r}"
            )
        _, config_class = datasets[task]
        config_fields = {f.name for f in dataclasses.fields(config_class)}
        unknown = set(config or {}) - config_fields
        if unknown:
            raise ValueError(
                f"unknown config field(s) {sorted(unknown)} for {task!r}; "
                f"its config has {sorted(config_fields)}"
            )
        try:
            json.dumps(config or {})
        except TypeError as error:
            raise ValueError(
                f"config values must be JSON values (numbers, strings, lists): {error}"
            ) from None
        self.render_mode = render_mode
        self.task, self.max_attempts = task, max_attempts
        self.config = dict(config or {})
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.isolate = bool(isolate)
        self.score_time_limit, self.reset_time_limit = (
            float(score_time_limit),
            float(reset_time_limit),
        )
        self.memory_limit_mb = memory_limit_mb
        self.grammar = REASONING_GYM_ANSWER_GRAMMARS.get(task)
        self.observation_space = TextSpace(1_000_000)
        self.action_space = TextSpace(DEFAULT_MAX_LENGTH)
        self._problem: dict[str, Any] | None = None
        self._problem_seed = -1
        self._in_process: Any = None
        self._reset_state()

    def _reset_state(self) -> None:
        self.attempts: list[str] = []
        self.score = 0.0
        self._done = False

    def _call(self, op: str, seed: int, time_limit: float, **fields: Any) -> dict[str, Any]:
        """One generation or scoring request, in the worker pool or (``isolate=False``) here."""
        request = {"op": op, "task": self.task, "config": self.config, "seed": seed, **fields}
        if self.isolate:
            return ScorerPool.shared().call(
                request, time_limit=time_limit, memory_limit_mb=self.memory_limit_mb
            )
        if self._in_process is None:
            from trl_env.envs.bridges._scorer_worker import _Problems

            self._in_process = _Problems()
        try:
            return dict(self._in_process.handle(request))
        except Exception as error:
            raise ScorerError(type(error).__name__, str(error)) from error

    def _generate(self) -> tuple[int, dict[str, Any]]:
        """A problem from the env's generator, retrying (deterministically) past failing seeds."""
        failures = []
        for _ in range(_GENERATION_ATTEMPTS):
            seed = int(self.np_random.integers(2**31))
            try:
                return seed, self._call("generate", seed, self.reset_time_limit)
            except ScorerTimeout as error:
                raise GameGenerationError(
                    f"reasoning_gym/{self.task}: generating the problem of seed {seed} took longer "
                    f"than reset_time_limit={self.reset_time_limit:g} s; pass a larger "
                    "reset_time_limit to gym.make, or an easier config"
                ) from error
            except ScorerError as error:
                failures.append(f"seed {seed}: {error}")
        raise GameGenerationError(
            f"reasoning_gym/{self.task}: the generator failed on {_GENERATION_ATTEMPTS} seeds in a "
            f"row ({'; '.join(failures[-2:])}); check the task's config, or report it to "
            "reasoning-gym"
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Draw a new problem from the env's seeded generator and return its question.

        Raises:
            GameGenerationError: The generator failed on several seeds in a row, or took longer
                than ``reset_time_limit``.
        """
        super().reset(seed=seed)
        self._problem = None
        self._problem_seed, self._problem = self._generate()
        self._reset_state()
        return f"{self._problem['question']}\n\n{_FORMAT}", self._info()

    def _info(self) -> dict[str, Any]:
        assert self._problem is not None
        info: dict[str, Any] = {"task": self.task, "score": self.score}
        if self._problem.get("answer") is not None:
            info["answer"] = self._problem["answer"]
        info.update(attempts=len(self.attempts), won=self.score >= 1.0)
        return info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Score one answer. Never raises on any string ``action``, and never runs it."""
        if self._problem is None or self._done:
            raise reset_needed(f"reasoning_gym/{self.task}", started=self._problem is not None)
        answer = extract_answer(action)
        self.attempts.append(answer[:200])
        left = self.max_attempts - len(self.attempts)
        problem = None
        if not answer:
            unclosed = "<answer>" in action and not _ANSWER_TAG.search(action)
            problem = "the <answer> tag is never closed" if unclosed else "the answer is empty"
        elif len(answer) > MAX_ANSWER_CHARS:
            problem = f"the answer is {len(answer)} characters long (at most {MAX_ANSWER_CHARS})"
        else:
            self.score, problem = self._score(answer)
        won = problem is None and self.score >= 1.0
        out_of_attempts = not won and left <= 0
        if problem is not None:
            reward = -self.invalid_action_penalty
            message = f"Invalid answer: {problem}. {_FORMAT}"
        else:
            reward = self.score if won or out_of_attempts else 0.0
            message = "Correct!" if won else f"Not correct (score {self.score:.2f})."
        if not won:
            message += (
                " No attempts left." if out_of_attempts else f" {count_noun(left, 'attempt')} left."
            )
        self._done = won or out_of_attempts
        info = self._info()
        info["invalid_action"] = problem is not None
        if problem is not None:
            info["error"] = problem
        # Running out of attempts ends the task itself (terminated), it is not a time limit.
        return message, float(reward), self._done, False, info

    def _score(self, answer: str) -> tuple[float, str | None]:
        """The task's score of ``answer``, or 0 and the reason it is an invalid answer."""
        assert self._problem is not None
        if self.grammar is not None:
            names = [
                *self._problem.get("names", []),
                *(["C"] if self.grammar == "integral" else []),
            ]
            try:
                answer = check_answer(self.grammar, answer, names=names)
            except AnswerGrammarError as error:
                return 0.0, str(error)
        try:
            response = self._call("score", self._problem_seed, self.score_time_limit, answer=answer)
        except ScorerTimeout:
            return 0.0, f"the task could not score it within {self.score_time_limit:g} s"
        except ScorerError as error:  # a scorer bug or the memory cap must not end a training run
            return 0.0, f"the task could not score it ({error.kind})"
        score = float(response["score"])
        return (score if np.isfinite(score) else 0.0), None

    def random_action(self, rng: np.random.Generator) -> str:
        """The stored answer of another problem of this task (drawn with ``rng`` only)."""
        seed = int(rng.integers(2**31))
        while seed == self._problem_seed:  # an rng seeded like the env would draw this problem
            seed = int(rng.integers(2**31))
        try:
            answer = self._call("generate", seed, self.reset_time_limit).get("answer")
        except ScorerError:
            answer = None
        return f"<answer>{answer if answer is not None else seed % 100}</answer>"

    def render(self) -> str | None:  # type: ignore[override]
        """The question and the answers so far (``render_mode="ansi"``)."""
        if self.render_mode != "ansi" or self._problem is None:
            return None
        rows = [self._problem["question"], *(f"answer: {a}" for a in self.attempts)]
        return "\n".join([*rows, f"score: {self.score:.2f}"]) + "\n"


class StoredAnswerReasoningGymEnv(ReasoningGymEnv):
    """A reasoning-gym task whose problems carry a stored answer: it has an oracle.

    Tasks whose answer is checked by a verifier instead (``boxnet``, ``graph_color``, ...) use
    :class:`ReasoningGymEnv`, which has no ``oracle_action``.
    """

    def oracle_action(self) -> str:
        """The stored answer, in answer tags."""
        if self._problem is None or self._done:
            raise reset_needed(f"reasoning_gym/{self.task}", started=self._problem is not None)
        return f"<answer>{self._problem['answer']}</answer>"
