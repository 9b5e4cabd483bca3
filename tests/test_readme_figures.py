"""The figures of the README and of ``docs/learning.md`` are those of the committed results files.

* The default-run table of ``README.md`` (the table after the ``<!-- figures: FILE -->`` marker)
  gives, for each figure, the min-max over the seeds of ``FILE``
  (``benchmarks/results/learning_curve/default_run.json``, written by
  ``python benchmarks/learning_curve.py --seeds 0 1 2 --results FILE``), rounded as printed.
* The per-seed table of ``docs/learning.md`` gives each seed's figures from the same file.
* The results file is consistent with itself: each seed's first- and last-10 means are those of
  its per-step rewards, and the summary is the min, max and mean of the seeds' figures.
* The real-model figures of the README are those of their ``result.json`` files; where it says one
  95% interval lies above others, the Wilson intervals are recomputed from the counts.
* Every ``benchmarks/results/...`` path that a page stating figures cites exists (``FIGURE_PAGES``:
  these two, and docs/multiturn.md, docs/real_models.md and docs/cli.md, whose figures
  tests/test_doc_figures.py checks one by one with the helpers below).

No training runs here: it reads files only.
"""

from __future__ import annotations

import json
import re
from itertools import takewhile
from pathlib import Path
from typing import Any

import pytest

from trl_env._summary import wilson_interval

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LEARNING = ROOT / "docs" / "learning.md"
# The pages that state figures of committed results (docs/multiturn.md, docs/real_models.md and
# docs/cli.md are checked figure by figure in tests/test_doc_figures.py).
FIGURE_PAGES = (
    "README.md",
    "docs/learning.md",
    "docs/multiturn.md",
    "docs/real_models.md",
    "docs/cli.md",
)
DEFAULT_RUN = "benchmarks/results/learning_curve/default_run.json"
MARKER = re.compile(r"<!--\s*figures:\s*(?P<path>\S+)\s*-->")
DASH = "\u2013"  # en dash between the min and the max of a range

# Column header of the README's table -> (key in the results file, format of one value).
README_COLUMNS = {
    "first 10 steps": ("first10_mean_reward", "{:.3f}"),
    "last 10 steps": ("last10_mean_reward", "{:.3f}"),
    "ratio": ("ratio", "{:.2f}x"),
    "gain": ("gain", "{:+.3f}"),
    "held-out success, step 400": ("eval_success_rate", "{:.3f}"),
    "wall time": ("wall_time_s", "{:.0f} s"),
}
# Column header of docs/learning.md's per-seed table -> how a seed's record prints there.
LEARNING_COLUMNS = {
    "seed": lambda r: str(r["seed"]),
    "first 10": lambda r: f"{r['first10_mean_reward']:.3f}",
    "last 10": lambda r: f"{r['last10_mean_reward']:.3f}",
    "ratio": lambda r: f"{r['ratio']:.2f}",
    "gain": lambda r: f"{r['gain']:+.3f}",
    "held-out success, step 400 [95% ci]": lambda r: (
        f"{r['eval_success_rate']:.3f} [{r['eval_success_ci'][0]:.3f}, "
        f"{r['eval_success_ci'][1]:.3f}]"
    ),
    "wall time": lambda r: f"{r['wall_time_s']:.0f} s",
    "grpo time": lambda r: f"{r['train_time_s']:.0f} s",
    "held-out evals": lambda r: f"{r['eval_seconds_total']:.1f} s",
}


def load(path: str) -> dict[str, Any]:
    return json.loads((ROOT / path).read_text("utf-8"))


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row, stripped (and without ``**`` emphasis)."""
    return [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]


def table_after_marker(path: Path) -> tuple[str, list[str], list[list[str]]]:
    """The results file named by the ``<!-- figures: FILE -->`` marker of ``path`` and the
    table that follows it (its header and its rows)."""
    lines = path.read_text("utf-8").splitlines()
    found = [(i, m["path"]) for i, line in enumerate(lines) if (m := MARKER.search(line))]
    assert len(found) == 1, f"{path.name}: expected one <!-- figures: FILE --> marker"
    start, results = found[0]
    table = []
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    assert len(table) >= 3, f"{path.name}: no table after the figures marker"
    header, rows = cells(table[0]), [cells(line) for line in table[2:]]
    return results, header, rows


def range_cell(values: list[float], fmt: str) -> str:
    low, high = fmt.format(min(values)), fmt.format(max(values))
    if fmt.endswith(" s") or fmt.endswith("x"):  # the unit once, after the range
        unit = fmt[fmt.index("}") + 1 :]
        return f"{low.removesuffix(unit)}{DASH}{high}" if low != high else high
    return f"{low}{DASH}{high}" if low != high else high


def fraction(block: dict[str, Any]) -> str:
    """An evaluation's successes as printed: ``38/256``."""
    return f"{round(block['success_rate'] * block['episodes'])}/{block['episodes']}"


def interval(block: dict[str, Any]) -> tuple[float, float]:
    """An evaluation's 95% Wilson interval, recomputed from its counts; the stored one must be it
    (the files keep 4 decimals)."""
    wins = round(block["success_rate"] * block["episodes"])
    low, high = wilson_interval(wins, block["episodes"])
    # Older files keep the pair, newer ones the bounds on their own; some both (then equal).
    stored = block.get("success_ci") or [block["success_ci_low"], block["success_ci_high"]]
    assert stored == pytest.approx([low, high], abs=1e-4)
    if "success_ci_low" in block:
        assert [block["success_ci_low"], block["success_ci_high"]] == stored
    return low, high


def ci(block: dict[str, Any]) -> str:
    """An evaluation's interval as printed: ``[0.110, 0.197]``."""
    low, high = interval(block)
    return f"[{low:.3f}, {high:.3f}]"


@pytest.fixture(scope="module")
def default_run() -> dict[str, Any]:
    return load(DEFAULT_RUN)


def test_results_file_is_consistent(default_run: dict[str, Any]) -> None:
    records = default_run["per_seed"]
    assert len(records) >= 3, "the figures are stated over at least 3 seeds"
    assert [r["seed"] for r in records] == default_run["seeds"]
    assert len(set(default_run["seeds"])) == len(records)
    for r in records:
        rewards = r["rewards"]
        assert len(rewards) == r["steps"]
        assert r["first10_mean_reward"] == pytest.approx(sum(rewards[:10]) / 10, abs=1e-5)
        assert r["last10_mean_reward"] == pytest.approx(sum(rewards[-10:]) / 10, abs=1e-5)
        gain = r["last10_mean_reward"] - r["first10_mean_reward"]
        assert r["gain"] == pytest.approx(gain, abs=1e-5)
        ratio = r["last10_mean_reward"] / r["first10_mean_reward"]
        assert r["ratio"] == pytest.approx(ratio, abs=1e-3)
        assert r["eval_success_rate"] == r["evals"][-1]["success_rate"]
        assert r["eval_seconds_total"] == pytest.approx(
            sum(e["seconds"] for e in r["evals"]), abs=0.1
        )
    for name, stats in default_run["summary"].items():
        values = [r[name] for r in records]
        assert stats["min"] == min(values) and stats["max"] == max(values), name
        assert stats["mean"] == pytest.approx(sum(values) / len(values), abs=1e-5), name
    for key in ("command", "trl_env_version", "torch_version", "date"):
        assert default_run[key], key
    assert default_run["machine"]["cpu_model"] and default_run["machine"]["torch_threads"]


def test_readme_default_run_table_matches_results(default_run: dict[str, Any]) -> None:
    results, header, rows = table_after_marker(README)
    assert results == DEFAULT_RUN
    assert len(rows) == 1, "one short table: one row"
    seeds = ", ".join(str(s) for s in default_run["seeds"])
    assert f"seeds {seeds}" in header[0], f"the table names the seeds ({seeds})"
    columns = {name.lower(): i for i, name in enumerate(header)}
    assert set(README_COLUMNS) <= set(columns), f"columns: {header}"
    assert {r["eval_step"] for r in default_run["per_seed"]} == {400}, "held-out success, step 400"
    for name, (key, fmt) in README_COLUMNS.items():
        expected = range_cell([r[key] for r in default_run["per_seed"]], fmt)
        assert rows[0][columns[name]] == expected, f"README column {name!r}"
    text = README.read_text("utf-8")
    assert f"`{DEFAULT_RUN}`" in text, "the README says which file the figures come from"
    assert default_run["command"] in text, "the README gives the command that reproduces them"


def test_learning_doc_per_seed_table_matches_results(default_run: dict[str, Any]) -> None:
    results, header, rows = table_after_marker(LEARNING)
    assert results == DEFAULT_RUN
    columns = {name.lower(): i for i, name in enumerate(header)}
    assert set(LEARNING_COLUMNS) <= set(columns), f"columns: {header}"
    by_seed = {str(r["seed"]): r for r in default_run["per_seed"]}
    seeds = [row[columns["seed"]] for row in rows]
    assert seeds == list(by_seed), "docs/learning.md lists every seed of the results file"
    for row in rows:
        seed = row[columns["seed"]]
        for name, show in LEARNING_COLUMNS.items():
            assert row[columns[name]] == show(by_seed[seed]), f"seed {seed}, column {name!r}"
    text = " ".join(LEARNING.read_text("utf-8").split())
    assert default_run["command"] in text
    # The warm-started model, from the same runs: held-out success at step 0, first step's reward.
    step0 = [r["evals"][0]["success_rate"] for r in default_run["per_seed"]]
    assert all(r["evals"][0]["step"] == 0 for r in default_run["per_seed"])
    assert f"greedy held-out success at step 0 is {range_cell(step0, '{:.3f}')}" in text
    assert f"the warm-started model scores {range_cell(step0, '{:.3f}')} at step 0" in text
    first = [r["rewards"][0] for r in default_run["per_seed"]]
    assert f"first GRPO step (sampled) is {range_cell(first, '{:.3f}')}" in text


def default_command_run(folder: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A default-command run's ``result.json`` and ``run.json`` (no recipe, stopped by its minutes),
    after asserting that its trained interval lies above the base model's, the warm start's and
    the random policy's, each recomputed from the counts."""
    result = load(f"benchmarks/results/{folder}/result.json")
    record = load(f"benchmarks/results/{folder}/run.json")
    assert "--recipe" not in result["command"] and record["stopped_by"] == "minutes"
    for key in ("before", "warm_start", "random"):
        assert interval(result["after"])[0] > interval(result[key])[1], key
    return result, record


def test_readme_real_model_figures_match_results() -> None:
    text = " ".join(README.read_text("utf-8").split())
    one_turn = load("benchmarks/results/real_model_learning/TextLargestNumber-v0/result.json")
    before, after = one_turn["before"], one_turn["after"]

    expected = (
        f"from {fraction(before)} (95% CI {ci(before)}) to {fraction(after)} (CI {ci(after)}) "
        f"in {one_turn['steps']} steps ({one_turn['train_s'] / 60:.0f} minutes"
    )
    assert expected in text
    # docs/learning.md: "the after interval lies entirely above the before interval".
    assert interval(after)[0] > interval(before)[1]
    assert one_turn["after_ci_above_before_ci"] is True  # the file's own flag agrees
    multi = load("benchmarks/results/learning_multiturn_oneshot/result.json")
    # The README: after's interval above the base model's, the warm start's and the random
    # policy's, each recomputed from the counts (not the file's after_ci_above_all flag).
    for key in ("before", "warm_start", "random"):
        assert interval(multi["after"])[0] > interval(multi[key])[1], key
    assert multi["after_ci_above_all"] is multi["after_ci_above_before_ci"] is True
    assert multi["budget_s"] <= 3600
    assert multi["reused_evals"] == [], "one invocation, end to end"
    assert f"then {multi['steps']} GRPO steps" in text
    # Warm start and GRPO against the budget; the whole invocation (evaluations too) beside it.
    assert (
        f"{multi['budget_s'] / 60:.0f} minutes in all for warm start and GRPO "
        f"({multi['wall_s'] / 60:.0f} minutes with the four held-out evaluations)"
    ) in text
    assert f"{multi['after']['mean_turns']:.1f} model turns per episode" in text
    assert f"from {fraction(multi['before'])} to **{fraction(multi['after'])} (95% CI " in text
    assert f"{fraction(multi['after'])} (95% CI {ci(multi['after'])})**" in text
    for key in ("before", "warm_start", "random"):  # the three references the README names
        assert fraction(multi[key]) == fraction(multi["before"])
        assert ci(multi[key]) == ci(multi["before"])
    assert f"random policy's {fraction(multi['random'])} (CI {ci(multi['random'])})" in text
    rerun = load("benchmarks/results/learning_hangman_recipe_amx/result.json")
    assert f"rerun that way on later code it won {fraction(rerun['after'])}, so the" in text
    # The default command, no recipe: after above every reference, recomputed from the counts.
    default, record = default_command_run("learning_hangman_default_amx")
    for key in ("before", "warm_start", "random"):
        assert fraction(default[key]) == fraction(default["before"])
    assert (
        f"from {fraction(default['before'])} to **{fraction(default['after'])} (95% CI "
        f"{ci(default['after'])})** in {record['steps']} GRPO steps and "
        f"{record['wall_time_s'] / 60:.1f} minutes on an Intel Xeon with AMX"
    ) in text
    assert record["machine"]["bf16_units"] and "amx_bf16" in record["machine"]["cpu_flags"]
    assert f"random policy's {fraction(default['random'])}; one run, end to end" in text
    # Its rerun on later code (a slower machine: fewer steps in the budget), above all three too.
    rerun, rerun_record = default_command_run("learning_hangman_default_rerun_amx")
    assert rerun["command"].replace("s18", "s10") == default["command"]
    assert (
        f"the same CPU ({rerun_record['steps']} GRPO steps in the same budget): "
        f"{fraction(rerun['after'])} (CI {ci(rerun['after'])}), still above all three, peak RSS "
        f"{rerun_record['peak_rss_gb']:.2f} GB"
    ) in text
    learning = " ".join(LEARNING.read_text("utf-8").split())
    assert (
        f"rerun on today's code on a slower machine: {fraction(rerun['after'])} in "
        f"{rerun_record['steps']} steps, still above all three"
    ) in learning
    # The frequency order's own demos as the warm start, then GRPO on wins: the trained model's
    # interval holds the order's success rate (recomputed), as the warm start's does.
    order = load(
        "benchmarks/results/learning_hangman_frequency_warm_start_amx/eval_frequency/results.json"
    )
    order_wins = round(order["envs"]["TextHangman-v0"]["success_rate"] * 256)
    folder = "benchmarks/results/learning_hangman_frequency_warm_start_win_amx/"
    frequency = load(folder + "result.json")
    assert "--credit episode --partial-credit 0 --beta 0.1" in frequency["command"]
    for key in ("after", "warm_start"):
        low, high = wilson_interval(frequency[key]["wins"], 256)
        assert low <= order_wins / 256 <= high
    assert frequency["after"]["wins"] - frequency["warm_start"]["wins"] == 1
    assert (
        f"still wins {order_wins}/256 of the same games (`trl-env eval TextHangman-v0 --policy "
        f"frequency`); a warm start on that order's own demos (`--warm-start frequency`) won "
        f"{fraction(frequency['warm_start'])}, and {frequency['steps']} GRPO steps after it "
        f"on the game's own reward (`--credit episode --partial-credit 0 --beta 0.1`) "
        f"{fraction(frequency['after'])} (CI {ci(frequency['after'])}), whose interval holds the "
        f"order's {order_wins / 256:.3f}: reached, by the warm start's imitation, which GRPO kept "
        "but added one game to"
    ) in text
    # The second game by the same command (TextTicTacToePerfect-v0: a draw is the success).
    second, second_run = default_command_run("learning_tictactoe_perfect_default_amx")
    assert (
        f"held-out greedy draws from {fraction(second['before'])} to "
        f"**{fraction(second['after'])} (95% CI {ci(second['after'])})** in "
        f"{second_run['steps']} GRPO steps and {second_run['wall_time_s'] / 60:.1f} minutes, above "
        f"the random policy's {fraction(second['random'])} (CI {ci(second['random'])})"
    ) in text
    assert fraction(second["warm_start"]) == fraction(second["before"]) == "0/256"
    # Its rerun on later code (a slower machine), resumed to step 53: not above the random policy.
    folder = "benchmarks/results/learning_tictactoe_perfect_default_rerun_amx/"
    rerun, rerun_record = load(folder + "result.json"), load(folder + "run.json")
    resumed = load(folder + "resumed/run.json")
    final = load(folder + "resumed/eval_after/results.json")["envs"]["TextTicTacToePerfect-v0"]
    assert interval(final)[0] <= interval(rerun["random"])[1]
    # Resumed again to the recorded run's steps: the final model not above it, step 100's far above.
    again = load(folder + "resumed103/run.json")
    env = "TextTicTacToePerfect-v0"
    final103 = load(folder + "resumed103/eval_after/results.json")["envs"][env]
    step100 = load(folder + "resumed103/eval_step100/results.json")["envs"][env]
    assert again["steps"] == second_run["steps"] and again["stopped_by"] == "max_steps"
    assert interval(final103)[0] <= interval(rerun["random"])[1] < interval(step100)[0]
    assert (
        f"the budget held {rerun_record['steps']} GRPO steps, which drew {fraction(rerun['after'])}, "
        f"and the same run resumed to step {resumed['steps']} drew {fraction(final)} "
        f"(CI {ci(final)}), not above the random policy's; resumed to the recorded "
        f"{again['steps']} steps it drew {fraction(final103)} (CI {ci(final103)}), still not above "
        f"it, though its step-100 checkpoint drew {fraction(step100)} (CI {ci(step100)})"
    ) in text
    learning = " ".join((ROOT / "docs/learning.md").read_text("utf-8").split())
    assert (
        f"from {fraction(second['before'])} to {fraction(second['after'])} in "
        f"{second_run['steps']} GRPO steps, on one line of play (rerun on today's code on a slower "
        f"machine: {fraction(final)} at step {resumed['steps']} and {fraction(final103)} at step "
        f"{again['steps']}, not above the random policy's {fraction(rerun['random'])}; its "
        f"step-100 checkpoint drew {fraction(step100)};"
    ) in learning
    # With turn credit (--recipe tictactoe-perfect-turn): the first run's final model (its last
    # step's) not above the random policy; the recipe keeping the best eval's model as final/,
    # RUN above all three (recomputed), in the README and learning.md.
    turn = load("benchmarks/results/learning_tictactoe_perfect_turn_amx/result.json")
    bound = max(interval(turn[k])[1] for k in ("before", "random", "warm_start"))
    assert interval(turn["after"])[0] <= bound
    folder = "benchmarks/results/learning_tictactoe_perfect_turn_best_amx/"
    best, best_run = load(folder + "result.json"), load(folder + "run.json")
    bound = max(interval(best[k])[1] for k in ("before", "random", "warm_start"))
    assert interval(best["after"])[0] > bound and best["after_judged_on_other_seeds"]
    assert best_run["final_model"] == "best" and best_run["stopped_by"] == "minutes"
    assert (
        "`trl-env train TextTicTacToePerfect-v0 --model FILE.gguf --lora --minutes 55 --recipe "
        "tictactoe-perfect-turn` took held-out greedy draws to "
        f"**{fraction(best['after'])} (95% CI {ci(best['after'])})** in {best_run['steps']} GRPO "
        f"steps and {best_run['wall_time_s'] / 60:.1f} minutes, above all three (`trl-env eval "
        f"--policy RUN`: its step-{best_run['final_model_step']} model, chosen on other seeds;"
    ) in text
    assert (
        f"the recipe's first run, whose final model was its last step's, drew "
        f"{fraction(turn['after'])} (CI {ci(turn['after'])}), not above the random policy's"
    ) in text
    assert (
        f"held-out eval's model as the final one: {fraction(best['after'])} in "
        f"{best_run['steps']} steps, above all three; the recipe's first run, its last step's "
        f"model kept: {fraction(turn['after'])})"
    ) in learning
    assert (
        f"from {fraction(default['before'])} to {fraction(default['after'])} in "
        f"{record['steps']} GRPO steps on an Intel CPU with AMX"
    ) in learning
    # The third game (FrozenLake from random start cells): after above every reference,
    # recomputed from the counts, in the README and learning.md.
    folder = "benchmarks/results/learning_frozenlake_random_start_amx/"
    third, third_run = load(folder + "result.json"), load(folder + "run.json")
    assert "--recipe frozenlake-random-start" in third["command"]
    assert third_run["stopped_by"] == "minutes"
    for key in ("before", "warm_start", "random"):
        assert interval(third["after"])[0] > interval(third[key])[1], key
    assert (
        f"took held-out greedy wins from {fraction(third['before'])} to "
        f"**{fraction(third['after'])} (95% CI {ci(third['after'])})** in {third_run['steps']} "
        f"GRPO steps and {third_run['wall_time_s'] / 60:.1f} minutes on the same CPU, above the "
        f"random policy's {fraction(third['random'])} (CI {ci(third['random'])}) and the warm "
        f"start's {fraction(third['warm_start'])}"
    ) in text
    fixed = load(folder + "eval_after_fixed_start/results.json")["envs"]["TextFrozenLake-v1"]
    assert f"and {round(fixed['success_rate'] * 256)}/256 games of the fixed-start game" in text
    assert (
        f"held-out greedy wins from {fraction(third['before'])} to {fraction(third['after'])} in "
        f"{third_run['steps']} GRPO steps, above the random policy's {fraction(third['random'])} "
        f"and the warm start's {fraction(third['warm_start'])}"
    ) in learning
    # Its rerun on later code: the same steps (test_doc_figures compares them), fewer of them.
    rerun_folder = "benchmarks/results/learning_frozenlake_random_start_rerun_amx/"
    again, again_run = load(rerun_folder + "result.json"), load(rerun_folder + "run.json")
    assert again["command"].replace("s21", "s14") == third["command"]
    for key in ("before", "warm_start", "random"):
        assert interval(again["after"])[0] > interval(again[key])[1], key
    assert again_run["stopped_by"] == "minutes" and again_run["steps"] < third_run["steps"]
    assert (
        f"until the budget ended it at {again_run['steps']} GRPO steps, which drew "
        f"{fraction(again['after'])} (CI {ci(again['after'])}), still above all three"
    ) in text
    assert (
        f"the same run step for step until the budget ended it at {again_run['steps']} GRPO "
        f"steps: {fraction(again['after'])}, still above both"
    ) in learning
    resumed = load(rerun_folder + "resumed98/run.json")
    final = load(rerun_folder + "resumed98/eval_after/results.json")["envs"]["TextFrozenLake-v1"]
    assert resumed["steps"] == third_run["steps"] and resumed["stopped_by"] == "max_steps"
    wins = round(final["success_rate"] * final["episodes"])
    assert f"{wins}/{final['episodes']}" == fraction(
        third["after"]
    )  # test_doc_figures: game for game
    assert (
        f"resumed to the recorded {resumed['steps']} steps it replayed the rest of the run as well "
        f"and drew the recorded {fraction(third['after'])}, the same {final['episodes']} games"
    ) in text
    assert (
        f"and resumed to {resumed['steps']} steps the recorded {fraction(third['after'])}, game "
        "for game"
    ) in learning
    # The frequency order on the same seeds and game (the loop of docs/multiturn.md).
    import gymnasium as gym

    import trl_env  # noqa: F401

    order, wins = "esiarntolcdugpmhbyfvkwzxqj", 0
    for seed in range(10000, 10256):
        env = gym.make("TextHangman-v0")
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            letter = next(c for c in order if c not in info["guessed"])
            _, _, terminated, truncated, info = env.step(f"[{letter}]")
            done = terminated or truncated
        wins += info["won"]
    assert f"still wins {wins}/256 of the same games" in text
    # Greedy invalid-reply rates over 4 turns before / after the format warm start.
    table = (ROOT / "benchmarks/results/real_model_envs/warmstart_table.md").read_text("utf-8")
    invalid = []  # (before, after) per env, in %
    for line in table.splitlines():
        if line.startswith("| Text"):
            row = cells(line)
            invalid.append(tuple(int(row[i].split(" / ")[1].rstrip("%")) for i in (2, 3)))
    n = len(invalid)
    over_before = sum(before > 50 for before, _ in invalid)
    under_20 = sum(after < 20 for _, after in invalid)
    assert (
        f"from over 50% on {over_before} of the {n} native envs to under 20% on {under_20} of "
        f"the {n} (the goal was 15;" in text
    )
    kv = (ROOT / "benchmarks/results/rollout_overhead_smollm2.txt").read_text("utf-8")
    speedup = re.search(r"generation total: .* (\d+\.\d+)x faster", kv)
    assert speedup and f"{speedup[1]}x faster over 6 Wordle turns" in text


def cited_results(text: str) -> list[str]:
    """The ``benchmarks/results/...`` paths a page cites, ``{a,b}`` alternatives expanded."""
    paths = []
    for cited in re.findall(r"benchmarks/results/[\w.{},/-]*[\w}]", text):
        if m := re.search(r"\{([^}]*)\}", cited):
            alternatives = m[1].split(",")
            paths += [cited[: m.start()] + a + cited[m.end() :] for a in alternatives]
        else:
            paths.append(cited)
    return paths


@pytest.mark.parametrize("page", FIGURE_PAGES)
def test_cited_results_paths_exist(page: str) -> None:
    cited = cited_results((ROOT / page).read_text("utf-8"))
    assert cited, f"{page} cites no results file"
    missing = [path for path in cited if not (ROOT / path).exists()]
    assert not missing, f"{page} cites missing results: {missing}"


def _self_play_tables() -> dict[str, list[list[str]]]:
    """Each ``<!-- figures: FILE -->`` table of docs/self_play.md, by its results file."""
    lines = (ROOT / "docs/self_play.md").read_text("utf-8").splitlines()
    tables = {}
    for i, line in enumerate(lines):
        if m := MARKER.search(line):
            rows = list(takewhile(lambda row: row.startswith("|"), lines[i + 1 :]))
            tables[m["path"]] = [cells(row) for row in rows[2:]]
    return tables


SELF_PLAY_AMX = "benchmarks/results/self_play_tictactoe_amx/result.json"


def test_self_play_tables_are_their_results_files() -> None:
    """docs/self_play.md's result tables, row by row from their files; the claims under the AMX
    table recomputed from the counts (Wilson intervals), not read from the stored flags."""
    tables = _self_play_tables()
    assert set(tables) == {
        SELF_PLAY_AMX,
        "benchmarks/results/self_play_tictactoe_amd_epyc/result.json",
    }

    def score(block: dict[str, Any]) -> str:
        n = block["wins"] + block["draws"] + block["losses"]
        low, high = wilson_interval(block["wins"] + block["draws"] / 2, n)
        assert (block["score_ci_low"], block["score_ci_high"]) == pytest.approx((low, high))
        return f"{(block['wins'] + block['draws'] / 2) / n:.3f} [{low:.3f}, {high:.3f}]"

    result = load(SELF_PLAY_AMX)
    names = ("vs_warm_start_sampled", "vs_warm_start", "vs_random_trained", "vs_random_warm_start")
    expected = [
        [str(result[n][k]) for k in ("wins", "draws", "losses")]
        + [score(result[n]), str(result[n]["distinct_games"])]
        for n in names
    ]
    assert [row[1:] for row in tables[SELF_PLAY_AMX]] == expected
    sampled = result["vs_warm_start_sampled"]
    assert wilson_interval(sampled["wins"] + sampled["draws"] / 2, 128)[0] > 0.5
    trained, warm = result["vs_random_trained"], result["vs_random_warm_start"]
    assert wilson_interval(trained["wins"], 128)[0] > wilson_interval(warm["wins"], 128)[1]
    assert result["vs_warm_start"]["distinct_games"] == 2  # why the sampled row is the evidence
    run = load("benchmarks/results/self_play_tictactoe_amx/run/run.json")
    assert (run["steps"], round(run["wall_time_s"] / 60, 1), run["peak_rss_gb"]) == (66, 55.7, 7.32)
    text = (ROOT / "docs/self_play.md").read_text("utf-8")
    assert "**66 GRPO steps**" in text and "**The train command took 55.7 minutes**" in text


def test_readme_self_play_figures_are_the_results_file() -> None:
    """The README's self-play sentence: the AMX run's steps, minutes, sampled score against the
    warm start (interval recomputed from the counts) and the two win counts against random."""
    text = " ".join(README.read_text("utf-8").split())
    result = load(SELF_PLAY_AMX)
    run = load("benchmarks/results/self_play_tictactoe_amx/run/run.json")
    sampled = result["vs_warm_start_sampled"]
    n = sampled["wins"] + sampled["draws"] + sampled["losses"]
    low, high = wilson_interval(sampled["wins"] + sampled["draws"] / 2, n)
    assert low > 0.5
    score = (sampled["wins"] + sampled["draws"] / 2) / n
    assert (
        f"({run['steps']} GRPO steps, {run['wall_time_s'] / 60:.1f} minutes on an Intel Xeon "
        f"with AMX; one run)"
    ) in text
    assert (
        f"on {n} held-out games, both sampling: score **{score:.3f} (95% CI [{low:.3f}, {high:.3f}])**"
        in text
    )
    trained, warm = result["vs_random_trained"], result["vs_random_warm_start"]
    assert (
        f"it wins {trained['wins']} of {n} games where its warm start won {warm['wins']}"
    ) in text
