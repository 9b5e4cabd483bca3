"""The play loop (trl_env._play), its checked env calls (trl_env._stepping) and the policies
(trl_env._policies): env-owned oracle/random policies, faults that end one episode, callbacks."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import trl_env
from trl_env._episode import Episode, Task
from trl_env._play import play_episode, run_episodes
from trl_env._policies import FunctionPolicy, OraclePolicy, RandomPolicy, Reply, random_action
from trl_env._stepping import check_step_result, reset_envs, step_envs
from trl_env.spaces import TextSpace


class Scripted(gym.Env[str, str]):
    """A text env whose reset/step return exactly what a test scripts (faults included)."""

    observation_space = TextSpace(100)
    action_space = TextSpace(100)

    def __init__(self, step_result: Any = None, reset_result: Any = None) -> None:
        self.step_result = step_result or ("ok", 1.0, True, False, {})
        self.reset_result = reset_result or ("start", {})

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        if isinstance(self.reset_result, Exception):
            raise self.reset_result
        return self.reset_result

    def step(self, action: str) -> Any:
        if isinstance(self.step_result, Exception):
            raise self.step_result
        return self.step_result


class OwnPolicies(Scripted):
    """An env that owns its policies (the shared contract)."""

    def __init__(self) -> None:
        super().__init__(("next", 0.0, False, False, {}))
        self.oracle_calls = 0

    def oracle_action(self) -> str:
        self.oracle_calls += 1
        return "[best]"

    def random_action(self, rng: np.random.Generator) -> str:
        return f"[{int(rng.integers(1000))}]"


FAULTS = {
    "observation None": (None, 0.0, False, False, {}),
    "observation int": (3, 0.0, False, False, {}),
    "observation bytes": (b"x", 0.0, False, False, {}),
    "reward None": ("o", None, False, False, {}),
    "reward NaN": ("o", math.nan, False, False, {}),
    "reward inf": ("o", math.inf, False, False, {}),
    "reward str": ("o", "1", False, False, {}),
    "terminated None": ("o", 0.0, None, False, {}),
    "info None": ("o", 0.0, False, False, None),
    "not a 5-tuple": ("o", 0.0, False, {}),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_malformed_step_results_become_errors(fault: str) -> None:
    outcome = check_step_result(FAULTS[fault])
    assert outcome.error is not None and "step()" in outcome.error


@pytest.mark.parametrize(
    "result",
    [("o", True, False, False, {}), ("o", np.float32(0.5), np.bool_(True), False, {}),
     ("o", 2, False, True, {"k": 1})],
)  # fmt: skip
def test_well_formed_step_results_pass(result: tuple[Any, ...]) -> None:
    outcome = check_step_result(result)
    assert outcome.error is None and isinstance(outcome.reward, float)
    assert isinstance(outcome.terminated, bool) and isinstance(outcome.info, dict)


def test_env_calls_never_raise_for_env_faults() -> None:
    raising = Scripted(step_result=RuntimeError("boom"), reset_result=ValueError("no"))
    assert "ValueError: no" in (reset_envs([(raising, 0)])[0].error or "")
    assert "RuntimeError: boom" in (step_envs([(raising, "x")])[0].error or "")
    bytes_reset = Scripted(reset_result=(b"start", {}))
    assert "reset() observation" in (reset_envs([(bytes_reset, 0)])[0].error or "")


def test_a_fault_ends_only_its_episode_with_a_recorded_error() -> None:
    envs = [Scripted(FAULTS["reward NaN"]), Scripted(), Scripted(reset_result=(b"x", {}))]
    episodes = [Episode(Task("Scripted", str(i))) for i in range(3)]
    with pytest.warns(trl_env.error.EnvErrorWarning) as caught:
        run_episodes(episodes, envs, FunctionPolicy(lambda t: "a"), error_penalty=-1.0, warn=True)
    assert len(caught) == 2
    bad, good, bad_reset = episodes
    assert bad.ended_by == "error" and "reward" in (bad.error or "")
    assert bad.rewards == [-1.0] and bad.transcript is not None
    assert bad.transcript[-1]["error"] == bad.error.partition(": ")[2]
    assert good.ended_by == "terminated" and good.success and good.error is None
    assert bad_reset.ended_by == "error" and bad_reset.error.startswith("reset: ")
    assert bad_reset.turns == 0


def test_env_owned_policies_are_used() -> None:
    env = OwnPolicies()
    episode = play_episode(env, OraclePolicy(), seed=1, max_turns=3)
    assert env.oracle_calls == 3 and episode.ended_by == "max_turns"
    actions = [e["action"] for e in episode.transcript or [] if e["role"] == "agent"]
    assert actions == ["[best]"] * 3
    rng = np.random.default_rng(5)
    expected = f"[{int(np.random.default_rng(5).integers(1000))}]"
    assert random_action(env, {}, rng) == expected


def test_random_policy_samples_the_action_space_of_an_env_without_policies() -> None:
    class Plain(Scripted):
        action_space = gym.spaces.Text(5, charset="ab")

    policy = RandomPolicy(seed=0)
    first = play_episode(Plain(("o", 0.0, False, False, {})), policy, seed=0, max_turns=2)
    again = play_episode(
        Plain(("o", 0.0, False, False, {})), RandomPolicy(seed=0), seed=0, max_turns=2
    )
    assert first.transcript == again.transcript
    assert all(set(e["action"]) <= {"a", "b"} for e in first.transcript or [] if "action" in e)


def test_oracle_policy_without_an_oracle_ends_the_episode_with_an_error() -> None:
    episode = play_episode(Scripted(("o", 0.0, False, False, {})), OraclePolicy(), seed=0)
    assert episode.ended_by == "error" and "NoOracleError" in (episode.error or "")


def test_play_episode_calls_back_after_every_turn_and_stops_on_none() -> None:
    seen: list[tuple[int, str]] = []
    replies = iter(["[50]", "[25]", None])
    episode = play_episode(
        gym.make("TextGuessNumber-v0"),
        FunctionPolicy(lambda turn: next(replies)),
        seed=3,
        on_turn=lambda ep, outcome: seen.append((ep.turns, outcome.observation)),
    )
    assert [turns for turns, _ in seen] == [1, 2]
    assert episode.ended_by == "stopped" and episode.turns == 2


def test_reply_can_end_an_episode_without_playing_its_action() -> None:
    env = Scripted(("o", 0.0, False, False, {}))
    policy = FunctionPolicy(lambda turn: Reply("x", {"text": "x!"}, ended_by="token_budget"))
    episode = play_episode(env, policy, seed=0)
    assert episode.ended_by == "token_budget" and episode.turns == 1 and episode.rewards == []
    assert episode.transcript[-1] == {"role": "agent", "text": "x!", "action": "x"}


def test_catalogue_oracle_wins_through_the_loop() -> None:
    episode = play_episode(gym.make("TextGuessNumber-v0"), OraclePolicy(), seed=7)
    assert episode.success and episode.ended_by == "terminated"
    assert episode.episode_return == pytest.approx(sum(episode.rewards))
    messages = episode.messages()
    assert messages[0]["role"] == "user" and messages[1]["role"] == "assistant"


def test_a_replacement_step_function_runs_every_env_step() -> None:
    """The one place env steps run can be replaced (a per-step timeout, a worker pool)."""
    from trl_env._stepping import EnvOutcome

    calls: list[int] = []

    def timing_out(steps: list[tuple[gym.Env[str, str], str]]) -> list[EnvOutcome]:
        calls.append(len(steps))
        return [EnvOutcome(error="step() timed out after 5 s") for _ in steps]

    envs = [gym.make("TextGuessNumber-v0") for _ in range(3)]
    episodes = [Episode(Task("TextGuessNumber-v0", str(i))) for i in range(3)]
    run_episodes(episodes, envs, OraclePolicy(), step=timing_out)
    assert calls == [3]  # one call per turn, with every playing episode's (env, action)
    assert all(e.ended_by == "error" and "timed out" in (e.error or "") for e in episodes)


def test_eval_progress_prints_lines_when_stderr_is_not_a_terminal(capsys) -> None:
    from trl_env._eval import evaluate

    evaluate(["TextGuessNumber-v0"], "random", episodes=20, progress=True)
    lines = [line for line in capsys.readouterr().err.splitlines() if "episodes (" in line]
    assert lines, "no progress line on a non-terminal stderr"
    assert lines[-1].split(":")[-1].strip().startswith("20/20 episodes (100%)")
    assert len(lines) <= 11  # a line per tenth, not per episode


def test_random_policy_does_not_replay_the_envs_own_draws() -> None:
    """A random policy seeded like the env must not guess the env's secret from the same stream."""
    import gymnasium as gym

    from trl_env._play import play_episode
    from trl_env._policies import RandomPolicy

    wins = 0
    for seed in range(30):
        episode = play_episode(gym.make("TextGuessNumber-v0"), RandomPolicy(seed), seed=seed)
        wins += episode.turns == 1 and episode.success
    assert wins <= 3  # a first random guess in 1..100 is right about 1 time in 100
