"""Keep trl-compat's own top-level packages first when a repository shadows them.

`python -m compat.migrate` puts the current folder first on `sys.path`, so a repository with a Django-style
`migrations/` package (or a `reference_impl/`) at its root would be imported instead of trl-compat's. The tool never
needs the user's modules, so when a shadow is found, trl-compat's install root goes first on the path and a
`ShadowedPackageWarning` says how to avoid the situation. (A local `compat.py` shadows `compat` itself, before any of
this code can run: use the `trl-compat` console script, or `python -P`, which keep the current folder off the path.)
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # where compat/, migrations/, ... are installed


class ShadowedPackageWarning(UserWarning):
    """A module of the current folder would have been imported instead of trl-compat's own."""


def own_first(name: str) -> None:
    """Make `import name` resolve to trl-compat's own package (a sibling of `compat`), warning when it did not."""
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    origin = os.path.abspath(spec.origin) if spec is not None and spec.origin else None
    own = os.path.join(ROOT, name)
    if origin is not None and (origin == own or origin.startswith(own + os.sep)):
        return
    if not os.path.isdir(own):
        return  # not installed beside compat (a partial install): nothing better to offer
    sys.path.insert(0, ROOT)
    importlib.invalidate_caches()
    warnings.warn(
        f"a local `{name}` ({origin or 'not a package'}) shadows trl-compat's own `{name}` package; trl-compat's is "
        "used. Run `trl-compat migrate ...` (or `python -P -m compat.migrate ...`) to keep the current folder off "
        "the import path.", ShadowedPackageWarning, stacklevel=2)
