"""``trl_env.trl.models``: every kind of model name resolves and loads through one place."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

import torch

from trl_env.error import MissingExtraError
from trl_env.trl import models
from trl_env.trl.models import _gguf


def test_old_import_paths_still_work() -> None:
    import trl_env.trl.models as generation
    import trl_env.trl.models as tiny

    assert tiny.load_model_and_tokenizer is models.load_model_and_tokenizer
    assert tiny.build_tiny_model is models.build_tiny_model
    assert generation.TransformersGenerator is models.TransformersGenerator


def test_hub_ids_and_bad_names() -> None:
    assert models.resolve_model_path("HuggingFaceTB/SmolLM2-135M-Instruct") == (
        "HuggingFaceTB/SmolLM2-135M-Instruct"
    )
    assert models.is_hub_id("gpt2") and not models.is_hub_id("model.gguf")
    with pytest.raises(FileNotFoundError, match="neither an existing model directory"):
        models.resolve_model_path("/no/such/dir")
    with pytest.raises(FileNotFoundError, match=r"GGUF file 'missing\.gguf' does not exist"):
        models.resolve_model_path("missing.gguf")


def test_a_file_that_is_not_gguf(tmp_path: Path) -> None:
    file = tmp_path / "weights.bin"
    file.write_bytes(b"x")
    with pytest.raises(FileNotFoundError, match=r"not a \.gguf model"):
        models.resolve_model_path(file)


def test_run_folders_stand_for_their_model(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "train_config.json").write_text(json.dumps({"max_new_tokens_per_turn": 8}))
    with pytest.raises(FileNotFoundError, match="--resume"):
        models.resolve_model_path(run)
    (run / "interrupted").mkdir()
    assert models.resolve_model_path(run) == str(run / "interrupted")
    for step in (2, 10):
        (run / f"checkpoint-{step}").mkdir()
    assert models.resolve_model_path(run) == str(run / "checkpoint-10")
    (run / "final").mkdir()
    assert models.resolve_model_path(run) == str(run / "final")
    assert models.run_config(run / "final") == {"max_new_tokens_per_turn": 8}
    assert models.run_config(tmp_path) is None


def test_a_warm_start_takes_its_train_runs_token_limits(tmp_path: Path) -> None:
    run, warm = tmp_path / "run", tmp_path / "run" / "warm_start"
    (warm / "merged").mkdir(parents=True)
    train = {"max_new_tokens_per_turn": 16, "max_completion_length": 1024, "max_turns": None,
             "system_prompt": "from the train run"}  # fmt: skip
    (run / "train_config.json").write_text(json.dumps(train))
    sft = {"max_turns": None, "system_prompt": "from the warm start", "max_completion_length": 7}
    (warm / "sft_config.json").write_text(json.dumps(sft))
    expected = {**sft, "max_new_tokens_per_turn": 16}  # its own settings win; unset ones are lent
    assert models.run_config(warm) == expected
    assert models.run_config(warm / "merged") == expected
    assert models.run_config(run) == train
    # An SFT run of another name inside the train run's folder is no warm start: it lends nothing.
    other = run / "sft2"
    other.mkdir()
    (other / "sft_config.json").write_text(json.dumps(sft))
    assert models.run_config(other) == sft
    # An SFT run that no train run holds lends nothing.
    (run / "train_config.json").unlink()
    assert models.run_config(warm) == sft


def test_load_a_run_folder_and_a_tiny_model(tiny_model_dir: str, tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_model_dir, run / "final")
    (run / "train_config.json").write_text("{}")
    model, tokenizer = models.load_model_and_tokenizer(run)
    assert model.config.model_type == "qwen3" and tokenizer.chat_template
    assert models.load_tokenizer(run).chat_template == tokenizer.chat_template


def test_a_tokenizer_without_chat_template_is_refused(tiny_model_dir: str, tmp_path: Path) -> None:
    tokenizer = models.load_tokenizer(tiny_model_dir)
    tokenizer.chat_template = None
    tokenizer.save_pretrained(tmp_path)
    (tmp_path / "chat_template.jinja").unlink(missing_ok=True)
    with pytest.raises(ValueError, match="has no chat template"):
        models.load_tokenizer(tmp_path)


@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_lora_adapter_loads_with_its_base(
    tiny_model_dir: str, tiny_lora_adapter: tuple[Any, Path], tmp_path: Path
) -> None:
    peft = pytest.importorskip("peft")
    adapted, _ = tiny_lora_adapter
    assert models.is_adapter_dir(tmp_path / "adapter")
    assert models.adapter_base(tmp_path / "adapter") == tiny_model_dir
    ids = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        expected = adapted(input_ids=ids).logits
        merged, tokenizer = models.load_model_and_tokenizer(tmp_path / "adapter")
        unmerged, _ = models.load_model_and_tokenizer(tmp_path / "adapter", merge_adapter=False)
        assert not isinstance(merged, peft.PeftModel) and isinstance(unmerged, peft.PeftModel)
        torch.testing.assert_close(merged(input_ids=ids).logits, expected, atol=1e-4, rtol=1e-4)
    assert tokenizer.chat_template  # the base's tokenizer (the adapter saved none)


def test_adapter_without_peft_names_the_extra(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    (tmp_path / "adapter_config.json").write_text(
        json.dumps({"base_model_name_or_path": tiny_model_dir})
    )
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "peft" else real(name, *a)
    )
    with pytest.raises(MissingExtraError, match=r'pip install "trl-env\[lora\]"'):
        models.load_model_and_tokenizer(tmp_path)


# --- GGUF: the conversion itself runs on SmolLM2 in test_real_model.py -----------------------


@pytest.fixture
def fake_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_model_dir: str) -> Any:
    """A stand-in ``.gguf`` file whose "conversion" copies the tiny model (and counts calls)."""
    import shutil

    monkeypatch.setenv("TRL_ENV_CACHE", str(tmp_path / "cache"))
    file = tmp_path / "model.Q4.gguf"
    file.write_bytes(b"GGUF fake")
    calls: list[Path] = []

    def write(source: Path, out: Path) -> None:
        calls.append(source)
        shutil.copytree(tiny_model_dir, out, dirs_exist_ok=True)

    monkeypatch.setattr(_gguf, "_write_model_dir", write)
    return file, calls


def test_gguf_is_converted_once_into_the_cache(fake_gguf: Any, tmp_path: Path) -> None:
    file, calls = fake_gguf
    lines: list[str] = []
    first = models.resolve_model_path(str(file), log=lines.append)
    assert Path(first).parent == tmp_path / "cache" / "gguf"
    assert Path(first).name.startswith("model.Q4-") and (Path(first) / "config.json").is_file()
    assert models.resolve_model_path(file) == first and len(calls) == 1  # cached
    assert len(lines) == 1 and "converting model.Q4.gguf" in lines[0]
    model, tokenizer = models.load_model_and_tokenizer(file)
    assert model.config.model_type == "qwen3" and len(calls) == 1
    file.write_bytes(b"GGUF other content")  # a new file: a new cache entry
    assert models.resolve_model_path(file) != first and len(calls) == 2


def test_gguf_conversion_is_safe_from_several_threads(fake_gguf: Any, tmp_path: Path) -> None:
    file, _ = fake_gguf
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(models.resolve_model_path(file)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(results)) == 1 and len(results) == 4
    leftovers = [p.name for p in (tmp_path / "cache" / "gguf").iterdir()]
    assert leftovers == [Path(results[0]).name]  # no temporary folders left behind


def test_gguf_without_the_package_names_the_extra(
    fake_gguf: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    file, calls = fake_gguf
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a)
    )
    with pytest.raises(MissingExtraError, match=r'pip install "trl-env\[gguf\]"'):
        models.resolve_model_path(file)
    assert calls == []


def test_public_names() -> None:
    assert all(hasattr(models, name) for name in models.__all__)
    assert {"load_model_and_tokenizer", "load_tokenizer", "resolve_model_path"} <= set(
        models.__all__
    )


def test_a_converted_gguf_cache_is_readable_by_other_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conversion is staged in a private temporary folder; the cache it becomes is not."""
    import os

    pytest.importorskip("gguf")
    from trl_env.trl.models import _gguf

    def fake_conversion(file: Path, out: Path) -> None:
        (out / "sub").mkdir()
        (out / "config.json").write_text("{}")

    monkeypatch.setenv("TRL_ENV_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(_gguf, "_write_model_dir", fake_conversion)
    model_file = tmp_path / "model.gguf"
    model_file.write_bytes(b"GGUF not really")
    old_umask = os.umask(0o022)
    try:
        target = _gguf.convert_gguf(model_file)
    finally:
        os.umask(old_umask)
    assert (target / "config.json").is_file()
    assert target.stat().st_mode & 0o777 == 0o755
    assert (target / "sub").stat().st_mode & 0o777 == 0o755
