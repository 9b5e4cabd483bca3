"""Load a model and its tokenizer from whatever names one: the one place trl-env loads models."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trl_env.trl.models._gguf import convert_gguf
from trl_env.trl.models._paths import (
    adapter_base,
    is_adapter_dir,
    is_hub_id,
    is_run_dir,
    run_model_dir,
)

__all__ = ["load_model_and_tokenizer", "load_tokenizer", "resolve_model_path"]

_NOT_A_MODEL = (
    "{name!r} is neither an existing model directory nor a Hugging Face Hub id (like "
    "'Qwen/Qwen3-0.6B'), a .gguf file or a trl-env train run folder. Check the path, or build a "
    "tiny local model with trl_env.trl.models.build_tiny_model(<directory>)."
)


def resolve_model_path(
    name_or_path: str | os.PathLike[str], *, log: Callable[[str], None] | None = None
) -> str:
    """The directory or Hub id that ``from_pretrained`` loads for a model name.

    * a Hub id or a model directory: itself;
    * a ``.gguf`` file: its converted model directory (converted once, then cached under
      ``$TRL_ENV_CACHE/gguf`` or ``~/.cache/trl-env/gguf``; see :func:`convert_gguf`);
    * a ``trl-env train`` run folder: its ``final/`` model (else its latest checkpoint);
    * a LoRA adapter directory: itself (:func:`load_model_and_tokenizer` loads its base with it).

    Args:
        name_or_path: What the user named (``--model``, ``--policy``).
        log: Called with a line when a slow step (a GGUF conversion) starts.

    Raises:
        FileNotFoundError: For a name that is none of the above (the message says what is).
        trl_env.error.MissingExtraError: For a ``.gguf`` file without the ``gguf`` package.

    Example:
        >>> resolve_model_path("HuggingFaceTB/SmolLM2-135M-Instruct")
        'HuggingFaceTB/SmolLM2-135M-Instruct'
    """
    name = os.fspath(name_or_path)
    path = Path(name).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return str(convert_gguf(path, log=log))
    if path.is_dir():
        return str(run_model_dir(path)) if is_run_dir(path) else name
    if path.exists():
        raise FileNotFoundError(
            f"{name!r} is a file but not a .gguf model: name a model directory, a .gguf file or "
            "a Hugging Face Hub id"
        )
    if name.lower().endswith(".gguf"):
        raise FileNotFoundError(f"GGUF file {name!r} does not exist")
    if not is_hub_id(name):
        raise FileNotFoundError(_NOT_A_MODEL.format(name=name))
    return name


def load_tokenizer(
    name_or_path: str | os.PathLike[str],
    *,
    require_chat_template: bool = True,
    add_response_template: bool = True,
    **kwargs: Any,
) -> Any:
    """The tokenizer of a model (any name :func:`resolve_model_path` takes).

    Args:
        name_or_path: The model's name.
        require_chat_template: Raise if the tokenizer has no chat template (trl-env renders every
            episode with the model's own template).
        add_response_template: Let TRL's ``add_response_schema`` set a ``response_template`` for
            the chat templates it knows (as ``GRPOTrainer`` does for tool calling).
        **kwargs: For ``AutoTokenizer.from_pretrained``.

    Raises:
        ValueError: If the tokenizer has no chat template and one is required.
        OSError: If a Hub id cannot be loaded (the message says to check the id and network).
    """
    from transformers import AutoTokenizer

    name = resolve_model_path(name_or_path)
    if is_adapter_dir(name) and not Path(name, "tokenizer_config.json").is_file():
        name = resolve_model_path(adapter_base(name))
    try:
        tokenizer = AutoTokenizer.from_pretrained(name, **kwargs)
    except OSError as error:
        if Path(name).exists():
            raise
        raise OSError(
            f"{name!r} is not a local directory and could not be loaded from the Hugging Face "
            f"Hub ({error}). Check the id and the network, or pass a local model directory or a "
            ".gguf file."
        ) from error
    if require_chat_template and getattr(tokenizer, "chat_template", None) is None:
        raise ValueError(
            f"the tokenizer of {name!r} has no chat template: use an instruct/chat model "
            "(trl-env renders every episode with the model's own chat template)"
        )
    if add_response_template and getattr(tokenizer, "response_template", None) is None:
        from trl.chat_template_utils import add_response_schema

        # ValueError: a template TRL does not know; ChatTemplateProcessor parses with a fallback.
        with contextlib.suppress(ValueError):
            add_response_schema(tokenizer)
    return tokenizer


def load_model_and_tokenizer(
    name_or_path: str | os.PathLike[str],
    *,
    dtype: Any = None,
    add_response_template: bool = True,
    require_chat_template: bool = False,
    merge_adapter: bool = True,
    tokenizer_kwargs: dict[str, Any] | None = None,
    log: Callable[[str], None] | None = None,
    **model_kwargs: Any,
) -> tuple[Any, Any]:
    """Load a causal LM and its tokenizer the way ``--model`` / ``--policy`` do.

    Every kind of name :func:`resolve_model_path` takes goes through the same
    ``AutoTokenizer`` / ``AutoModelForCausalLM`` calls, so a test with the tiny model covers the
    path of a real run. A LoRA adapter directory (such as ``RUN/final`` of ``trl-env train
    --lora``) is loaded onto its base model (with ``peft``) and, by default, merged into it.

    Args:
        name_or_path: Hub id, model directory, ``.gguf`` file, adapter directory or run folder.
        dtype: Passed to ``from_pretrained`` (``None`` keeps the checkpoint's dtype).
        add_response_template: See :func:`load_tokenizer`.
        require_chat_template: See :func:`load_tokenizer`.
        merge_adapter: Merge a LoRA adapter into its base (a plain model); ``False`` returns the
            ``peft.PeftModel``.
        tokenizer_kwargs: Extra keyword arguments for ``AutoTokenizer.from_pretrained``.
        log: Called with a line when a slow step (a GGUF conversion) starts.
        **model_kwargs: Extra keyword arguments for ``AutoModelForCausalLM.from_pretrained``.

    Returns:
        ``(model, tokenizer)``.

    Raises:
        FileNotFoundError: If the name is none of the kinds above.
        trl_env.error.MissingExtraError: For a ``.gguf`` file without ``gguf`` or an adapter
            without ``peft`` (the message names the install command).

    Example:
        >>> from trl_env.trl.models import build_tiny_model
        >>> model, tokenizer = load_model_and_tokenizer(build_tiny_model("/tmp/tiny-doc"))
        >>> model.config.model_type
        'qwen3'
    """
    from transformers import AutoModelForCausalLM

    name = resolve_model_path(name_or_path, log=log)
    tokenizer = load_tokenizer(
        name,
        require_chat_template=require_chat_template,
        add_response_template=add_response_template,
        **(tokenizer_kwargs or {}),
    )
    if dtype is not None:
        model_kwargs["dtype"] = dtype
    if not is_adapter_dir(name):
        return AutoModelForCausalLM.from_pretrained(name, **model_kwargs), tokenizer
    return _load_adapter(name, merge_adapter, log, model_kwargs), tokenizer


def _load_adapter(
    name: str, merge: bool, log: Callable[[str], None] | None, model_kwargs: dict[str, Any]
) -> Any:
    """The LoRA adapter in ``name`` on the base model it names, merged into it if ``merge``."""
    import importlib.util

    from transformers import AutoModelForCausalLM

    from trl_env.error import MissingExtraError

    if importlib.util.find_spec("peft") is None:
        raise MissingExtraError("lora", f"loading the LoRA adapter in {name}", "peft")
    from peft import PeftModel

    base = AutoModelForCausalLM.from_pretrained(
        resolve_model_path(adapter_base(name), log=log), **model_kwargs
    )
    with warnings.catch_warnings():
        # peft reads transformers' deprecated `is_gradient_checkpointing`; nothing to act on.
        warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated")
        model = PeftModel.from_pretrained(base, name)
    return model.merge_and_unload() if merge else model
