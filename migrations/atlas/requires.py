"""Requires-Dist of the stack packages the manifests rule raises but the atlas does not cover (run by developers).

    python -m migrations.atlas.requires        # downloads the wheels (pip download --no-deps), rewrites the data

The manifests rule (`migrations.v1_13.dependency_manifests`) raises a manifest's pins to the floors TRL and
transformers declare (`migrations.kinds.requirements.metadata_floors`). The packages it raises declare floors of
their own: `datasets` 4.7.0 (TRL 1.16's floor) requires `tqdm>=4.66.3` and `requests>=2.32.2`, so a manifest keeping
`tqdm==4.66.1` beside the raised `datasets>=4.7.0` has no solution (haf-rm-anonymized/Code-for-HAF-RM,
Silent-Zebra/twisted-smc-lm). accelerate's floor release is in the atlas (`Atlas.requires`); `datasets`,
`huggingface-hub` and peft's floor release are not, so this records their Requires-Dist lines, read from each
wheel's METADATA, for the floor release of every supported TRL line, in ``data/requires.json``:
{package: {release: [lines]}}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from functools import lru_cache

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "requires.json")
#: the packages recorded here (the others the rule raises are in the atlas)
PACKAGES = ("datasets", "huggingface-hub", "peft")


def wheel_requires(wheel: str) -> list[str]:
    """The Requires-Dist lines of a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(zf.read(name).decode("utf-8"))
    return list(meta.get_all("Requires-Dist") or [])


@lru_cache(maxsize=None)
def recorded() -> dict[str, dict[str, list[str]]]:
    """The committed data ({} when it was never generated)."""
    if not os.path.exists(DATA):
        return {}
    with open(DATA, encoding="utf-8") as fh:
        return json.load(fh)


def requires(package: str, release: str) -> list[str] | None:
    """The recorded Requires-Dist of `package` `release`; None when not recorded."""
    return recorded().get(package, {}).get(release)


def _floors() -> dict[str, set[str]]:
    """package -> the floor releases the supported TRL lines need (from the atlas's metadata floors)."""
    from packaging.version import Version

    from compat import floors
    from migrations.kinds.requirements import floors_for, metadata_floors

    out: dict[str, set[str]] = {p: set() for p in PACKAGES}
    for line in floors.PROFILES:
        table = {**metadata_floors(Version(line)), **floors_for(Version(line))}
        for package in PACKAGES:
            if package in table:
                out[package].add(str(table[package].lowest))
    return out


def main() -> int:
    data: dict[str, dict[str, list[str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for package, releases in sorted(_floors().items()):
            for release in sorted(releases):
                subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp,
                                f"{package}=={release}"], check=True)
                stem = package.replace("-", "_")
                wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp)
                             if f.lower().startswith(f"{stem}-{release}-") and f.endswith(".whl"))
                data.setdefault(package, {})[release] = wheel_requires(wheel)
    with open(DATA, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"{DATA}: " + ", ".join(f"{p} {sorted(r)}" for p, r in data.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
