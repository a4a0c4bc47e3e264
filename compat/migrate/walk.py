"""Which files a run looks at.

Folders are walked honouring `.gitignore` files (the folder's own, nested ones, the ones above it up to the git
work tree's top, and `.git/info/exclude`), matched with `pathspec`'s git-exact `GitIgnoreSpec`; an ignored folder is
not entered (so, as in git, nothing under it can be re-included). `.git`, virtualenvs (any folder holding a
`pyvenv.cfg` or `conda-meta`), `site-packages`, `build`, `dist`, `node_modules` and tool caches are always skipped;
`--exclude` adds gitignore-style globs. Files named on the command line are taken as given if they are of a kind the
run handles (Python, notebook, a manifest a rule matches), whatever folder they are in; only `--exclude` drops them.

Symlinks: a linked file is yielded under the first path that reaches it, with its resolved target for the writer, so a
file reached twice (through a link or two arguments) is processed once; a linked folder or file is followed only when
it points inside one of the given roots (and each real folder is entered once: no cycles, no escape). A file link that
leaves the tree is not followed (a rewrite would change a file outside the repository): `on_outside` hears about it.
A file named on the command line that is a link must point inside its own git work tree (or its folder, outside git).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from pathspec import GitIgnoreSpec

ALWAYS_SKIP = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "site-packages", "build", "dist", "node_modules",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints", ".eggs", ".hypothesis",
    }
)
VENV_MARKERS = ("pyvenv.cfg", "conda-meta")
# generated code (e.g. unsloth's `unsloth_compiled_cache/`): rewritten by its generator, never by hand
GENERATED_DIR_SUFFIXES = ("_compiled_cache",)
# experiment trackers' records of past runs, never edited by hand: a W&B run folder (`wandb/run-20250122_135820-
# uq5is8y3/`, `offline-run-...`, `latest-run`; it keeps the run's `files/requirements.txt`, `conda-environment.yaml` and
# a copy of the code) and MLflow's stores (`mlruns/`, `mlartifacts/`: logged models carry a `requirements.txt`)
TRACKER_RUN_DIR = re.compile(r"(?:offline-)?run-\d{8}_\d{6}-\w+|latest-run")
TRACKER_STORES = frozenset({"mlruns", "mlartifacts"})


def skipped_folder(path: str, name: str) -> bool:
    """Folders a walk never enters: tool folders, virtual environments, generated code, experiment trackers' run
    records (`TRACKER_RUN_DIR` inside a `wandb/` folder, `TRACKER_STORES`), and a vendored copy of TRL
    (`trl/` holding `__init__.py`: the repository's own TRL, which the rules must not rewrite as the installed one).
    A file inside one is still migrated when named on the command line. A library's own `pkg/trl/` subpackage
    wrapping TRL (`wrapper_subpackage`) is no copy of TRL: it is walked."""
    if name in ALWAYS_SKIP or name.endswith(GENERATED_DIR_SUFFIXES) or name in TRACKER_STORES:
        return True
    if TRACKER_RUN_DIR.fullmatch(name) and os.path.basename(os.path.dirname(os.path.abspath(path))) == "wandb":
        return True
    if name == "trl" and os.path.exists(os.path.join(path, "__init__.py")):
        return not wrapper_subpackage(path)
    if name == "trl" and source_copy(path):
        return True
    return any(os.path.exists(os.path.join(path, m)) for m in VENV_MARKERS)


#: a relative import of a module or package: `from .import_utils import x`, `from ..core import y`
_RELATIVE_IMPORT = re.compile(rb"^[ \t]*from[ \t]+\.+[ \t]*\w", re.MULTILINE)


def source_copy(path: str) -> bool:
    """Whether the folder `path` (named `trl`, no `__init__.py`) holds copies of TRL's own modules, kept to read (a
    course's annotated `trl/core.py`, `trl/trainer/ppo_trainer.py`): a file directly in it imports a sibling module
    relatively (`from .import_utils import ...`), which only TRL's own package does. Without `__init__.py` Python
    never imports it as `trl` (the installed TRL, a regular package, wins), so nothing runs it: left alone as a copy."""
    try:
        with os.scandir(path) as it:
            files = [e.path for e in it if e.name.endswith(".py") and e.is_file()]
    except OSError:
        return False
    for file in files:
        try:
            with open(file, "rb") as fh:
                if _RELATIVE_IMPORT.search(fh.read(1 << 20)):
                    return True
        except OSError:
            continue
    return False


def wrapper_subpackage(path: str) -> bool:
    """Whether the package folder `path` (named `trl`) is a library's subpackage around TRL, not a copy of TRL.

    Both must hold: its parent folder is a package (`__init__.py`), so Python imports it as `pkg.trl` (its files'
    absolute `from trl import X` is the installed TRL; a script in the parent folder, which would import it as `trl`,
    is left alone by `runner.vendored_trl`), and its `__init__.py` sets no `__version__` (every TRL release's own
    `trl/__init__.py` does; optimum-habana's `optimum/habana/trl/__init__.py` only imports its Gaudi trainers)."""
    if not os.path.isfile(os.path.join(os.path.dirname(path), "__init__.py")):
        return False
    try:
        with open(os.path.join(path, "__init__.py"), encoding="utf-8", errors="replace") as fh:
            init = fh.read()
    except OSError:
        return False
    return re.search(r"^\s*__version__\s*[:=]", init, re.MULTILINE) is None
SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class Target:
    """A file to process: `path` as the user will read it, `real` the resolved file to read and replace."""

    path: str
    real: str


@dataclass(frozen=True)
class _Ignore:
    base: str
    spec: GitIgnoreSpec

    def decide(self, path: str, is_dir: bool) -> bool | None:
        rel = os.path.relpath(path, self.base).replace(os.sep, "/")
        if rel.startswith(".."):
            return None
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def _read_spec(path: str) -> GitIgnoreSpec | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    return _spec(lines) if any(line.strip() for line in lines) else None


def exclude_pattern(value: str) -> str:
    """An `--exclude` pattern, checked as the command line reads it (argparse `type=`): one `pathspec` refuses (a
    trailing lone backslash) is a usage error naming it, not a traceback from the walk."""
    try:
        GitIgnoreSpec.from_lines([value])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a gitignore pattern: {value!r} ({exc})") from None
    return value


def _spec(lines: list[str]) -> GitIgnoreSpec:
    """The spec of a `.gitignore`'s lines. A line git cannot use (`pathspec` refuses it: a pattern ending in an odd
    `\\`, which git's `wildmatch` aborts on) matches nothing in git, so it is left out here instead of failing the run."""
    try:
        return GitIgnoreSpec.from_lines(lines)
    except ValueError:  # GitIgnorePatternError (pathspec 1.x), GitWildMatchPatternError (0.12)
        kept = []
        for line in lines:
            try:
                GitIgnoreSpec.from_lines([line])
            except ValueError:
                continue
            kept.append(line)
        return GitIgnoreSpec.from_lines(kept)


def git_toplevel(start: str) -> str | None:
    """The nearest folder at or above `start` holding `.git` (a folder, or a file for worktrees/submodules)."""
    current = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _outer_ignores(root: str) -> list[_Ignore]:
    """The .gitignore files above `root` up to its work tree's top (outermost first), and .git/info/exclude."""
    top = git_toplevel(root)
    if top is None:
        return []
    found: list[_Ignore] = []
    exclude = _read_spec(os.path.join(top, ".git", "info", "exclude"))
    if exclude is not None:
        found.append(_Ignore(top, exclude))
    chain = []
    current = os.path.dirname(os.path.abspath(root))
    while len(current) >= len(top):
        chain.append(current)
        if current == top:
            break
        current = os.path.dirname(current)
    for folder in reversed(chain):
        spec = _read_spec(os.path.join(folder, ".gitignore"))
        if spec is not None:
            found.append(_Ignore(folder, spec))
    return found


def _ignored(ignores: list[_Ignore], path: str, is_dir: bool) -> bool:
    verdict = False
    for ignore in ignores:  # outermost first: a deeper .gitignore overrides
        decision = ignore.decide(path, is_dir)
        if decision is not None:
            verdict = decision
    return verdict


def iter_targets(
    paths: Iterable[str],
    *,
    exclude: Iterable[str] = (),
    wanted: Callable[[str], bool] | None = None,
    on_error: Callable[[str, str], None] | None = None,
    on_outside: Callable[[str, str], None] | None = None,
) -> Iterator[Target]:
    """Files under `paths` to process, each once. `wanted(path)` picks files found in folders (default: .py,
    .pyi, .ipynb); `on_error(path, reason)` hears about paths that cannot be read or do not exist;
    `on_outside(path, reason)` about file links that point out of the tree (not followed)."""
    wanted = wanted or (lambda name: name.endswith(SOURCE_SUFFIXES))
    excludes = [e for e in exclude if e]
    exclude_spec = GitIgnoreSpec.from_lines(excludes) if excludes else None
    roots = [os.path.realpath(p) for p in paths if os.path.isdir(p)]
    seen_files: set[str] = set()
    seen_dirs: set[str] = set()

    def excluded(path: str, base: str, is_dir: bool) -> bool:
        if exclude_spec is None:
            return False
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        if rel.startswith(".."):
            rel = os.path.abspath(path).replace(os.sep, "/").lstrip("/")
        return exclude_spec.match_file(rel + "/" if is_dir else rel)

    def take(path: str, real: str | None = None) -> Iterator[Target]:
        real = real or os.path.realpath(path)
        if real in seen_files:
            return
        seen_files.add(real)
        yield Target(os.path.normpath(path), real)

    for arg in paths:
        if os.path.isdir(arg):
            ignores = _outer_ignores(arg)
            if _ignored(ignores, os.path.abspath(arg), True):
                ignores = []  # a folder git ignores but the user named: walk it (its own .gitignore files still apply)
            deferred: list[tuple[str, list[_Ignore]]] = []  # links come last: a real path wins
            yield from _walk(arg, arg, ignores, excluded, wanted, take, roots, seen_dirs, on_error, deferred)
            while deferred:
                path, ignores = deferred.pop(0)
                if os.path.isdir(path):
                    yield from _walk(path, arg, ignores, excluded, wanted, take, roots, seen_dirs, on_error, deferred)
                elif _inside(os.path.realpath(path), roots):
                    yield from take(path)
                elif on_outside:
                    on_outside(path, _outside_message(path))
        elif os.path.lexists(arg):
            if excluded(arg, os.getcwd(), False) or not wanted(arg):
                continue
            if not os.path.exists(arg):
                if on_error:
                    on_error(arg, "broken symbolic link")
                continue
            if os.path.islink(arg):
                home = os.path.dirname(os.path.abspath(arg))
                tree = os.path.realpath(git_toplevel(home) or home)
                if not _inside(os.path.realpath(arg), [tree]):
                    if on_outside:
                        on_outside(arg, _outside_message(arg))
                    continue
            yield from take(arg)
        elif on_error:
            on_error(arg, "no such file or folder")


def _inside(real: str, roots: list[str]) -> bool:
    return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _outside_message(path: str) -> str:
    return (f"not followed: a symbolic link to a file outside the tree ({os.path.realpath(path)}); "
            "migrate that file where it lives")


def _walk(folder, root, ignores, excluded, wanted, take, roots, seen_dirs, on_error, deferred) -> Iterator[Target]:
    real = os.path.realpath(folder)
    if real in seen_dirs:
        return
    seen_dirs.add(real)
    spec = _read_spec(os.path.join(folder, ".gitignore"))
    if spec is not None:
        ignores = [*ignores, _Ignore(os.path.abspath(folder), spec)]
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        if on_error:
            on_error(folder, exc.strerror or str(exc))
        return
    subdirs = []
    for entry in entries:
        path = os.path.join(folder, entry.name)
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if skipped_folder(path, entry.name):
                continue
            if entry.is_symlink():
                if not _inside(os.path.realpath(path), roots):
                    continue
            if _ignored(ignores, os.path.abspath(path), True) or excluded(path, root, True):
                continue
            if entry.is_symlink():
                deferred.append((path, ignores))
            else:
                subdirs.append(path)
            continue
        if not wanted(entry.path):
            continue
        if _ignored(ignores, os.path.abspath(path), False) or excluded(path, root, False):
            continue
        if entry.is_symlink():
            if not os.path.exists(path):
                if on_error:
                    on_error(path, "broken symbolic link")
            else:
                deferred.append((path, ignores))
            continue
        yield from take(path, os.path.join(real, entry.name))  # a plain file in a resolved folder: no lstat chain
    for sub in subdirs:
        yield from _walk(sub, root, ignores, excluded, wanted, take, roots, seen_dirs, on_error, deferred)
