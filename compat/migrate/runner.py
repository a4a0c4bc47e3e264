"""Files in, files out: walk, read, prefilter, migrate (serially or in a process pool), guard, write, report.

Order of work, and why:
1. walk (`walk.py`) and read each file's bytes once;
2. prefilter on the bytes: a file that contains no trigger of any selected rule (and is not a manifest a rule matches)
   is done: never decoded, never parsed, never written. A repo without TRL code costs about one grep;
3. the remaining candidates are decoded, migrated (`engine.migrate_source`) and encoded back; in a process pool only
   when there are enough of them to pay for it (`-j` overrides);
4. write mode: the dirty-tree guard (`gitguard.py`) over the files about to change, then one atomic replace per
   changed file (a temporary file in the same folder with the original's mode, `os.replace`), after checking that the
   file on disk is still the one that was read. Unchanged files are never opened for writing.
"""

from __future__ import annotations

import difflib
import multiprocessing
import multiprocessing.context
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Literal

from migrations import select
from migrations.base import Finding, ManifestMigration, Migration, Options, PythonMigration, gates, gates_match

from . import gitguard
from .engine import MigrateError, file_kind, migrate_source
from .textio import DecodeError, Decoded, decode_python, decode_utf8
from .walk import SOURCE_SUFFIXES, Target, iter_targets

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
        for r in self.manifests:
            if r.matches(name) and (not r.triggers or any(t.encode() in data for t in r.triggers)):
                return True
        if not name.endswith(SOURCE_SUFFIXES):
            return False
        return gates_match(self.groups, data)


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
) -> Report:
    """Migrate every file under `paths` and return the report (see the module docstring for the steps).

    `rules` defaults to `migrations.select(options, only, skip)`. `jobs`: worker processes, None = decide from the
    number of candidate files. `on_start(n_candidates)` and `on_file(entry)` drive a progress display.
    """
    options = options or Options()
    rules = tuple(select(options, only, skip) if rules is None else rules)
    report = Report(mode, str(options.target_trl), [r.id for r in rules])
    prefilter = _Prefilter(rules)

    entries: list[FileEntry] = []
    candidates: list[tuple[int, Target, bytes]] = []

    def unreadable(path: str, reason: str) -> None:
        entries.append(FileEntry(path, status="failed", errors=[MigrateError("read", reason)]))

    for target in iter_targets(paths, exclude=exclude, wanted=prefilter.wants, on_error=unreadable):
        entry = FileEntry(target.path, kind=file_kind(target.path, rules))
        entries.append(entry)
        try:
            with open(target.real, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            entry.status, entry.errors = "failed", [MigrateError("read", exc.strerror or str(exc))]
            continue
        if prefilter.candidate(target.path, data):
            candidates.append((len(entries) - 1, target, data))
    report.files = entries

    if on_start:
        on_start(len(candidates))
    # the code first, the manifests after it: a manifest learns what the rewritten code needs (Options.project_needs)
    manifests = [c for c in candidates if entries[c[0]].kind in ("manifest", "python+manifest")]
    candidates = [c for c in candidates if entries[c[0]].kind not in ("manifest", "python+manifest")]
    workers = _decide_jobs(jobs, len(candidates))
    outcomes: dict[int, _Outcome] = {}
    if workers <= 1:
        for index, target, data in candidates:
            outcomes[index] = _process(target.path, data, options, rules, verify_idempotent)
            _apply(entries[index], outcomes[index], on_file)
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context(), initializer=_init_worker,
                                 initargs=(options, rules, verify_idempotent)) as pool:
            futures = {pool.submit(_process_in_worker, target.path, data): index for index, target, data in candidates}
            for future in as_completed(futures):
                index = futures[future]
                try:
                    outcomes[index] = future.result()
                except Exception as exc:  # a worker died (e.g. recursion in a pathological file)
                    outcomes[index] = _Outcome(errors=[MigrateError("parse", f"worker failed: {exc!r}")])
                _apply(entries[index], outcomes[index], on_file)

    needs = tuple(sorted({n for index, _, _ in candidates for n in outcomes[index].needs}))
    manifest_options = replace(options, project_needs=tuple(sorted({*options.project_needs, *needs})))
    for index, target, data in manifests:
        outcomes[index] = _process(target.path, data, manifest_options, rules, verify_idempotent)
        _apply(entries[index], outcomes[index], on_file)
    candidates = sorted(candidates + manifests, key=lambda c: c[0])

    changed = [(i, t, d) for i, t, d in candidates if entries[i].status == "changed"]
    if mode == "diff":
        for index, target, data in changed:
            entries[index].diff = unified_diff(target.path, data, outcomes[index].new_bytes or b"")
    elif mode == "write" and changed:
        if not allow_dirty:
            dirty = gitguard.dirty_files(t.real for _, t, _ in changed)
            if dirty:
                report.refused_dirty = {t.path: dirty[t.real] for _, t, _ in changed if t.real in dirty}
                for index, target, _ in changed:
                    if target.real in dirty:
                        entries[index].errors.append(
                            MigrateError("dirty", f"uncommitted changes ({dirty[target.real]}); nothing was written")
                        )
                        entries[index].status = "failed"
                return report
        for index, target, data in changed:
            try:
                atomic_write(target.real, data, outcomes[index].new_bytes or b"")
            except _ChangedOnDisk as exc:
                entries[index].status = "failed"
                entries[index].errors.append(MigrateError("changed-on-disk", str(exc)))
            except OSError as exc:
                entries[index].status = "failed"
                entries[index].errors.append(MigrateError("write", exc.strerror or str(exc)))
            else:
                entries[index].written = True
    return report


def _decide_jobs(jobs: int | None, n_candidates: int) -> int:
    if jobs is not None:
        return max(1, min(jobs, n_candidates))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, n_candidates // FILES_PER_WORKER))


def _pool_context() -> multiprocessing.context.BaseContext:
    """Fork where there is fork: workers inherit the imported rules (and rules made in-process, e.g. by tests)
    without pickling them; elsewhere the platform default, which pickles the initializer's arguments."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


_WORKER_STATE: tuple[Options, Sequence[Migration], bool] | None = None


def _init_worker(options: Options, rules: Sequence[Migration], verify: bool) -> None:
    global _WORKER_STATE
    _WORKER_STATE = (options, rules, verify)


def _process_in_worker(path: str, data: bytes) -> _Outcome:
    assert _WORKER_STATE is not None, "worker not initialised"
    options, rules, verify = _WORKER_STATE
    return _process(path, data, options, rules, verify)


@dataclass
class _Outcome:
    new_bytes: bytes | None = None  # None: unchanged or failed
    encoding: str | None = None
    parsed: bool = False
    rules_applied: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[MigrateError] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)


def _process(path: str, data: bytes, options: Options, rules: Sequence[Migration], verify: bool) -> _Outcome:
    """Decode, migrate, encode one file (runs in a worker process when there is a pool)."""
    kind = file_kind(path, rules)
    try:
        decoded: Decoded = decode_python(data) if kind.startswith("python") else decode_utf8(data)
    except DecodeError as exc:
        return _Outcome(errors=[MigrateError("decode", str(exc))])
    result = migrate_source(decoded.text, options=options, rules=rules, path=path, verify_idempotent=verify)
    outcome = _Outcome(
        encoding=decoded.encoding + ("-sig" if decoded.bom else ""),
        parsed=result.parsed,
        rules_applied=result.rules_applied,
        findings=result.findings,
        errors=result.errors,
        needs=result.needs,
    )
    if result.changed:
        try:
            outcome.new_bytes = decoded.encode(result.text)
        except UnicodeEncodeError as exc:
            outcome.errors.append(MigrateError("encode", f"the new text does not fit {decoded.encoding}: {exc.reason}"))
    return outcome


def _apply(entry: FileEntry, outcome: _Outcome, on_file: Callable[[FileEntry], None] | None) -> None:
    entry.parsed, entry.encoding = outcome.parsed, outcome.encoding
    entry.rules_applied, entry.findings, entry.errors = outcome.rules_applied, outcome.findings, outcome.errors
    entry.needs = outcome.needs
    if outcome.errors:
        entry.status = "failed"
    elif outcome.new_bytes is not None:
        entry.status = "changed"
    if on_file:
        on_file(entry)


class _ChangedOnDisk(Exception):
    pass


def atomic_write(path: str, expected: bytes, new: bytes) -> None:
    """Replace `path` by `new` atomically, keeping its mode; refuse if it no longer holds `expected`.

    The new content goes to a temporary file in the same folder (same file system, so `os.replace` is atomic), is
    flushed and fsynced, gets the original's permission bits, and replaces the original in one rename: at any moment
    the path holds either the whole old or the whole new content. `path` must be the resolved file (not a link).
    """
    st = os.stat(path)
    with open(path, "rb") as fh:
        if fh.read() != expected:
            raise _ChangedOnDisk("the file changed on disk while it was being migrated; run again")
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".trl-compat.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(new)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        try:
            os.chown(tmp, st.st_uid, st.st_gid)
        except (PermissionError, AttributeError):
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def unified_diff(path: str, old: bytes, new: bytes) -> bytes:
    """A unified diff of the bytes that `git apply` (and `patch -p1`) accept, run from the current folder.

    Computed on the raw bytes, so the file's encoding, BOM and line endings are exactly what git will compare, and a
    missing final newline gets git's `\\ No newline at end of file` line.
    """
    name = path.replace(os.sep, "/")
    if name.startswith("./"):
        name = name[2:]
    out = [f"diff --git a/{name} b/{name}\n".encode()]
    lines = difflib.diff_bytes(
        difflib.unified_diff, _split_lf(old), _split_lf(new), f"a/{name}".encode(), f"b/{name}".encode(), lineterm=b"\n"
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
