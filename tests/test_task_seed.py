"""A task's seed is an int; string seeds (the protocol's, old datasets and records) are hashed once,
where they come in, to the same int the play loop always reset with."""

from __future__ import annotations

import gymnasium as gym
import pytest

import trl_env  # also registers the catalogue
from trl_env._episode import Episode, Task
from trl_env._play import play_episode
from trl_env._policies import OraclePolicy
from trl_env._rescore import rescore
from trl_env._rollout_records import episode_record, record_seed
from trl_env._seeding import seed_to_int
from trl_env.trl._tasks import task_from_prompt

GUESS = "TextGuessNumber-v0"


def test_the_seed_is_an_int_and_strings_map_once() -> None:
    assert Task(GUESS, 7).seed == 7 and isinstance(Task(GUESS, "7").seed, int)
    assert Task(GUESS, "7") == Task(GUESS, 7)
    assert Task(GUESS, "wordle-day-1").seed == seed_to_int("wordle-day-1")
    assert Task(GUESS, "-3").seed == seed_to_int("-3")  # "-3" is a string, hashed
    assert Task(GUESS, 7).to_json() == '{"env_id": "TextGuessNumber-v0", "kwargs": {}, "seed": 7}'
    assert Episode(Task(GUESS, "12")).seed == 12


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, None, True])
def test_a_bad_seed_says_what_a_seed_is(seed: object) -> None:
    with pytest.raises((TypeError, ValueError), match="seed"):
        Task(GUESS, seed)  # type: ignore[arg-type]


def test_prompts_with_string_or_int_seeds_name_the_same_task() -> None:
    new = Task(GUESS, 41, {"high": 50})
    old_json = '{"env_id": "TextGuessNumber-v0", "kwargs": {"high": 50}, "seed": "41"}'
    assert task_from_prompt(new.to_prompt()) == new
    assert task_from_prompt([{"role": "user", "content": "", "trl_env_task": old_json}]) == new
    with pytest.raises(trl_env.error.TaskSpecError, match="seed must be an int"):
        task_from_prompt({"env_id": GUESS, "seed": 4.5})


def test_make_dataset_seeds_are_the_tasks_ints() -> None:
    pytest.importorskip("datasets")
    dataset = trl_env.make_dataset(GUESS, num_tasks=4, seed=0)
    tasks = [task_from_prompt(prompt) for prompt in dataset["prompt"]]
    assert dataset["seed"] == [task.seed for task in tasks]
    assert all(isinstance(seed, int) for seed in dataset["seed"])


def test_a_fresh_game_records_the_seed_it_played() -> None:
    env = gym.make(GUESS)
    episode = play_episode(env, OraclePolicy())  # seed=None: a fresh game
    again = play_episode(env, OraclePolicy(), seed=episode.seed)
    assert isinstance(episode.seed, int) and again.transcript == episode.transcript


def played_record(seed: int | str) -> dict:
    env = gym.make(GUESS)
    episode = play_episode(env, OraclePolicy(), seed=seed)
    env.close()
    return episode_record(episode, step=1, group=0, advantage=None, system_prompt=None)


def test_records_hold_int_seeds_and_old_string_seeds_still_replay() -> None:
    record = played_record("day-1")
    assert record["seed"] == seed_to_int("day-1") and record_seed(record) == record["seed"]
    # Saved by earlier versions: the given string, or a negative number for "-N" (hashed).
    old_string = {**record, "seed": "day-1"}
    old_negative = {**played_record("-3"), "seed": -3}
    assert record_seed(old_string) == record["seed"]
    assert record_seed(old_negative) == seed_to_int("-3")
    assert record_seed({"seed": "12"}) == record_seed({"seed": 12}) == 12
    report = rescore([record, old_string, old_negative])
    assert (report.episodes, report.matching) == (3, 3)


def test_environment_factory_rows_with_any_seed_record_the_int_they_played() -> None:
    from trl_env.trl._environment_factory import make_environment_factory

    env = make_environment_factory(GUESS)()
    first = env.reset(seed="5")
    assert env.episode.seed == 5 and env.reset(seed=5) == first
    env.reset()  # no seed column: a fresh game, whose seed the episode keeps
    fresh = env.episode.seed
    assert isinstance(fresh, int) and env.reset(seed=fresh) == env.reset(seed=str(fresh))
