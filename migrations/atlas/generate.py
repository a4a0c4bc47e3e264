"""Build the committed API atlas of a package from its release wheels (run by developers, never at run time).

    python -m migrations.atlas.generate trl                      # every release 0.4.0 .. 1.16.0
    python -m migrations.atlas.generate transformers --versions 4.38.2 4.46.3 4.56.2 5.24.0 \\
        --include transformers,transformers.training_args,transformers.trainer,transformers.training_args_seq2seq

Releases come from `pip index versions PKG` (pre-releases skipped; pip lists no yanked release); each is fetched
with `pip download --no-deps PKG==V --only-binary=:all: -d CACHE` (an sdist only where no wheel exists; the atlas
records which) and read with `ast` through :mod:`migrations.atlas.extract`: nothing is installed or imported.

The output (`migrations/atlas/data/PKG.json.gz`) is range-encoded: every fact (a module exists, a module binds a
name, a function's or class's API) is stored with the runs of consecutive releases where it holds the same value,
and each distinct signature / class description is stored once. :mod:`migrations.atlas` loads it.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from .extract import ModuleInfo, Signature, read_package

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
DEFAULT_CACHE = "/work/cache/wheels"
FORMAT = 1


@dataclass
class Release:
    version: str
    source: str  # "wheel" or "sdist"
    archive: str  # file name of what was read
    date: str  # build date from the archive's metadata entry (YYYY-MM-DD)
    requires: list[str]  # Requires-Dist lines
    modules: dict[str, ModuleInfo]


# ---------------------------------------------------------------------------------------------- fetching releases

def list_versions(package: str, low: str | None = None, high: str | None = None) -> list[str]:
    """Final releases of `package` on the index (`pip index versions`), oldest first, within [low, high]."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"Available versions: (.*)", out)
    if not m:
        raise RuntimeError(f"pip index versions {package} printed no version list:\n{out}")
    versions = []
    for raw in m.group(1).split(","):
        try:
            v = Version(raw.strip())
        except InvalidVersion:
            continue
        if v.is_prerelease or v.is_devrelease:
            continue
        if (low and v < Version(low)) or (high and v > Version(high)):
            continue
        versions.append(v)
    return [str(v) for v in sorted(versions)]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def find_archive(package: str, version: str, cache: str) -> str | None:
    stem = _normal(package)
    for path in sorted(glob.glob(os.path.join(cache, "*"))):
        base = os.path.basename(path)
        if base.endswith(".whl") and _normal(base.split("-")[0]) == stem and base.split("-")[1] == version:
            return path
    for path in sorted(glob.glob(os.path.join(cache, "*"))):
        base = os.path.basename(path)
        if base.endswith((".tar.gz", ".zip")) and _normal(base).startswith(f"{stem}_{_normal(version)}."):
            return path
    return None


def fetch_archive(package: str, version: str, cache: str) -> str:
    """The wheel (else sdist) of `package==version` in `cache`, downloading it with pip when missing."""
    found = find_archive(package, version, cache)
    if found:
        return found
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", cache, f"{package}=={version}"]
    if subprocess.run([*pip, "--only-binary=:all:"], capture_output=True).returncode != 0:
        subprocess.run([*pip, "--no-binary=:all:", "--no-build-isolation"], capture_output=True, check=True)
    found = find_archive(package, version, cache)
    if not found:
        raise FileNotFoundError(f"pip download {package}=={version} left nothing in {cache}")
    return found


def archive_files(path: str, top: str) -> tuple[dict[str, bytes], str, list[str]]:
    """(relative path -> source of every .py under the import package `top`, build date, Requires-Dist) of a wheel
    or sdist."""
    files: dict[str, bytes] = {}
    date, requires = "", []
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                name = info.filename
                if name.endswith(".py") and name.split("/")[0] == top:
                    files[name] = z.read(info)
                elif name.endswith(".dist-info/METADATA"):
                    date = "%04d-%02d-%02d" % info.date_time[:3]
                    requires = _requires(z.read(info).decode("utf-8", "replace"))
        return files, date, requires
    with tarfile.open(path) as t:
        for member in t.getmembers():
            parts = member.name.split("/")[1:]  # drop "pkg-1.0/"
            if parts[:1] == ["src"]:
                parts = parts[1:]
            name = "/".join(parts)
            if member.isfile() and name.endswith(".py") and parts and parts[0] == top:
                files[name] = t.extractfile(member).read()  # type: ignore[union-attr]
            elif member.isfile() and member.name.count("/") == 1 and member.name.endswith("/PKG-INFO"):
                date = time.strftime("%Y-%m-%d", time.gmtime(member.mtime))
                requires = _requires(t.extractfile(member).read().decode("utf-8", "replace"))  # type: ignore[union-attr]
    return files, date, requires


def _requires(metadata: str) -> list[str]:
    return [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]


def read_release(package: str, version: str, cache: str, include: Callable[[str], bool] | None,
                 module: str | None = None, names: Callable[[str], bool] | None = None,
                 listed: bool = False) -> Release:
    """One release of distribution `package`, whose import package is `module` (default: the name, `-` -> `_`);
    `include` / `names` / `listed` as :func:`migrations.atlas.extract.read_package` takes them."""
    top = module or package.replace("-", "_")
    path = fetch_archive(package, version, cache)
    files, date, requires = archive_files(path, top)
    return Release(version, "wheel" if path.endswith(".whl") else "sdist", os.path.basename(path), date, requires,
                   read_package(files, top, include, names, listed))


# ---------------------------------------------------------------------------------------------- encoding

class _Table:
    """Distinct JSON values, each stored once; `id(value)` is its index."""

    def __init__(self) -> None:
        self.items: list = []
        self._index: dict[str, int] = {}

    def id(self, value: object) -> int:
        key = json.dumps(value, sort_keys=True, separators=(",", ":"))
        if key not in self._index:
            self._index[key] = len(self.items)
            self.items.append(value)
        return self._index[key]


class _Ranges:
    """key -> [[first, last, value], ...]: runs of consecutive release indexes holding the same value."""

    def __init__(self) -> None:
        self.data: dict[str, list[list[int]]] = {}

    def add(self, key: str, index: int, value: int = 0) -> None:
        runs = self.data.setdefault(key, [])
        if runs and runs[-1][1] == index - 1 and runs[-1][2] == value:
            runs[-1][1] = index
        else:
            runs.append([index, index, value])

    def encoded(self, with_value: bool) -> dict[str, list[list[int]]]:
        return {k: [r if with_value else r[:2] for r in v] for k, v in sorted(self.data.items())}


def encode(package: str, releases: list[Release], coverage: dict | None = None) -> dict:
    sigs, classes, values, requires = _Table(), _Table(), _Table(), _Table()
    modules, packages, names, functions, opaque = _Ranges(), _Ranges(), _Ranges(), _Ranges(), _Ranges()
    class_ranges, req_ranges = _Ranges(), _Ranges()

    def sig_id(sig: Signature) -> int:
        return sigs.id(sig.to_json())

    for i, rel in enumerate(releases):
        req_ranges.add("requires", i, requires.id(rel.requires))
        for mod_name, info in sorted(rel.modules.items()):
            modules.add(mod_name, i)
            if info.is_package:
                packages.add(mod_name, i)
            if info.opaque:
                opaque.add(mod_name, i)
            for name, (kind, target) in info.names.items():
                names.add(f"{mod_name}:{name}", i, values.id([kind, target]))
            for name, sig in info.functions.items():
                functions.add(f"{mod_name}.{name}", i, sig_id(sig))
            for name, cls in info.classes.items():
                class_ranges.add(f"{mod_name}.{name}", i, classes.id(cls.to_json(sig_id)))
    return {
        "format": FORMAT,
        "package": package,
        "releases": [r.version for r in releases],
        "sources": {r.version: [r.source, r.archive, r.date] for r in releases},
        "requires": req_ranges.encoded(True)["requires"],
        "requires_table": requires.items,
        "modules": modules.encoded(False),
        "packages": packages.encoded(False),
        "opaque": opaque.encoded(False),
        "coverage": coverage or {"full": ["*"], "names": [], "listed": False},
        "names": names.encoded(True),
        "values": values.items,
        "functions": functions.encoded(True),
        "classes": class_ranges.encoded(True),
        "class_table": classes.items,
        "signatures": sigs.items,
    }


def write(data: dict, path: str) -> int:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode("utf-8")
    with open(path, "wb") as fh:
        # no name, mtime=0: the same input gives a byte-identical file
        with gzip.GzipFile(filename="", fileobj=fh, mode="wb", compresslevel=9, mtime=0) as gz:
            gz.write(raw)
    return os.path.getsize(path)


def prefix_filter(prefixes: Iterable[str]) -> Callable[[str], bool]:
    """`include` for read_package: a module named exactly like one of `prefixes`, or starting like one ending in
    `*` (`transformers.integrations.*`: below it; `transformers.trainer*`: `trainer`, `trainer_utils`, ...)."""
    exact = {p for p in prefixes if not p.endswith("*")}
    start = tuple(p[:-1] for p in prefixes if p.endswith("*"))
    return lambda name: name in exact or (bool(start) and name.startswith(start))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m migrations.atlas.generate", description=__doc__.split("\n")[0])
    parser.add_argument("package", help="the distribution on the index (trl, transformers, peft, accelerate)")
    parser.add_argument("--module", help="its import package when it is named differently (default: PACKAGE)")
    parser.add_argument("--versions", nargs="*", help="these releases (default: every final release in the range)")
    parser.add_argument("--low", default="0.4.0", help="oldest release (default 0.4.0)")
    parser.add_argument("--high", help="newest release (default: the newest on the index)")
    parser.add_argument("--include", help="comma-separated module names to read (NAME or PREFIX.*); default all")
    parser.add_argument("--names", help="comma-separated modules (NAME or PREFIX*) read for `__all__` only, the "
                        "cheap depth for a big package's model files (packages' __init__ are read in full)")
    parser.add_argument("--listed", action="store_true",
                        help="record every other module of the wheel as existing, names unknown (opaque)")
    parser.add_argument("--opaque", help="comma-separated modules (NAME or PREFIX*) whose names are read (for `from "
                        "x import *` chains) but not stored: recorded as existing, names unknown")
    parser.add_argument("--cache", default=DEFAULT_CACHE, help=f"wheel cache folder (default {DEFAULT_CACHE})")
    parser.add_argument("--out", help="output file (default migrations/atlas/data/PACKAGE.json.gz)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    versions = args.versions or list_versions(args.package, args.low, args.high)
    include = prefix_filter(args.include.split(",")) if args.include else None
    names = prefix_filter(args.names.split(",")) if args.names else None
    opaque = prefix_filter(args.opaque.split(",")) if args.opaque else None
    coverage = {"full": args.include.split(",") if args.include else ["*"],
                "names": args.names.split(",") if args.names else [], "listed": bool(args.listed),
                "opaque": args.opaque.split(",") if args.opaque else []}
    releases = []
    for v in sorted(versions, key=Version):
        rel = read_release(args.package, v, args.cache, include, args.module, names, args.listed)
        for name in [m for m in rel.modules if opaque(m)] if opaque else ():
            info = rel.modules[name]
            rel.modules[name] = ModuleInfo(info.name, info.is_package, opaque=True)
        releases.append(rel)
        print(f"{args.package} {v}: {rel.source} {rel.archive}, {len(rel.modules)} modules", file=sys.stderr)
    out = args.out or os.path.join(DATA_DIR, f"{args.package}.json.gz")
    size = write(encode(args.module or args.package, releases, coverage), out)
    sdists = [r.version for r in releases if r.source == "sdist"]
    print(f"wrote {out}: {len(releases)} releases, {size / 1024:.0f} KiB, "
          f"{time.perf_counter() - started:.1f} s; sdists: {', '.join(sdists) or 'none'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
