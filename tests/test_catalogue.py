"""One catalogue: gym.registry. What trl-env registers, and what `trl-env list` reads from it.

Registered specs never change by accident (``tests/data/registered_specs.json`` is every ID's
spec); sources come from namespaces, descriptions and oracles from the entry point's class, with
no env made and no bridged library imported; the 0.2 table still answers, with a warning.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.envs.registration import EnvSpec
from trl_env.envs import (
    SOURCES,
    env_description,
    env_has_oracle,
    env_source,
    env_specs,
)

import trl_env
from trl_env.cli import main

SPECS_FILE = Path(__file__).parent / "data" / "registered_specs.json"
REGISTERED = json.loads(SPECS_FILE.read_text("utf-8"))


# --- what is registered ---------------------------------------------------------------------------


def test_every_id_is_registered_with_the_same_spec() -> None:
    assert len(REGISTERED) == 149
    for env_id, fields in REGISTERED.items():
        spec = gym.spec(env_id)
        expected = EnvSpec(env_id, **fields)  # every other field: gymnasium's default
        assert spec.to_json() == expected.to_json(), env_id
    own = {spec.id for spec in env_specs() if env_source(spec) != "registered"}
    assert own | {"OpenEnv-v0"} == set(REGISTERED)


def test_sources_come_from_namespaces() -> None:
    counts = {source: len(env_specs(source)) for source in SOURCES}
    assert counts["catalogue"] == 19 and counts["textarena"] == 24
    assert counts["reasoning-gym"] == 105
    assert {s.namespace for s in env_specs("reasoning-gym")} == {"reasoning_gym"}
    assert {s.namespace for s in env_specs("textarena")} == {"TextArena"}
    assert {s.namespace for s in env_specs("catalogue")} == {None}
    assert env_source(gym.spec("OpenEnv-v0")) == "registered"
    # Filtering gym.registry the way gymnasium's tests do gives the same catalogue.
    native = [s.id for s in gym.registry.values() if env_source(s) == "catalogue"]
    assert native == [s.id for s in env_specs("catalogue")]
    with pytest.raises(ValueError, match="unknown source 'gem'; choose one of catalogue"):
        env_specs("gem")


def test_a_users_variant_of_a_catalogue_game_is_described_but_not_catalogue() -> None:
    gym.register(
        "TextCatalogueTestGuess-v0",
        entry_point="trl_env.envs.guess_number:TextGuessNumberEnv",
        kwargs={"high": 20, "max_guesses": 5},
    )
    try:
        spec = gym.spec("TextCatalogueTestGuess-v0")
        assert env_source(spec) == "registered" and env_has_oracle(spec)
        assert env_description(spec) == (
            "Find a secret integer in 1-20 from higher/lower hints in 5 guesses."
        )
        assert spec.id not in [s.id for s in env_specs("catalogue")]
    finally:
        del gym.registry["TextCatalogueTestGuess-v0"]


# --- descriptions -------------------------------------------------------------------------------


def test_every_id_has_a_one_line_description() -> None:
    for spec in env_specs():
        description = env_description(spec)
        assert description and "\n" not in description, spec.id
        assert "{" not in description and "}" not in description, (spec.id, description)


@pytest.mark.parametrize(
    ("env_id", "needle"),
    [
        ("TextFrozenLake-v1", "4x4 map"),
        ("TextFrozenLake8x8-v1", "8x8 map"),
        ("TextGuessNumberHard-v0", "1-1000"),
        ("TextMastermindHard-v0", "5 pegs in 8 colours"),
        ("TextHangmanHard-v0", "4-5 letter"),
        ("TextTicTacToePerfect-v0", "perfect opponent"),
        ("TextSudoku9x9-v0", "9x9 Sudoku"),
        ("TextCountdownEasy-v0", "10-99 from 4 numbers"),
        ("reasoning_gym/TowerOfHanoi-v0", "'tower_of_hanoi'"),
        ("TextArena/TowerOfHanoi-v0", "TextArena TowerOfHanoi: Move 3 disks"),
    ],
)
def test_variants_are_described_by_their_own_kwargs(env_id: str, needle: str) -> None:
    assert needle in env_description(gym.spec(env_id))


def test_openenv_and_protocol_envs_are_described_by_their_docstring() -> None:
    assert env_description(gym.spec("OpenEnv-v0")).startswith("A text env whose episodes")

    class Echo:
        """Echo the reply (a protocol env of this test)."""

        last_step_reward, alive = 0.0, False

        def reset(self, seed: str) -> str:
            self.alive = True
            return "Say something."

        def step(self, action: str) -> str:
            self.alive = False
            return action

    trl_env.register_protocol_env("TextCatalogueEcho-v0", Echo)
    try:
        spec = gym.spec("TextCatalogueEcho-v0")
        assert env_description(spec) == "Echo the reply (a protocol env of this test)."
        assert env_source(spec) == "registered" and not env_has_oracle(spec)
        assert spec.id in [s.id for s in env_specs("registered")]
    finally:
        del gym.registry["TextCatalogueEcho-v0"]


def test_an_entry_point_that_cannot_be_imported_is_described_by_the_error() -> None:
    gym.register("TextCatalogueBroken-v0", entry_point="trl_env.no_such_module:Env")
    try:
        spec = gym.spec("TextCatalogueBroken-v0")
        assert "cannot import trl_env.no_such_module:Env" in env_description(spec)
        assert env_has_oracle(spec) is False
    finally:
        del gym.registry["TextCatalogueBroken-v0"]


# --- oracles, without making an env -------------------------------------------------------------


class _Unmakeable(gym.Env[str, str]):
    """An env whose constructor fails: only its class can answer."""

    def __init__(self, **kwargs: Any) -> None:
        raise AssertionError("made")

    def oracle_action(self) -> str:
        return "[1]"


def test_oracles_come_from_the_class_without_making_the_env(monkeypatch) -> None:
    assert env_has_oracle(EnvSpec("TextCatalogueUnmakeable-v0", entry_point=_Unmakeable))

    def no_make(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an env was made")

    monkeypatch.setattr(gym, "make", no_make)
    monkeypatch.setattr(gym.envs.registration, "make", no_make)
    oracles = {spec.id: env_has_oracle(spec) for spec in env_specs()}
    assert all(oracles[spec.id] for spec in env_specs("catalogue"))
    assert sum(oracles[spec.id] for spec in env_specs("reasoning-gym")) == 100
    assert [i for i in oracles if i.startswith("TextArena/") and oracles[i]] == [
        "TextArena/FrozenLake-v0",
        "TextArena/GuessTheNumber-v0",
        "TextArena/Sudoku-v0",
        "TextArena/TowerOfHanoi-v0",
    ]
    assert not oracles["reasoning_gym/Boxnet-v0"] and not oracles["OpenEnv-v0"]


# --- trl-env list ---------------------------------------------------------------------------------


def test_list_json_is_the_registry(capsys, monkeypatch) -> None:
    monkeypatch.setattr(gym, "make", lambda *a, **k: pytest.fail("list made an env"))
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["id"] for row in rows] == [spec.id for spec in env_specs()]
    for row in rows:
        spec = gym.spec(row["id"])
        assert row["source"] == env_source(spec)
        assert row["description"] == env_description(spec)
        assert row["oracle"] is env_has_oracle(spec)
        assert row["max_episode_steps"] == spec.max_episode_steps


@pytest.mark.parametrize("source", SOURCES)
def test_list_source_filters_by_namespace(source: str, capsys) -> None:
    assert main(["list", "--source", source, "--oracles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [spec.id for spec in env_specs(source)]
    marked = {line.split()[0] for line in lines if line.endswith("  [oracle]")}
    assert marked == {spec.id for spec in env_specs(source) if env_has_oracle(spec)}


def test_list_imports_no_bridged_library() -> None:
    script = (
        "import sys\n"
        "from trl_env.cli import main\n"
        "assert main(['list', '--oracles']) == 0 and main(['list', '--json']) == 0\n"
        "assert main(['list', '--source', 'textarena', '--oracles']) == 0\n"
        "print(sorted(m for m in ('reasoning_gym', 'textarena') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"


# --- the no-oracle error --------------------------------------------------------------------------


class _NoOracle:
    """Say hi (a protocol env without an oracle)."""

    last_step_reward, alive = 0.0, False

    def reset(self, seed: str) -> str:
        self.alive = True
        return "Say hi."

    def step(self, action: str) -> str:
        self.alive = False
        return "Bye."


def test_no_oracle_error_names_bridged_ids_with_an_oracle() -> None:
    from trl_env._eval import evaluate

    trl_env.register_protocol_env("TextCatalogueNoOracle-v0", _NoOracle, max_episode_steps=2)
    try:
        with pytest.raises(trl_env.error.NoOracleError) as raised:
            evaluate(["TextCatalogueNoOracle-v0"], "oracle", episodes=1)
    finally:
        del gym.registry["TextCatalogueNoOracle-v0"]
    message = str(raised.value)
    assert "TextCatalogueNoOracle-v0 has no oracle" in message
    for env_id in ("TextWordle-v0", "TextArena/TowerOfHanoi-v0", "TextArena/Sudoku-v0"):
        assert env_id in message
    assert "every reasoning-gym ID but reasoning_gym/Boxnet-v0" in message
    assert "TextArena/Bandit-v0" not in message
    assert "trl-env list --oracles" in message


# --- the 0.2 table, deprecated ------------------------------------------------------------------


@pytest.mark.parametrize("module", [trl_env, trl_env.envs], ids=["trl_env", "trl_env.envs"])
def test_the_02_table_warns_and_still_answers(module: Any) -> None:
    with pytest.warns(DeprecationWarning, match=r"removed in trl-env 0\.3\.0.*env_specs") as record:
        registry = module.REGISTRY
    assert record[0].filename == __file__  # the warning points at the caller
    assert [entry.id for entry in registry] == [spec.id for spec in env_specs("catalogue")]
    assert registry[0].description == env_description(gym.spec("TextWordle-v0"))
    with pytest.warns(DeprecationWarning, match="importing trl_env registers every env"):
        module.register_envs()
    assert "REGISTRY" not in module.__all__ and "register_envs" not in module.__all__
    with pytest.warns(DeprecationWarning, match="EnvSpec"):
        assert trl_env.envs.EnvEntry.__name__ == "EnvEntry"
