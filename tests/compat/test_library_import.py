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
