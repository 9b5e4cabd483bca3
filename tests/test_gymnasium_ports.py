"""Gymnasium 1.4's own tests of the hooks a space must register, ported to text envs and spaces.

Each test names the upstream test it ports (``Farama-Foundation/Gymnasium``, ``tests/...``). The
upstream suites run them over ``TESTING_SPACES`` and ``GenericTestEnv``; here they run over
:class:`~trl_env.TextSpace` (alone and nested in ``Tuple``/``Dict``) and every registered text env.
They cover the generic space contract (sampling, seeding, JSON, pickling), ``create_zero_array`` (``FrameStackObservation``, ``DelayObservation``),
``batch_space``/``batch_differing_spaces``/``iterate``/``concatenate``/``create_empty_array``,
shared memory, and vector envs' ``observation_mode``.
"""

from __future__ import annotations

import copy
import json
import multiprocessing as mp
import pickle
from functools import partial

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.spaces import Box, Dict, Discrete, Tuple
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
from gymnasium.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    create_shared_memory,
    iterate,
    read_from_shared_memory,
    write_to_shared_memory,
)
from gymnasium.wrappers import DelayObservation, FrameStackObservation
from gymnasium.wrappers.utils import create_zero_array

from tests.conftest import text_env_ids
from trl_env import TextSpace
from trl_env.spaces import BatchedTextSpace, SharedTextBatch

SEED = 42

TEXT_SPACES = [
    TextSpace(8),
    TextSpace(64, min_length=3),
    Tuple((TextSpace(16), Discrete(3))),
    Dict({"text": TextSpace(32), "position": Box(0, 1, (2,))}),
]
TEXT_SPACES_IDS = ["TextSpace(8)", "TextSpace(64,min=3)", "Tuple(Text,Discrete)", "Dict(Text,Box)"]


def is_rng_equal(rng_1: np.random.Generator, rng_2: np.random.Generator) -> bool:
    return rng_1.bit_generator.state == rng_2.bit_generator.state


def sampled_rollout(env: gym.Env, steps: int) -> list:
    """Observations of a seeded episode driven by ``action_space.sample()``, until it ends."""
    env.action_space.seed(SEED)
    observation, _ = env.reset(seed=SEED)
    observations = [observation]
    for _ in range(steps):
        observation, _, terminated, truncated, _ = env.step(env.action_space.sample())
        observations.append(observation)
        assert observation in env.observation_space
        if terminated or truncated:
            break
    return observations


# --- tests/spaces/test_spaces.py: the generic space contract, batched text spaces included ---

ALL_SPACES = TEXT_SPACES + [
    batch_space(TextSpace(16), 3),
    batch_differing_spaces([TextSpace(8), TextSpace(32)]),
]
ALL_SPACES_IDS = TEXT_SPACES_IDS + ["batch_space(Text)", "batch_differing_spaces(Text)"]


@pytest.mark.parametrize("space", ALL_SPACES, ids=ALL_SPACES_IDS)
def test_roundtripping(space) -> None:
    """Port: samples survive ``to_jsonable`` -> JSON -> ``from_jsonable``."""
    space = copy.deepcopy(space)
    samples = [space.sample(), space.sample()]
    roundtripped = space.from_jsonable(json.loads(json.dumps(space.to_jsonable(samples))))
    assert all(data_equivalence(a, b) for a, b in zip(samples, roundtripped, strict=True))


@pytest.mark.parametrize("space", ALL_SPACES, ids=ALL_SPACES_IDS)
def test_seed_reproducibility(space) -> None:
    """Port: the same seed gives the same samples; different seeds, different ones."""
    space_1, space_2 = copy.deepcopy(space), copy.deepcopy(space)
    for seed in range(5):
        assert data_equivalence(space_1.seed(seed), space_2.seed(seed))
        assert all(data_equivalence(space_1.sample(), space_2.sample()) for _ in range(10))
    assert not data_equivalence(space_1.seed(123), space_2.seed(456))
    assert not all(data_equivalence(space_1.sample(), space_2.sample()) for _ in range(10))


@pytest.mark.parametrize("space", ALL_SPACES, ids=ALL_SPACES_IDS)
def test_sample_contains(space) -> None:
    """Port: samples are inside; ``contains`` answers a bool for any other space's sample."""
    for _ in range(10):
        assert space.sample() in space
    for other_space in ALL_SPACES:
        assert isinstance(space.contains(other_space.sample()), bool)


@pytest.mark.parametrize("space", ALL_SPACES, ids=ALL_SPACES_IDS)
def test_space_pickling(space) -> None:
    """Port: a pickled space is equal and samples the same."""
    space = copy.deepcopy(space)
    space.seed(0)
    unpickled = pickle.loads(pickle.dumps(space))
    assert unpickled == space and type(unpickled) is type(space)
    assert data_equivalence(space.sample(), unpickled.sample())


@pytest.mark.parametrize("space", ALL_SPACES, ids=ALL_SPACES_IDS)
@pytest.mark.parametrize("initial_seed", [None, 123])
def test_space_seeding_output(space, initial_seed: int | None) -> None:
    """Port: re-seeding with the values ``seed`` returned replays the samples."""
    space = copy.deepcopy(space)
    seeding_values = space.seed(initial_seed)
    samples = [space.sample() for _ in range(5)]
    assert data_equivalence(space.seed(seeding_values), seeding_values)
    assert data_equivalence([space.sample() for _ in range(5)], samples)


# --- tests/wrappers/test_frame_stack_observation.py -----------------------------------------


@pytest.mark.parametrize("env_id", text_env_ids())
def test_frame_stack_different_obs_spaces(env_id: str, stack_size: int = 3) -> None:
    """Port of ``test_different_obs_spaces``: stacked frames are the last ``stack_size`` ones."""
    unstacked = sampled_rollout(gym.make(env_id), stack_size * 2)
    unstacked = [unstacked[0]] * (stack_size - 1) + unstacked  # "reset" padding

    env = FrameStackObservation(gym.make(env_id), stack_size=stack_size)
    assert isinstance(env.observation_space, BatchedTextSpace)
    stacked = sampled_rollout(env, stack_size * 2)

    assert len(unstacked) == len(stacked) + stack_size - 1
    for i, observation in enumerate(stacked):
        assert observation in env.observation_space
        assert data_equivalence(
            unstacked[i : i + stack_size], list(iterate(env.observation_space, observation))
        )


@pytest.mark.parametrize("stack_size", [2, 3, 4])
def test_frame_stack_size(stack_size: int) -> None:
    """Port of ``test_stack_size`` on TextWordle-v0 (replies that keep the game going)."""
    replies = ["[crane]", "hello", "[slate]", "[moist]", "??"]
    env = gym.make("TextWordle-v0")
    unstacked = [env.reset(seed=SEED)[0]] + [env.step(reply)[0] for reply in replies]

    env = FrameStackObservation(gym.make("TextWordle-v0"), stack_size=stack_size)
    stacked = [env.reset(seed=SEED)[0]] + [env.step(reply)[0] for reply in replies]
    for i, observation in enumerate(stacked):
        frames = list(iterate(env.observation_space, observation))
        for j in range(stack_size):
            expected = unstacked[max(i - j, 0)]  # padded with the first observation
            assert data_equivalence(expected, frames[stack_size - 1 - j])


def test_frame_stack_padding_type() -> None:
    """Port of ``test_padding_type``: "reset", "zero" (the empty string) and a custom text."""
    env = gym.make("TextGuessNumber-v0")
    reset_obs, _ = env.reset(seed=123)
    step_obs = env.step("[50]")[0]

    stacked_env = FrameStackObservation(env, stack_size=3)
    assert stacked_env.reset(seed=123)[0] == (reset_obs, reset_obs, reset_obs)
    assert stacked_env.step("[50]")[0] == (reset_obs, reset_obs, step_obs)

    stacked_env = FrameStackObservation(env, stack_size=3, padding_type="zero")
    assert stacked_env.reset(seed=123)[0] == ("", "", reset_obs)
    assert stacked_env.step("[50]")[0] == ("", reset_obs, step_obs)

    stacked_env = FrameStackObservation(env, stack_size=3, padding_type="(no turn yet)")
    assert stacked_env.reset(seed=123)[0] == ("(no turn yet)", "(no turn yet)", reset_obs)


def test_frame_stack_rejects_padding_outside_the_space() -> None:
    """Port of the last case of ``test_stack_size_failures``."""
    env = gym.make("TextGuessNumber-v0")
    with pytest.raises(ValueError, match="Unexpected `padding_type`"):
        FrameStackObservation(env, stack_size=3, padding_type="x" * 5000)


# --- tests/wrappers/test_delay_observation.py -----------------------------------------------


@pytest.mark.parametrize("env_id", text_env_ids())
def test_delay_env_obs(env_id: str, delay: int = 3, extra_steps: int = 4) -> None:
    """Port of ``test_env_obs``: the first ``delay`` observations are the zero text ``""``."""
    undelayed = sampled_rollout(gym.make(env_id), delay + extra_steps)

    env = DelayObservation(gym.make(env_id), delay=delay)
    zero = create_zero_array(env.observation_space)
    assert zero == "" and zero in env.observation_space
    delayed = sampled_rollout(env, delay + extra_steps)
    assert all(data_equivalence(obs, zero) for obs in delayed[:delay])
    assert data_equivalence(delayed[delay:], undelayed[: len(delayed) - delay])


@pytest.mark.parametrize("delay", [1, 2, 3, 4])
def test_delay_values(delay: int) -> None:
    """Port of ``test_delay_values`` on TextWordle-v0."""
    first_obs, _ = gym.make("TextWordle-v0").reset(seed=123)
    env = DelayObservation(gym.make("TextWordle-v0"), delay=delay)
    obs, _ = env.reset(seed=123)
    assert obs == ""
    for _ in range(delay - 1):
        assert env.step("[crane]")[0] == ""
    assert env.step("[crane]")[0] == first_obs


def test_zero_text_is_the_shortest_string_in_the_space() -> None:
    assert create_zero_array(TextSpace(10, min_length=2)) == "  "
    assert create_zero_array(Tuple((TextSpace(3), Discrete(2, start=1)))) == ("", 1)


# --- tests/vector/utils/test_space_utils.py -------------------------------------------------


@pytest.mark.parametrize("space", TEXT_SPACES, ids=TEXT_SPACES_IDS)
@pytest.mark.parametrize("n", [1, 4])
def test_batch_space_concatenate_iterate_create_empty_array(space, n: int) -> None:
    """Port of the upstream test of the same name."""
    batched_space = batch_space(space, n)
    batched_sample = batched_space.sample()
    assert batched_sample in batched_space
    unbatched = list(iterate(batched_space, batched_sample))
    assert len(unbatched) == n and all(item in space for item in unbatched)

    array = create_empty_array(space, n)
    assert len(list(iterate(batched_space, array))) == n

    space_samples = [space.sample() for _ in range(n)]
    concatenated = concatenate(space, space_samples, array)
    assert concatenated in batched_space
    for unbatched_sample, original in zip(
        iterate(batched_space, concatenated), space_samples, strict=True
    ):
        assert data_equivalence(unbatched_sample, original)


@pytest.mark.parametrize("space", TEXT_SPACES, ids=TEXT_SPACES_IDS)
@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("base_seed", [123, 456])
def test_batch_space_deterministic(space, n: int, base_seed: int) -> None:
    """Port of the upstream test of the same name."""
    space_a = copy.deepcopy(space)
    space_a.seed(base_seed)
    space_b = copy.deepcopy(space_a)
    batched_a, batched_b = batch_space(space_a, n), batch_space(space_b, n)
    assert is_rng_equal(batched_a.np_random, batched_b.np_random)
    assert batched_a.np_random is not batched_b.np_random
    assert space_a.np_random is not batched_a.np_random
    space_a.sample()
    for a, b in zip(
        iterate(batched_a, batched_a.sample()), iterate(batched_b, batched_b.sample()), strict=True
    ):
        assert data_equivalence(a, b)


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("base_seed", [123, 456])
def test_batch_space_different_samples(n: int, base_seed: int) -> None:
    """Port of the upstream test of the same name (sub-spaces do not share one generator)."""
    space = TextSpace(64)
    space.seed(base_seed)
    batched_space = batch_space(space, n)
    assert space.np_random is not batched_space.np_random
    assert is_rng_equal(space.np_random, batched_space.np_random)
    unbatched = list(iterate(batched_space, batched_space.sample()))
    assert len(set(unbatched)) > 1


def test_batch_space_of_text_is_seeded_as_gymnasium_seeds_any_space() -> None:
    """Registering batch_space for TextSpace does not change what a vector env samples."""
    generic = batch_space.dispatch(gym.Space)
    for seed in (0, 1):
        ours, theirs = TextSpace(32, seed=seed), TextSpace(32, seed=seed)
        assert batch_space(ours, 3).sample() == generic(theirs, 3).sample()
        assert batch_space(ours, 3) == generic(theirs, 3)


def test_batch_differing_spaces_keeps_each_max_length() -> None:
    """``batch_differing_spaces`` for text (upstream batches gymnasium's ``Text`` the same way)."""
    batched = batch_differing_spaces([TextSpace(4), TextSpace(8)])
    assert isinstance(batched, BatchedTextSpace)
    assert batched.spaces == (TextSpace(4), TextSpace(8))
    assert ("abcd", "abcdefgh") in batched
    assert ("abcdefgh", "abcd") not in batched
    assert ("a",) not in batched


# --- tests/vector/utils/test_shared_memory.py -----------------------------------------------


@pytest.mark.parametrize("space", TEXT_SPACES, ids=TEXT_SPACES_IDS)
@pytest.mark.parametrize("num", [1, 8])
@pytest.mark.parametrize("ctx", [None, "fork", "spawn"])
def test_shared_memory_create_read_write(space, num: int, ctx: str | None) -> None:
    """Port of the upstream test: what is read back is in the batched space and equal."""
    batched_space = batch_space(space, n=num)
    shared_memory = create_shared_memory(space, n=num, ctx=mp.get_context(ctx))
    samples = [space.sample() for _ in range(num)]
    for i, sample in enumerate(samples):
        write_to_shared_memory(space, i, sample, shared_memory)
    read_samples = read_from_shared_memory(space, shared_memory, n=num)
    assert read_samples in batched_space
    for read_sample, sample in zip(iterate(batched_space, read_samples), samples, strict=True):
        assert data_equivalence(read_sample, sample)


def test_shared_memory_rows_do_not_depend_on_the_writers_max_length() -> None:
    """A sub-env whose space is wider than the buffer's still writes its own row."""
    memory = create_shared_memory(TextSpace(4), n=2)
    write_to_shared_memory(TextSpace(4096), 1, "abcd", memory)
    write_to_shared_memory(TextSpace(1024), 0, "xy", memory)
    batch = read_from_shared_memory(TextSpace(4), memory, n=2)
    assert isinstance(batch, SharedTextBatch) and batch == ("xy", "abcd")
    with pytest.raises(ValueError, match="longest max_length first"):
        write_to_shared_memory(TextSpace(4096), 1, "abcde", memory)


# --- tests/vector/test_observation_mode.py --------------------------------------------------

VECTOR_ENVS = [SyncVectorEnv, AsyncVectorEnv, partial(AsyncVectorEnv, shared_memory=False)]
VECTOR_ENV_IDS = ["Sync", "Async(shared_memory=True)", "Async(shared_memory=False)"]
# Two envs whose observation spaces differ only in max_length (4096 and 1024 characters).
MIXED = ("TextWordle-v0", "TextGuessNumber-v0")
MIXED_REPLIES = [("[crane]", "[50]"), ("no idea", "[25]"), ("[slate]", "seventy")]


def mixed_env_fns(ids=MIXED):
    return [partial(gym.make, env_id) for env_id in ids]


@pytest.mark.parametrize("vector_env_fn", VECTOR_ENVS, ids=VECTOR_ENV_IDS)
def test_obs_mode_same_different_spaces(vector_env_fn) -> None:
    """Port: ``"same"`` with unequal spaces is refused with a pointer to ``"different"``."""
    with pytest.raises(RuntimeError, match="use `observation_mode='different'` instead"):
        vector_env_fn(mixed_env_fns(), observation_mode="same")


@pytest.mark.parametrize("vector_env_fn", VECTOR_ENVS, ids=VECTOR_ENV_IDS)
@pytest.mark.parametrize("custom", [False, True], ids=["different", "custom-spaces"])
def test_obs_mode_different_different_spaces(vector_env_fn, custom: bool) -> None:
    """Port: text envs of different max_length play side by side, exactly as they do alone."""
    spaces = [gym.make(env_id).observation_space for env_id in MIXED]
    mode = (batch_differing_spaces(spaces), spaces[0]) if custom else "different"
    envs = vector_env_fn(mixed_env_fns(), observation_mode=mode)
    try:
        assert envs.observation_space == batch_differing_spaces(spaces)
        assert envs.single_observation_space == spaces[0]
        observations, _ = envs.reset(seed=SEED)
        got = [tuple(observations)]
        assert observations in envs.observation_space
        for replies in MIXED_REPLIES:
            observations = envs.step(replies)[0]
            assert observations in envs.observation_space
            got.append(tuple(observations))
    finally:
        envs.close()
    for i, env_id in enumerate(MIXED):
        env = gym.make(env_id)
        expected = [env.reset(seed=SEED + i)[0]]
        expected += [env.step(replies[i])[0] for replies in MIXED_REPLIES]
        assert [row[i] for row in got] == expected


@pytest.mark.parametrize("vector_env_fn", VECTOR_ENVS, ids=VECTOR_ENV_IDS)
def test_mixed_observation_spaces(vector_env_fn) -> None:
    """Port: a text env and a non-text env do not batch, in any mode."""
    env_fns = [partial(gym.make, "TextWordle-v0"), partial(gym.make, "CartPole-v1")]
    for mode in ("same", "different"):
        with pytest.raises((RuntimeError, TypeError)):
            vector_env_fn(env_fns, observation_mode=mode)


def test_async_without_copy_returns_a_batch_inside_the_observation_space() -> None:
    """``AsyncVectorEnv(shared_memory=True, copy=False)``: the live view is in the space."""
    envs = AsyncVectorEnv(mixed_env_fns(), observation_mode="different", copy=False)
    try:
        observations, _ = envs.reset(seed=0)
        assert isinstance(observations, SharedTextBatch)
        assert observations in envs.observation_space
        envs.step(MIXED_REPLIES[0])
        assert observations in envs.observation_space
        assert observations[0].startswith("Guess 1 of 6: CRANE")
    finally:
        envs.close()


@pytest.mark.parametrize("copy_observations", [True, False])
def test_async_shared_memory_with_the_narrower_space_first(copy_observations: bool) -> None:
    """The buffer rows follow the first sub-env's max_length (1024); a 4096 env still fits."""
    ids = ("TextLargestNumber-v0", "TextWordle-v0")
    replies = ("[7]", "[crane]")
    envs = AsyncVectorEnv(mixed_env_fns(ids), observation_mode="different", copy=copy_observations)
    try:
        first = tuple(envs.reset(seed=SEED)[0])
        observations = envs.step(replies)[0]
        assert observations in envs.observation_space
        second = tuple(observations)
    finally:
        envs.close()
    for i, env_id in enumerate(ids):
        env = gym.make(env_id)
        assert first[i] == env.reset(seed=SEED + i)[0]
        assert second[i] == env.step(replies[i])[0]
