"""The floors table: the issue's contract, and agreement with the METADATA of the TRL wheel installed here.

The second test reads the real installed trl's ``Requires-Dist``/``Requires-Python`` (the floor env has trl 1.13.0,
latest 1.16.0, the per-line envs the newest patch of each line), so every tox env re-verifies its own line.
"""

from __future__ import annotations

import importlib.metadata

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.floors import NEWEST_LINE, OLDEST_LINE, PROFILES, PYTHON

# The table of issue 2 ("The floors table"), verified against the wheels of trl 1.13.0, 1.14.0-1.14.2, 1.15.0, 1.16.0.
ISSUE_TABLE = {
    "1.13": (">=3.10", ">=4.56.2", ">=1.4.0", ">=4.7.0", ">=0.13.0", ">=0.18.6", ">=0.19.1,<=0.28.0", ">=0.8.2"),
    "1.14": (">=3.10", ">=4.56.2", ">=1.4.0", ">=4.7.0", ">=0.13.0", ">=0.18.6", ">=0.20.0,<=0.30.0", ">=0.8.2"),
    "1.15": (">=3.11", ">=4.56.2", ">=1.4.0", ">=4.7.0", ">=0.13.0", ">=0.18.6", ">=0.21.0,<=0.31.0", ">=0.8.2"),
    "1.16": (">=3.11", ">=4.56.2", ">=1.10.1", ">=4.7.0", ">=0.13.0", ">=0.18.6", ">=0.22.0,<=0.31.0", ">=0.8.2"),
}
COLUMNS = (PYTHON, "transformers", "accelerate", "datasets", "peft", "deepspeed", "vllm", "liger-kernel")


def _main_specifier(line: str, package: str) -> str:
    rows = [f for f in PROFILES[line].floors if f.package == package and not f.when_installed]
    assert len(rows) == 1, (line, package)
    return rows[0].specifier


@pytest.mark.parametrize("line", sorted(ISSUE_TABLE))
def test_table_matches_the_issue(line: str) -> None:
    assert tuple(_main_specifier(line, package) for package in COLUMNS) == ISSUE_TABLE[line]


def test_lines_and_row_metadata() -> None:
    assert sorted(PROFILES) == ["1.13", "1.14", "1.15", "1.16"]
    assert (OLDEST_LINE, NEWEST_LINE) == ("1.13", "1.16")
    for profile in PROFILES.values():
        for floor in profile.floors:
            assert floor.why and floor.source, floor
            SpecifierSet(floor.specifier)  # every specifier parses
    # the additions the wheels make beyond the main table
    for line in PROFILES:
        (excl,) = [f for f in PROFILES[line].floors if f.when_installed == "deepspeed"]
        assert (excl.package, excl.specifier) == ("transformers", "!=5.1.0")
        http = sorted(f.package for f in PROFILES[line].floors if f.trl_versions == ">=1.13.0,<1.14.2")
        assert http == (["requests", "urllib3"] if line in ("1.13", "1.14") else [])
    vllm = [f for f in PROFILES["1.16"].floors if f.package == "vllm"][0]
    assert vllm.upper_bound_warns and vllm.optional


@pytest.mark.trl
def test_installed_trl_metadata_agrees_with_its_profile() -> None:
    try:
        dist = importlib.metadata.distribution("trl")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("no trl installed in this environment (the `bare` tox env)")
    version = Version(dist.version)
    line = f"{version.major}.{version.minor}"
    if line not in PROFILES:
        pytest.skip(f"trl {version} is outside the table (PPO-era or newer); nothing to compare")
    ours = {(f.package, f.specifier) for f in PROFILES[line].floors}
    assert (PYTHON, str(SpecifierSet(dist.metadata["Requires-Python"]))) in {
        (p, str(SpecifierSet(s))) for p, s in ours
    }
    checked = 0
    for text in dist.requires or []:
        req = Requirement(text)
        extra = next((e for e in ("peft", "deepspeed", "vllm", "liger") if req.marker and req.marker.evaluate({"extra": e})), None)
        core = req.marker is None
        if not (core or extra) or req.name not in {"transformers", "accelerate", "datasets", "peft", "deepspeed", "vllm", "liger-kernel"}:
            continue
        assert (req.name, str(req.specifier)) in {(p, str(SpecifierSet(s))) for p, s in ours}, text
        checked += 1
    assert checked >= 8  # transformers, accelerate, datasets, peft, deepspeed, transformers!=5.1.0, vllm, liger-kernel
