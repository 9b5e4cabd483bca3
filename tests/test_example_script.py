"""``examples/train_wordle_grpo.py`` runs end to end with a tiny budget (CPU, tiny local model)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "train_wordle_grpo.py"

# The child runs with warnings as errors, like the suite, except transformers 5.x's deprecation
# of the `gradient_checkpointing*` names, which TRL's GRPOConfig still uses (third-party; `-W`
# matches these message prefixes literally).
WARNING_FLAGS = [
    "-W",
    "error",
    "-W",
    "ignore:`gradient_checkpointing:FutureWarning",
    "-W",
    "ignore:`is_gradient_checkpointing:FutureWarning",
]


def test_script_is_short_and_documents_its_commands() -> None:
    text = SCRIPT.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    docstring = ast.get_docstring(ast.parse(text)) or ""
    for command in (
        "python examples/train_wordle_grpo.py --model Qwen/Qwen3-0.6B --use-vllm",
        "--use-vllm --lora",
        "trl vllm-serve --model Qwen/Qwen3-0.6B",
        "--vllm-mode server",
        "python examples/train_wordle_grpo.py --tiny --max-steps 1",
    ):
        assert command in docstring, command


@pytest.mark.slow
def test_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    completed = subprocess.run(
        [
            sys.executable,
            *WARNING_FLAGS,
            str(SCRIPT),
            "--tiny",
            "--max-steps",
            "1",
            "--output-dir",
            str(out),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "done: 1 steps" in completed.stdout
    assert f"model saved to {out / 'final'}" in completed.stdout
    for name in ("config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja"):
        assert (out / "final" / name).is_file(), name


@pytest.mark.parametrize(("flag", "package"), [("--lora", "peft"), ("--use-vllm", "vllm")])
def test_missing_package_is_named(flag: str, package: str, tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed")
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--tiny", flag, "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1
    assert f"pip install {package}" in completed.stderr
