"""`python -m compat.check`: see `compat.check.cli`."""

import sys

from .cli import main

sys.exit(main())
