"""Reading hostile replies: the time of the scans that must stay cheap, and each one's ratio.

The tests check these paths by what they do (a few C-level string calls for ``last_bracketed``;
no tokenizer and no regex over an over-long Countdown expression); this script gives the times
they once asserted, each with its ratio to a baseline measured in the same run or to the bound the
tests used to hold:

* ``last_bracketed`` on four 1 MB replies, against the regex every game used before
  (``re.findall(r"\\[([^\\[\\]]*)\\]", text)[-1]``); the old test bound was 2 ms;
* a Countdown expression of up to 1 MB refused as too long, by ``evaluate_expression`` and by a
  whole ``env.step``, against the old 0.5 s bound and against a step on a valid expression;
* a Countdown step (a mix of valid, invalid and 5,000-character replies) and a reset, against
  the old 1 ms and 5 ms bounds;
* a TicTacToe episode against the perfect opponent (reset, a move, an invalid reply; the tests
  check that the moves are looked up in the minimax table, no game tree searched), against the old
  1 ms bound;
* a Sudoku step, 4x4 and 9x9 (correct, wrong, invalid and off-board moves; the tests check that
  no step runs the solver), against the old 1 ms bound.

Each figure is the fastest of ``--repeats`` runs (robust to a busy machine).

Run:
    python benchmarks/reply_parsing.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

import gymnasium as gym
from trl_env.envs._common import last_bracketed
from trl_env.envs.countdown import TextCountdownEnv, evaluate_expression
from trl_env.envs.sudoku import TextSudokuEnv
from trl_env.envs.tictactoe import TextTicTacToeEnv

import trl_env  # noqa: F401  (registers the catalogue)

_BRACKETED = re.compile(r"\[([^\[\]]*)\]")
NUMBERS = [25, 3, 4, 7, 7, 100]
REPLIES = {
    "many-spans": "[ab] " * 200_000,
    "only-openings": "[" * 1_000_000,
    "one-closing": "x" * 1_000_000 + "]",
    "only-closings": "]" * 1_000_000,
}
EXPRESSIONS = {
    "deep-parens": "(" * 100_000 + "3" + ")" * 100_000,
    "megabyte-product": "3*" * 500_000 + "3",
    "megabyte-number": "9" * 1_000_000,
    "power-tower": "2**" * 300_000 + "2",
}


def regex_last_bracketed(text: str) -> str | None:
    found = _BRACKETED.findall(text)
    return found[-1] if found else None


def best(function: Callable[[], object], repeats: int, number: int = 1) -> float:
    """The fastest of ``repeats`` runs of ``number`` calls, in seconds per call."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            function()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats

    print("last_bracketed on 1 MB replies (regex: the extractor it replaced; old bound 2 ms)")
    for name, text in REPLIES.items():
        assert last_bracketed(text) == regex_last_bracketed(text)
        scan = best(lambda text=text: last_bracketed(text), repeats)
        regex = best(lambda text=text: regex_last_bracketed(text), repeats)
        print(
            f"  {name:14s} {scan * 1e3:8.3f} ms   regex {regex * 1e3:8.2f} ms   "
            f"regex / scan {regex / scan:8.0f}x   scan / 2 ms {scan / 2e-3:.3f}"
        )

    env = gym.make("TextCountdown-v0", max_attempts=10**9)
    env.reset(seed=0)
    valid = best(lambda: env.step("[(25 + 3) * 4]"), repeats, number=200)
    print(
        f"Countdown, over-long expressions refused (old bound 0.5 s; a valid step {valid * 1e6:.0f} us)"
    )
    for name, expression in EXPRESSIONS.items():
        reply = f"[{expression}]"
        assert "too long" in evaluate_expression(expression, NUMBERS)[1]
        assert "too long" in env.step(reply)[0]
        evaluated = best(lambda e=expression: evaluate_expression(e, NUMBERS), repeats)
        step = best(lambda r=reply: env.step(r), repeats)
        print(
            f"  {name:16s} evaluate {evaluated * 1e6:8.1f} us   step {step * 1e6:8.1f} us   "
            f"step / 0.5 s {step / 0.5:.1e}   step / valid step {step / valid:6.1f}x"
        )

    game = TextCountdownEnv(max_attempts=10**6)
    game.reset(seed=0)
    actions = ["[(25 + 3) * 4]", "[100 * 75 - 50 / 25 + (10 - 9)]", "[x]", "y" * 5000]
    step = best(lambda: [game.step(a) for a in actions], repeats, number=50) / len(actions)
    reset = best(game.reset, repeats, number=50)
    print(
        f"Countdown step {step * 1e6:.1f} us (/ 1 ms: {step / 1e-3:.3f}); "
        f"reset {reset * 1e6:.1f} us (/ 5 ms: {reset / 5e-3:.3f})"
    )

    tictactoe = TextTicTacToeEnv(opponent="perfect")  # builds the minimax table (once a process)

    def episode() -> None:
        tictactoe.reset(seed=0)
        tictactoe.step("[b2]")
        tictactoe.step("not a move")

    per_episode = best(episode, repeats, number=200)
    print(
        f"TicTacToe, perfect opponent: reset + 2 steps {per_episode * 1e6:.1f} us "
        f"(/ 1 ms: {per_episode / 1e-3:.3f})"
    )
    moves = ["[1 1 1]", "[2 2 2]", "nonsense", "[9 9 9]"]
    for size in (4, 9):
        sudoku = TextSudokuEnv(size=size, extra_turns=10**6)
        sudoku.reset(seed=0)
        step = best(lambda s=sudoku: [s.step(m) for m in moves], repeats, number=50) / len(moves)
        print(f"Sudoku {size}x{size} step {step * 1e6:.1f} us (/ 1 ms: {step / 1e-3:.3f})")


if __name__ == "__main__":
    main()
