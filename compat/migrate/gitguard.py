"""The dirty-tree guard: never overwrite work git cannot give back.

Before writing, the files about to be rewritten are checked against `git status` of the work tree each lies in. A file
that is modified, staged, added, renamed or untracked has content that a `git checkout` would not restore, so the run
refuses to write anything (as `cargo fix` does) and says which files and how to go on. A file git ignores has no copy
in git either, so it counts as untracked. Files outside any git work tree,
or when git is not installed, are not guarded (there is nothing to compare with).

The no-VCS guard (`vcs_root`, used by the CLI): a path that is not inside a git or Mercurial work tree at all is
refused in write mode unless `--allow-no-vcs` (cargo fix's rule), because nothing could show or undo what changed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable

_STATES = {
    "M": "modified",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type changed",
    "U": "unmerged",
    "?": "untracked",
}


def _git(cwd: str, *args: str) -> str | None:
    global_opts = [a for a in args if a == "--literal-pathspecs"]
    args = tuple(a for a in args if a != "--literal-pathspecs")
    try:
        proc = subprocess.run(["git", *global_opts, "-C", cwd, *args], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def vcs_root(path: str) -> str | None:
    """The root of the git or Mercurial work tree holding `path` (a file or a folder), None when there is none.

    Walks up from the path looking for `.git` (a folder, or the file a git worktree or submodule has) or `.hg`; then
    asks git itself (`GIT_DIR` / `GIT_WORK_TREE` set in the environment). Needs neither git nor hg installed for
    the usual layout."""
    real = os.path.realpath(path)
    folder = real if os.path.isdir(real) else os.path.dirname(real)
    here = folder
    while True:
        if any(os.path.exists(os.path.join(here, marker)) for marker in (".git", ".hg")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    if os.path.isdir(folder):
        out = _git(folder, "rev-parse", "--show-toplevel")
        if out and out.strip():
            return os.path.realpath(out.strip())
    return None


def dirty_files(real_paths: Iterable[str]) -> dict[str, str]:
    """{real path: what git says about it} for each given file with uncommitted changes."""
    by_top: dict[str, list[str]] = {}
    top_of_dir: dict[str, str | None] = {}
    for path in real_paths:
        folder = os.path.dirname(path)
        if folder not in top_of_dir:
            out = _git(folder, "rev-parse", "--show-toplevel")
            top_of_dir[folder] = os.path.realpath(out.strip()) if out else None
        top = top_of_dir[folder]
        if top is not None:
            by_top.setdefault(top, []).append(path)
    dirty: dict[str, str] = {}
    for top, paths in by_top.items():
        out = _git(top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=no")
        if out is None:
            continue
        states: dict[str, str] = {}
        records = out.split("\0")
        i = 0
        while i < len(records):
            record = records[i]
            i += 1
            if len(record) < 4:
                continue
            xy, name = record[:2], record[3:]
            if xy[0] in "RC":
                i += 1  # the source path of a rename/copy follows
            words = sorted({_STATES.get(c, c) for c in xy.strip()})
            states[os.path.realpath(os.path.join(top, name))] = ", ".join(words)
        tracked = _tracked(top, paths)
        for path in paths:
            if path in states:
                dirty[path] = states[path]
            elif tracked is not None and path not in tracked:
                dirty[path] = "untracked (ignored by git)"
    return dirty


def _tracked(top: str, paths: list[str]) -> set[str] | None:
    """The given files that git tracks (an ignored file does not show in `git status` but has no copy in git)."""
    found: set[str] = set()
    for start in range(0, len(paths), 500):  # keep the command line short
        chunk = [os.path.relpath(p, top) for p in paths[start : start + 500]]
        out = _git(top, "--literal-pathspecs", "ls-files", "-z", "--", *chunk)
        if out is None:
            return None
        found.update(os.path.realpath(os.path.join(top, name)) for name in out.split("\0") if name)
    return found
