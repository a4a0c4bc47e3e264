"""The per-library target (`--target-transformers 4|5|VERSION`, peft, accelerate): pins, TRL floors, overrides."""

from __future__ import annotations

import pytest
from packaging.version import Version

from compat.migrate.target import (
    TargetError,
    allowed_by_trl,
    detect_library_target,
    package_pins,
)
from migrations.atlas import Atlas

V116 = Version("1.16.0")


def _newest(library: str, major: int | None = None) -> Version:
    releases = [Version(r) for r in Atlas.load(library).releases()]
    return max(v for v in releases if major is None or v.major == major)


def test_without_pins_the_newest_release_the_target_trl_allows(tmp_path):
    assert str(allowed_by_trl("transformers", V116)) == ">=4.56.2"
    assert str(allowed_by_trl("accelerate", V116)) == ">=1.10.1"
    assert str(allowed_by_trl("accelerate", Version("1.13.0"))) == ">=1.4.0"
    for library in ("transformers", "peft", "accelerate"):
        assert detect_library_target([str(tmp_path)], library, V116).version == _newest(library)


def test_a_pin_chooses_when_the_target_trl_allows_it(tmp_path):
    (tmp_path / "requirements.txt").write_text("trl==0.11.4\ntransformers>=4.56,<5\npeft==0.4.0\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["accelerate~=1.12.0"]\n')
    choice = detect_library_target([str(tmp_path)], "transformers", V116)
    assert choice.version == _newest("transformers", 4) and "requirements.txt: transformers>=4.56,<5" in choice.source
    # an era pin the target TRL does not allow is the code's source, not its target
    assert detect_library_target([str(tmp_path)], "peft", V116).version == _newest("peft")
    assert detect_library_target([str(tmp_path)], "accelerate", V116).version == Version("1.12.0")
    assert [line for _, line in package_pins(str(tmp_path), "peft")] == ["peft==0.4.0"]


def test_overrides(tmp_path):
    assert detect_library_target([str(tmp_path)], "transformers", V116, "4").version == _newest("transformers", 4)
    assert detect_library_target([str(tmp_path)], "transformers", V116, "5").version == _newest("transformers", 5)
    assert detect_library_target([str(tmp_path)], "transformers", V116, "4.56").version == Version("4.56.2")
    assert detect_library_target([str(tmp_path)], "transformers", V116, "4.56.2").version == Version("4.56.2")
    with pytest.raises(TargetError, match="requires transformers>=4.56.2"):
        detect_library_target([str(tmp_path)], "transformers", V116, "4.40")
    with pytest.raises(TargetError, match="expected a major"):
        detect_library_target([str(tmp_path)], "transformers", V116, "newest")
    with pytest.raises(TargetError, match="allows no transformers 3.x"):
        detect_library_target([str(tmp_path)], "transformers", V116, "3")


def test_the_command_line_targets(tmp_path, capsys):
    from compat.migrate.cli import main

    (tmp_path / "t.py").write_text("from transformers import BloomTokenizerFast\n"
                                   "tok = BloomTokenizerFast.from_pretrained('bigscience/bloom-560m')\n")
    assert main(["--diff", "--allow-dirty", "--target-transformers", "4", str(tmp_path)]) == 0  # 4.x keeps it
    err = capsys.readouterr().err
    assert f"target stack: transformers {_newest('transformers', 4)} (--target-transformers 4" in err
    assert main(["--diff", "--allow-dirty", "--target-transformers", "5", str(tmp_path)]) == 1
    assert "+tok = AutoTokenizer.from_pretrained('bigscience/bloom-560m')" in capsys.readouterr().out
    assert main(["--check", "--target-transformers", "4.40", str(tmp_path)]) == 2
    assert "requires transformers>=4.56.2" in capsys.readouterr().err
