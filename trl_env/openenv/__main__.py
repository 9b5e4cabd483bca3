"""``python -m trl_env.openenv serve ENV_ID --port N``."""

import sys

from trl_env.openenv.cli import main

sys.exit(main())
