"""The documentation builds, its generated pages are current, and its code runs.

* ``mkdocs build --strict`` succeeds (broken links, pages missing from the nav, unresolved API
  references and bad docstrings all fail it).
* ``docs/envs/`` matches the env docstrings (``python scripts/gen_env_docs.py --check``).
* Every ```` ```python ```` block of ``docs/*.md`` and ``README.md`` runs: the blocks of one file in
  order, sharing one namespace, in a fresh interpreter per file (working directory: a temporary
  one), with warnings as errors. A block that cannot run here (it downloads a model, needs a GPU,
  or only shows a signature) is preceded by ``<!-- skip-test: why -->``; a whole file is skipped by
  ``<!-- skip-test-file: why -->``. See "Contributing to the docs" in ``docs/index.md``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS_PIP = 'pip install -e ".[docs]"'

# Files whose code another test already runs (to run slow examples once).
COVERED_ELSEWHERE = {
    "docs/training.md": "tests/test_docs_examples.py",
    "docs/wrapping_your_env.md": "tests/test_wrappers.py",
}
FILE_TIMEOUT_S = 600  # all the blocks of one file

SKIP_BLOCK = re.compile(r"^\s*<!--\s*skip-test\s*(?::\s*(?P<reason>.*?))?\s*-->\s*$")
SKIP_FILE = re.compile(r"^\s*<!--\s*skip-test-file\s*(?::\s*(?P<reason>.*?))?\s*-->\s*$")
_MARKER_LIKE = re.compile(r"^\s*<!--\s*skip[-_ ]?tests?\b", flags=re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*)$")
_PYTHON = {"python", "py", "python3"}


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository root
    line: int  # 1-based line of the first line of code
    end: int  # 1-based line of the closing fence
    code: str
    language: str
    skip_reason: str | None


@dataclass(frozen=True)
class Page:
    blocks: list[Block]
    prose: list[tuple[int, str]]  # (1-based line, text) of every line outside code blocks


def read_page(path: Path, root: Path = ROOT) -> Page:
    """The fenced code blocks of a Markdown file (with the skip marker before each) and its prose."""
    lines = path.read_text("utf-8").splitlines()
    rel = path.relative_to(root).as_posix()
    blocks, prose, i, previous = [], [], 0, ""
    while i < len(lines):
        match = _FENCE_OPEN.match(lines[i])
        if not match:
            prose.append((i + 1, lines[i]))
            if lines[i].strip():
                previous = lines[i]
            i += 1
            continue
        fence, indent = match["fence"], match["indent"]
        language = (match["info"].split() or [""])[0].lower()
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = i + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        body = [line.removeprefix(indent) for line in lines[i + 1 : end]]
        marker = SKIP_BLOCK.match(previous)
        reason = (marker["reason"] or "marked skip-test") if marker else None
        code = textwrap.dedent("\n".join(body))
        blocks.append(Block(rel, i + 2, end + 1, code, language, reason))
        previous, i = "```", end + 1
    return Page(blocks, prose)


def _runnable(path: Path) -> list[Block]:
    return [b for b in read_page(path).blocks if b.language in _PYTHON and b.skip_reason is None]


def _file_skip_reason(path: Path, root: Path = ROOT) -> str | None:
    for _, text in read_page(path, root).prose:
        if match := SKIP_FILE.match(text):
            return match["reason"] or "marked skip-test-file"
    return None


def _doc_files() -> list[Path]:
    return [p for p in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"] if p.exists()]


def _file_params() -> list[object]:
    params = []
    for path in _doc_files():
        rel = path.relative_to(ROOT).as_posix()
        marks = []
        if rel in COVERED_ELSEWHERE:
            marks.append(pytest.mark.skip(reason=f"its code runs in {COVERED_ELSEWHERE[rel]}"))
        elif reason := _file_skip_reason(path):
            marks.append(pytest.mark.skip(reason=reason))
        elif not _runnable(path):
            continue
        params.append(pytest.param(path, id=rel, marks=marks))
    return params


# Runs in the child interpreter: exec each block in one namespace, with line numbers that point
# into the Markdown file, so a traceback names the page and line.
_RUNNER = """
import json, sys, warnings
warnings.simplefilter("error")
# transformers 5.x deprecates names that TRL itself still uses: not the docs' to fix.
warnings.filterwarnings("ignore", r"`(is_)?gradient_checkpointing\\w*` is deprecated", FutureWarning)
namespace = {"__name__": "__main__"}
with open(sys.argv[1], encoding="utf-8") as file:
    blocks = json.load(file)
for block in blocks:
    print(f"--- running {block['path']}:{block['line']}", flush=True)
    code = "\\n" * (block["line"] - 1) + block["code"]
    exec(compile(code, block["path"], "exec"), namespace)
"""


@pytest.mark.parametrize("path", _file_params())
def test_doc_code_blocks_run(path: Path, tmp_path: Path) -> None:
    blocks = _runnable(path)
    payload = tmp_path / "blocks.json"
    payload.write_text(json.dumps([b.__dict__ for b in blocks]), "utf-8")
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "TRL_EXPERIMENTAL_SILENCE": "1",
    }
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    try:
        result = subprocess.run(
            [sys.executable, "-c", _RUNNER, str(payload)],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=FILE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as error:
        output = (error.stdout or b"").decode() if isinstance(error.stdout, bytes) else error.stdout
        pytest.fail(
            f"{path.name}: the code blocks did not finish in {FILE_TIMEOUT_S} s; the last block "
            f"started is the last '--- running' line:\n{(output or '')[-3000:]}\n"
            "Make the example faster, or mark it <!-- skip-test: why -->."
        )
    if result.returncode != 0:
        pytest.fail(
            f"A ```python block of {path.relative_to(ROOT)} failed (the traceback names the "
            "Markdown line). Fix the example, or if it cannot run in the tests (network, GPU, "
            "a signature only), put <!-- skip-test: why --> on the line before its fence.\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
        )


def test_skip_markers_precede_code_blocks() -> None:
    """A misspelt or misplaced marker would silently run (or silently skip) a block."""
    problems = []
    for path in _doc_files():
        page = read_page(path)
        lines = dict(page.prose)
        fences = {b.line - 1 for b in page.blocks}
        for number, text in page.prose:
            if not _MARKER_LIKE.match(text) or SKIP_FILE.match(text):
                continue
            following = next(
                (n for n in range(number + 1, number + 1000) if lines.get(n, "x").strip()), None
            )
            if not SKIP_BLOCK.match(text):
                problems.append(f"{path.name}:{number}: write <!-- skip-test: why -->")
            elif following not in fences:
                problems.append(f"{path.name}:{number}: no code block follows the marker")
    assert not problems, "\n".join(problems)


def test_read_page_finds_blocks_markers_and_prose(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Intro `<!-- skip-test-file: not really -->`.\n\n```python\nx = 1\n```\n\n"
        "<!-- skip-test: downloads a model -->\n```python\nload()\n```\n\n"
        "- item\n\n    ```py\n    y = x\n    ```\n\n````text\n```\n````\n",
        "utf-8",
    )
    parsed = read_page(page, tmp_path)
    assert [(b.line, b.code, b.language, b.skip_reason) for b in parsed.blocks] == [
        (4, "x = 1", "python", None),
        (9, "load()", "python", "downloads a model"),
        (15, "y = x", "py", None),
        (19, "```", "text", None),
    ]
    assert _file_skip_reason(page, tmp_path) is None  # a marker inside inline code does not count
    assert [n for n, _ in parsed.prose] == [1, 2, 6, 7, 11, 12, 13, 17]


# Public modules documented elsewhere than the API reference.
NOT_IN_API_REFERENCE = {"trl_env.cli": "docs/cli.md", "trl_env.__main__": "docs/cli.md"}


def test_every_public_module_is_in_the_api_reference() -> None:
    """A new module of trl_env gets a ``::: module`` line on a page of docs/api/."""
    documented = {
        match
        for page in (ROOT / "docs" / "api").glob("*.md")
        for match in re.findall(r"^:::[ \t]+([\w.]+)", page.read_text("utf-8"), re.MULTILINE)
    }
    package = ROOT / "trl_env"
    missing = []
    for file in sorted(package.rglob("*.py")):
        parts = ["trl_env", *file.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        module = ".".join(parts)
        if any(part.startswith("_") for part in parts) or module in NOT_IN_API_REFERENCE:
            continue
        related = {".".join(parts[:n]) for n in range(2, len(parts) + 1)}  # itself, its packages
        if not related & documented and not any(d.startswith(module + ".") for d in documented):
            missing.append(module)
    assert not missing, (
        f"not in the API reference: {missing}. Add a `::: module` line to a page of docs/api/ "
        "(and a new page to the nav of mkdocs.yml)."
    )


def test_env_pages_are_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_env_docs.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (
        "docs/envs/ (or the env nav in mkdocs.yml) does not match the env docstrings and the "
        "registry. Regenerate with:\n    python scripts/gen_env_docs.py\n"
        f"{result.stdout[-4000:]}\n{result.stderr[-2000:]}"
    )


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    missing = [
        name
        for name in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers", "material")
        if find_spec(name) is None
    ]
    if missing:
        pytest.skip(f"the docs toolchain is not installed ({', '.join(missing)}): {DOCS_PIP}")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, (
        "mkdocs build --strict failed. Every docs/*.md page must be in the nav of mkdocs.yml, "
        "links must resolve, and API references must exist.\n" + result.stderr[-6000:]
    )
    assert (tmp_path / "site" / "index.html").exists()
