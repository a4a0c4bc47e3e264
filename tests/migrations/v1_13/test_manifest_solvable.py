"""The rewritten manifests resolve: pip's real resolver, offline, over stub wheels carrying the real Requires-Dist.

The stub index holds `trl` and `transformers` releases whose METADATA is exactly the Requires-Dist the atlas read from
their wheels (`migrations/atlas`, `Atlas.requires`), and the packages those name at a few versions (the PPO-era pins
and the floors). Only the leaves are simulated: their stubs declare no dependencies of their own (their metadata is
not in the atlas), which is what "their own requirements are out of scope here" means. `pip install --dry-run
--no-index` then has to find one consistent set: a manifest with only `trl` raised (the old behaviour) must fail, the
rule's output must succeed and pick the target TRL.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.migrate.engine import migrate_source
from migrations.atlas import Atlas
from migrations.base import Options
from migrations.v1_13.dependency_manifests import MIGRATION as RULE

#: versions of the packages without atlas metadata: the era's pins, the floors, and a newer one
LEAVES = {
    "tokenizers": ["0.15.2", "0.22.0", "0.23.1"], "huggingface-hub": ["0.20.3", "0.34.0", "1.31.0"],
    "safetensors": ["0.4.2", "0.4.3", "0.8.0"], "numpy": ["1.24.4", "1.26.0", "2.1.0"],
    "pyarrow": ["15.0.0", "21.0.0"], "accelerate": ["0.27.2", "1.4.0", "1.10.1"], "datasets": ["2.18.0", "4.7.0"],
    "peft": ["0.10.0", "0.13.0"], "torch": ["2.1.0"], "tyro": ["0.8.0"], "filelock": ["3.13.1"],
    "packaging": ["24.0"], "pyyaml": ["6.0.1"], "regex": ["2025.11.3"], "requests": ["2.32.0"], "tqdm": ["4.66.0"],
    "jinja2": ["3.1.4"], "pandas": ["2.1.1"], "psutil": ["5.9.4"], "typer": ["0.12.0"], "typer-slim": ["0.12.0"],
}
REAL = {"trl": ["0.8.6", "1.13.0", "1.16.0"], "transformers": ["4.38.2", "4.56.2", "5.24.0"]}

ERA = """\
trl==0.8.6
transformers==4.38.2
tokenizers==0.15.2
huggingface_hub==0.20.3
safetensors>=0.4.1,<0.4.3
accelerate==0.27.2
datasets==2.18.0
pyarrow<16
numpy==1.24.4
peft==0.10.0
"""


def _wheel(folder: Path, name: str, version: str, requires: list[str]) -> None:
    dist = canonicalize_name(name).replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    metadata = "\n".join(["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
                          *(f"Requires-Dist: {r}" for r in requires)]) + "\n"
    with zipfile.ZipFile(folder / f"{dist}-{version}-py3-none-any.whl", "w") as zf:
        zf.writestr(f"{info}/METADATA", metadata)
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: stub\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("stub-index")
    for package, versions in REAL.items():
        atlas = Atlas.load(package)
        for v in versions:
            _wheel(folder, package, v, atlas.requires(v))
    for package, versions in LEAVES.items():
        for v in versions:
            _wheel(folder, package, v, [])
    return folder


def resolve(index: Path, requirements: str, tmp_path: Path) -> dict[str, str] | None:
    """name -> version pip would install for `requirements`, offline; None when pip finds no consistent set."""
    req = tmp_path / "requirements.txt"
    req.write_text(requirements)
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--find-links",
                          str(index), "--ignore-installed", "--quiet", "--report", "-", "-r", str(req)],
                         capture_output=True, text=True, timeout=120, check=False,
                         env={"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PATH": "/usr/bin:/bin"})
    if out.returncode != 0:
        assert "ResolutionImpossible" in out.stderr or "conflict" in out.stderr.lower(), out.stderr
        return None
    report = json.loads(out.stdout)
    return {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"] for i in report["install"]}


@pytest.mark.slow  # spawns pip (about 7 s a target)
@pytest.mark.parametrize("target", ["1.16.0", "1.13.0"])
def test_era_requirements_resolve_after_the_rule_and_not_with_trl_alone(index, tmp_path, target):
    only_trl = ERA.replace("trl==0.8.6", f"trl=={target}")
    assert resolve(index, only_trl, tmp_path) is None  # raising trl alone: no installable set
    result = migrate_source(ERA, options=Options(target_trl=Version(target)), rules=[RULE], path="requirements.txt",
                            verify_idempotent=True)
    assert result.ok, result.errors
    resolved = resolve(index, result.text, tmp_path)
    assert resolved is not None, result.text
    assert resolved["trl"] == target
    assert Version(resolved["transformers"]) >= Version("4.56.2")
    # no single-version range was written where the file had a range
    assert "safetensors>=0.4.3\n" in result.text  # `>=0.4.1,<0.4.3`: the bound below the floor dropped, no ==
    if target == "1.16.0":
        assert "pyarrow>=21.0.0\n" in result.text and "huggingface_hub>=0.34.0\n" in result.text


@pytest.mark.slow
def test_the_era_set_itself_resolves_over_the_stubs(index, tmp_path):
    assert resolve(index, ERA, tmp_path)["trl"] == "0.8.6"  # the stubs are not what makes the rewrite solvable


@pytest.mark.slow
def test_rewritten_requirements_resolve_against_the_index(tmp_path):
    """The same check against PyPI (network; metadata only, nothing is installed)."""
    result = migrate_source(ERA.replace("peft==0.10.0\n", ""), options=Options(), rules=[RULE],
                            path="requirements.txt")
    req = tmp_path / "requirements.txt"
    req.write_text(result.text)
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                          "--report", "-", "-r", str(req)], capture_output=True, text=True, timeout=900, check=False)
    if out.returncode != 0 and ("NewConnectionError" in out.stderr or "No matching distribution" in out.stderr
                                and "trl" not in out.stderr):
        pytest.skip(f"the index is not reachable: {out.stderr[-300:]}")
    assert out.returncode == 0, out.stderr[-2000:]
    names = {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"]
             for i in json.loads(out.stdout)["install"]}
    assert names["trl"] == "1.16.0"


def _stub_version(req) -> str:  # type: ignore[no-untyped-def]
    """A version satisfying `req`'s specifier: its lower bound where it has one, else a low one."""
    lows = [s.version for s in req.specifier if s.operator in (">=", "==", "~=")]
    return max(lows, key=Version) if lows else "0.0.1"


@pytest.mark.slow
def test_what_the_raised_datasets_requires_is_raised_too(tmp_path):
    """haf-rm-anonymized/Code-for-HAF-RM and twisted-smc-lm: `tqdm==4.66.1`, `requests==2.31.0` stayed beside the
    raised `datasets>=4.7.0`, which requires `tqdm>=4.66.3` and `requests>=2.32.2` (its wheel's METADATA, recorded by
    `migrations.atlas.requires`): no installable set. Over stubs carrying datasets 4.7.0's recorded Requires-Dist (the
    packages it names stubbed without dependencies of their own), the rewritten file resolves and the old one not."""
    from packaging.requirements import Requirement

    from migrations.atlas import requires as recorded

    era = "trl==0.7.4\ndatasets==2.14.0\ntqdm==4.66.1\nrequests==2.31.0\n"
    result = migrate_source(era, options=Options(target_trl=Version("1.16.0")), rules=[RULE],
                            path="requirements.txt", verify_idempotent=True)
    assert result.ok, result.errors
    assert "tqdm>=4.66.3\n" in result.text and "requests>=2.32.2\n" in result.text, result.text
    lines = recorded.requires("datasets", "4.7.0")
    assert lines and "tqdm>=4.66.3" in lines
    folder = tmp_path / "index"
    folder.mkdir()
    unconditional = [Requirement(r) for r in lines if Requirement(r).marker is None]
    _wheel(folder, "datasets", "4.7.0", [str(r) for r in unconditional])
    _wheel(folder, "datasets", "2.14.0", [])
    for req in unconditional:
        _wheel(folder, req.name, _stub_version(req), [])
    for name, versions in {"tqdm": ["4.66.1"], "requests": ["2.31.0"]}.items():
        for v in versions:
            _wheel(folder, name, v, [])
    _wheel(folder, "trl", "1.16.0", ["datasets>=4.7.0"])
    _wheel(folder, "trl", "0.7.4", [])
    body = "\n".join(ln for ln in result.text.splitlines() if not ln.startswith("#")) + "\n"
    assert resolve(folder, era.replace("trl==0.7.4", "trl==1.16.0"), tmp_path) is None
    resolved = resolve(folder, body, tmp_path)
    assert resolved is not None and resolved["trl"] == "1.16.0", body
