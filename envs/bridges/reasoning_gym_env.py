"""reasoning-gym tasks as text environments: one problem per episode, scored by the task itself."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import gymnasium as gym
import numpy as np
from trl_env.envs._common import check_render_mode, count_noun, reset_needed
from trl_env.envs.bridges._isolation import GlobalRandomState, import_extra, quiet

from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace

__all__ = ["MAX_ANSWER_CHARS", "ReasoningGymEnv", "StoredAnswerReasoningGymEnv", "extract_answer"]

MAX_ANSWER_CHARS = 20_000
"""Longer answers are refused before scoring: some tasks parse answers with sympy, which would
take minutes on a megabyte of text, and no stored answer of reasoning-gym 0.1.25 comes close."""

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_FORMAT = "Reply with your final answer alone, or put it between <answer> and </answer>."


def extract_answer(reply: str) -> str:
    """The answer in a model reply: the last ``<answer>...</answer>`` span, else the whole reply.

    Surrounding whitespace is dropped either way.

    Example:
        >>> extract_answer("I think 7*6 is <answer> 42 </answer>")
        '42'
        >>> extract_answer("  42\\n")
        '42'
    """
    spans = _ANSWER_TAG.findall(reply)
    return (spans[-1] if spans else reply).strip()


class ReasoningGymEnv(gym.Env[str, str]):
    """One reasoning-gym task as a text env: answer a procedurally generated problem.

    ## Description
    Each ``reset`` draws a problem of the task ``task`` (a reasoning-gym dataset name such as
    ``"countdown"``) from a dataset seeded by ``self.np_random``, so the same ``reset(seed=...)``
    gives the same problem in any process (see the docs for the five tasks whose generator
    depends on ``PYTHONHASHSEED``). Registered as ``reasoning_gym/<CamelCaseTaskName>-v0``.

    ## Action Space
    Free text (:class:`trl_env.TextSpace`); the answer is the last ``<answer>...</answer>`` span,
    or the whole reply (see :func:`extract_answer`). An empty answer, or one longer than
    :data:`MAX_ANSWER_CHARS`, is an invalid action (in-band feedback, no score, the attempt used).

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
             invalid_action_penalty=0.1, render_mode="ansi")
    ```
    ``config`` overrides fields of the task's reasoning-gym config (difficulty and so on).

    ## Info
    ``task``, ``answer`` (the stored answer, when the task has one), ``score`` (of the last
    answer, 0 before any), ``attempts``, ``won``, ``invalid_action`` (with ``error``).

    ## Version History
    * v0: Initial version (reasoning-gym 0.1.25).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        task: str,
        max_attempts: int = 1,
        config: dict[str, Any] | None = None,
        invalid_action_penalty: float = 0.1,
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
        self._dataset_class, self._config_class = datasets[task]
        self._config_fields = {f.name for f in dataclasses.fields(self._config_class)}
        unknown = set(config or {}) - self._config_fields
        if unknown:
            raise ValueError(
                f"unknown config field(s) {sorted(unknown)} for {task!r}; "
                f"its config has {sorted(self._config_fields)}"
            )
        self.render_mode = render_mode
        self.task, self.max_attempts = task, max_attempts
        self.config = dict(config or {})
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.observation_space = TextSpace(1_000_000)
        self.action_space = TextSpace(DEFAULT_MAX_LENGTH)
        self._entry: dict[str, Any] | None = None
        self._dataset: Any = None
        self._problem_seed = -1
        self._rng_copy = GlobalRandomState(0)
        self._reset_state()

    def _reset_state(self) -> None:
        self.attempts: list[str] = []
        self.score = 0.0
        self._done = False

    def _generate(self, seed: int, rng_copy: GlobalRandomState) -> tuple[Any, dict[str, Any]]:
        """A one-problem dataset seeded by ``seed`` and its problem."""
        fields = dict(self.config)
        if "seed" in self._config_fields:
            fields["seed"] = seed
        if "size" in self._config_fields:
            fields["size"] = 1
        with rng_copy.active(), quiet():
            dataset = self._dataset_class(config=self._config_class(**fields))
            return dataset, dataset[0]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Draw a new problem from the env's seeded generator and return its question."""
        super().reset(seed=seed)
        self._problem_seed = int(self.np_random.integers(2**31))
        self._rng_copy = GlobalRandomState(self._problem_seed)
        self._dataset, self._entry = self._generate(self._problem_seed, self._rng_copy)
        self._reset_state()
        return f"{self._entry['question']}\n\n{_FORMAT}", self._info()

    def _info(self) -> dict[str, Any]:
        assert self._entry is not None
        info: dict[str, Any] = {"task": self.task, "score": self.score}
        if self._entry.get("answer") is not None:
            info["answer"] = str(self._entry["answer"])
        info.update(attempts=len(self.attempts), won=self.score >= 1.0)
        return info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Score one answer. Never raises on any string ``action``."""
        if self._entry is None or self._done:
            raise reset_needed(f"reasoning_gym/{self.task}", started=self._entry is not None)
        answer = extract_answer(action)
        self.attempts.append(answer[:200])
        left = self.max_attempts - len(self.attempts)
        problem = None
        if not answer:
            problem = "the answer is empty"
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
        """The task's score of ``answer``, or 0 and the reason when the scorer itself fails."""
        try:
            with self._rng_copy.active(), quiet():
                score = float(self._dataset.score_answer(answer, self._entry))
        except Exception as error:  # a scorer bug must not end a training run
            return 0.0, f"the task could not score it ({type(error).__name__})"
        return (score if np.isfinite(score) else 0.0), None

    def random_action(self, rng: np.random.Generator) -> str:
        """The stored answer of another problem of this task (drawn with ``rng`` only)."""
        seed = int(rng.integers(2**31))
        while seed == self._problem_seed:  # an rng seeded like the env would draw this problem
            seed = int(rng.integers(2**31))
        _, entry = self._generate(seed, GlobalRandomState(seed))
        answer = entry.get("answer")
        return f"<answer>{answer if answer is not None else seed % 100}</answer>"

    def render(self) -> str | None:  # type: ignore[override]
        """The question and the answers so far (``render_mode="ansi"``)."""
        if self.render_mode != "ansi" or self._entry is None:
            return None
        rows = [self._entry["question"], *(f"answer: {a}" for a in self.attempts)]
        return "\n".join([*rows, f"score: {self.score:.2f}"]) + "\n"


class StoredAnswerReasoningGymEnv(ReasoningGymEnv):
    """A reasoning-gym task whose problems carry a stored answer: it has an oracle.

    Tasks whose answer is checked by a verifier instead (``boxnet``, ``graph_color``, ...) use
    :class:`ReasoningGymEnv`, which has no ``oracle_action``.
    """

    def oracle_action(self) -> str:
        """The stored answer, in answer tags."""
        if self._entry is None or self._done:
            raise reset_needed(f"reasoning_gym/{self.task}", started=self._entry is not None)
        return f"<answer>{self._entry['answer']}</answer>"
