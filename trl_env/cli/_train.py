"""``trl-env train``: GRPO training. Its options and its work live in
:mod:`trl_env.trl.train` (generated from ``TrainConfig``), imported only when ``train`` runs,
because it imports torch."""

from __future__ import annotations

import argparse
from typing import Any

from trl_env.cli._common import Formatter
from trl_env.cli._threads import add_threads_option, set_torch_threads

__all__ = ["add_parser"]

_TRAIN_MODULE = "trl_env.trl.train"


def _load_train_module() -> Any:
    """``trl_env.trl.train`` (imported only when ``train`` runs), or a one-line error."""
    import importlib

    from trl_env.error import Error, MissingExtraError

    try:
        return importlib.import_module(_TRAIN_MODULE)
    except MissingExtraError:
        raise
    except ModuleNotFoundError as error:
        if error.name in (_TRAIN_MODULE, "trl_env.trl"):
            raise Error(
                f"the train command is not available in this installation ({_TRAIN_MODULE} "
                "is missing); reinstall trl-env"
            ) from error
        raise MissingExtraError("trl", "trl-env train", error.name or "trl") from None


def run(args: argparse.Namespace) -> int:
    """Run ``trl-env train``: set torch's threads, then hand over to the train module."""
    module = args.train_module or _load_train_module()
    # Set silently: the run names the count in its first line, after its checks pass.
    set_torch_threads(getattr(args, "threads", None), announce=False)
    return int(module.run(args) or 0)


def add_parser(commands: Any, parents: list[argparse.ArgumentParser], load: bool) -> None:
    """Register ``train``; its options are added only if ``load`` (``argv`` runs ``train``)."""
    p = commands.add_parser(
        "train",
        parents=parents,
        formatter_class=Formatter,
        help='train a model with GRPO on environments (needs: pip install "trl-env[trl]")',
        description="Train a model with TRL's GRPOTrainer on text environments.",
        conflict_handler="resolve",  # the train module may define --debug itself
    )
    module = None
    if load:
        module = _load_train_module()
        module.add_arguments(p)
        add_threads_option(p)
    p.set_defaults(func=run, train_module=module)
