"""``InstalledVersions`` answers exactly what ``importlib.metadata.version`` answers, without importing it.

Held against the standard library for every distribution really installed in the test environment, and for fake
dist-info folders (metadata only) covering shadowing, name normalisation, egg-info and a metadata file without a version.
"""

from __future__ import annotations

import importlib.metadata
import zipfile
from pathlib import Path

from compat.environment import InstalledVersions, normalize_name
from tests.compat._fakes import write_dist_info


def test_agrees_with_importlib_metadata_for_every_installed_distribution() -> None:
    names = {dist.metadata["Name"] for dist in importlib.metadata.distributions() if dist.metadata["Name"]}
    assert len(names) >= 3  # at least pytest, packaging and trl-compat itself
    installed = InstalledVersions()
    assert not installed.uses_stdlib  # a plain venv takes the fast path
    for name in sorted(names):
        assert installed.get(name) == importlib.metadata.version(name), name
    assert installed.get("surely-not-installed-dist") is None


def test_first_folder_on_the_path_wins(tmp_path: Path) -> None:
    write_dist_info(tmp_path / "a", "peft", "0.12.0")
    write_dist_info(tmp_path / "b", "peft", "0.21.2")
    path = [str(tmp_path / "missing"), str(tmp_path / "a"), str(tmp_path / "b")]
    assert InstalledVersions(path).get("peft") == "0.12.0"
    assert next(importlib.metadata.Distribution.discover(name="peft", path=path)).version == "0.12.0"


def test_names_are_normalised_like_pep_503(tmp_path: Path) -> None:
    write_dist_info(tmp_path, "liger_kernel", "0.8.5")
    installed = InstalledVersions([str(tmp_path)])
    for spelling in ("liger-kernel", "Liger_Kernel", "liger.kernel", "LIGER--kernel"):
        assert installed.get(spelling) == "0.8.5", spelling
    assert normalize_name("Liger.-Kernel") == "liger_kernel"


def test_egg_info_and_missing_version(tmp_path: Path) -> None:
    egg = tmp_path / "oldpkg-1.0.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: oldpkg\nVersion: 1.0\n", encoding="utf-8")
    broken = tmp_path / "broken-1.0.dist-info"
    broken.mkdir()
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\n\nVersion: 9 (body, not a header)\n")
    installed = InstalledVersions([str(tmp_path)])
    assert installed.get("oldpkg") == "1.0"
    assert next(importlib.metadata.Distribution.discover(name="oldpkg", path=[str(tmp_path)])).version == "1.0"
    assert installed.get("broken") == ""  # installed, but no version: checked as unparseable
    std = next(importlib.metadata.Distribution.discover(name="broken", path=[str(tmp_path)]))
    assert std.version is None


def test_zip_on_the_path_hands_over_to_the_standard_library(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped-2.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 2.0\n")
    installed = InstalledVersions([str(archive)])
    assert installed.uses_stdlib
    assert installed.get("zipped") == "2.0"
    assert installed.get("absent") is None
