"""A model's reply is data, never code: every registered env, hostile replies, bounded scorers."""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import inspect
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("reasoning_gym")
pytest.importorskip("textarena")

import reasoning_gym
from trl_env.envs.bridges._answer_grammar import AnswerGrammarError, check_answer
from trl_env.envs.bridges._scorer_pool import ScorerError, ScorerPool
from trl_env.envs.bridges._tables import REASONING_GYM_ANSWER_GRAMMARS, reasoning_gym_id

import trl_env
from tests.conftest import text_env_ids
from trl_env.error import GameGenerationError, TextEnvCheckError
from trl_env.utils import check_hostile_replies

RG_IDS = {spec.id for spec in trl_env.envs.env_specs("reasoning-gym")}
# Every registered ID but the OpenEnv client (its server runs one of these envs).
BRIDGED_IDS = [spec.id for spec in trl_env.envs.env_specs() if spec.namespace is not None]
ALL_IDS = sorted({*text_env_ids(), *BRIDGED_IDS})
_EXECUTES_TEXT = {"eval", "exec", "compile", "parse_expr", "sympify", "S", "literal_eval"}


def _make(env_id: str, **kwargs: object) -> gym.Env[str, str]:
    if env_id in RG_IDS:  # one problem takes every reply (one attempt each otherwise)
        kwargs.setdefault("max_attempts", 1_000)
    return gym.make(env_id, **kwargs)


# ------------------------------------------------------------------- every ID, hostile replies


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_hostile_replies_run_nothing(env_id: str) -> None:
    # In this process, so the audit-hook tripwires see the scorers (tests/test_hostile_tripwires.py
    # shows each one fires, here and in a worker).
    kwargs = {"isolate": False} if env_id in RG_IDS else {}
    report = check_hostile_replies(_make(env_id, **kwargs), time_limit=30)
    assert report.steps == 114


@pytest.mark.parametrize("task", sorted(REASONING_GYM_ANSWER_GRAMMARS))
def test_hostile_replies_run_nothing_in_the_worker_either(task: str) -> None:
    # The default: scoring in the worker process (its audit hook and the canary file would show
    # code run there).
    report = check_hostile_replies(_make(reasoning_gym_id(task)), time_limit=30)
    assert report.steps == 114


def test_the_check_catches_a_scorer_that_executes_replies() -> None:
    class Executing(gym.Env[str, str]):
        observation_space = action_space = trl_env.TextSpace(100_000)

        def reset(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
            return "question", {}

        def step(self, action):  # type: ignore[no-untyped-def]
            with contextlib.suppress(Exception):
                eval(action)  # the bug this whole file is about
            return "ok", 0.0, False, False, {}

    with pytest.raises(TextEnvCheckError, match="replies-are-data"):
        check_hostile_replies(Executing())


def test_the_check_catches_an_unbounded_step() -> None:
    class Slow(gym.Env[str, str]):
        observation_space = action_space = trl_env.TextSpace(100_000)

        def reset(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
            return "question", {}

        def step(self, action):  # type: ignore[no-untyped-def]
            time.sleep(0.3)
            return "ok", 0.0, False, False, {}

    with pytest.raises(TextEnvCheckError, match="bounded-step"):
        check_hostile_replies(Slow(), time_limit=0.1)


# ------------------------------------------------- the scorers that execute text, found by a scan


def _resolve(node: ast.expr, scope: dict[str, Any], owner: type | None) -> Any:
    """The object a called expression names (``f``, ``module.f``, ``self.f``, ``Class.f``)."""
    if isinstance(node, ast.Name):
        if node.id in ("self", "cls"):
            return owner
        return scope.get(node.id, getattr(builtins, node.id, None))
    if isinstance(node, ast.Attribute):
        return inspect.getattr_static(_resolve(node.value, scope, owner), node.attr, None)
    if isinstance(node, ast.Call):  # Class(...).method(...): the method of that class
        made = _resolve(node.func, scope, owner)
        return made if isinstance(made, type) else None
    return None


def _class_of(function: Any) -> type | None:
    """The module-level class a function is a method of (from its qualified name)."""
    qualname = getattr(function, "__qualname__", "").split(".")
    found = getattr(function, "__globals__", {}).get(qualname[0]) if len(qualname) > 1 else None
    return found if isinstance(found, type) else None


def _calls_in(function: object, owner: type | None = None) -> set[str]:
    """Names of the calls ``function`` makes that leave its package, following the rest.

    A call is followed into whatever it resolves to in its own module's namespace, when that is
    defined anywhere in the same top-level package: a function of the module or imported from
    another one (``helper(...)``, ``from .utils import helper``), an attribute of a module
    (``utils.helper(...)``), a method of ``owner`` or its bases (``self.helper(...)``), of a
    class just made (``Runner(text).run()``), a class (its ``__init__`` and ``__call__``).
    Every other call (builtins, other packages, what cannot be resolved) is named: a package's
    own function that happens to be called ``parse_expr`` is read, not named.
    """
    package = getattr(function, "__module__", "").split(".")[0]
    seen: set[object] = set()
    todo: list[tuple[Any, type | None]] = [(function, owner)]
    names: set[str] = set()
    while todo:
        current, current_owner = todo.pop()
        current = inspect.unwrap(getattr(current, "__func__", current))
        code = getattr(current, "__code__", None)
        if code is None or code in seen:
            continue
        seen.add(code)
        try:
            source = textwrap.dedent(inspect.getsource(current))
        except (OSError, TypeError):
            continue
        scope = current.__globals__
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if not name:
                continue
            target = _resolve(node.func, scope, current_owner)
            if isinstance(target, (staticmethod, classmethod)):
                target = target.__func__
            if isinstance(target, type):
                callees = [(vars(target).get(m), target) for m in ("__init__", "__call__")]
            else:
                followed_owner = current_owner if _is_self(node.func) else _class_of(target)
                callees = [(target, followed_owner)]
            followed = False
            for callee, callee_owner in callees:
                module = getattr(callee, "__module__", None) or ""
                if inspect.isfunction(callee) and module.split(".")[0] == package:
                    todo.append((callee, callee_owner))
                    followed = True
            if not followed:
                names.add(name)
    return names


def _is_self(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    )


def test_the_scan_follows_calls_across_the_modules_of_a_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "scanned_pkg"
    package.mkdir()
    files = {
        "__init__.py": "",
        "tasks.py": """
            from scanned_pkg import helpers
            from scanned_pkg.base import Base
            from scanned_pkg.parsing import read

            class Task(Base):
                def score_answer(self, answer, entry):
                    return helpers.check(answer) + read(answer) + self.inherited(answer)
            """,
        "base.py": """
            from scanned_pkg import deep

            class Base:
                def inherited(self, answer):
                    return deep.Runner(answer).run() + self.overridden(answer)

                def overridden(self, answer):
                    return 0
            """,
        "helpers.py": """
            import outside_pkg

            def check(answer):
                return outside_pkg.tool(answer)
            """,
        "parsing.py": """
            def read(answer):
                return _convert(answer)

            def _convert(text):
                return eval(text)
            """,
        "deep.py": """
            class Runner:
                def __init__(self, text):
                    self.text = prepare(text)

                def run(self):
                    return self._go()

                def _go(self):
                    return exec(self.text)

            def prepare(text):
                return text.strip()
            """,
        "derived.py": """
            from sympy import sympify
            from scanned_pkg.tasks import Task

            class Derived(Task):
                def overridden(self, answer):
                    return sympify(answer)
            """,
    }
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text))
    (tmp_path / "outside_pkg.py").write_text("def tool(x):\n    return compile(x, '', 'eval')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        tasks = importlib.import_module("scanned_pkg.tasks")
        derived = importlib.import_module("scanned_pkg.derived")
    finally:
        for module in [m for m in sys.modules if m.split(".")[0] in ("scanned_pkg", "outside_pkg")]:
            del sys.modules[module]

    names = _calls_in(tasks.Task.score_answer, tasks.Task)
    # eval: read (imported from another module) -> _convert; exec: up the bases (Base.inherited)
    # into a class of a third module (Runner(...).run() -> _go); strip: Runner.__init__ -> prepare.
    assert {"eval", "exec", "strip"} <= names
    assert not {"check", "read", "_convert", "inherited", "Runner", "run", "_go"} & names  # read
    assert "tool" in names and "compile" not in names  # another package's: named, not read
    assert "sympify" not in names
    derived_names = _calls_in(derived.Derived.score_answer, derived.Derived)
    assert "sympify" in derived_names  # self.overridden is the scored class's own


def test_every_scorer_that_executes_text_has_a_grammar() -> None:
    executing = set()
    for task, (dataset_class, _) in reasoning_gym.factory.DATASETS.items():
        if reasoning_gym_id(task) not in RG_IDS:
            continue
        if _calls_in(dataset_class.score_answer, dataset_class) & _EXECUTES_TEXT:
            executing.add(task)
    # Read and cleared: number_sorting evals only its own stored answer (a JSON fallback) and
    # bitwise_arithmetic its own generated problem; the reply only meets int(text, 0).
    assert executing - {"number_sorting", "bitwise_arithmetic"} == set(
        REASONING_GYM_ANSWER_GRAMMARS
    )


# --------------------------------------------------------- honest scores do not change


def _wrong_answers(answer: str, rng: np.random.Generator) -> list[str]:
    """Near-misses of an honest answer: a digit changed, an operator swapped, a list literal."""
    variants = []
    digits = [i for i, c in enumerate(answer) if c.isdigit()]
    if digits:
        i = int(rng.choice(digits))
        variants.append(answer[:i] + str((int(answer[i]) + 1) % 10) + answer[i + 1 :])
    for old, new in (("+", "-"), ("*", "+"), ("Q", "_")):
        if old in answer:
            variants.append(answer.replace(old, new, 1))
    rows = [row.split() for row in answer.splitlines()]
    variants.append(repr(rows if len(rows) > 1 else rows[0]))  # the scorers' list fallback
    variants.append(repr(list(answer)))
    return variants


@pytest.mark.parametrize("task", sorted(REASONING_GYM_ANSWER_GRAMMARS))
def test_honest_and_wrong_answers_score_as_before(task: str) -> None:
    rng = np.random.default_rng(0)
    compared = 0
    for seed in range(6):
        env = gym.make(reasoning_gym_id(task), isolate=False, max_attempts=100)
        env.reset(seed=seed)
        game = env.unwrapped
        dataset, entry, _ = game._in_process.get(task, {}, game._problem_seed)
        answers = [entry["answer"], *_wrong_answers(str(entry["answer"]), rng)]
        for answer in answers:
            old = float(dataset.score_answer(answer, entry))  # our own, known-safe text
            names = [*game._problem["names"], "C"]
            try:
                check_answer(game.grammar, answer, names=names)
            except AnswerGrammarError:
                continue  # outside the grammar: an invalid reply by design
            new = game._score(answer)
            assert new == (old, None), (task, answer)
            compared += 1
        assert game._score(entry["answer"])[0] == float(
            dataset.score_answer(entry["answer"], entry)
        )
    assert compared >= 12


def test_list_literal_answers_keep_their_partial_credit() -> None:
    env = gym.make("reasoning_gym/SpiralMatrix-v0", max_attempts=3)
    _, info = env.reset(seed=0)
    as_list = "[" + ", ".join(info["answer"].split()) + "]"
    _, reward, _, _, info = env.step(f"<answer>{as_list}</answer>")
    assert info["invalid_action"] is False and info["score"] == 0.1


# ------------------------------------------------------------------ bounded time and memory


def test_a_huge_power_is_refused_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """By the answer grammar, before any scorer runs (sympy took minutes on it before)."""
    ops: list[str] = []
    call = ScorerPool.call

    def recording_call(self: ScorerPool, request: dict, **kwargs: object) -> object:
        ops.append(request["op"])
        return call(self, request, **kwargs)

    monkeypatch.setattr(ScorerPool, "call", recording_call)
    env = gym.make("reasoning_gym/Countdown-v0")
    env.reset(seed=1)
    _, reward, terminated, _, info = env.step("<answer>9**9**9</answer>")
    assert info["invalid_action"] and reward == -0.1 and "exponent" in info["error"]
    assert "score" not in ops and ops  # the worker made the problem; it never saw the answer
    _, info = env.reset(seed=1)
    env.step(f"<answer>{info['answer']}</answer>")
    assert ops[-1] == "score"  # the spy sees a scoring when there is one


def test_a_scorer_past_its_time_limit_is_killed_and_the_step_is_invalid() -> None:
    # Inside the grammar (bounded exponents) but minutes of sympy.simplify: the limit ends it.
    slow = "(x + 1)**1000*(x - 1)**999*sin(x)**1000*exp(x)**999 + C"
    env = gym.make("reasoning_gym/IntermediateIntegration-v0", score_time_limit=1.0)
    _, info = env.reset(seed=3)
    started = time.monotonic()
    _, reward, _, _, info = env.step(f"<answer>{slow}</answer>")
    assert time.monotonic() - started < 30  # bounded (it ran for minutes before)
    assert info["invalid_action"] and reward == -0.1 and "within 1 s" in info["error"]
    env = gym.make("reasoning_gym/IntermediateIntegration-v0")  # the pool recovers
    _, info = env.reset(seed=3)
    assert env.step(f"<answer>{info['answer']}</answer>")[1] == 1.0


def test_generation_past_its_time_limit_is_a_clear_error() -> None:
    # The limit runs from the request: even a reply the worker had cached arrives after 1 ns (it
    # passed 1e-4 s once, on a busy machine, when this process got the CPU back too late).
    env = gym.make("reasoning_gym/Countdown-v0", reset_time_limit=1e-9)
    with pytest.raises(GameGenerationError, match=r"reasoning_gym/countdown.*reset_time_limit"):
        env.reset(seed=0)


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="needs Linux /proc")
def test_the_workers_address_space_is_capped() -> None:
    env = gym.make("reasoning_gym/BasicArithmetic-v0", memory_limit_mb=3000)
    env.reset(seed=0)
    pool = ScorerPool.shared()
    workers = [w for w in pool._idle if w.memory_limit_mb == 3000]
    assert workers
    limits = Path(f"/proc/{workers[0].process.pid}/limits").read_text()
    row = next(line for line in limits.splitlines() if line.startswith("Max address space"))
    assert row.split()[3] == str(3000 * 1024 * 1024)


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="score_time_limit"):
        gym.make("reasoning_gym/Countdown-v0", score_time_limit=0)
    with pytest.raises(ValueError, match="memory_limit_mb"):
        gym.make("reasoning_gym/Countdown-v0", memory_limit_mb=-1)


# ---------------------------------------------------------------- resets never raise foreign errors


def test_maze_resets_on_a_seed_whose_first_problem_fails() -> None:
    env = gym.make("reasoning_gym/Maze-v0")
    game = env.unwrapped
    failures = []
    call = game._call

    def spy(op, seed, time_limit, **fields):  # type: ignore[no-untyped-def]
        try:
            return call(op, seed, time_limit, **fields)
        except Exception as error:
            failures.append(str(error))
            raise

    game._call = spy
    first, _ = env.reset(seed=685494878)  # reasoning-gym raises on this seed's first problem
    assert failures and "Could not find suitable path cell" in failures[0]
    assert env.reset(seed=685494878)[0] == first  # retried deterministically: the same game
    for seed in range(200):
        env.reset(seed=seed)


def test_a_generator_that_always_fails_is_a_trl_env_error() -> None:
    env = gym.make("reasoning_gym/Maze-v0", isolate=False)

    def failing(*args: object, **kwargs: object) -> dict[str, object]:
        raise ScorerError("RuntimeError", "Could not find suitable path cell")

    env.unwrapped._call = failing
    with pytest.raises(GameGenerationError, match="failed on 8 seeds in a row"):
        env.reset(seed=0)
