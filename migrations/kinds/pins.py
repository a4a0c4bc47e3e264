"""The repository's own pins, read from its manifests as committed: which TRL releases could this code run on?

Rules that reason about the TRL a file was written for (a default of that release, a field that release had) read
the nearest manifest at or above the file's folder that pins `trl`, up to the repository root, from git's HEAD when
the file is tracked (so a manifest the migration itself just raised still says what the code was written against):

* `committed_text(path)`: a file as committed at HEAD, else as on disk;
* `trl_spec(folder)`: the `trl` specifier set of the nearest pinning manifest; None when none pins it (or it does not
  parse); `requirement_spec(folder, package)` the same for any package (`transformers`, `peft`, ...);
* `pinned(folder, releases)`: the given releases that spec admits; None when no manifest pins TRL.
"""

from __future__ import annotations

import functools
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

__all__ = ["MANIFESTS", "TRL_REQUIREMENT", "committed_text", "pinned", "requirement_spec", "trl_spec"]

#: The manifests read, in order of preference within one folder.
MANIFESTS = ("requirements.txt", "requirements-dev.txt", "requirements_dev.txt", "pyproject.toml", "setup.py",
             "setup.cfg", "environment.yml")
_REQUIREMENT = r"""(?<![\w.\-/]){name}(?:\[[^\]]*\])?\s*((?:[<>=!~]=?=?\s*[\w.*+!]+\s*,?\s*)+)"""
#: `trl` followed by its specifiers, wherever a manifest spells it (`trl==0.8.6`, `"trl>=0.7,<0.9"`, `trl[peft]>=`).
TRL_REQUIREMENT = re.compile(_REQUIREMENT.format(name="trl"))


def committed_text(path: Path) -> str | None:
    """The file as committed at HEAD (when tracked in git), else as on disk; None when it cannot be read."""
    from compat.migrate.textio import manifest_text  # a UTF-16 requirements file reads as pip reads it
    try:
        out = subprocess.run(["git", "-C", str(path.parent), "show", f"HEAD:./{path.name}"], capture_output=True,
                             timeout=10, check=False)
        if out.returncode == 0:
            return manifest_text(out.stdout)
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return manifest_text(path.read_bytes())
    except OSError:
        return None


def trl_spec(folder: str) -> SpecifierSet | None:
    """The `trl` specifiers of the nearest manifest at or above `folder` (stopping at the repository root)."""
    return requirement_spec(folder, "trl")


@functools.lru_cache(maxsize=256)
def requirement_spec(folder: str, package: str) -> SpecifierSet | None:
    """The specifiers of `package` in the nearest manifest at or above `folder` that names it with a version
    (stopping at the repository root); None when none does (or they do not parse)."""
    pattern = TRL_REQUIREMENT if package == "trl" else re.compile(_REQUIREMENT.format(name=re.escape(package)))
    here = Path(folder).resolve()
    for directory in (here, *here.parents):
        for name in MANIFESTS:
            candidate = directory / name
            if not candidate.is_file():
                continue
            match = pattern.search(committed_text(candidate) or "")
            if match is None:
                continue
            try:
                return SpecifierSet(match.group(1).replace(" ", "").rstrip(","))
            except InvalidSpecifier:
                return None
        if (directory / ".git").exists():
            break
    return None


def pinned(folder: str, releases: Iterable[str]) -> tuple[str, ...] | None:
    """The `releases` the nearest TRL pin admits; None when no manifest pins TRL."""
    spec = trl_spec(folder)
    if spec is None:
        return None
    return tuple(r for r in releases if Version(r) in spec)
