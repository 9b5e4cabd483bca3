"""The helpers shared by the native text games (envs/_common.py)."""

from __future__ import annotations

import re
import sys
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trl_env.envs._common import (
    BARE_STRIP,
    MAX_ECHO,
    check_render_mode,
    count_noun,
    has_whitespace,
    improvement_reward,
    invalid_feedback,
    last_bracketed,
    quote,
    read_reply,
    reset_needed,
)

# The extractor every game used before: all bracketed spans, left to right; the last one wins.
_BRACKETED = re.compile(r"\[([^\[\]]*)\]")


def regex_last_bracketed(text: str) -> str | None:
    found = _BRACKETED.findall(text)
    return found[-1] if found else None


# Mostly brackets and a few other characters, so that nested, unbalanced and empty spans are
# common; plus arbitrary text for everything else.
bracket_heavy = st.text(alphabet="[]ab \n\t.*", max_size=60)
any_text = st.text(max_size=60)
texts = bracket_heavy | any_text | st.lists(bracket_heavy | any_text, max_size=5).map("".join)


@settings(max_examples=1000, deadline=None)
@given(texts)
def test_last_bracketed_matches_the_regex(text: str) -> None:
    assert last_bracketed(text) == regex_last_bracketed(text)


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from([BARE_STRIP, BARE_STRIP.replace("*", "")]))
def test_read_reply_reads_the_last_bracketed_span_else_the_bare_reply(
    text: str, bare_strip: str
) -> None:
    candidate, bracketed, problem = read_reply(text, bare_strip)
    inside = regex_last_bracketed(text)
    assert bracketed == (inside is not None)
    expected = inside.strip() if inside is not None else text.strip(bare_strip)
    if expected:
        assert (candidate, problem) == (expected, None)
    else:
        assert candidate == ""
        assert problem == ("the brackets were empty" if bracketed else "your reply was empty")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", None),
        ("[]", ""),
        ("[crane]", "crane"),
        ("I think [slate]... no, [crane]", "crane"),
        ("[[a] b]", "a"),  # the span with no bracket inside it
        ("[a] ] [", "a"),
        ("[a] [b", "a"),
        ("[a]]]", "a"),
        ("[[[a", None),
        ("]a[", None),
        ("[a\nb]", "a\nb"),  # a span may cross lines
    ],
)
def test_last_bracketed_examples(text: str, expected: str | None) -> None:
    assert last_bracketed(text) == expected == regex_last_bracketed(text)


@pytest.mark.parametrize(
    "text",
    [
        "[ab] " * 200_000,  # many spans: the regex collects every one of them
        "[" * 1_000_000,  # many openings, never closed
        "x" * 1_000_000 + "]",
        "]" * 1_000_000,
    ],
    ids=["many-spans", "only-openings", "one-closing", "only-closings"],
)
def test_last_bracketed_of_a_megabyte_takes_a_few_scans(text: str) -> None:
    """Scanning from the end: a few C-level string calls whatever the text, where the regex
    collects every span (10-50 ms on these). The time itself, and its ratio to the regex's, is
    measured by ``benchmarks/reply_parsing.py``."""
    counted = _CountingStr(text)
    assert last_bracketed(counted) == regex_last_bracketed(text)
    assert "rfind" in counted.calls  # it did scan (a regex calls no str method)
    assert len(counted.calls) <= 6, counted.calls  # no Python loop over characters or spans


def _counted(name: str) -> Any:
    def method(self: _CountingStr, *args: Any) -> Any:
        self.calls.append(name)
        return getattr(str, name)(self, *args)

    return method


class _CountingStr(str):
    """A str that records the calls of its methods (a Python loop over it records one a char)."""

    calls: list[str]

    def __new__(cls, value: str) -> _CountingStr:
        self = super().__new__(cls, value)
        self.calls = []
        return self

    rfind, find, rindex, index = (_counted(n) for n in ("rfind", "find", "rindex", "index"))
    split, rsplit, partition, rpartition, count = (
        _counted(n) for n in ("split", "rsplit", "partition", "rpartition", "count")
    )
    __getitem__, __iter__, __contains__, __len__ = (
        _counted(n) for n in ("__getitem__", "__iter__", "__contains__", "__len__")
    )


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (None, ("", False, "your reply must be text, not NoneType")),
        (b"[crane]", ("", False, "your reply must be text, not bytes")),
        ("", ("", False, "your reply was empty")),
        (" .*_ ", ("", False, "your reply was empty")),
        ("[  ]", ("", True, "the brackets were empty")),
        ("say [ crane ]", ("crane", True, None)),
        ("**crane**!", ("crane", False, None)),
        ("I think crane", ("I think crane", False, None)),
    ],
)
def test_read_reply(action: object, expected: tuple[str, bool, str | None]) -> None:
    assert read_reply(action) == expected


def test_has_whitespace_is_str_isspace_for_every_character() -> None:
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if has_whitespace(char) != char.isspace():
            pytest.fail(
                f"U+{code:04X}: has_whitespace {has_whitespace(char)}, isspace {char.isspace()}"
            )


@given(any_text)
def test_has_whitespace_matches_any_isspace(text: str) -> None:
    assert has_whitespace(text) == any(c.isspace() for c in text)


def test_quote_cuts_long_replies() -> None:
    assert quote("crane") == "'crane'"
    assert quote("x" * MAX_ECHO) == repr("x" * MAX_ECHO)
    assert quote("x" * (MAX_ECHO + 1)) == repr("x" * MAX_ECHO + "...")
    assert quote("abcdef", max_chars=3) == "'abc...'"
    assert quote("\x00") == "'\\x00'"


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 guesses"), (1, "1 guess"), (2, "2 guesses"), (-1, "-1 guesses")],
)
def test_count_noun(n: int, expected: str) -> None:
    assert count_noun(n, "guess", "guesses") == expected
    assert count_noun(n, "turn") == expected.replace("guesses", "turns").replace("guess", "turn")


def test_invalid_feedback() -> None:
    assert (
        invalid_feedback("guess", "the brackets were empty", "Reply like [crane].")
        == "Invalid guess: the brackets were empty. That used up a turn. Reply like [crane]."
    )
    assert (
        invalid_feedback("move", "b2 is taken", "Reply like [a1].", consequence="It is your turn.")
        == "Invalid move: b2 is taken. It is your turn. Reply like [a1]."
    )
    assert (
        invalid_feedback("move", "no move", "Reply like [1 3 4].", consequence=None)
        == "Invalid move: no move. Reply like [1 3 4]."
    )


def test_improvement_reward_pays_only_for_a_new_best() -> None:
    best, rewards = 0.0, []
    for score in (0.2, 0.1, 0.6, 0.6, 0.5, 1.0):
        reward, best = improvement_reward(0.5, best, score)
        rewards.append(reward)
    assert rewards == pytest.approx([0.1, 0.0, 0.2, 0.0, 0.0, 0.2])
    assert best == 1.0
    assert sum(rewards) == pytest.approx(0.5)  # the scale times the best score reached


def test_check_render_mode() -> None:
    check_render_mode(None, ["ansi"])
    check_render_mode("ansi", ["ansi"])
    with pytest.raises(ValueError, match=r"^render_mode must be None or 'ansi', got 'human'$"):
        check_render_mode("human", ["ansi"])


def test_reset_needed() -> None:
    before = reset_needed("TextGame", started=False)
    after = reset_needed("TextGame", started=True)
    assert isinstance(before, gym.error.ResetNeeded)
    assert isinstance(after, gym.error.ResetNeeded)
    assert str(before) == "TextGame: call reset() before step()"
    assert str(after) == (
        "TextGame: step() called after the episode ended (terminated or truncated); "
        "call reset() to start a new game"
    )
