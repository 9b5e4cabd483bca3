"""``python -m trl_env``: the ``trl-env`` command line (see :mod:`trl_env.cli`)."""

import sys

from trl_env.cli import main

if __name__ == "__main__":
    sys.exit(main())
