"""Models in one place: load a model and its tokenizer from anything that names one, build the
tiny local model, and generate turns with it.

A model may be named by

* a Hugging Face Hub id (``"HuggingFaceTB/SmolLM2-135M-Instruct"``);
* a local model directory (``save_pretrained`` output);
* a ``.gguf`` file, converted once into a cached model directory (needs
  ``pip install "trl-env[gguf]"``);
* a LoRA adapter directory, loaded onto the base model it names (needs
  ``pip install "trl-env[lora]"``);
* a ``trl-env train`` run folder, standing for its ``final/`` model.

:func:`resolve_model_path` turns any of them into what ``from_pretrained`` loads;
:func:`load_model_and_tokenizer` and :func:`load_tokenizer` load them. ``trl-env train``,
``trl-env eval`` and the benchmarks all go through these functions.

Example:
    >>> from trl_env.trl.models import build_tiny_model, load_model_and_tokenizer
    >>> model, tokenizer = load_model_and_tokenizer(build_tiny_model("/tmp/tiny-models-doc"))
    >>> tokenizer.apply_chat_template(
    ...     [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    ... )
    '<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'
"""

from __future__ import annotations

from trl_env.trl.models._generation import (
    Generator,
    TransformersGenerator,
    VLLMEngineGenerator,
    VLLMGenerator,
    generator_from_trainer,
)
from trl_env.trl.models._gguf import cache_root, convert_gguf, gguf_cache_dir
from trl_env.trl.models._loading import (
    load_model_and_tokenizer,
    load_tokenizer,
    resolve_model_path,
)
from trl_env.trl.models._paths import (
    HUB_ID,
    adapter_base,
    is_adapter_dir,
    is_hub_id,
    is_run_dir,
    run_config,
    run_model_dir,
)
from trl_env.trl.models._tiny import (
    CHAT_TEMPLATES_DIR,
    available_chat_templates,
    build_tiny_model,
    build_tiny_tokenizer,
    load_chat_template,
)

__all__ = [
    "CHAT_TEMPLATES_DIR",
    "HUB_ID",
    "Generator",
    "TransformersGenerator",
    "VLLMEngineGenerator",
    "VLLMGenerator",
    "adapter_base",
    "available_chat_templates",
    "build_tiny_model",
    "build_tiny_tokenizer",
    "cache_root",
    "convert_gguf",
    "generator_from_trainer",
    "gguf_cache_dir",
    "is_adapter_dir",
    "is_hub_id",
    "is_run_dir",
    "load_chat_template",
    "load_model_and_tokenizer",
    "load_tokenizer",
    "resolve_model_path",
    "run_config",
    "run_model_dir",
]
