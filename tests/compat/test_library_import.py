"""The migrator is a library that works in the environments the floor check refuses; training code is still checked.

Fresh interpreters with a fake peft 0.12.0 dist-info first on PYTHONPATH (metadata only, see `tests/compat/_fakes.py`;
peft 0.12.0 is below every supported line's floor). `python -c` is not one of compat's tools, so only the
library-import rule (compat/__init__.py) can let these imports through.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.compat._fakes import fake_env, run_python

ERROR = "compat.errors.IncompatibleEnvironmentError"


@pytest.fixture
def old_peft(tmp_path: Path) -> str:
    return fake_env(tmp_path / "fakes", {"peft": "0.12.0"})


LIBRARY = """\
import sys
import compat.migrate, migrations
from compat.migrate import migrate_paths, migrate_source
rules = migrations.all_migrations()  # imports every rule module (the manifest rule reads compat.floors)
result = migrate_source("from trl import PPOTrainer\\n", path="train.py")
assert result.ok and "GRPOTrainer" in result.text, result.text
(tmp := __import__("pathlib").Path(sys.argv[1])).joinpath("requirements.txt").write_text("trl\\npeft>=0.10\\n")
report = migrate_paths([str(tmp / "requirements.txt")], mode="check", allow_dirty=True)
assert [f.status for f in report.files] == ["changed"], report.files
print("library ok", len(rules))
"""


def test_the_migrator_imports_and_runs_as_a_library(old_peft: str, tmp_path: Path) -> None:
    plain = run_python(["-c", "import compat.migrate, migrations; print('imported')"], fakes=old_peft, cwd=str(tmp_path))
    assert plain.returncode == 0 and plain.stdout.strip() == "imported", plain.stderr
    assert plain.stderr == ""  # deferred, not warned
    work = tmp_path / "work"
    work.mkdir()
    used = run_python(["-c", LIBRARY, str(work)], fakes=old_peft, cwd=str(tmp_path))
    assert used.returncode == 0, used.stderr
    assert used.stdout.startswith("library ok")


@pytest.mark.parametrize(
    "code",
    [
        "import compat",
        "import compat.trl",
        "import compat.losses",
        "import compat.floors",
        "from compat import migrate",  # `compat` is imported first, on its own: checked
        "import compat.migrate; import compat.trl",  # a deferred check runs when training code needs compat
        "import migrations; migrations.all_migrations(); from compat.losses import FusedLinearDPOLoss",
    ],
)
def test_training_code_imports_are_still_checked(old_peft: str, tmp_path: Path, code: str) -> None:
    result = run_python(["-c", code], fakes=old_peft, cwd=str(tmp_path))
    assert result.returncode == 1, (code, result.stdout, result.stderr)
    assert result.stderr.count(f"{ERROR}:") == 1 and "peft 0.12.0" in result.stderr, result.stderr


class _Frame:
    """The attributes of a frame `compat._importer` reads."""

    def __init__(self, module: str, function: str, name: str | None, back: _Frame | None) -> None:
        self.f_code = type("Code", (), {"co_name": function})()
        self.f_globals = {"__name__": module}
        self.f_locals = {"name": name} if name is not None else {}
        self.f_back = back


@pytest.mark.parametrize("bootstrap", ["importlib._bootstrap", "_frozen_importlib"])
def test_the_importer_is_read_under_both_names_of_the_bootstrap(bootstrap: str) -> None:
    """Until something imports the `importlib` package the frozen bootstrap is named `_frozen_importlib` (an env with
    no .pth importing it: the tox `floor` env showed it); after, `importlib._bootstrap`. Both must be recognised."""
    import compat

    outer = _Frame(bootstrap, "_find_and_load", "compat.migrate", None)
    inner = _Frame(bootstrap, "_find_and_load", "compat", _Frame(bootstrap, "_call_with_frames_removed", None, outer))
    assert compat._importer(_Frame("compat", "<module>", None, inner)) == "compat.migrate"
    assert compat._importer(_Frame("compat", "<module>", None, _Frame(bootstrap, "_find_and_load", "compat",
                                                                      None))) is None
