"""``python -m trl_env.openenv serve ENV_ID --port N``: the ``trl-env serve`` command.

The same command line as ``python -m trl_env`` (its parser, options and errors live in
:mod:`trl_env.cli`), run as that module, so this package does not import the command line.
"""

import runpy

runpy.run_module("trl_env", run_name="__main__", alter_sys=True)
