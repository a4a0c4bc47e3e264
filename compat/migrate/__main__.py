"""`python -m compat.migrate`: see `compat.migrate.cli`."""

import sys

from .cli import main

sys.exit(main())
