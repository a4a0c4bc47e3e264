"""`python -m compat.smoke path/to/train.py [-- script args...]`: see `compat.smoke.cli`."""

import sys

from compat.smoke.cli import main

sys.exit(main())
