"""A dist-info METADATA with a latin-1 byte (old tools wrote such files) breaks neither `import compat`, nor the
doctor, nor `python -m compat.migrate --list` (issue 18, item 5): the version is read, and a Version header the byte
garbles is an unparseable version (a warning), as for any other broken version string."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.environment import InstalledVersions
from tests.compat._fakes import run_python, write_dist_info


def latin1_dist_info(root: Path, name: str, version: str, *, in_version: bool = False) -> Path:
    folder = write_dist_info(root, name, version)
    version_bytes = version.encode() + (b"\xe9" if in_version else b"")
    (folder / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: " + name.encode() + b"\nVersion: " + version_bytes
                                      + b"\nAuthor: Jos\xe9 Mu\xf1oz\n\nDescription in latin-1: caf\xe9\n")
    return folder


def test_a_latin1_byte_beside_the_version_is_harmless(tmp_path: Path) -> None:
    latin1_dist_info(tmp_path, "oldpkg", "2.3.0")
    latin1_dist_info(tmp_path / "b", "garbled", "1.0", in_version=True)
    installed = InstalledVersions([str(tmp_path), str(tmp_path / "b")])
    assert installed.get("oldpkg") == "2.3.0"
    garbled = installed.get("garbled")
    assert garbled is not None and garbled.startswith("1.0") and garbled != "1.0"  # unparseable, not a crash


@pytest.mark.slow
@pytest.mark.parametrize("args", [["-c", "import compat; print('imported')"], ["-m", "compat"],
                                  ["-m", "compat.migrate", "--list"]])
def test_import_doctor_and_migrate_list_survive_latin1_metadata(tmp_path: Path, args: list[str]) -> None:
    fakes = tmp_path / "fakes"
    latin1_dist_info(fakes, "trl", "1.16.0")  # shadows the real trl's metadata, with a latin-1 Author
    latin1_dist_info(fakes, "peft", "0.21.2", in_version=True)  # a Version header the byte garbles
    result = run_python(args, fakes=str(fakes), env={"TRL_COMPAT_CHECK": "warn"}, cwd=str(tmp_path))
    assert "Traceback" not in result.stderr and "UnicodeDecodeError" not in result.stderr, result.stderr
    assert result.returncode in (0, 1), result.stderr  # the doctor exits 1 on a floor it cannot confirm
