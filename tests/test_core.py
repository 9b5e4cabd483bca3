from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import trl_env
from trl_env.protocol import Env, Processor
from trl_env.utils import seed_to_int


class ProtocolEcho:
    last_step_reward = 0.0
    alive = False

    def reset(self, seed: str) -> str:
        self.alive = True
        return f"seed={seed}"

    def step(self, action: str) -> str:
        self.alive = False
        return action


class ProtocolUpper:
    def init_system_input(self, prompt: str) -> str:
        return prompt.upper()

    def append_user_input(self, prompt: str) -> str:
        return prompt.upper()

    def parse_agent_output(self, completion: str) -> tuple[str, str]:
        return "", completion


def test_protocols_are_runtime_checkable() -> None:
    assert isinstance(ProtocolEcho(), Env)
    assert isinstance(ProtocolUpper(), Processor)
    assert not isinstance(ProtocolUpper(), Env)
    assert not isinstance(object(), Processor)


def test_aliases_are_str() -> None:
    assert (
        trl_env.protocol.Action is str
        and trl_env.protocol.Delta is str
        and trl_env.protocol.Seed is str
    )


@pytest.mark.parametrize(("seed", "expected"), [("0", 0), ("42", 42), (" 7 ", 7), (5, 5)])
def test_numeric_seeds_map_to_themselves(seed: str | int, expected: int) -> None:
    assert seed_to_int(seed) == expected


def test_string_seeds_are_hashed_stably() -> None:
    # A fixed value: the mapping must be identical on every machine and in every process.
    assert seed_to_int("wordle-day-1") == seed_to_int("wordle-day-1")
    assert seed_to_int("wordle-day-1") != seed_to_int("wordle-day-2")
    code = "import trl_env.utils; print(trl_env.utils.seed_to_int('wordle-day-1'))"
    other_process = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert int(other_process.stdout) == seed_to_int("wordle-day-1")
    assert 0 <= seed_to_int("-3") < 2**63


@pytest.mark.parametrize("bad", [None, 1.5, True, -1, 2**64])
def test_bad_seeds_raise(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        seed_to_int(bad)  # type: ignore[arg-type]


def test_import_is_light() -> None:
    code = (
        "import sys, trl_env, gymnasium as gym; gym.make('TextWordle-v0');"
        "heavy = sorted(m for m in ('torch', 'trl', 'transformers', 'datasets') if m in sys.modules);"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_gym_make_with_module_prefix_needs_no_import() -> None:
    code = "import gymnasium as gym; env = gym.make('trl_env:TextWordle-v0'); print(type(env.unwrapped).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "TextWordleEnv"


def test_all_is_complete_and_importable() -> None:
    public = {name for name in dir(trl_env) if not name.startswith("_")}
    # Submodules become attributes once imported; they are namespaces, not exported names.
    modules = {name for name in public if inspect.ismodule(getattr(trl_env, name))}
    assert public - modules - set(trl_env.__all__) == set()
    for name in trl_env.__all__:
        if name not in trl_env._TRL_EXPORTS:
            assert getattr(trl_env, name) is not None


def test_unknown_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        trl_env.nope  # noqa: B018


def test_missing_extra_error_names_the_pip_command() -> None:
    error = trl_env.error.MissingExtraError("trl", "make_rollout_func", "trl")
    assert 'pip install "trl-env[trl]"' in str(error)
