"""A model as a two-player env's opponent (issue 32, item 1): through the env contract, the model
plays the opponent's seat greedily, on that seat's own conversation and token stream."""

from __future__ import annotations

import gymnasium as gym
import pytest

pytest.importorskip("trl")

import trl_env  # noqa: F401 (registers the envs)
from trl_env._model_options import ModelOptions
from trl_env.trl import ModelPolicy, model_policy


def test_a_model_opponent_plays_its_own_seat_greedily(tiny_model_dir: str) -> None:
    options = ModelOptions(max_new_tokens_per_turn=6, max_completion_length=1024)
    opponent = model_policy(tiny_model_dir, options)  # greedy unless told otherwise
    assert isinstance(opponent, ModelPolicy)
    env = gym.make("TextTicTacToe-v0", opponent=opponent, agent_first=False)
    games = []
    for _ in range(2):
        observation, _ = env.reset(seed=3)
        episode = env.unwrapped.opponent_episode
        # The untrained model never names a cell: 3 invalid replies in a row, then it forfeits.
        assert "Your opponent forfeited (3 invalid replies in a row): you won!" in observation
        told = [e["text"] for e in episode.transcript if e["role"] == "env"]
        assert "You are O" in told[0] and not any("You are X" in text for text in told)
        assert episode.turns == 3 and episode.invalid_actions == 3
        assert episode.transcript[-1]["result"] == "loss"
        # The seat's own token stream: its first observation is the prompt, the feedback to
        # each invalid reply is appended between the model's turns (env tokens masked).
        processor = opponent.processor
        assert episode.prompt_ids == processor.initial_prompt_ids(opponent.system_prompt, told[0])
        assert 0 in episode.env_mask and 1 in episode.env_mask
        assert len(episode.completion_ids) == len(episode.env_mask) == len(episode.logprobs)
        assert id(episode) not in opponent._inputs  # forgotten once the game was over
        games.append((episode.completion_ids, [e.get("text") for e in episode.transcript]))
        assert env.step("[b2]")[1:3] == (1.0, True)  # the game was over: the agent has won
    assert games[0] == games[1]  # greedy: the same seed plays the same game


def test_a_model_against_itself_head_to_head_one_call_per_round(
    tiny_model_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trl_env._head_to_head import head_to_head
    from trl_env.trl.models import TransformersGenerator

    calls: list[int] = []
    generate = TransformersGenerator.generate

    def counting(self: TransformersGenerator, inputs: list[list[int]], max_new: int) -> object:
        calls.append(len(inputs))
        return generate(self, inputs, max_new)

    monkeypatch.setattr(TransformersGenerator, "generate", counting)
    options = ModelOptions(max_new_tokens_per_turn=4, max_completion_length=512, batch_size=4)
    report = head_to_head(
        "TextTicTacToe-v0", tiny_model_dir, tiny_model_dir, 4, model_options=options
    )
    # One model, loaded once, plays both seats: in each round every game's seat to move is
    # answered by one generation call. The untrained model never names a cell, so the seat
    # that moves first forfeits after 3 invalid replies: the policy loses when it moves first.
    assert calls == [4, 4, 4]
    env = report.envs["TextTicTacToe-v0"]
    assert (env.first.losses, env.second.wins, report.total.score) == (2, 2, 0.5)
    for played in report.matches:
        first, second = (
            played.match.players[played.match.first_seat],
            played.match.players[1 - played.match.first_seat],
        )
        assert first.episode.turns == 3 and second.episode.turns == 0
        assert first.episode.completion_ids and 0 in first.episode.env_mask
