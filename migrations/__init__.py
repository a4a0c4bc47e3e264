"""The registry of every migration, in the order they run.

Each rule is one module in the folder of the TRL release that forced it (`migrations/v1_13/ppo_to_grpo.py`, ...)
and exposes a module-level `MIGRATION` instance of a `migrations.base.Migration` subclass. Rules run in order of
release, then of their `order` attribute (default 100), then of id. Knows nothing of files or the command line.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from packaging.version import Version

from migrations.base import (
    ManifestMigration,
    Migration,
    Options,
    PythonMigration,
    RuleContext,
)

__all__ = [
    "ManifestMigration",
    "Migration",
    "Options",
    "PythonMigration",
    "RuleContext",
    "all_migrations",
    "get",
    "select",
]

_RELEASE_PACKAGES = ("v1_13", "v1_14", "v1_15", "v1_16")


@lru_cache(maxsize=1)
def all_migrations() -> tuple[Migration, ...]:
    """Every registered migration, in run order."""
    found: list[Migration] = []
    for pkg_name in _RELEASE_PACKAGES:
        pkg = importlib.import_module(f"{__name__}.{pkg_name}")
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{pkg.__name__}.{info.name}")
            rule = getattr(module, "MIGRATION", None)
            if isinstance(rule, Migration):
                found.append(rule)
    ids = [m.id for m in found]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise RuntimeError(f"duplicate migration ids: {sorted(duplicates)}")
    return tuple(sorted(found, key=lambda m: (Version(m.release), getattr(m, "order", 100), m.id)))


def get(rule_id: str) -> Migration:
    """The migration with this id; KeyError naming the known ids otherwise."""
    for m in all_migrations():
        if m.id == rule_id:
            return m
    known = ", ".join(m.id for m in all_migrations())
    raise KeyError(f"unknown migration {rule_id!r}; known: {known}")


def select(
    options: Options,
    only: tuple[str, ...] | list[str] = (),
    skip: tuple[str, ...] | list[str] = (),
) -> tuple[Migration, ...]:
    """The rules a run applies: those the target TRL needs, narrowed by --only / --skip (ids are checked)."""
    for rule_id in (*only, *skip):
        get(rule_id)
    chosen = []
    for m in all_migrations():
        if only and m.id not in only:
            continue
        if m.id in skip:
            continue
        if not only and not m.applies(options):
            continue
        chosen.append(m)
    return tuple(chosen)
