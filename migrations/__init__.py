"""The registry of every migration, derived from the package layout, in the order they run.

Nothing is listed by hand. The registry walks its root package (`migrations`):

* every `v<major>_<minor>/` folder is a TRL release (`v1_13` -> 1.13, `v0_12` -> 0.12: new folders are found);
* every other sub-package holding such folders is a library folder (`transformers/v4_57/`, `peft/v0_14/`), for rules
  forced by that library's releases; the rule's `library` is the folder name and `Options.target(library)` decides
  whether it applies. `kinds/` holds no release folder and is not one;
* every public module (or package) in a release folder is one rule, and must define `MIGRATION`, an instance of a
  `migrations.base.Migration` subclass defined in that module; modules starting with `_` are that folder's private
  helpers. The rule's id is the module's name (`_` -> `-`), its release the folder, its guide anchor its id unless it
  says otherwise (`migrations.base.rule_identity`).

Rules run in order of library (TRL first), release, `order` attribute (default 100), then id; a rule whose `order` is
`migrations.base.RUNS_LAST` or more runs after every other rule of its library. Ids are unique across
every folder. Knows nothing of files or the command line. `all_migrations(root=...)` takes another top-level package
with the same layout (tests use one on a temporary path).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from functools import lru_cache

from packaging.version import Version

from migrations.base import (
    RELEASE_FOLDER,
    RUNS_LAST,
    ManifestMigration,
    Migration,
    Options,
    PythonMigration,
    RuleContext,
    RuleLayoutError,
)

__all__ = [
    "ManifestMigration",
    "Migration",
    "Options",
    "PythonMigration",
    "RuleContext",
    "RuleLayoutError",
    "all_migrations",
    "get",
    "release_folders",
    "select",
]

ROOT = __name__


def _subpackages(paths: list[str]) -> list[str]:
    """Public sub-packages found on `paths`, by listing only (nothing is imported)."""
    return sorted(i.name for i in pkgutil.iter_modules(paths) if i.ispkg and not i.name.startswith("_"))


def release_folders(root: str = ROOT) -> list[tuple[str, str]]:
    """(library, dotted package) of every release folder under `root`: TRL's first, then each library folder's.

    A sub-package is looked into (listed, not imported) for release folders; one without any (`kinds`, tools that
    live beside the rules) is not a library folder and is never imported here.
    """
    paths = list(importlib.import_module(root).__path__)
    found = [("trl", f"{root}.{name}") for name in _subpackages(paths) if RELEASE_FOLDER.match(name)]
    for name in _subpackages(paths):
        if RELEASE_FOLDER.match(name):
            continue
        inner = [os.path.join(p, name) for p in paths]
        found.extend((name, f"{root}.{name}.{sub}") for sub in _subpackages(inner) if RELEASE_FOLDER.match(sub))
    return found


def _rule_of(module_name: str) -> Migration:
    module = importlib.import_module(module_name)
    rule = getattr(module, "MIGRATION", None)
    if not isinstance(rule, Migration):
        raise RuleLayoutError(
            f"{module_name} sits in a release folder but defines no MIGRATION (a migrations.base.Migration instance); "
            "a helper module of a release folder must start with an underscore"
        )
    identity = rule.identity
    if identity.module != module_name or (rule.id, rule.release) != (identity.id, identity.release):
        raise RuleLayoutError(
            f"{module_name}.MIGRATION is a {type(rule).__module__}.{type(rule).__qualname__}: a rule's class is "
            "defined in its own module and sets neither `id` nor `release` (both come from where the module lives)"
        )
    return rule


@lru_cache(maxsize=None)
def all_migrations(root: str = ROOT) -> tuple[Migration, ...]:
    """Every rule under `root` (default: this package), in run order."""
    found: list[Migration] = []
    for _library, folder in release_folders(root):
        pkg = importlib.import_module(folder)
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            if not info.name.startswith("_"):
                found.append(_rule_of(f"{folder}.{info.name}"))
    ids = [m.id for m in found]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise RuleLayoutError(f"duplicate migration ids (rule modules of the same name in two folders): {duplicates}")
    return tuple(sorted(found, key=lambda m: (m.library != "trl", m.library, getattr(m, "order", 100) >= RUNS_LAST,
                                               Version(m.release), getattr(m, "order", 100), m.id)))


def get(rule_id: str, root: str = ROOT) -> Migration:
    """The migration with this id; KeyError naming the known ids otherwise."""
    for m in all_migrations(root):
        if m.id == rule_id:
            return m
    known = ", ".join(m.id for m in all_migrations(root))
    raise KeyError(f"unknown migration {rule_id!r}; known: {known}")


def select(
    options: Options,
    only: tuple[str, ...] | list[str] = (),
    skip: tuple[str, ...] | list[str] = (),
    root: str = ROOT,
) -> tuple[Migration, ...]:
    """The rules a run applies: those the target needs, narrowed by --only / --skip (ids are checked)."""
    for rule_id in (*only, *skip):
        get(rule_id, root)
    chosen = []
    for m in all_migrations(root):
        if only and m.id not in only:
            continue
        if m.id in skip:
            continue
        if not only and not m.applies(options):
            continue
        chosen.append(m)
    return tuple(chosen)
