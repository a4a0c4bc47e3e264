"""Files in, files out: walk, read, prefilter, migrate (serially or in a process pool), guard, write, report.

Order of work, and why:
1. walk (`walk.py`) and read each regular file once, within a size budget (FIFOs, devices and files over
   `--max-file-size` are named and skipped); prefilter on the bytes: a file that contains no trigger of any selected
   rule (and is not a manifest a rule matches) is done: never decoded, never parsed, never written. Only the list of
   candidates is kept, not their bytes;
2. write mode: the dirty-tree guard (`gitguard.py`) over the candidates; those git could not restore are migrated
   first, so that if one of them changes the run refuses before anything was written;
3. the candidates are read again, one at a time, decoded, migrated (`engine.migrate_source`) and encoded back, in a
   process pool only when there are enough of them to pay for it (`-j` overrides). Each file runs under a time
   budget in a thread with a deep stack (deep but valid code parses); in a pool a worker that crashes or overruns is
   replaced and only its file fails;
4. each file is written as soon as it is done (memory holds the files in flight, not the tree): one atomic replace
   per changed file (a temporary file in the same folder with the original's mode and owner, `os.replace`), under a
   lock on its folder after checking that the file on disk is still the one that was read. Unchanged files are never
   opened for writing.

Interrupts (`interrupts.py`): the first Ctrl-C or SIGTERM stops the run at once, the write in flight finishes or
rolls back, and `Interrupted.report` says what was written; no worker process outlives the run.
"""

from __future__ import annotations

import contextlib
import ctypes
import difflib
import functools
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import posixpath
import re
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from migrations import select
from migrations.kinds import local_classes
from migrations.base import (
    Finding,
    ManifestMigration,
    Migration,
    Options,
    PythonMigration,
    gates,
    gates_match,
    project_import,
)

from . import depth, gitguard, interrupts, resolution
from .engine import MigrateError, file_kind, migrate_source
from .textio import DecodeError, Decoded, decode_manifest, decode_python, decode_utf8, manifest_text
from .interrupts import Interrupted
from .walk import SOURCE_SUFFIXES, Target, iter_targets

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

Mode = Literal["write", "check", "diff"]
Status = Literal["changed", "unchanged", "failed"]
# Candidates per worker process below which a pool costs more than it saves (libcst parses ~30 files/CPU-s).
FILES_PER_WORKER = 12


@dataclass
class FileEntry:
    """The outcome for one file (see docs/migrate-report.md for the JSON form)."""

    path: str
    kind: str = "python"
    status: Status = "unchanged"
    written: bool = False
    parsed: bool = False
    encoding: str | None = None
    rules_applied: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[MigrateError] = field(default_factory=list)
    diff: bytes | None = None  # --diff only
    needs: list[str] = field(default_factory=list)  # distributions the rewritten code now needs ("trl-compat")


@dataclass
class Report:
    """Everything a run did: one entry per file looked at, in walk order."""

    mode: Mode
    target_trl: str
    rules: list[str]
    files: list[FileEntry] = field(default_factory=list)
    refused_dirty: dict[str, str] = field(default_factory=dict)  # path -> git state, when the guard refused
    interrupted: str | None = None  # the signal's name when the run was stopped early

    @property
    def totals(self) -> dict[str, int]:
        count = lambda status: sum(1 for f in self.files if f.status == status)  # noqa: E731
        return {
            "scanned": len(self.files),
            "parsed": sum(1 for f in self.files if f.parsed),
            "changed": count("changed"),
            "unchanged": count("unchanged"),
            "failed": count("failed"),
            "written": sum(1 for f in self.files if f.written),
            "manual_steps": sum(1 for f in self.files for x in f.findings if x.severity == "manual"),
        }

    @property
    def exit_code(self) -> int:
        """0: nothing to do or all written; 1: changes needed (--check/--diff); 2: a file failed."""
        if any(f.status == "failed" for f in self.files):
            return 2
        if self.mode != "write" and any(f.status == "changed" for f in self.files):
            return 1
        return 0


class _Prefilter:
    """The byte-level test that keeps most files away from the decoder and the parser.

    Python files and notebooks are candidates when some Python rule's triggers (and `requires`, if it has any) occur
    in the raw bytes; manifests when a manifest rule matches the file name (and its triggers occur). Rules are grouped
    by their `requires` gate, which is tested first (once per distinct gate): a file without `trl` in it never pays
    for the triggers of the rules gated on `trl`. Each test is a `bytes in` scan (~2 GB/s).
    """

    def __init__(self, rules: Sequence[Migration]) -> None:
        # the rules' own prefilter (`Migration.triggered_by`), grouped by gate and encoded for the raw bytes
        self.groups = gates([r for r in rules if isinstance(r, PythonMigration)], as_bytes=True)
        self.manifests = [r for r in rules if isinstance(r, ManifestMigration)]

    def wants(self, name: str) -> bool:
        return name.endswith(SOURCE_SUFFIXES) or any(r.matches(name) for r in self.manifests)

    def candidate(self, name: str, data: bytes) -> bool:
        manifest: bytes | None = None
        for r in self.manifests:
            if r.matches(name):
                if manifest is None:  # a UTF-16 requirements file (pip reads one): its triggers are not ASCII bytes
                    manifest = data if data.isascii() else manifest_text(data).encode("utf-8", "replace")
                if not r.triggers or any(t.encode() in manifest for t in r.triggers):
                    return True
        if not name.endswith(SOURCE_SUFFIXES):
            return False
        return gates_match(self.groups, data)


# Per-file budgets (the CLI's --max-file-size / --time-budget change them).
MAX_FILE_BYTES = 2_000_000
# A notebook may be this many times the budget: most of a large one is its outputs (images, logs), JSON the migrator
# decodes but never parses as code (a 2.1 MB course notebook of the corpus, askhistorians' inspect_rl_training.ipynb,
# was skipped for it); its code cells still go through the time budget like any file.
NOTEBOOK_BUDGET_FACTOR = 8


def _budget(path: str, max_bytes: int) -> int:
    return max_bytes * NOTEBOOK_BUDGET_FACTOR if path.lower().endswith(".ipynb") else max_bytes


# Wall-clock seconds per file: far above any real file (the slowest real PPO-era file of the corpus takes a few seconds
# alone), so only pathological input hits it; 30 s misfired on real files of the corpus on a loaded 2-core machine.
TIME_BUDGET_S = 120.0
# The libcst work of one file runs in a thread with a large stack and a raised recursion limit: valid code nested a
# few hundred levels deep (400 `+` terms, 500 `elif`s) needs more than Python's default 1,000 frames in libcst's
# recursive visitors. `ast` (run at the default limit first) refuses what CPython itself could not compile.
DEEP_STACK_BYTES = 1 << 30
DEEP_RECURSION_LIMIT = 60_000


#: how many folders without `__init__.py` above a package may prefix its name (`src.alignment`, `repo.src.alignment`)
NAMESPACE_DEPTH = 2


class _LocalClassIndex:
    """Builds the run's `LocalClasses` (`migrations.kinds.local_classes`) from the bytes the walk reads anyway: a
    file's module name is its path from the topmost folder of its `__init__.py` chain (`src/alignment/configs.py`
    -> `alignment.configs`, `scripts/run_sft.py` -> `run_sft`), also reachable through the folders above it that are
    namespace packages (`src.alignment.configs`: `LocalClasses.namespaces`). A file naming TRL, TrainingArguments or a parser
    (`local_classes.SEED`) is parsed (`ast`) as it is read; any other file with classes is remembered by the words
    its classes derive from and the dataclasses it defines, and read again and parsed only when one of the former
    names a class the index holds or one of the latter is named in a parser's class tuple the index holds (repeated
    to a fixed point), so a big tree without TRL costs a regex pass, not a parse of every file."""

    def __init__(self) -> None:
        self.parts: list[tuple[tuple, tuple]] = []
        self.known: set[bytes] = set()  # names of the classes indexed so far
        # path, real, module, package, the words its classes derive from, the dataclasses it defines
        self.waiting: list[tuple[str, str, str, bool, frozenset[bytes], frozenset[bytes]]] = []
        self.parsed_names: set[bytes] = set()  # the last parts of the classes in the parser tuples indexed so far
        self.namespaces: set[tuple[str, str]] = set()  # (`src.alignment`, `alignment`): see `_namespace_names`

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def _package_parts(folder: str) -> tuple[str, ...]:
        if not os.path.isfile(os.path.join(folder, "__init__.py")):
            return ()
        parent, name = os.path.split(folder)
        if not name.isidentifier() or parent == folder:
            return ()
        return (*_LocalClassIndex._package_parts(parent), name)

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def _namespace_names(folder: str, top: str) -> tuple[str, ...]:
        """The longer names of the top package or module `top` in `folder`: through up to `NAMESPACE_DEPTH` folders
        above it that hold no `__init__.py` (PEP 420 namespace packages: `from src.alignment import DPOConfig` with
        `src/alignment/__init__.py` and no `src/__init__.py`), named as identifiers."""
        names: list[str] = []
        prefix = top
        for _ in range(NAMESPACE_DEPTH):
            parent, name = os.path.split(folder)
            if parent == folder or not name.isidentifier() or os.path.isfile(os.path.join(folder, "__init__.py")):
                break
            prefix = f"{name}.{prefix}"
            names.append(prefix)
            folder = parent
        return tuple(names)

    def add(self, path: str, real: str, data: bytes) -> None:
        if not path.endswith(".py"):
            return
        folder, base = os.path.split(real)
        is_package = base == "__init__.py"
        if not local_classes.worth_scanning(data, is_package):
            return
        parts = self._package_parts(folder) + (() if is_package else (base[:-3],))
        if not parts or not all(p.isidentifier() for p in parts):
            return
        module = ".".join(parts)
        top = os.path.join(folder, *[".."] * (len(parts) - (0 if is_package else 1)))
        self.namespaces.update((name, parts[0]) for name in self._namespace_names(os.path.normpath(top), parts[0]))
        if local_classes.SEED.search(data):
            self._parse(module, data, path, is_package)
        else:
            self.waiting.append((path, real, module, is_package, local_classes.referenced_words(data, is_package),
                                 local_classes.dataclass_names(data)))

    def _parse(self, module: str, data: bytes, path: str, is_package: bool) -> None:
        entries = local_classes.module_entries(module, data.decode("utf-8", "replace"), path, is_package)
        self.parts.append(entries)
        self.known |= {c.qname.rsplit(".", 1)[-1].encode() for c in entries[0]}
        self.parsed_names |= {name.rsplit(".", 1)[-1].encode() for t in entries[3] for name in t if name}

    def index(self) -> local_classes.LocalClasses | None:
        grew = True
        while grew and self.waiting:
            grew = False
            for item in [w for w in self.waiting if w[4] & self.known or w[5] & self.parsed_names]:
                self.waiting.remove(item)
                path, real, module, is_package, _, _ = item
                try:
                    data, _ = _read_regular(real, MAX_FILE_BYTES)
                except _Skip:
                    continue
                before = len(self.known), len(self.parsed_names)
                self._parse(module, data, path, is_package)
                grew = grew or (len(self.known), len(self.parsed_names)) != before or is_package
        if not self.parts:
            return None
        return replace(local_classes.LocalClasses.merge(self.parts), namespaces=tuple(sorted(self.namespaces)))


#: `from M import a, b` / `from M import (a,\n b)` / `from M import *`, in a .py file or a notebook's JSON
_FROM_IMPORT = re.compile(rb"\bfrom[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\*|\([^)]*\)|[\w \t,]+)")
#: modules that are never the project's: the libraries the rules know, and what they import from
_LIBRARIES = frozenset({b"trl", b"transformers", b"peft", b"accelerate", b"deepspeed", b"torch", b"datasets",
                        b"compat", b"reference_impl", b"vllm", b"huggingface_hub", b"__future__"})


def project_imports(data: bytes) -> set[str]:
    """What this file imports from modules that may be the project's, as `module:name` (the module's last part:
    `from .pkg.utils import x` -> `utils:x`) and `module:*` (`Options.project_imports`)."""
    out: set[str] = set()
    for match in _FROM_IMPORT.finditer(data):
        module, names = match.group(1), match.group(2)
        if module.split(b".")[0] in _LIBRARIES:
            continue
        stem = module.rstrip(b".").rsplit(b".", 1)[-1].decode("ascii", "replace")
        if names == b"*":
            out.add(project_import(stem, "*"))
            continue
        for word in re.findall(rb"\w+", names):
            if word != b"as":
                out.add(project_import(stem, word.decode("ascii", "replace")))
    return out


class _Skip(Exception):
    """A file that is not read or not written, with the error kind and message for its entry."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


def _read_regular(real: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file (never a FIFO or a device: they could block or never end), at most `max_bytes`."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise _Skip("read", exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or \
                stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file"
            raise _Skip("not-regular", f"skipped: {what}, not a regular file; only regular files are read")
        if st.st_size > max_bytes:
            raise _Skip("too-large", f"skipped: too large ({st.st_size / 1e6:.1f} MB, the budget is "
                                     f"{max_bytes / 1e6:g} MB for this file; --max-file-size MB to change it)")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise _Skip("too-large", f"skipped: too large (it grew past the budget of {max_bytes / 1e6:g} MB while "
                                     "being read; --max-file-size MB to change it)")
        return data, st
    except OSError as exc:
        raise _Skip("read", exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def migrate_paths(
    paths: Iterable[str],
    *,
    options: Options | None = None,
    rules: Sequence[Migration] | None = None,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    mode: Mode = "write",
    exclude: Sequence[str] = (),
    jobs: int | None = None,
    allow_dirty: bool = False,
    verify_idempotent: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_file: Callable[[FileEntry], None] | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    time_budget: float = TIME_BUDGET_S,
    force_read_only: bool = False,
) -> Report:
    """Migrate every file under `paths` and return the report (see the module docstring for the steps).

    `rules` defaults to `migrations.select(options, only, skip)`. `jobs`: worker processes, None = decide from the
    number of candidate files. `on_start(n_candidates)` and `on_file(entry)` drive a progress display (`on_file` is
    called once a file is done, after it was written). `max_file_bytes` / `time_budget` (seconds) bound the work per
    file: a file over either is left untouched and reported (`too-large` / `too-slow`). A read-only file is not
    written unless `force_read_only`. An interrupt (KeyboardInterrupt, or `interrupts.Interrupted` for SIGTERM under
    the CLI) stops the run at once: the write in flight finishes or rolls back, and the exception raised is an
    `Interrupted` whose `report` says what was written until then.
    """
    options = options or Options()
    rules = tuple(select(options, only, skip) if rules is None else rules)
    report = Report(mode, str(options.target_trl), [r.id for r in rules])
    prefilter = _Prefilter(rules)
    entries = report.files
    executor: _Serial | _Pool | None = None
    try:
        # 1. walk + prefilter: each file read once, nothing kept but the list of candidates
        candidates: list[tuple[int, Target]] = []
        local_classes = _LocalClassIndex()
        imported: set[str] = set()

        def unreadable(path: str, reason: str) -> None:
            entries.append(FileEntry(path, status="failed", errors=[MigrateError("read", reason)]))

        def outside(path: str, reason: str) -> None:
            entries.append(FileEntry(os.path.normpath(path), findings=[Finding("trl-compat", reason, 0, 0, None,
                                                                               "warning")]))

        for target in iter_targets(paths, exclude=exclude, wanted=prefilter.wants, on_error=unreadable,
                                   on_outside=outside):
            entry = FileEntry(target.path, kind=file_kind(target.path, rules))
            entries.append(entry)
            try:
                data, _ = _read_regular(target.real, _budget(target.path, max_file_bytes))
            except _Skip as exc:
                entry.status, entry.errors = "failed", [MigrateError(exc.kind, exc.message)]  # type: ignore[arg-type]
                continue
            if prefilter.candidate(target.path, data):
                candidates.append((len(entries) - 1, target))
            local_classes.add(target.path, target.real, data)
            if b"import" in data:
                imported |= project_imports(data)
            del data
        options = replace(options, local_classes=local_classes.index(), project_imports=frozenset(imported))

        # 2. the dirty-tree guard, before anything is written: files git could not restore go first, so that if one
        # of them changes, nothing at all has been written yet (and nothing will be)
        write = mode == "write"
        dirty: dict[str, str] = {}
        if write and candidates and not allow_dirty:
            dirty = gitguard.dirty_files(t.real for _, t in candidates)
            candidates.sort(key=lambda c: c[1].real not in dirty)

        if on_start:
            on_start(len(candidates))
        # the code first, the manifests after it, so that a manifest learns what the rewritten code needs
        # (`Options.project_needs`: trl-compat once a file imports `compat`). A dirty manifest stays in the first
        # pass (the guard must see it before anything is written) and is looked at again in the second one.
        later = [c for c in candidates if entries[c[0]].kind in _MANIFEST_KINDS and c[1].real not in dirty]
        candidates = [c for c in candidates if c not in later]
        workers = _decide_jobs(jobs, len(candidates))
        executor = (_Pool(workers, options, rules, verify_idempotent, time_budget) if workers > 1
                    else _Serial(options, rules, verify_idempotent, time_budget))

        # 3. migrate and write, one file at a time as each is done (each write all-or-nothing)
        def tasks(chosen: list[tuple[int, Target]]) -> Iterator[tuple[int, str, bytes]]:
            for index, target in chosen:
                try:
                    data, _ = _read_regular(target.real, _budget(target.path, max_file_bytes))
                except _Skip as exc:
                    entries[index].status = "failed"
                    entries[index].errors = [MigrateError(exc.kind, exc.message)]  # type: ignore[arg-type]
                    _done(entries[index], on_file)
                    continue
                inflight[index] = data
                yield index, target.path, data

        inflight: dict[int, bytes] = {}
        real_of = {index: target.real for index, target in (*candidates, *later)}

        def migrated(index: int, outcome: _Outcome) -> None:
            nonlocal write
            entry, data = entries[index], inflight.pop(index)
            _apply(entry, outcome)
            if entry.status == "changed":
                new = outcome.new_bytes or b""
                real = real_of[index]
                if mode == "diff":
                    entry.diff = unified_diff(entry.path, data, new)
                elif mode == "write" and real in dirty:
                    report.refused_dirty[entry.path] = dirty[real]
                    entry.status = "failed"
                    entry.errors.append(MigrateError("dirty", f"uncommitted changes ({dirty[real]}); nothing was written"))
                    write = False  # the guard refuses the whole run: nothing is written from here on
                elif write:
                    _write(entry, real, data, new, force_read_only)
            _done(entry, on_file)

        for index, outcome in executor.run(tasks(candidates)):
            migrated(index, outcome)
        needs = tuple(sorted({*options.project_needs, *(n for index, _ in candidates for n in entries[index].needs)}))
        if needs:  # the dirty manifests of the first pass, unchanged there, may change now
            later += [c for c in candidates if entries[c[0]].kind in _MANIFEST_KINDS and entries[c[0]].status
                      == "unchanged"]
        if later:
            code_needs = [(e.path, e.needs) for e in entries if e.kind in ("python", "notebook")]
            by_needs: dict[tuple[str, ...], list] = {}
            for c in later:
                by_needs.setdefault(_scoped_needs(entries[c[0]].path, code_needs, options.project_needs, needs),
                                    []).append(c)
            for scoped, group in by_needs.items():
                second = _Serial(replace(options, project_needs=scoped), rules, verify_idempotent, time_budget)
                try:
                    for index, outcome in second.run(tasks(group)):
                        migrated(index, outcome)
                finally:
                    second.close()
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        report.interrupted = signal.Signals(signum).name
        if executor is not None:
            executor.close()
        raise Interrupted(signum, report) from None
    finally:
        if executor is not None:
            executor.close()
    return report


_MANIFEST_KINDS = ("manifest", "python+manifest")


def _scoped_needs(manifest: str, code_needs: list[tuple[str, Sequence[str]]], given: Sequence[str],
                  everything: tuple[str, ...]) -> tuple[str, ...]:
    """What the code a manifest installs needs: the needs of the migrated files under the manifest's folder (a
    repository of several projects, mesolitica/malaya's `session/<model>/requirements.txt`: each gets `trl-compat`
    only where its own code imports `compat`); the whole run's where no migrated code file lives under that folder
    (`requirements/train.txt`, a manifest kept apart from the code). The run's own `project_needs` always count."""
    folder = posixpath.dirname(manifest.replace("\\", "/"))
    prefix = f"{folder}/" if folder else ""
    inside = [needs for path, needs in code_needs if path.replace("\\", "/").startswith(prefix)]
    if not inside and prefix:
        return everything
    return tuple(sorted({*given, *(n for needs in inside for n in needs)}))


def _done(entry: FileEntry, on_file: Callable[[FileEntry], None] | None) -> None:
    if on_file:
        on_file(entry)


def _write(entry: FileEntry, real: str, old: bytes, new: bytes, force_read_only: bool) -> None:
    with interrupts.critical():  # an interrupt waits until the entry says what happened to the file
        try:
            atomic_write(real, old, new, force_read_only=force_read_only)
        except _ChangedOnDisk as exc:
            entry.status = "failed"
            entry.errors.append(MigrateError("changed-on-disk", str(exc)))
        except _Refused as exc:
            entry.status = "failed"
            entry.errors.append(MigrateError(exc.kind, str(exc)))  # type: ignore[arg-type]
        except OSError as exc:
            entry.status = "failed"
            entry.errors.append(MigrateError("write", exc.strerror or str(exc)))
        else:
            entry.written = True


def _decide_jobs(jobs: int | None, n_candidates: int) -> int:
    if jobs is not None:
        return max(1, min(jobs, n_candidates))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, n_candidates // FILES_PER_WORKER))


@dataclass
class _Outcome:
    new_bytes: bytes | None = None  # None: unchanged or failed
    encoding: str | None = None
    parsed: bool = False
    rules_applied: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[MigrateError] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)


#: a relative import: the module is part of a package, never run as a script
_RELATIVE_IMPORT = re.compile(r"^[ \t]*from[ \t]+\.", re.MULTILINE)


def vendored_trl(path: str, text: str | None = None) -> str | None:
    """The `trl` a Python file imports when its folder is the one on `sys.path` (run as a script, `sys.path[0]` is
    the file's folder): a repository's own copy (`trl/__init__.py` or `trl.py` next to the file), or None for the
    installed TRL. A module of a folder without `__init__.py` that imports relatively (`text`, its source) is never
    run as a script: it is imported from the scripts of the folder above, whose `trl` is looked up there
    (ErxinYu/PopALM's `chatGLM_local/modeling_chatglm.py`, beside the root scripts' edited `trl/`). A regular
    package's module (an `__init__.py`) may be installed and imported from anywhere: only its own folder counts.

    A file that is itself `trl.py` (a package's `pkg/trl.py` wrapping TRL's trainers) is not a copy of TRL: run as a
    script its `from trl import X` would import the file itself, half initialised, and fail, so the only `trl` it can
    work with is the installed one (imported as `pkg.trl`, its absolute `import trl` is the installed TRL)."""
    here = os.path.abspath(path)
    folder = os.path.dirname(here)
    folders = [folder]
    if text is not None and _RELATIVE_IMPORT.search(text) and not os.path.isfile(os.path.join(folder, "__init__.py")):
        folders.append(os.path.dirname(folder))
    for place in folders:
        for candidate in (os.path.join(place, "trl", "__init__.py"), os.path.join(place, "trl.py")):
            if os.path.isfile(candidate) and candidate != here:
                return candidate
    return None


def _process(path: str, data: bytes, options: Options, rules: Sequence[Migration], verify: bool) -> _Outcome:
    """Decode, migrate, encode one file."""
    kind = file_kind(path, rules)
    vendored = None
    if kind.startswith("python") or kind == "notebook":
        vendored = vendored_trl(path, data.decode("utf-8", "replace") if kind.startswith("python") else None)
    if vendored is not None:  # its `trl` is the repository's own copy, not the TRL the rules know: left alone
        return _Outcome(parsed=False, findings=[Finding(
            "vendored-trl", f"left alone: `trl` here is the repository's own copy ({os.path.relpath(vendored)}), "
            "not the installed TRL", 1, 1, "", "info", False)])
    try:
        decoded: Decoded = (decode_python(data) if kind.startswith("python") else decode_manifest(data)
                            if kind == "manifest" else decode_utf8(data))
    except DecodeError as exc:
        return _Outcome(errors=[MigrateError("decode", str(exc))])
    if kind.startswith("python"):
        # its `trl` is a copy on a folder it puts on sys.path, or one above it that defines every name it imports
        own = resolution.vendored_by_sys_path(path, decoded.text) or resolution.vendored_above(path, decoded.text) \
            or resolution.library_copy(path, decoded.text)  # or a copy of transformers' own code
        if own is not None:  # left alone, as above
            return _Outcome(encoding=decoded.label, parsed=False, findings=[own])
    result = migrate_source(decoded.text, options=options, rules=rules, path=path, verify_idempotent=verify)
    outcome = _Outcome(
        encoding=decoded.label,
        parsed=result.parsed,
        rules_applied=result.rules_applied,
        findings=result.findings,
        errors=result.errors,
        needs=result.needs,
    )
    if kind.startswith("python") and result.parsed and result.ok:
        outcome.findings = [*outcome.findings, *resolution.notes(path, decoded.text)]
    if result.changed:
        try:
            outcome.new_bytes = decoded.encode(result.text)
        except UnicodeEncodeError as exc:
            outcome.errors.append(MigrateError("encode", f"the new text does not fit {decoded.encoding}: {exc.reason}"))
    return outcome


class _TooSlow(Exception):
    pass


def _too_slow(budget: float) -> _Outcome:
    return _Outcome(parsed=True, errors=[MigrateError(
        "too-slow", f"skipped: too slow (over the budget of {budget:g} s per file; --time-budget SECONDS to change "
                    "it); file left as is")])


def _process_deep(path: str, data: bytes, options: Options, rules: Sequence[Migration], verify: bool,
                  budget: float | None) -> _Outcome:
    """`_process` in a thread with a large stack and a raised recursion limit (see DEEP_STACK_BYTES).

    With a `budget`, a file still running after that many seconds gets `_TooSlow` raised inside its thread and is
    reported too slow (work inside libcst's native parser cannot be interrupted: that thread is abandoned, and a
    pool worker is killed instead by its parent). The calling thread waits in short steps, so a signal handler in
    the main thread runs at once.
    """
    box: list[_Outcome] = []

    def work() -> None:
        try:
            with depth.raised(DEEP_RECURSION_LIMIT):
                box.append(_process(path, data, options, rules, verify))
        except _TooSlow:
            pass
        except MemoryError:
            box.append(_Outcome(parsed=True, errors=[MigrateError("too-large", "out of memory on this file; "
                                                                  "file left as is")]))

    previous = threading.stack_size()
    try:
        threading.stack_size(DEEP_STACK_BYTES)
        thread = threading.Thread(target=work, name="trl-compat-file", daemon=True)
        thread.start()
    except (RuntimeError, ValueError, MemoryError):  # no room for a large stack here: run at the normal depth
        work()
        return box[0] if box else _too_slow(budget or 0)
    finally:
        threading.stack_size(previous)
    deadline = None if budget is None else time.monotonic() + budget
    try:
        while thread.is_alive():
            step = 0.05 if deadline is None else max(0.0, min(0.05, deadline - time.monotonic()))
            thread.join(step)
            if deadline is not None and time.monotonic() >= deadline and thread.is_alive():
                _raise_in(thread, _TooSlow)
                thread.join(1.0)
                return _too_slow(budget or 0)
    except BaseException:  # an interrupt: stop the file's work where it is
        _raise_in(thread, _TooSlow)
        raise
    return box[0]


def _raise_in(thread: threading.Thread, exc_type: type[BaseException]) -> None:
    if thread.ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exc_type))


class _Serial:
    """Every file in this process, one at a time."""

    def __init__(self, options: Options, rules: Sequence[Migration], verify: bool, budget: float) -> None:
        self.args = (options, rules, verify, budget)

    def run(self, tasks: Iterable[tuple[int, str, bytes]]) -> Iterator[tuple[int, _Outcome]]:
        options, rules, verify, budget = self.args
        for index, path, data in tasks:
            yield index, _process_deep(path, data, options, rules, verify, budget)

    def close(self) -> None:
        pass


class _Worker:
    def __init__(self, ctx: multiprocessing.context.BaseContext, state: tuple) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, os.getpid(), state), daemon=True)
        self.process.start()
        child.close()
        interrupts.STATE.children.add(self.process.pid)
        self.task: tuple[int, float] | None = None  # (index, deadline) while busy

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.join(2)
        with contextlib.suppress(Exception):
            self.conn.close()
        interrupts.STATE.children.discard(self.process.pid)


def _worker_main(conn: multiprocessing.connection.Connection, parent: int, state: tuple) -> None:
    interrupts.tie_to_parent(parent)
    options, rules, verify = state
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        if task is None:
            os._exit(0)
        path, data = task
        try:
            outcome = _process_deep(path, data, options, rules, verify, None)
        except Exception as exc:  # pragma: no cover - _process reports its own errors
            outcome = _Outcome(errors=[MigrateError("parse", f"{type(exc).__name__}: {exc}")])
        conn.send(outcome)


class _Pool:
    """Worker processes, each fed one file at a time through its own pipe.

    A worker that dies (a crash inside a native parser) or overruns the time budget is killed and replaced: only its
    file fails. Workers ignore Ctrl-C and die with this process (`interrupts.tie_to_parent`).
    """

    def __init__(self, n: int, options: Options, rules: Sequence[Migration], verify: bool, budget: float) -> None:
        self.ctx = _pool_context()
        self.state = (options, rules, verify)
        self.budget = budget
        self.workers = [_Worker(self.ctx, self.state) for _ in range(n)]

    def run(self, tasks: Iterable[tuple[int, str, bytes]]) -> Iterator[tuple[int, _Outcome]]:
        source = iter(tasks)
        more = True
        while True:
            for w in self.workers:
                if w.task is None and more:
                    task = next(source, None)
                    if task is None:
                        more = False
                        break
                    index, path, data = task
                    w.task = (index, time.monotonic() + self.budget)
                    try:
                        w.conn.send((path, data))
                    except OSError:
                        pass  # a dead worker: found below
            busy = [w for w in self.workers if w.task is not None]
            if not busy:
                if not more:
                    return
                continue
            now = time.monotonic()
            timeout = max(0.0, min(min(w.task[1] for w in busy) - now, 0.2))  # type: ignore[index]
            ready = set(multiprocessing.connection.wait([w.conn for w in busy], timeout))
            for w in busy:
                assert w.task is not None
                index, deadline = w.task
                if w.conn in ready:
                    try:
                        outcome = w.conn.recv()
                    except (EOFError, OSError):
                        outcome = self._died(w)
                    else:
                        w.task = None
                        yield index, outcome
                        continue
                elif time.monotonic() >= deadline:
                    outcome = _too_slow(self.budget)
                else:
                    continue
                self._replace(w)
                yield index, outcome

    def _died(self, w: _Worker) -> _Outcome:
        w.process.join(1)
        code = w.process.exitcode
        how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
        return _Outcome(parsed=True, errors=[MigrateError(
            "parse", f"the parser crashed on this file (worker process ended by {how}); file left as is; "
                     "the other files are not affected")])

    def _replace(self, w: _Worker) -> None:
        w.kill()
        self.workers[self.workers.index(w)] = _Worker(self.ctx, self.state)

    def close(self) -> None:
        workers, self.workers = self.workers, []
        for w in workers:
            with contextlib.suppress(Exception):
                w.process.kill()
        for w in workers:
            w.kill()


def _pool_context() -> multiprocessing.context.BaseContext:
    """Fork where there is fork: workers inherit the imported rules (and rules made in-process, e.g. by tests)
    without pickling them; elsewhere the platform default, which pickles the initializer's arguments."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _apply(entry: FileEntry, outcome: _Outcome) -> None:
    entry.parsed, entry.encoding = outcome.parsed, outcome.encoding
    entry.rules_applied, entry.findings, entry.errors = outcome.rules_applied, outcome.findings, outcome.errors
    entry.needs = outcome.needs
    if outcome.errors:
        entry.status = "failed"
    elif outcome.new_bytes is not None:
        entry.status = "changed"


class _ChangedOnDisk(Exception):
    pass


class _Refused(Exception):
    """A write refused on purpose (a read-only file, one whose owner could not be kept)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@contextlib.contextmanager
def _folder_lock(folder: str) -> Iterator[None]:
    """An exclusive lock on `folder` (flock on its descriptor) while a file in it is compared and replaced, so that
    two runs over the same tree cannot both pass the "still the file that was read" check and lose one rewrite: the
    second one waits, then sees the first one's content and refuses."""
    if fcntl is None:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def atomic_write(path: str, expected: bytes, new: bytes, *, force_read_only: bool = False) -> None:
    """Replace `path` by `new` atomically, keeping its mode, owner and group; refuse if it no longer holds `expected`.

    The new content goes to a temporary file in the same folder (same file system, so `os.replace` is atomic), is
    flushed and fsynced, gets the original's permission bits and owner, and replaces the original in one rename: at any
    moment the path holds either the whole old or the whole new content. The compare and the replace happen under a
    lock on the folder (a compare-and-swap between concurrent runs). A read-only file (no write bit) is refused unless
    `force_read_only`; so is a file whose owner or group the new file could not get. An interrupt during the write is
    held until it finished (`interrupts.critical`). `path` must be the resolved file (not a link).
    """
    folder = os.path.dirname(path) or "."
    with interrupts.critical(), _folder_lock(folder):
        st = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            raise _Refused("not-regular", "no longer a regular file; not written")
        if not force_read_only and not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            raise _Refused("read-only", f"the file is read-only (mode {stat.S_IMODE(st.st_mode):04o}); not written "
                                        "(make it writable, or pass --force-read-only)")
        with open(path, "rb") as fh:
            if fh.read(len(expected) + 1) != expected:
                raise _ChangedOnDisk("the file changed on disk while it was being migrated (another run or an "
                                     "editor?); not written; run again")
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".trl-compat.tmp", dir=folder)
        interrupts.STATE.temp_files.add(tmp)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(new)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            with contextlib.suppress(PermissionError, AttributeError):
                os.chown(tmp, st.st_uid, st.st_gid)
            got = os.stat(tmp)
            if (got.st_uid, got.st_gid) != (st.st_uid, st.st_gid):
                raise _Refused("write", f"the file belongs to uid {st.st_uid} / gid {st.st_gid} and a rewritten "
                                        f"copy would belong to uid {got.st_uid} / gid {got.st_gid}; not written "
                                        "(run as its owner)")
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        finally:
            interrupts.STATE.temp_files.discard(tmp)


def unified_diff(path: str, old: bytes, new: bytes) -> bytes:
    """A unified diff of the bytes that `git apply` (and `patch -p1`) accept, run from the current folder.

    Computed on the raw bytes, so the file's encoding, BOM and line endings are exactly what git will compare, and a
    missing final newline gets git's `\\ No newline at end of file` line.
    """
    name = path.replace(os.sep, "/")
    if name.startswith("./"):
        name = name[2:]
    raw = os.fsencode(name)  # a file name in any bytes, as git writes it unquoted
    out = [b"diff --git a/" + raw + b" b/" + raw + b"\n"]
    lines = difflib.diff_bytes(
        difflib.unified_diff, _split_lf(old), _split_lf(new), b"a/" + raw, b"b/" + raw, lineterm=b"\n"
    )
    for n, line in enumerate(lines):
        if n >= 2 and line[:1] in (b" ", b"-", b"+") and not line.endswith(b"\n"):
            line += b"\n\\ No newline at end of file\n"
        out.append(line)
    return b"".join(out)


def _split_lf(data: bytes) -> list[bytes]:
    """Lines split on LF only (a CR belongs to its line, as for git)."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
