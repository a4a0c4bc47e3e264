"""The TRL version a run migrates *to*, read from the repository's own pins when it has one.

Looked at: `requirements*.txt` (and `requirements/*.txt`), `pyproject.toml` (PEP 621 dependencies and extras, Poetry
dependencies), `setup.cfg` (`install_requires`, `extras_require`), `setup.py` (string literals that are requirements),
`environment.yml` (its pip list), in the given folder and every folder above it up to the git work tree's top.

A pin chooses the target only if it allows a TRL this tool knows how to migrate to (1.13 or newer): the target is
the newest version the pin allows among the known releases and the versions the pin names (`trl==1.14.2` -> 1.14.2,
`trl>=1.14,<1.16` -> 1.15.0, `trl>=1.14` -> 1.16.0). A pin of an old TRL (`trl==0.11`, `trl<1.0`) describes the code
to be migrated, the *source*, so it is not a target. With no such pin the target is the newest known release.
"""

from __future__ import annotations

import ast
import configparser
import glob
import os
import re
import stat
import tomllib
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from migrations.kinds import grammar

from .textio import manifest_text
from .walk import git_toplevel

KNOWN_RELEASES = tuple(Version(v) for v in ("1.13.0", "1.14.0", "1.15.0", "1.16.0"))
NEWEST = KNOWN_RELEASES[-1]
FLOOR = Version("1.13")
_POETRY_CARET = re.compile(r"^\^(\d+)(?:\.(\d+))?(?:\.(\d+))?$")


class UnsupportedTargetError(ValueError):
    """A requested target TRL outside the lines this tool migrates to (1.13 up to the newest known line)."""


def check_target(version: Version) -> Version:
    """`version` if it is a TRL line the rules know (1.13.0 up to the newest known line's patch releases), else
    `UnsupportedTargetError` saying what is supported: an older target is the PPO era this tool migrates *from*, a
    newer one has breaks no rule knows yet."""
    base = Version(version.base_version)
    newest_line = (NEWEST.major, NEWEST.minor)
    if base < FLOOR or (base.major, base.minor) > newest_line:
        raise UnsupportedTargetError(
            f"target TRL {version} is outside the supported range {FLOOR}.0 to {NEWEST.major}.{NEWEST.minor}.x: "
            + ("TRL <= 1.12 is what this tool migrates from (use `trl-compat check --target-trl` to check code "
               "against an old release)" if base < FLOOR else
               f"no rule knows the breaks after TRL {NEWEST.major}.{NEWEST.minor} yet (upgrade trl-compat)"))
    return version


@dataclass(frozen=True)
class TargetChoice:
    version: Version
    source: str  # "path: requirement" that chose it, or why the default was taken


def target_from_specifier(spec: SpecifierSet) -> Version | None:
    """Newest known-or-named TRL >= 1.13 the specifier allows; None when it allows none (an old pin)."""
    candidates = set(KNOWN_RELEASES)
    for s in spec:
        try:
            v = Version(s.version.rstrip(".*"))
        except InvalidVersion:
            continue
        if v >= FLOOR:
            candidates.add(v)
    allowed = [v for v in candidates if v >= FLOOR and spec.contains(v, prereleases=True)]
    return max(allowed) if allowed else None


def _poetry_spec(value: object) -> str | None:
    if isinstance(value, dict):
        value = value.get("version")
    if not isinstance(value, str):
        return None
    value = value.strip()
    m = _POETRY_CARET.match(value)
    if m:
        major, minor = int(m.group(1)), int(m.group(2) or 0)
        upper = f"{major + 1}.0" if major else f"0.{minor + 1}"
        return f">={value[1:]},<{upper}"
    if value.startswith("~") and not value.startswith("~="):
        parts = value[1:].split(".")
        upper = f"{parts[0]}.{int(parts[1]) + 1}" if len(parts) > 1 else f"{int(parts[0]) + 1}"
        return f">={value[1:]},<{upper}"
    return "" if value == "*" else value


def _requirement_lines(path: str, text: str, package: str = "trl") -> list[str]:
    name = os.path.basename(path)
    found: list[str] = []
    if name.endswith(".txt"):
        for line in text.splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith(("#", "-")):
                found.append(line)
    elif name == "pyproject.toml":
        data = tomllib.loads(text)
        project = data.get("project", {})
        found.extend(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            found.extend(extra)
        poetry = data.get("tool", {}).get("poetry", {})
        for table in [poetry.get("dependencies", {})] + [
            g.get("dependencies", {}) for g in poetry.get("group", {}).values()
        ]:
            if package in table:
                spec = _poetry_spec(table[package])
                if spec is not None:
                    found.append(f"{package}{spec}")
    elif name == "setup.cfg":
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        if parser.has_option("options", "install_requires"):
            found.extend(parser.get("options", "install_requires").splitlines())
        if parser.has_section("options.extras_require"):
            for _, value in parser.items("options.extras_require"):
                found.extend(value.splitlines())
    elif name == "setup.py":
        for node in ast.walk(grammar.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and package in node.value:
                found.append(node.value)
    elif name in ("environment.yml", "environment.yaml"):
        found.extend(m.group(1) for m in re.finditer(rf"^\s*-\s*({re.escape(package)}\b[^#\n]*)", text, re.M))
    return [line.strip() for line in found if isinstance(line, str) and line.strip()]


def trl_pins(folder: str) -> list[tuple[str, str]]:
    """(file, requirement text) for every `trl` requirement in the manifests of `folder` and the folders above it."""
    return package_pins(folder, "trl")


def run_pins(paths: list[str], package: str) -> list[tuple[str, str]]:
    """`package_pins` of the folder of each path of a run (each folder once, in order)."""
    pins: list[tuple[str, str]] = []
    seen: set[str] = set()
    for p in paths:
        folder = p if os.path.isdir(p) else (os.path.dirname(p) or ".")
        key = os.path.realpath(folder)
        if key not in seen:
            seen.add(key)
            pins.extend(package_pins(folder, package))
    return pins


def package_pins(folder: str, package: str) -> list[tuple[str, str]]:
    """(file, requirement text) for every `package` requirement in the manifests of `folder` and the folders above
    it (the files the module docstring lists)."""
    folders = []
    current = os.path.abspath(folder if os.path.isdir(folder) else os.path.dirname(folder) or ".")
    top = git_toplevel(current) or current
    while True:
        folders.append(current)
        if current == top or os.path.dirname(current) == current:
            break
        current = os.path.dirname(current)
    pins: list[tuple[str, str]] = []
    for f in folders:
        files = sorted(glob.glob(os.path.join(f, "requirements*.txt")) + glob.glob(os.path.join(f, "requirements", "*.txt")))
        files += [os.path.join(f, n) for n in ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml")]
        for path in files:
            if not os.path.isfile(path):
                continue
            try:
                with open(path, "rb") as fh:
                    lines = _requirement_lines(path, manifest_text(fh.read()), package)
            except (OSError, ValueError, SyntaxError, configparser.Error):
                continue
            for line in lines:
                try:
                    req = Requirement(line)
                except InvalidRequirement:
                    continue
                if canonicalize_name(req.name) == canonicalize_name(package):
                    pins.append((path, line))
    return pins


def detect_target(paths: list[str]) -> TargetChoice:
    """The target TRL for a run over `paths`: the newest a repo pin allows (see the module docstring)."""
    best: TargetChoice | None = None
    for path, line in run_pins(paths, "trl"):
        version = target_from_specifier(Requirement(line).specifier)
        if version is not None and (best is None or version > best.version):
            best = TargetChoice(version, f"{os.path.relpath(path)}: {line}")
    return best or TargetChoice(NEWEST, "no trl pin >= 1.13 found: newest known release")


# ------------------------------------------------------------------------------------------ the rest of the stack

#: Libraries with a target of their own (`--target-transformers`, ...), each chosen like the TRL target.
LIBRARIES = ("transformers", "peft", "accelerate")


class TargetError(ValueError):
    """A library target that cannot be used (not a version, not in the atlas, or outside what the TRL allows)."""


def allowed_by_trl(library: str, target_trl: Version) -> SpecifierSet:
    """What the target TRL line requires of `library` (`compat.floors`; e.g. transformers>=4.56.2)."""
    import compat.floors as floors

    line = f"{target_trl.major}.{target_trl.minor}"
    if line not in floors.PROFILES:  # clamped to the table, as the manifest rule does
        line = floors.NEWEST_LINE if target_trl > Version(floors.NEWEST_LINE) else floors.OLDEST_LINE
    spec = SpecifierSet()
    for row in floors.PROFILES[line].floors:
        if canonicalize_name(row.package) == library and not row.when_installed:
            spec &= SpecifierSet(row.specifier)
    return spec


def detect_library_target(paths: list[str], library: str, target_trl: Version,
                          override: str | None = None) -> TargetChoice:
    """The release of `library` a run migrates (and checks) for, among the releases the atlas holds.

    `override` (`--target-transformers 4|5|VERSION`): a major picks the newest release of that major the target TRL
    allows, a version that release. Otherwise the repository's pins choose, when they allow a release the target
    TRL allows (the newest such), else the newest release the target TRL allows.
    """
    from migrations.atlas import Atlas

    atlas = Atlas.load(library)
    trl_spec = allowed_by_trl(library, target_trl)
    allowed = [Version(r) for r in atlas.releases() if trl_spec.contains(r, prereleases=True)]
    if not allowed:
        raise TargetError(f"the {library} atlas holds no release TRL {target_trl} allows ({trl_spec})")
    if override:
        if override.isdigit():
            major = [v for v in allowed if v.major == int(override)]
            if not major:
                raise TargetError(f"--target-{library} {override}: TRL {target_trl} allows no {library} "
                                  f"{override}.x the atlas holds (it allows {trl_spec}; atlas: "
                                  f"{atlas.releases()[0]} .. {atlas.releases()[-1]})")
            return TargetChoice(major[-1], f"--target-{library} {override}: newest {override}.x")
        try:
            wanted = Version(override)
        except InvalidVersion:
            raise TargetError(f"--target-{library} {override!r}: expected a major (4, 5) or a version") from None
        minor_only = len(wanted.release) == 2  # "4.56": that minor's release in the atlas
        same = [v for v in allowed if v == wanted or (v.major, v.minor) == (wanted.major, wanted.minor)]
        if not trl_spec.contains(same[-1] if minor_only and same else wanted, prereleases=True):
            raise TargetError(f"--target-{library} {override}: TRL {target_trl} requires {library}{trl_spec}")
        if not same:
            raise TargetError(f"--target-{library} {override}: not in the {library} atlas "
                              f"({atlas.releases()[0]} .. {atlas.releases()[-1]}, one release per minor)")
        return TargetChoice(wanted if wanted in same else same[-1], f"--target-{library} {override}")
    best: TargetChoice | None = None
    for path, line in run_pins(paths, library):
        spec = Requirement(line).specifier
        fits = [v for v in allowed if spec.contains(v, prereleases=True)]
        if fits and (best is None or fits[-1] > best.version):
            best = TargetChoice(fits[-1], f"{os.path.relpath(path)}: {line}")
    return best or TargetChoice(allowed[-1], f"no {library} pin that TRL {target_trl} allows: newest release "
                                              f"it allows ({trl_spec})")


_TRL_IMPORT = re.compile(rb"(?m)^[ \t]*(?:from[ \t]+trl\b|import[ \t]+trl\b)")
_TRL_IMPORT_IN_NOTEBOOK = re.compile(rb"(?:from|import) trl\b")
_MAX_SCAN_BYTES = 2 * 1024 * 1024


def project_uses_trl(paths: list[str], exclude: tuple[str, ...] | list[str] = ()) -> bool:
    """True when some Python file or notebook under `paths` imports `trl` (the installed one: a file beside a vendored
    `trl/` copy does not count), or some manifest requires it. Stops at the first hit; reads each file once."""
    from migrations.v1_13.dependency_manifests import requires_trl

    from .runner import vendored_trl
    from .walk import iter_targets

    manifests = ("requirements", "pyproject.toml", "setup.cfg", "setup.py", "environment")

    def wanted(name: str) -> bool:
        base = os.path.basename(name)
        return name.endswith((".py", ".ipynb")) or (base.startswith(manifests) and not base.endswith(".py")) \
            or base == "setup.py"

    for target in iter_targets(paths, exclude=exclude, wanted=wanted):
        path = target.path
        try:
            if not stat.S_ISREG(os.stat(target.real).st_mode):  # a FIFO named pipe.py would block the open
                continue
            with open(target.real, "rb") as fh:
                data = fh.read(_MAX_SCAN_BYTES)
        except OSError:
            continue
        base = os.path.basename(path)
        if base.startswith(manifests) and (base != "setup.py" or b"trl" in data):
            text = manifest_text(data)
            if "trl" in text and requires_trl(text, base, path):
                return True
            if base != "setup.py":
                continue
        pattern = _TRL_IMPORT_IN_NOTEBOOK if path.endswith(".ipynb") else _TRL_IMPORT
        source = data.decode("utf-8", "replace") if path.endswith(".py") else None
        if pattern.search(data) and vendored_trl(path, source) is None:
            return True
    return False


#: what uses TRL's vLLM integration: its config options (`use_vllm=True`, `vllm_mode: server`, `--vllm_server_host`),
#: its server command (`trl vllm-serve`, the `trl.scripts.vllm_serve` module), its client, its pip extra
_TRL_VLLM = re.compile(rb"use_vllm|vllm_mode|vllm_server|vllm_gpu_memory|vllm[-_]serve|VLLMClient|trl\.extras\.vllm|"
                       rb"trl\.generation\.vllm|trl\[[^\]]*vllm")
_VLLM_SCANNED = (".py", ".ipynb", ".sh", ".bash", ".yaml", ".yml", ".toml", ".cfg", ".txt", ".json", ".md", ".in")


def project_uses_trl_vllm(paths: list[str], exclude: tuple[str, ...] | list[str] = ()) -> bool:
    """True when some file under `paths` uses TRL's vLLM integration (`_TRL_VLLM`: code, configs, launchers,
    requirements, docs). Without it a `vllm` pin is the project's own (inference with `vllm.LLM`): TRL declares vLLM
    only under its `vllm` extra, and its supported window is no constraint on that pin. Stops at the first hit."""
    from .walk import iter_targets

    def wanted(name: str) -> bool:
        base = os.path.basename(name)
        return name.endswith(_VLLM_SCANNED) or base.startswith(("Dockerfile", "Containerfile"))

    for target in iter_targets(paths, exclude=exclude, wanted=wanted):
        try:
            if not stat.S_ISREG(os.stat(target.real).st_mode):
                continue
            with open(target.real, "rb") as fh:
                data = fh.read(_MAX_SCAN_BYTES)
        except OSError:
            continue
        if b"vllm" in data and _TRL_VLLM.search(data):
            return True
    return False
