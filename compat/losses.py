"""`from compat.losses import FusedLinearDPOLoss, ...`: TRL's fused linear losses on every supported TRL line.

`trl.losses` existed in TRL 1.13 only (added with the Liger-Kernel `chunked_loss` port, removed in 1.14). Each name
resolves on first use to `trl.losses.<name>` where the installed TRL has it, else to `reference_impl.losses.<name>`,
whose adapters keep TRL 1.13's constructor and call signatures. Lazy, cached, one notice per name (`compat.resolve`).
"""

from __future__ import annotations

import compat
from compat._exports import LOSS_NAMES
from compat.resolve import NameTable

compat._check_deferred()  # compat loaded by the migrator library first: check now (see compat/__init__.py)

NAMES = LOSS_NAMES

TABLE = NameTable(__name__, {n: (("trl.losses", n), ("reference_impl.losses", n)) for n in NAMES})
TABLE.install(globals())
