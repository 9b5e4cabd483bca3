from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from hypothesis import given
from hypothesis import strategies as st

from trl_env import TextSpace
from trl_env.spaces import SAMPLE_ALPHABET

ORDINARY_TEXT = [
    "hello world",
    "Line one.\nLine two:\t- item (a), [b]; {c}!",
    "Crème brûlée, naïve façade, Straße",
    "日本語のテキスト と 中文",
    "Great guess 🎉🚀 → next",
    "",
]


@pytest.mark.parametrize("text", ORDINARY_TEXT)
def test_contains_ordinary_llm_text(text: str) -> None:
    assert TextSpace(100).contains(text)
    assert text in TextSpace(100)


@pytest.mark.parametrize("value", ["bell\x07", "nul\x00", "esc\x1b[0m", "\u200b zero-width"])
def test_rejects_control_and_format_characters(value: str) -> None:
    assert not TextSpace(100).contains(value)


@pytest.mark.parametrize("value", [None, 3, b"bytes", ["a"], np.array(["a"])])
def test_rejects_non_strings(value: object) -> None:
    assert not TextSpace(100).contains(value)


def test_length_bounds() -> None:
    space = TextSpace(5, min_length=2)
    assert not space.contains("a")
    assert space.contains("ab")
    assert space.contains("abcde")
    assert not space.contains("abcdef")


@pytest.mark.parametrize("kwargs", [{"max_length": 0}, {"max_length": 3, "min_length": 4}])
def test_bad_bounds_raise(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        TextSpace(**kwargs)


def test_sample_is_seeded_and_contained() -> None:
    a, b = TextSpace(200, seed=123), TextSpace(200, seed=123)
    samples_a = [a.sample() for _ in range(50)]
    assert samples_a == [b.sample() for _ in range(50)]
    assert all(a.contains(s) for s in samples_a)
    assert len(set(samples_a)) > 40


def test_sample_mask_length_and_charset() -> None:
    space = TextSpace(10, seed=0)
    assert len(space.sample(mask=(7, None))) == 7
    assert set(space.sample(mask=(9, "ab"))) <= {"a", "b"}
    with pytest.raises(ValueError):
        space.sample(mask=(11, None))


def test_sample_alphabet_is_inside_the_space() -> None:
    assert TextSpace(len(SAMPLE_ALPHABET)).contains(SAMPLE_ALPHABET)


def test_equality_hash_pickle_repr() -> None:
    space = TextSpace(64, min_length=1)
    assert space == TextSpace(64, min_length=1)
    assert space != TextSpace(65, min_length=1)
    assert hash(space) == hash(TextSpace(64, min_length=1))
    assert pickle.loads(pickle.dumps(space)) == space
    assert repr(space) == "TextSpace(max_length=64, min_length=1)"


def test_jsonable_round_trip() -> None:
    space = TextSpace(64)
    assert space.from_jsonable(space.to_jsonable(["a b", "ü\n"])) == ["a b", "ü\n"]


def test_passes_gymnasium_space_checks() -> None:
    from gymnasium.utils.passive_env_checker import check_action_space, check_observation_space

    check_observation_space(TextSpace(10))
    check_action_space(TextSpace(10))


@given(st.text(max_size=50))
def test_contains_matches_definition(text: str) -> None:
    allowed = all(c.isprintable() or c in "\n\t\r" for c in text)
    assert TextSpace(50).contains(text) == allowed


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40))
def test_shared_memory_round_trip(text: str) -> None:
    from gymnasium.vector.utils import (
        create_shared_memory,
        read_from_shared_memory,
        write_to_shared_memory,
    )

    space = TextSpace(40)
    memory = create_shared_memory(space, n=3)
    write_to_shared_memory(space, 1, text, memory)
    write_to_shared_memory(space, 2, "other", memory)
    assert read_from_shared_memory(space, memory, n=3) == ("", text, "other")


def test_shared_memory_overlong_value_says_what_to_do() -> None:
    from gymnasium.vector.utils import create_shared_memory, write_to_shared_memory

    space = TextSpace(4)
    with pytest.raises(ValueError, match="shared_memory"):
        write_to_shared_memory(space, 0, "too long", create_shared_memory(space, n=1))


def test_batch_space_is_tuple_of_text_spaces() -> None:
    from gymnasium.vector.utils import batch_space

    batched = batch_space(TextSpace(8), n=3)
    assert isinstance(batched, gym.spaces.Tuple) and type(batched).__name__ == "BatchedTextSpace"
    assert all(sub == TextSpace(8) for sub in batched.spaces)
    assert data_equivalence(len(batched.sample()), 3)
