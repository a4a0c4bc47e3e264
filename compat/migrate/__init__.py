"""`compat.migrate`: rewrite a repository for a newer TRL, in place, safely; tell a human what is left.

Python API (the CLI, `python -m compat.migrate`, is a thin layer over it):

* `migrate_source(text, *, options=None, rules=None, path=None) -> Result`: one text (a Python module, a notebook's
  JSON when `path` ends in `.ipynb`, a manifest when a manifest rule matches `path`'s base name).
* `migrate_paths(paths, *, options=None, rules=None, only=(), skip=(), mode="write", ...) -> Report`: files and
  folders, with the walk, the prefilter, the dirty-tree guard and atomic writes.

The engine knows nothing of TRL: the rules, and which of them a target TRL needs, come from `migrations`.
Importing this package (`import compat.migrate`, `from compat.migrate import ...`) does not run compat's floor check,
so the API works in the PPO-era environments it exists to fix (see `compat/__init__.py`).
"""

from compat._shadow import own_first

own_first("migrations")  # before the first `import migrations`: a repository's own migrations/ must not win

from migrations.base import Finding, Options  # noqa: E402

from .engine import MigrateError, Result, migrate_source  # noqa: E402
from .report import to_json, to_sarif  # noqa: E402
from .runner import FileEntry, Report, migrate_paths  # noqa: E402
from .target import detect_target  # noqa: E402

__all__ = [
    "FileEntry",
    "Finding",
    "MigrateError",
    "Options",
    "Report",
    "Result",
    "detect_target",
    "migrate_paths",
    "migrate_source",
    "to_json",
    "to_sarif",
]
