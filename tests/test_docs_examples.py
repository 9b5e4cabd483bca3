"""The training examples of the docs run, with their tiny budgets (``max_steps=2``, a tiny model).

``tests/test_docs.py`` runs the ``python`` blocks of most pages; the pages listed here train
models, so they run here instead, marked ``slow``. The conventions are the same: every
```` ```python ```` block of a page runs, in order, in one namespace, in a fresh interpreter whose
working directory is a temporary one, with warnings as errors; a block preceded by
``<!-- skip-test: why -->`` does not run. A one-line ```` ```text ```` block right after a python
block is what that block prints last (for a printed dict of training metrics: the same keys, as
the values depend on sampling); longer text blocks are illustrative.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 300

_FENCE = re.compile(r"^(?P<fence>`{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
_SKIP = re.compile(r"^\s*<!--\s*skip-test\s*(?::.*?)?-->\s*$")

# Runs in the child interpreter: exec each block in one namespace, with line numbers that point
# into the Markdown file, and print a separator before each block so outputs can be matched.
_RUNNER = """
import json, sys, warnings
warnings.simplefilter("error")
# transformers 5.x deprecates the gradient_checkpointing names that TRL still uses (a third-party
# deprecation, not the docs' to fix): only those FutureWarnings are ignored.
warnings.filterwarnings("ignore", r"`(is_)?gradient_checkpointing\\w*` is deprecated", FutureWarning)
namespace = {"__name__": "__main__"}
with open(sys.argv[1], encoding="utf-8") as file:
    blocks = json.load(file)
for block in blocks:
    print(f"\\n--- block {block['line']}", flush=True)
    code = "\\n" * (block["line"] - 1) + block["code"]
    exec(compile(code, block["path"], "exec"), namespace)
"""


def python_blocks(path: Path) -> list[dict[str, object]]:
    """The runnable ``python`` blocks of a page, each with its first code line and its output.

    ``output`` is the single line of a ``text`` block that directly follows, else ``None``.
    """
    lines = path.read_text("utf-8").splitlines()
    blocks: list[dict[str, object]] = []
    i, previous = 0, ""
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            if lines[i].strip():
                previous = lines[i]
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == match["fence"])
        language = match["info"].lower()
        if language == "python" and not _SKIP.match(previous):
            blocks.append(
                {
                    "path": path.relative_to(ROOT).as_posix(),
                    "line": i + 2,
                    "code": "\n".join(lines[i + 1 : end]),
                    "output": None,
                }
            )
        elif language == "text" and blocks and blocks[-1]["line"] == _last_python_end(lines, i):
            body = lines[i + 1 : end]
            if len(body) == 1:
                blocks[-1]["output"] = body[0]
        previous, i = lines[end], end + 1
    return blocks


def _last_python_end(lines: list[str], text_fence: int) -> int | None:
    """The first code line of the python block whose closing fence is just before ``text_fence``."""
    j = text_fence - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    if j < 0 or not lines[j].startswith("```"):
        return None
    k = j - 1
    while k >= 0 and not lines[k].startswith("```"):
        k -= 1
    return k + 2 if k >= 0 and lines[k].strip().lower().startswith("```python") else None


def run_page(path: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    blocks = python_blocks(path)
    assert blocks, f"{path} has no runnable python block"
    payload = tmp_path / "blocks.json"
    payload.write_text(json.dumps(blocks), "utf-8")
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        # The page sets it too (setdefault); TRL warns that rollout_func is experimental.
        "TRL_EXPERIMENTAL_SILENCE": "1",
        # One intra-op thread: for a 64-wide model, threads cost more than they save, and on a
        # busy 2-core machine spinning threads made each step ~10x slower.
        "OMP_NUM_THREADS": "1",
    }
    return subprocess.run(
        [sys.executable, "-c", _RUNNER, str(payload)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def test_python_blocks_finds_blocks_skips_and_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n```python\nx = 1\nprint(x)\n```\n\n```text\n1\n```\n\n"
        "<!-- skip-test: downloads a model -->\n```python\nload()\n```\n\n"
        "```python\ny = 2\n```\n\n```text\nmany\nlines\n```\n",
        "utf-8",
    )
    blocks = python_blocks(page)
    assert [(b["line"], b["code"], b["output"]) for b in blocks] == [
        (4, "x = 1\nprint(x)", "1"),
        (18, "y = 2", None),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("page", ["docs/training.md"])
def test_training_page_runs(page: str, tmp_path: Path) -> None:
    path = ROOT / page
    blocks = python_blocks(path)
    result = run_page(path, tmp_path)
    assert result.returncode == 0, (
        f"A ```python block of {page} failed (the traceback names the Markdown line). Fix the "
        "example, or mark it <!-- skip-test: why --> if it cannot run in the tests.\n"
        f"{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    )
    # Each block's printed output (its last line) is what the page shows after it.
    outputs = re.split(r"^--- block (\d+)$", result.stdout, flags=re.MULTILINE)
    printed = {
        int(line): text.strip() for line, text in zip(outputs[1::2], outputs[2::2], strict=True)
    }
    for block in blocks:
        if block["output"] is not None:
            shown = printed[block["line"]].splitlines()
            assert shown, f"{page}:{block['line']} printed nothing"
            assert same_output(shown[-1], str(block["output"])), (
                f"{page}:{block['line']}: the page shows {block['output']!r} but the code printed "
                f"{shown[-1]!r}"
            )


def same_output(printed: str, shown: str) -> bool:
    """Equal text; for printed dicts (training metrics), the same keys (values vary with sampling)."""
    try:
        printed_value, shown_value = ast.literal_eval(printed), ast.literal_eval(shown)
    except (ValueError, SyntaxError):
        return printed == shown
    if isinstance(printed_value, dict) and isinstance(shown_value, dict):
        return printed_value.keys() == shown_value.keys()
    return printed_value == shown_value


def test_training_page_shows_what_the_example_configures() -> None:
    """The example's comments tell how to go to a real model; keep them in the example."""
    code = "\n".join(str(b["code"]) for b in python_blocks(ROOT / "docs/training.md"))
    for text in (
        '"Qwen/Qwen3-0.6B"',
        "use_vllm=True",
        "max_steps=2",
        "make_rollout_func",
        "environment_factory",
    ):
        assert text in code, f"docs/training.md's example no longer mentions {text}"
