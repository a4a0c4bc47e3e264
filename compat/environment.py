"""Hold the installed distributions' versions against :mod:`compat.floors` and return a :class:`Report`.

Versions come from distribution metadata only (``*.dist-info/METADATA``, ``*.egg-info/PKG-INFO``); no checked package
is ever imported, so ``import compat`` costs milliseconds, not the seconds of ``import torch``/``transformers``.

:class:`InstalledVersions` resolves a name exactly as ``importlib.metadata.version`` does (the first matching
distribution on ``sys.path`` wins, names compared after PEP 503 normalisation), but reads the one ``Version:`` header
itself: importing ``importlib.metadata`` (email, zipfile, csv, ...) alone costs ~60 ms on a small CI machine, twice the
import budget of this package. Wherever the fast scan could differ from the standard library (a zip file on the path, a
third-party distribution finder on ``sys.meta_path``) it hands over to ``importlib.metadata`` itself. A test holds the
two against each other for every distribution installed in the test environment.

Version semantics (every comparison is ``SpecifierSet.contains(v, prereleases=True)``, so the verdict does not change
with the installed ``packaging``, whose 26.0 release changed the default; plain release versions take an equivalent
fast path that never imports packaging, see :func:`fast_contains`):

* local builds (``2.13.0+cpu``, ``0.28.0+cu129``) pass every specifier their public version passes;
* a pre-release or dev build *of the floor release itself* (``0.18.6.dev0`` or ``0.18.6rc1`` against ``>=0.18.6``) is a
  **warning**, not an error: PEP 440 orders it before the release, but it is what a source build from the main branch
  reports and it usually carries the change the floor is about (the convention of transformers/peft/TRL, which compare
  against ``"X.dev0"``). A pre-release of anything older is an error like any other too-old version;
* an unparseable version (``N/A``, vendor strings) is a warning, never a crash;
* a vLLM above the supported window is a warning (TRL itself only warns there).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Sequence
from collections import namedtuple

from compat import floors as _floors
from compat.floors import Floor, Profile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms); type checkers treat it as True
if TYPE_CHECKING:
    from packaging.version import Version

OK = "ok"
ABSENT = "absent"  # an optional package that is not installed: fine
WARNING = "warning"
ERROR = "error"

_UPPER_OPERATORS = ("<", "<=")


def normalize_name(name: str) -> str:
    """PEP 503 normalisation with underscores, as importlib.metadata matches ``*.dist-info`` folder names."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _read_version(info: str) -> str | None:
    """The first ``Version:`` header of a dist-info/egg-info folder (or egg-info file); None when it has none."""
    candidates = [os.path.join(info, "METADATA"), os.path.join(info, "PKG-INFO")] if os.path.isdir(info) else [info]
    for candidate in candidates:
        try:
            # errors="replace": a stray latin-1 byte (old tools wrote such files) must not break `import compat`; a
            # Version header it garbles reads as an unparseable version (a warning of the floor check)
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if not line.strip():
                        break  # end of the header block
                    key, sep, value = line.partition(":")
                    if sep and key.strip().lower() == "version":
                        return value.strip()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            continue
        return None  # the file exists but carries no Version header
    return None


class InstalledVersions:
    """Installed versions on a search path (default ``sys.path``), looked up the way importlib.metadata does.

    ``path`` lets tests describe a whole environment with fake dist-info folders (metadata only) without touching
    ``sys.path``. One instance caches its directory listings; make a new one to see a changed environment.
    """

    def __init__(self, path: Sequence[str] | None = None) -> None:
        self.path = list(sys.path if path is None else path)
        self._listings: dict[str, tuple[dict[str, list[str]], dict[str, list[str]]]] = {}
        self._cache: dict[str, str | None] = {}
        self.uses_stdlib = self._needs_stdlib()

    def _needs_stdlib(self) -> bool:
        """True where the fast scan could disagree with importlib.metadata: zip entries or foreign finders."""
        from importlib.machinery import PathFinder

        for finder in sys.meta_path:
            if finder is not PathFinder and hasattr(finder, "find_distributions"):
                return True
        return any(os.path.isfile(entry) for entry in self.path if entry)

    def _listing(self, root: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        if root not in self._listings:
            infos: dict[str, list[str]] = {}
            eggs: dict[str, list[str]] = {}
            try:
                children = os.listdir(root or ".")
            except OSError:
                children = []
            base = os.path.basename(root).lower()
            for child in children:
                low = child.lower()
                if low.endswith((".dist-info", ".egg-info")):
                    name = normalize_name(low.rpartition(".")[0].partition("-")[0])
                    infos.setdefault(name, []).append(os.path.join(root, child))
                elif base.endswith(".egg") and low == "egg-info":
                    name = base.rpartition(".")[0].partition("-")[0].replace("-", "_")
                    eggs.setdefault(name, []).append(os.path.join(root, child))
            self._listings[root] = (infos, eggs)
        return self._listings[root]

    def get(self, name: str) -> str | None:
        """The installed version string of distribution ``name``; None when it is not installed.

        An installed distribution whose metadata has no version gives ``""`` (checked as unparseable).
        """
        if name not in self._cache:
            self._cache[name] = self._stdlib_version(name) if self.uses_stdlib else self._scan_version(name)
        return self._cache[name]

    def _scan_version(self, name: str) -> str | None:
        normalized = normalize_name(name)
        legacy = name.lower().replace("-", "_")
        for root in self.path:
            infos, eggs = self._listing(root)
            for info in infos.get(normalized, []) + eggs.get(legacy, []):
                version = _read_version(info)
                return "" if version is None else version
        return None

    def _stdlib_version(self, name: str) -> str | None:
        import importlib.metadata

        dist = next(iter(importlib.metadata.Distribution.discover(name=name, path=self.path)), None)
        if dist is None:
            return None
        try:
            return dist.version or ""
        except (UnicodeDecodeError, ValueError):  # broken metadata: an unparseable version, as above
            return ""


class Finding(namedtuple("Finding", "package installed required status detail why")):
    """The verdict on one floor.

    Fields (all str; ``installed`` is None when the package is absent): ``package``, ``installed``, ``required`` (the
    specifier), ``status`` (``ok``, ``absent``, ``warning``, ``error``), ``detail`` (what exactly was found), ``why``
    (why the floor exists).
    """

    __slots__ = ()

    def as_dict(self) -> dict[str, str | None]:
        return dict(self._asdict())


class Report(namedtuple("Report", "profile trl_version python_version findings notes fix_command")):
    """Every finding for the detected TRL line; :attr:`errors` non-empty means the environment violates the floors.

    Fields: ``profile`` (str, the TRL line whose floors were applied), ``trl_version`` (str | None),
    ``python_version`` (str), ``findings`` (tuple[Finding, ...]), ``notes`` (tuple[str, ...], how the line was
    chosen), ``fix_command`` (str | None, one ``pip install`` line fixing every error).
    """

    __slots__ = ()

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.status == ERROR)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.status == WARNING)

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "profile": self.profile,
            "trl_version": self.trl_version,
            "python_version": self.python_version,
            "findings": [f.as_dict() for f in self.findings],
            "notes": list(self.notes),
            "fix_command": self.fix_command,
        }


# Fast path. Most installed versions are plain releases ("0.21.2", optionally with a local label such as
# "2.13.0+cpu") and most floors plain comparisons (">=0.13.0", "<=0.31.0", "!=5.1.0"). For exactly that subset PEP 440
# ordering is the zero-padded comparison of the release numbers (the local label is ignored by every such clause, and
# the exclusive-ordering rules of "<" and ">" concern pre-, post- and local releases of the bound only), so the common
# case never imports packaging (~20 ms of start-up, most of this package's import budget). Anything else (pre/dev/post
# releases, epochs, "~=", wildcards, unparseable strings) goes to packaging's SpecifierSet.contains(prereleases=True).
# tests/compat/test_versions.py holds the fast path against packaging on a grid of versions and specifiers.
_PLAIN_VERSION = re.compile(r"(\d+(?:\.\d+)*)(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?", re.IGNORECASE)
_PLAIN_CLAUSE = re.compile(r"\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+)*)\s*")
_COMPARE = {
    ">=": lambda c: c >= 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    "<": lambda c: c < 0,
    "==": lambda c: c == 0,
    "!=": lambda c: c != 0,
}


def plain_release(version: str) -> tuple[int, ...] | None:
    """The release numbers of a plain version ("2.13.0+cpu" -> (2, 13, 0)); None for anything else."""
    match = _PLAIN_VERSION.fullmatch(version)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def _compare(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return (a > b) - (a < b)


def fast_contains(specifier: str, version: str) -> bool | None:
    """``SpecifierSet(specifier).contains(version, prereleases=True)`` for plain inputs; None when not plain."""
    release = plain_release(version)
    if release is None:
        return None
    for clause in filter(None, specifier.split(",")):
        match = _PLAIN_CLAUSE.fullmatch(clause)
        if match is None:
            return None
        bound = tuple(int(part) for part in match.group(2).split("."))
        if not _COMPARE[match.group(1)](_compare(release, bound)):
            return False
    return True


def contains(specifier: str, version: str) -> bool:
    """Whether ``version`` satisfies ``specifier``, pre-releases included; raises InvalidVersion if unparseable."""
    fast = fast_contains(specifier, version)
    if fast is not None:
        return fast
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(specifier).contains(_version(version), prereleases=True)


def _version(version: str) -> Version:  # packaging is imported lazily
    from packaging.version import Version

    return Version(version)


def _valid(version: str) -> bool:
    if plain_release(version) is not None:
        return True
    from packaging.version import InvalidVersion

    try:
        _version(version)
    except InvalidVersion:
        return False
    return True


def _line_of(version: str) -> tuple[int, int]:
    release = plain_release(version) or _version(version).release
    release = tuple(release) + (0, 0)
    return release[0], release[1]


def _line_name(line: tuple[int, int]) -> str:
    return f"{line[0]}.{line[1]}"


def select_profile(trl_version: str | None) -> tuple[Profile, tuple[str, ...]]:
    """The floors profile for an installed TRL version (None: not installed), with notes on how it was chosen."""
    newest = _floors.PROFILES[_floors.NEWEST_LINE]
    if trl_version is None:
        return newest, (
            f"no TRL installed: the packages present are held against the TRL {newest.line} floors and none is "
            "required (compat's migrator and reference_impl need no TRL)",
        )
    if not _valid(trl_version):
        return newest, (f"TRL's version {trl_version!r} cannot be parsed: checking against the TRL {newest.line} floors",)
    line = _line_name(_line_of(trl_version))
    if line in _floors.PROFILES:
        return _floors.PROFILES[line], ()
    if not contains(">=" + _floors.FIRST_SUPPORTED_TRL, trl_version):
        oldest = _floors.PROFILES[_floors.OLDEST_LINE]
        return oldest, (
            f"TRL {trl_version} is PPO-era (<= 1.12): migrate your code with `{_floors.MIGRATE_COMMAND}`, then "
            f"upgrade; the other packages are held against the TRL {oldest.line} floors",
        )
    return newest, (
        f"TRL {trl_version} is newer than the newest line trl-compat knows ({newest.line}): checking against the "
        f"TRL {newest.line} floors",
    )


def _judge(floor: Floor, installed: str | None, required: bool, trl_line_known: bool) -> Finding:
    def finding(status: str, detail: str) -> Finding:
        return Finding(floor.package, installed, floor.specifier or "any version", status, detail, floor.why)

    if installed is None:
        return finding(ERROR, "not installed, but required") if required else finding(ABSENT, "not installed (optional)")
    if not _valid(installed):
        return finding(WARNING, f"version {installed!r} cannot be parsed, so it cannot be checked")
    if contains(floor.specifier, installed):
        if floor.package == "trl" and not trl_line_known:
            return finding(WARNING, "newer than the newest TRL line trl-compat knows")
        return finding(OK, "satisfied")
    # Only violations get here: packaging is imported for the precise wording.
    from packaging.specifiers import SpecifierSet

    version = _version(installed)
    spec = SpecifierSet(floor.specifier)
    failing = [str(s) for s in spec if not s.contains(version, prereleases=True)]
    lower = SpecifierSet(",".join(str(s) for s in spec if s.operator not in _UPPER_OPERATORS))
    if floor.upper_bound_warns and lower.contains(version, prereleases=True):
        return finding(WARNING, f"above the supported window ({', '.join(failing)}): untested, not blocked")
    if version.is_prerelease and spec.contains(_version(version.base_version), prereleases=True):
        return finding(WARNING, f"a pre-release of {version.base_version}, which satisfies {floor.specifier}: accepted")
    return finding(ERROR, f"fails {', '.join(failing)}")


def _pip_command(profile_floors: Iterable[Floor], broken: Sequence[str], installed: InstalledVersions) -> str | None:
    """One ``pip install`` line that fixes every broken package (specifiers of all rows that apply, merged)."""
    if not broken:
        return None
    parts = []
    for package in broken:
        specs: list[str] = []
        for floor in profile_floors:
            if floor.package == package and floor.specifier:
                specs.extend(s for s in floor.specifier.split(",") if s not in specs)
        parts.append(f'"{package}{",".join(specs)}"' if specs else f'"{package}"')
    torch = installed.get("torch")
    if torch and _valid(torch) and "vllm" not in broken:
        # keep the installed torch: an unpinned resolve could replace a CPU wheel with a multi-GB CUDA build
        parts.append(f'"torch=={_version(torch).public}"')
    return "pip install " + " ".join(parts)


def check_environment(path: Sequence[str] | None = None, python_version: str | None = None) -> Report:
    """Hold the installed versions against the floors of the installed TRL's release line.

    ``path`` (default ``sys.path``) and ``python_version`` (default: the running interpreter) exist so tests can
    describe an environment with fake dist-info folders; only metadata is read, nothing is imported.
    """
    installed = InstalledVersions(path)
    python = python_version or "{}.{}.{}".format(*sys.version_info[:3])
    trl_version = installed.get("trl")
    profile, notes = select_profile(trl_version)
    trl_valid = trl_version is not None and _valid(trl_version)
    trl_line_known = not trl_valid or _line_name(_line_of(trl_version)) in _floors.PROFILES or not contains(
        ">=" + _floors.FIRST_SUPPORTED_TRL, trl_version
    )
    applied: list[Floor] = []
    findings: list[Finding] = []
    for floor in profile.floors:
        if floor.when_installed and installed.get(floor.when_installed) is None:
            continue
        if floor.trl_versions is not None and not (trl_valid and contains(floor.trl_versions, trl_version)):
            continue
        applied.append(floor)
        if floor.package == _floors.PYTHON:
            findings.append(_judge(floor, python, True, True))
            continue
        required = not floor.optional and trl_version is not None
        findings.append(_judge(floor, installed.get(floor.package), required, trl_line_known))
    broken = []
    for f in findings:
        if f.status == ERROR and f.package != _floors.PYTHON and f.package not in broken:
            broken.append(f.package)
    return Report(
        profile=profile.line,
        trl_version=trl_version,
        python_version=python,
        findings=tuple(findings),
        notes=notes,
        fix_command=_pip_command(applied, broken, installed),
    )
