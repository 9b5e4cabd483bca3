"""The model policy: a language model choosing replies over token-exact episodes.

:class:`ModelPolicy` implements :class:`trl_env._policies.Policy` for a whole batch: each call
generates one turn for every episode still playing, in one call of its generation backend. It
builds each episode's token stream (``prompt_ids``, then the sampled ids exactly as sampled, then
each env reply's ids from the processor) in the :class:`~trl_env._episode.Episode` itself, which
is what ``GRPOTrainer`` trains on. The rollout (:func:`trl_env.trl._model_episodes.play_episodes`) and
``trl-env eval --policy MODEL`` (:func:`trl_env.trl._model_play.play_model`) both play with it through the one play loop,
:func:`trl_env._play.run_episodes`.
"""

from __future__ import annotations

from collections.abc import Sequence

from trl_env._episode import Episode
from trl_env._policies import Reply, Turn
from trl_env._stepping import EnvOutcome
from trl_env.protocol import TokenProcessor
from trl_env.trl.models import Generator

__all__ = ["ModelPolicy"]


class ModelPolicy:
    """Replies sampled from a model, one batched generation call per turn.

    Args:
        generator: The generation backend.
        processor: Renders prompts and env turns as token ids and parses actions.
        system_prompt: System message of every episode, or ``None``.
        max_completion_length: Token budget of each episode's completion (model and env tokens);
            an episode that runs out ends with ``ended_by="token_budget"``.
        max_new_tokens_per_turn: Tokens one turn may sample (default: the remaining budget).
        always_generate: Call the generator even with no episode to answer (distributed runs:
            every process must make the same number of calls).
    """

    def __init__(
        self,
        generator: Generator,
        processor: TokenProcessor,
        *,
        system_prompt: str | None,
        max_completion_length: int,
        max_new_tokens_per_turn: int | None = None,
        always_generate: bool = False,
    ) -> None:
        self.generator, self.processor = generator, processor
        self.system_prompt = system_prompt
        self.budget = max_completion_length
        self.per_turn = max_new_tokens_per_turn or max_completion_length
        self.always_generate = always_generate
        self._prompts: dict[str, list[int]] = {}  # copies of a task share their first message
        self._inputs: dict[int, list[int]] = {}  # the model's input so far, per episode

    def _extend(self, episode: Episode, ids: list[int], logprobs: list[float] | None) -> None:
        episode.completion_ids += ids
        episode.env_mask += [0 if logprobs is None else 1] * len(ids)
        if logprobs is None:
            episode.logprobs += [0.0] * len(ids)
        else:  # a backend that could not score some tokens gives fewer logprobs
            episode.logprobs += [float(lp) for lp in logprobs[: len(ids)]]
            episode.logprobs += [0.0] * (len(ids) - len(logprobs))
        self._inputs[id(episode)] += ids

    def _start(self, turn: Turn) -> None:
        """The episode's first turn: its prompt (copies of a task share one tokenisation)."""
        episode = turn.episode
        if turn.observation not in self._prompts:
            self._prompts[turn.observation] = self.processor.initial_prompt_ids(
                self.system_prompt, turn.observation
            )
        episode.prompt_ids = self._prompts[turn.observation]
        self._inputs[id(episode)] = list(episode.prompt_ids)

    def forget(self, episode: Episode) -> None:
        """Drop what the policy keeps for an episode that is over (its token stream stays in the
        episode). A policy that outlives its episodes (an env's opponent, a head-to-head eval)
        is told so; the rollout's policies end with their batch."""
        self._inputs.pop(id(episode), None)

    def observe(self, episode: Episode, outcome: EnvOutcome) -> None:
        """Append the env's reply to the episode's stream, or end the episode when the reply
        leaves no room for the model to answer (``ended_by="token_budget"``)."""
        if episode.done:
            return
        last = episode.completion_ids[-1] if episode.completion_ids else None
        chunk = self.processor.env_turn_ids(outcome.observation, last_token_id=last)
        if len(episode.completion_ids) + len(chunk) >= self.budget:
            episode.ended_by = "token_budget"
            return
        self._extend(episode, chunk, None)

    def act(self, turns: Sequence[Turn]) -> list[str | Reply | None]:
        """Generate one turn for every episode in ``turns`` (one generation call)."""
        if not turns and not self.always_generate:
            return []
        episodes = [turn.episode for turn in turns]
        for turn in turns:
            if id(turn.episode) not in self._inputs:
                self._start(turn)
        max_new = max((min(self.per_turn, self.budget - len(e.completion_ids)) for e in episodes),
                      default=1)  # fmt: skip
        inputs = [self._inputs[id(e)] for e in episodes]
        samples, logprobs = self.generator.generate(inputs, max_new)
        replies: list[str | Reply | None] = []
        for episode, sample, scores in zip(episodes, samples, logprobs, strict=True):
            room = self.budget - len(episode.completion_ids)
            sample = list(sample[:room])
            self._extend(episode, sample, list(scores[:room]))
            text = self.processor.decode(sample)
            reasoning, action = self.processor.parse_agent_output(text)
            stopped = bool(sample) and sample[-1] in self.processor.eos_token_ids
            details = {"text": text, "reasoning": reasoning, "stopped": stopped}
            # Cut mid-turn by the budget: the turn is recorded but its action is not played.
            cut = len(episode.completion_ids) >= self.budget
            replies.append(Reply(action, details, ended_by="token_budget" if cut else None))
        return replies
