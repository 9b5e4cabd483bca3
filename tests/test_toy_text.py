"""Gymnasium's toy-text games as text envs: rules, invalid replies, oracles, difficulty kwargs."""

from __future__ import annotations

from collections import deque

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trl_env.envs import toy_text
from trl_env.envs.toy_text import (
    TextBlackjackEnv,
    TextCliffWalkingEnv,
    TextFrozenLakeEnv,
    TextTaxiEnv,
    basic_strategy,
    oracle_action,
    value_iteration,
)
from trl_env.envs.toy_text.frozen_lake import walking_distances

import trl_env  # noqa: F401  (registers the IDs)
from trl_env.error import EpisodeOverError

IDS = [
    "TextFrozenLake-v1",
    "TextFrozenLake8x8-v1",
    "TextTaxi-v3",
    "TextCliffWalking-v1",
    "TextBlackjack-v1",
]
LEGAL = {
    "TextFrozenLake-v1": "[left], [down], [right] or [up]",
    "TextFrozenLake8x8-v1": "[left], [down], [right] or [up]",
    "TextTaxi-v3": "[south], [north], [east], [west], [pickup] or [dropoff]",
    "TextCliffWalking-v1": "[up], [right], [down] or [left]",
    "TextBlackjack-v1": "[stick] or [hit]",
}
BAD_REPLIES = [
    pytest.param("", id="empty"),
    pytest.param("x" * 1_000_000, id="1MB"),
    pytest.param("🎉 中文 ñ", id="unicode"),
    pytest.param("I choose to go somewhere", id="no-action"),
    pytest.param("[fly]", id="illegal-move"),
    pytest.param("\x00\x1b[2J", id="control-chars"),
]


def play(env: gym.Env[str, str], seed: int, policy=oracle_action) -> tuple[float, int, bool]:
    """Return (total reward, steps, terminated) of one episode."""
    env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        _, reward, terminated, truncated, _ = env.step(policy(env))
        total += reward
        steps += 1
        if terminated or truncated:
            return total, steps, terminated


def game_state(env: gym.Env[str, str]) -> object:
    game = env.unwrapped.game
    if isinstance(env.unwrapped, TextBlackjackEnv):
        return (tuple(game.player), tuple(game.dealer))
    return int(game.s)


# --- first observation and invalid replies ------------------------------------------------------


@pytest.mark.parametrize("env_id", IDS)
def test_first_observation_states_rules_state_and_reply_format(env_id: str) -> None:
    env = gym.make(env_id)
    observation, _ = env.reset(seed=0)
    assert observation.startswith("Let's play ")
    assert observation.endswith(f"Reply with one action in square brackets: {LEGAL[env_id]}.")
    assert env.observation_space.contains(observation)
    assert observation == TextFrozenLakeEnv().reset(seed=0)[0] or env_id != "TextFrozenLake-v1"


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("reply", BAD_REPLIES)
def test_invalid_replies_get_feedback_and_penalty_and_change_nothing(
    env_id: str, reply: str
) -> None:
    env = gym.make(env_id)
    env.reset(seed=1)
    before = game_state(env)
    observation, reward, terminated, truncated, info = env.step(reply)
    assert observation.startswith("Invalid action: ")
    assert LEGAL[env_id].replace(" or ", ", ") in observation
    assert env.observation_space.contains(observation)
    assert reward == -env.unwrapped.invalid_action_penalty
    assert not terminated and not truncated
    assert info["invalid_action"] is True and info["error"]
    assert game_state(env) == before


@pytest.mark.parametrize("env_id", IDS)
def test_valid_steps_report_invalid_action_false(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    info = env.step(oracle_action(env))[4]
    assert info["invalid_action"] is False and f"[{info['action']}]" in LEGAL[env_id]


@pytest.mark.parametrize("env_id", IDS)
def test_step_after_the_end_raises_reset_needed(env_id: str) -> None:
    env = gym.make(env_id, is_slippery=False) if "Frozen" in env_id else gym.make(env_id)
    play(env, 0)
    with pytest.raises(gym.error.ResetNeeded, match="call reset"):
        env.step(f"[{env.unwrapped.actions[0]}]")


# --- the env-owned policies (the contract of trl-env eval/play) ---------------------------------


@pytest.mark.parametrize("env_id", IDS)
def test_oracle_action_method_is_the_function_and_refuses_a_finished_game(env_id: str) -> None:
    env = gym.make(env_id, is_slippery=False) if "Frozen" in env_id else gym.make(env_id)
    with pytest.raises(EpisodeOverError, match="call reset"):
        env.unwrapped.oracle_action()  # never started
    env.reset(seed=3)
    assert env.unwrapped.oracle_action() == oracle_action(env)
    play(env, 3, policy=lambda e: e.unwrapped.oracle_action())
    with pytest.raises(EpisodeOverError, match="call reset"):
        env.unwrapped.oracle_action()
    with pytest.raises(EpisodeOverError, match="call reset"):
        oracle_action(env)
    env.reset(seed=4)
    assert env.unwrapped.oracle_action() in LEGAL[env_id]


@pytest.mark.parametrize("env_id", IDS)
def test_random_action_draws_what_eval_drew_and_only_from_rng(env_id: str) -> None:
    from trl_env._eval import random_action

    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    game_state_before = env.unwrapped.np_random.bit_generator.state
    mine, theirs = np.random.default_rng(5), np.random.default_rng(5)
    drawn = [env.unwrapped.random_action(mine) for _ in range(40)]
    assert drawn == [random_action(env, info, theirs) for _ in range(40)]
    assert set(drawn) == {f"[{name}]" for name in env.unwrapped.actions}
    assert env.unwrapped.np_random.bit_generator.state == game_state_before


@pytest.mark.parametrize("env_id", IDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies=st.lists(st.text(max_size=30) | st.sampled_from(["[up]", "hit", "[east]"])))
def test_arbitrary_text_never_raises_or_corrupts_state(env_id: str, replies: list[str]) -> None:
    env = gym.make(env_id, max_episode_steps=1000)
    env.reset(seed=0)
    for reply in replies:
        before = game_state(env)
        observation, _, terminated, truncated, info = env.step(reply)
        assert env.observation_space.contains(observation)
        if info["invalid_action"]:
            assert game_state(env) == before
        if terminated or truncated:
            env.reset()


@pytest.mark.parametrize("env_id", IDS)
def test_render_ansi_shows_the_state(env_id: str) -> None:
    env = gym.make(env_id, render_mode="ansi")
    observation, _ = env.reset(seed=0)
    frame = env.render()
    if env_id == "TextBlackjack-v1":
        cards, hand = frame.strip().split(". ", 1)
        assert cards.startswith("Your cards: ") and hand in observation
    else:
        assert frame.strip() in observation  # the map and position
    quiet = gym.make(env_id)
    quiet.reset(seed=0)
    assert quiet.unwrapped.render() is None


def test_reset_does_not_rebuild_static_data() -> None:
    env = TextTaxiEnv()
    transitions = env.game.P
    env.reset(seed=0)
    env.reset(seed=1)
    assert env.game.P is transitions


def test_one_generator_drives_env_and_game() -> None:
    env = TextBlackjackEnv()
    env.reset(seed=4)
    assert env.game.np_random is env.np_random


def test_bad_arguments_say_what_to_do() -> None:
    with pytest.raises(ValueError, match="map_name"):
        TextFrozenLakeEnv(map_name="5x5")
    with pytest.raises(ValueError, match="render_mode"):
        TextTaxiEnv(render_mode="human")
    with pytest.raises(ValueError, match="invalid_action_penalty"):
        TextBlackjackEnv(invalid_action_penalty=-1)


# --- FrozenLake ---------------------------------------------------------------------------------


def test_frozen_lake_moves_holes_and_edges() -> None:
    env = gym.make("TextFrozenLake-v1", is_slippery=False)
    env.reset(seed=0)
    observation, *_ = env.step("[left]")
    assert observation.startswith("You tried to move left but the edge of the lake stopped you.")
    observation, reward, terminated, *_ = env.step("east")
    assert observation.splitlines()[:2] == ["You moved right.", "S@FF"]
    assert observation.endswith("You (@) are at row 1, column 2.")
    observation, reward, terminated, *_ = env.step("[DOWN]")
    assert observation.startswith("You moved down. You fell into a hole. Game over.")
    assert (reward, terminated) == (0.0, True)


def test_frozen_lake_narrates_slips_truthfully() -> None:
    env = gym.make("TextFrozenLake8x8-v1")
    env.reset(seed=0)
    moves = {"left": (0, -1), "down": (1, 0), "right": (0, 1), "up": (-1, 0)}
    slips = 0
    for t in range(200):
        action = ["left", "down", "right", "up"][t % 4] if t % 3 else "down"
        before = divmod(env.unwrapped.game.s, 8)
        observation, _, terminated, truncated, _ = env.step(f"[{action}]")
        after = divmod(env.unwrapped.game.s, 8)
        news = observation.splitlines()[0]
        if news.startswith(f"You moved {action}."):
            assert after == (before[0] + moves[action][0], before[1] + moves[action][1])
        elif "slipped and slid " in news and "edge" not in news:
            slips += 1
            direction = news.split("slid ")[1].split(".")[0]
            assert after == (before[0] + moves[direction][0], before[1] + moves[direction][1])
        if terminated or truncated:
            env.reset()
    assert slips > 10


@pytest.mark.parametrize(
    ("env_id", "shortest"), [("TextFrozenLake-v1", 6), ("TextFrozenLake8x8-v1", 14)]
)
def test_frozen_lake_oracle_is_optimal_when_deterministic(env_id: str, shortest: int) -> None:
    env = gym.make(env_id, is_slippery=False)
    for seed in range(10):
        assert play(env, seed) == (1.0, shortest, True)  # the documented maximum, fastest


@pytest.mark.parametrize(
    ("env_id", "at_least"), [("TextFrozenLake-v1", 0.65), ("TextFrozenLake8x8-v1", 0.8)]
)
def test_frozen_lake_oracle_on_slippery_ice(env_id: str, at_least: float) -> None:
    env = gym.make(env_id)
    wins = [play(env, seed)[0] for seed in range(200)]
    random_wins = [play(env, seed, lambda e: "[right]")[0] for seed in range(200)]
    assert np.mean(wins) >= at_least > np.mean(random_wins)


def test_frozen_lake_custom_map_and_slipperiness_kwargs() -> None:
    env = gym.make("TextFrozenLake-v1", desc=["SFG"], is_slippery=False)
    observation, _ = env.reset(seed=0)
    assert "(1 rows x 3 columns)" in observation and "slippery" not in observation
    assert play(env, 0) == (1.0, 2, True)
    slippery, _ = gym.make("TextFrozenLake-v1", success_rate=0.5).reset(seed=0)
    assert "only with probability 0.5" in slippery
    assert len(gym.make("TextFrozenLake8x8-v1").reset(seed=0)[0].splitlines()) > 8 + 4


def test_frozen_lake_partial_credit_by_hand() -> None:
    # The 4x4 map: the start is 6 moves from the goal, so each new closest cell earns 0.5 / 6.
    env = gym.make("TextFrozenLake-v1", is_slippery=False, partial_credit=0.5)
    env.reset(seed=0)
    rewards, wins = [], []
    for move in ["down", "up", "down", "down", "right", "down", "right", "right"]:
        _, reward, terminated, _, info = env.step(f"[{move}]")
        rewards.append(reward)
        wins.append(info["success"])
    step = 0.5 / 6
    # Back to the start and down again earn nothing; the goal pays the game's 1, not 1 + credit.
    assert rewards == pytest.approx([step, 0.0, 0.0, step, step, step, step, 1.0])
    assert wins == [False] * 7 + [True] and terminated
    env.reset(seed=1)
    assert env.step("[jump]")[1] == pytest.approx(-0.1)  # an invalid reply: the penalty only
    rewards = [env.step(f"[{move}]")[1] for move in ["right", "right", "down"]]
    assert rewards == pytest.approx([step, step, step])  # the other path: 5, 4, 3 moves left
    _, reward, terminated, _, info = env.step("[right]")  # into the hole at row 2, column 4
    assert (reward, terminated, info["success"]) == (0.0, True, False)


def test_frozen_lake_partial_credit_resets_and_is_off_by_default() -> None:
    shaped = gym.make("TextFrozenLake-v1", is_slippery=False, partial_credit=0.3)
    plain = gym.make("TextFrozenLake-v1", is_slippery=False)
    for env, first in ((shaped, 0.3 / 6), (plain, 0.0)):
        for seed in (0, 1):  # a new game starts from no credit earned
            env.reset(seed=seed)
            assert env.step("[down]")[1] == pytest.approx(first)
    with pytest.raises(ValueError, match="partial_credit must be >= 0"):
        gym.make("TextFrozenLake-v1", partial_credit=-0.1)
    assert walking_distances(["SFH", "HFG"]) == {5: 0, 4: 1, 1: 2, 0: 3}


def test_frozen_lake_random_start_draws_safe_cells_from_the_seed() -> None:
    env = gym.make("TextFrozenLake-v1", is_slippery=False, random_start=True)
    starts = set()
    for seed in range(300):
        observation, _ = env.reset(seed=seed)
        state = int(env.unwrapped.game.s)
        starts.add(state)
        row, col = divmod(state, 4)
        assert f"You (@) are at row {row + 1}, column {col + 1}." in observation
        map_rows = [line for line in observation.splitlines() if line and set(line) <= set("SFHG@")]
        assert len(map_rows) == 4 and sum(line.count("@") for line in map_rows) == 1
        assert env.reset(seed=seed)[0] == observation  # the seed decides the start
    # Every safe cell that can reach the goal, and none else (holes, the goal).
    assert starts == {0, 1, 2, 3, 4, 6, 8, 9, 10, 13, 14}
    # A safe cell walled off by holes (row 1, column 3) is never a start, nor is either goal.
    walled = gym.make("TextFrozenLake-v1", desc=["SHF", "FHH", "FGG"], random_start=True)
    drawn = {(walled.reset(seed=seed), int(walled.unwrapped.game.s))[1] for seed in range(200)}
    assert drawn == {0, 3, 6}
    assert "from a random safe cell" in observation
    fixed = gym.make("TextFrozenLake-v1", is_slippery=False)
    assert {(fixed.reset(seed=seed), int(fixed.unwrapped.game.s))[1] for seed in range(20)} == {0}
    with pytest.raises(ValueError, match="random_start needs a safe cell"):
        gym.make("TextFrozenLake-v1", desc=["SH", "HG"], random_start=True)


def test_frozen_lake_random_start_credit_counts_from_the_start_cell() -> None:
    env = gym.make("TextFrozenLake-v1", is_slippery=False, random_start=True, partial_credit=0.5)
    seed = next(s for s in range(100) if (env.reset(seed=s), int(env.unwrapped.game.s))[1] == 9)
    env.reset(seed=seed)  # row 3, column 2: 3 moves from the goal, so each earns 0.5 / 3
    _, reward, terminated, _, _ = env.step("[up]")  # into the hole at row 2, column 2
    assert (reward, terminated) == (0.0, True)
    env.reset(seed=seed)  # the same cell again
    rewards = [env.step(f"[{move}]")[1] for move in ["left", "right", "right", "down", "right"]]
    step = 0.5 / 3
    assert rewards == pytest.approx([0.0, 0.0, step, step, 1.0])
    near = next(s for s in range(200) if (env.reset(seed=s), int(env.unwrapped.game.s))[1] == 14)
    env.reset(seed=near)  # next to the goal: one move wins, and pays the game's 1 only
    _, reward, terminated, _, info = env.step("[right]")
    assert (reward, terminated, info["success"]) == (1.0, True, True)
    check_env(env.unwrapped, skip_render_check=True)


# --- CliffWalking -------------------------------------------------------------------------------


def test_cliff_walking_fall_sends_back_to_start() -> None:
    env = gym.make("TextCliffWalking-v1")
    env.reset(seed=0)
    observation, reward, terminated, *_ = env.step("[right]")
    assert observation.startswith("You stepped onto the cliff and fell (-100).")
    assert (reward, terminated, env.unwrapped.game.s) == (-100.0, False, 36)
    observation, reward, *_ = env.step("[up]")
    assert observation.startswith("You moved up.") and reward == -1.0


def test_cliff_walking_oracle_reaches_the_best_return() -> None:
    for seed in range(3):
        assert play(gym.make("TextCliffWalking-v1"), seed) == (-13.0, 13, True)


def test_cliff_walking_slippery_kwarg() -> None:
    env = gym.make("TextCliffWalking-v1", is_slippery=True)
    assert "slippery" in env.reset(seed=0)[0]
    returns = [play(env, seed)[0] for seed in range(20)]
    assert max(returns) > -100  # the oracle keeps away from the edge and usually arrives


# --- Taxi ---------------------------------------------------------------------------------------


def shortest_solution(P: dict, start: int) -> int:
    """Length of the shortest action sequence that ends the (deterministic) episode (BFS)."""
    distance, queue = {start: 0}, deque([start])
    while queue:
        state = queue.popleft()
        for action in range(6):
            ((_, following, _, done),) = P[state][action]
            if done:
                return distance[state] + 1
            if following not in distance:
                distance[following] = distance[state] + 1
                queue.append(following)
    raise AssertionError("unsolvable")


def test_taxi_rules_by_hand() -> None:
    env = gym.make("TextTaxi-v3")
    env.reset(seed=0)
    game = env.unwrapped.game
    game.s = game.encode(0, 0, 0, 1)  # at R, passenger at R, going to G
    observation, reward, *_ = env.step("[dropoff]")
    assert observation.startswith("You cannot drop off a passenger here (-10).") and reward == -10
    observation, reward, *_ = env.step("pick up")
    assert observation.startswith("You picked up the passenger.") and reward == -1
    assert "The passenger is in the taxi and wants to go to G (row 1, column 5)." in observation
    observation, reward, *_ = env.step("[pickup]")
    assert observation.startswith("There is no passenger here to pick up (-10).")
    game.s = game.encode(0, 1, 4, 1)
    observation, reward, *_ = env.step("[east]")  # the wall right of column 2, row 1
    assert observation.startswith("You tried to drive east but a wall or the edge stopped you.")
    game.s = game.encode(4, 0, 4, 1)  # at Y with the passenger, who wants G
    observation, *_ = env.step("[dropoff]")
    assert observation.startswith("You dropped the passenger at Y, which is not their destination.")
    game.s = game.encode(0, 4, 4, 1)
    observation, reward, terminated, *_ = env.step("[DROP-OFF]")
    assert observation.startswith("You dropped the passenger at their destination (+20). You win!")
    assert (reward, terminated) == (20.0, True)
    assert "The passenger has arrived at G (row 1, column 5)." in observation


def test_taxi_oracle_reaches_the_best_return() -> None:
    env = gym.make("TextTaxi-v3")
    for seed in range(40):
        env.reset(seed=seed)
        shortest = shortest_solution(env.unwrapped.game.P, env.unwrapped.game.s)
        assert play(env, seed) == (21.0 - shortest, shortest, True)


def test_taxi_rainy_kwarg() -> None:
    env = gym.make("TextTaxi-v3", is_rainy=True)
    assert "raining" in env.reset(seed=0)[0]
    results = [play(env, seed) for seed in range(20)]
    assert all(terminated for _, _, terminated in results)


# --- Blackjack ----------------------------------------------------------------------------------


def test_blackjack_stick_by_hand() -> None:
    env = gym.make("TextBlackjack-v1")
    env.reset(seed=0)
    game = env.unwrapped.game
    game.player, game.dealer = [10, 6], [10, 7]
    observation, reward, terminated, *_ = env.step("[stand]")
    assert observation.startswith(
        "You stick on 16. The dealer's cards: 10, 7 (total 17). You lose."
    )
    assert (reward, terminated) == (-1.0, True)


def test_blackjack_hit_by_hand() -> None:
    env = gym.make("TextBlackjack-v1")
    env.reset(seed=0)
    game = env.unwrapped.game
    game.player = [10, 10]
    observation, reward, terminated, *_ = env.step("HIT")
    card = game.player[-1]
    assert observation.startswith(f"You drew a card: {'A' if card == 1 else card}.")
    assert (reward, terminated) == ((0.0, False) if card == 1 else (-1.0, True))


def test_blackjack_natural_kwarg_pays_one_and_a_half() -> None:
    env = gym.make("TextBlackjack-v1", sab=False, natural=True)
    assert "pays 1.5" in env.reset(seed=0)[0]
    env.unwrapped.game.player, env.unwrapped.game.dealer = [1, 10], [10, 7]
    observation, reward, *_ = env.step("[stick]")
    assert reward == 1.5 and "You win with a natural!" in observation


def test_blackjack_basic_strategy_beats_always_sticking() -> None:
    env = gym.make("TextBlackjack-v1")
    oracle = np.mean([play(env, seed)[0] for seed in range(2000)])
    stick = np.mean([play(env, seed, lambda e: "[stick]")[0] for seed in range(2000)])
    assert oracle > -0.08 and oracle > stick + 0.08


def test_basic_strategy_table() -> None:
    assert basic_strategy(11, 10, False) == 1
    assert basic_strategy(12, 4, False) == 0 and basic_strategy(12, 3, False) == 1
    assert basic_strategy(17, 1, False) == 0
    assert basic_strategy(18, 8, True) == 0 and basic_strategy(18, 1, True) == 1


# --- oracle plumbing ----------------------------------------------------------------------------


def test_oracle_policy_is_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def counting(P, **kwargs):
        calls.append(1)
        return value_iteration(P, **kwargs)

    monkeypatch.setattr(toy_text._solvers, "_POLICIES", {})
    monkeypatch.setattr(toy_text._solvers, "value_iteration", counting)
    for _ in range(3):
        env = gym.make("TextCliffWalking-v1")
        play(env, 0)
    assert len(calls) == 1


def test_oracle_rejects_other_envs() -> None:
    with pytest.raises(TypeError, match="oracle_action needs"):
        oracle_action(gym.make("TextWordle-v0"))


def test_value_iteration_on_a_two_state_chain() -> None:
    P = {
        0: {0: [(1.0, 0, 0.0, False)], 1: [(1.0, 1, 1.0, True)]},
        1: {0: [(1.0, 1, 0.0, True)], 1: [(1.0, 1, 0.0, True)]},
    }
    assert list(value_iteration(P)) == [1, 0]


def test_classes_are_what_gym_make_builds() -> None:
    for env_id, cls in [
        ("TextFrozenLake-v1", TextFrozenLakeEnv),
        ("TextTaxi-v3", TextTaxiEnv),
        ("TextCliffWalking-v1", TextCliffWalkingEnv),
        ("TextBlackjack-v1", TextBlackjackEnv),
    ]:
        assert type(gym.make(env_id).unwrapped) is cls
