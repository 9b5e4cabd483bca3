"""``.gguf`` files as regular model directories: converted once, then cached.

transformers reads a GGUF file (``from_pretrained(folder, gguf_file=name)``, with the ``gguf``
package) into a dequantized float32 model and its tokenizer, chat template included. The loaded
config keeps a ``quantization_config`` that makes ``save_pretrained`` (and so ``GRPOTrainer``'s
checkpoints) fail, so the model is rebuilt from the config without it and given the loaded weights;
the result is saved as a plain model directory under the cache and used like any local model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from trl_env.error import MissingExtraError

__all__ = ["cache_root", "convert_gguf", "gguf_cache_dir"]

_CHUNK = 1 << 22


def cache_root() -> Path:
    """``$TRL_ENV_CACHE`` if set, else ``~/.cache/trl-env``."""
    root = os.environ.get("TRL_ENV_CACHE")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "trl-env"


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            sha.update(block)
    return sha.hexdigest()[:16]


def gguf_cache_dir(path: str | os.PathLike[str]) -> Path:
    """Where the converted model of the GGUF file ``path`` lives (keyed by the file's content)."""
    file = Path(path)
    return cache_root() / "gguf" / f"{file.stem}-{_digest(file)}"


def convert_gguf(path: str | os.PathLike[str], *, log: Callable[[str], None] | None = None) -> Path:
    """Convert a ``.gguf`` file into a cached model directory (once) and return the directory.

    Safe to call from several processes at once: each writes into its own temporary folder and
    renames it into place; the first rename wins and the others discard their copy.

    Args:
        path: The ``.gguf`` file.
        log: Called with one line when a conversion starts (it takes seconds to a minute).

    Raises:
        FileNotFoundError: If ``path`` is not a file.
        trl_env.error.MissingExtraError: If the ``gguf`` package is not installed.
    """
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise FileNotFoundError(f"GGUF file {os.fspath(path)!r} does not exist")
    target = gguf_cache_dir(file)
    if (target / "config.json").is_file():
        return target
    if importlib.util.find_spec("gguf") is None:
        raise MissingExtraError("gguf", f"loading the GGUF file {file.name}", "gguf")
    if log is not None:
        log(f"converting {file.name} into a model directory (once; cached in {target})")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        _write_model_dir(file, staging)
        # mkdtemp makes the folder private (0700): give it the usual permissions, so that a cache
        # shared through TRL_ENV_CACHE is readable by the other users.
        umask = os.umask(0)
        os.umask(umask)
        for folder in (staging, *(p for p in staging.rglob("*") if p.is_dir())):
            folder.chmod(0o777 & ~umask)
        try:
            staging.rename(target)
        except OSError:  # another process finished first: use its copy
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _write_model_dir(file: Path, out: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the GGUF reader's per-tensor progress bars
    try:
        tokenizer = AutoTokenizer.from_pretrained(file.parent, gguf_file=file.name)
        loaded = AutoModelForCausalLM.from_pretrained(file.parent, gguf_file=file.name)
    finally:
        hf_logging.set_verbosity(verbosity)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=loaded.dtype)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
