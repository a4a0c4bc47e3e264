"""Before/after and no-op cases for `config-defaults` (the pin is read from a manifest next to the file)."""

from __future__ import annotations

import textwrap

import pytest

from migrations.v0_12 import config_defaults as mod
from migrations.v0_12.config_defaults import MIGRATION as RULE
from tests.migrations._driver import run

SRC = """\
from trl import ORPOConfig, SFTConfig

args = ORPOConfig(output_dir="o", beta=0.1)
sft = SFTConfig(output_dir="o", learning_rate=1e-4, logging_steps=5, bf16=True, gradient_checkpointing=False)
"""


def _run_in(tmp_path, pin: str | None, src: str = SRC, target: str = "1.16.0"):
    if pin is not None:
        (tmp_path / "requirements.txt").write_text(f"torch\n{pin}\n", encoding="utf-8")
    (tmp_path / ".git").mkdir(exist_ok=True)  # stop the manifest search at this folder
    mod.pinned_releases.cache_clear()
    return run(RULE, src, target=target, path=str(tmp_path / "train.py"))


def test_exact_old_pin_writes_the_old_defaults(tmp_path):
    out, findings = _run_in(tmp_path, "trl==0.8.6")
    assert 'args = ORPOConfig(\n    output_dir="o",\n    beta=0.1,\n    learning_rate=5e-05,\n    logging_steps=500,\n' \
           '    gradient_checkpointing=False,\n    bf16=False,\n)\n' in out
    assert "sft = SFTConfig(output_dir=\"o\", learning_rate=1e-4, logging_steps=5, bf16=True, " \
           "gradient_checkpointing=False)" in out  # sets all four: untouched
    assert "TODO" not in out and any(f.changed for f in findings)


def test_range_within_one_era_is_provable(tmp_path):
    out, _ = _run_in(tmp_path, "trl>=0.19.0,<0.22", "from trl import DPOConfig\nDPOConfig(output_dir='o')\n")
    # 0.19-0.21: learning_rate/logging_steps/bf16 as today, gradient checkpointing off
    assert out == "from trl import DPOConfig\nDPOConfig(output_dir='o', gradient_checkpointing=False)\n"


def test_open_pin_is_marked(tmp_path):
    out, findings = _run_in(tmp_path, "trl>=0.8", "from trl import DPOConfig\nDPOConfig(output_dir='o')\n")
    assert out.splitlines()[1].startswith("# TODO(trl-compat): set learning_rate, logging_steps")
    assert findings[0].message == ("set learning_rate, logging_steps, gradient_checkpointing, bf16: DPOConfig "
                                   "defaults changed since your pinned TRL")
    assert [f.severity for f in findings] == ["manual"]


def test_without_a_pin_the_call_keywords_date_it(tmp_path):
    """jonhpark7966/FineTuning_Course (no manifest): `SFTConfig(max_seq_length=...)` ran on TRL 0.9 - 0.19, where
    gradient checkpointing was off (0.22 turned it on): written out; the learning rate changed inside that span
    (5e-05 until 0.11, 2e-05 from 0.12): marked. A call every newer release takes says nothing (no change)."""
    out, findings = _run_in(tmp_path, None, "from trl import SFTConfig\nSFTConfig(output_dir='o', max_seq_length=512)\n")
    assert "gradient_checkpointing=False" in out, out
    (marker,) = [f.message for f in findings if f.severity == "manual"]
    assert marker.startswith("set learning_rate") and "since the TRL its keywords need (0.9" in marker, marker
    src = "from trl import SFTConfig\nSFTConfig(output_dir='o', max_length=512)\n"
    out, findings = _run_in(tmp_path, None, src)
    assert out == src and not findings


def test_noops(tmp_path):
    src = "from trl import DPOConfig\nDPOConfig(output_dir='o')\n"
    for pin in (None, "trl>=1.13", "trl==1.16.0"):
        out, findings = _run_in(tmp_path, pin, src)
        assert out == src and not findings
        (tmp_path / "requirements.txt").unlink(missing_ok=True)
    out, _ = _run_in(tmp_path, "trl==0.8.6", textwrap.dedent("""\
        from trl import DPOConfig
        from mylib import SFTConfig

        class ORPOConfig:
            pass

        ORPOConfig(output_dir="o")
        SFTConfig(output_dir="o")
        DPOConfig(**kwargs)
        text = "ORPOConfig(output_dir='o')"
    """))
    assert "learning_rate" not in out and "TODO" not in out


def test_pin_in_pyproject_and_committed_version_wins(tmp_path):
    import subprocess

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["trl==0.11.4"]\n')
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "pyproject.toml"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.email=a@b", "-c", "user.name=t", "commit", "-qm", "x"],
                   check=True)
    # the manifest was already raised on disk by this run: the committed pin still decides
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["trl>=1.16.0"]\n')
    mod.pinned_releases.cache_clear()
    out, _ = run(RULE, "from trl import SFTConfig\nSFTConfig(output_dir='o')\n", path=str(tmp_path / "a.py"))
    assert "learning_rate=5e-05" in out


@pytest.mark.slow  # imports trl
def test_the_data_matches_the_installed_trl():
    import dataclasses

    import trl
    from packaging.version import Version
    from trl.experimental.cpo import CPOConfig
    from trl.experimental.orpo import ORPOConfig

    classes = {"SFTConfig": trl.SFTConfig, "DPOConfig": trl.DPOConfig, "RewardConfig": trl.RewardConfig,
               "KTOConfig": trl.KTOConfig, "ORPOConfig": ORPOConfig, "CPOConfig": CPOConfig}
    for name, cls in classes.items():
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        for field in mod.HISTORY[name]:
            assert mod.default_at(name, field, Version(trl.__version__)) == defaults[field], (name, field)


def test_an_import_the_target_lacks_dates_an_unpinned_module(tmp_path):
    """AMindToThink/interpretable-fine-tuning (no trl pin): `SFTConfig(output_dir=..., ...)` beside `from trl import
    DataCollatorForCompletionOnlyLM` (last in 0.19.1). The call alone is no evidence (every release takes it), so TRL
    1.16's gradient checkpointing and bf16 came in silently (a ValueError on a CPU). The import bounds the releases
    the module ran on: gradient_checkpointing=False (the default up to 0.21) written out, the fields whose default
    changed within 0.9 - 0.19 marked. A module importing only names the target has: nothing."""
    src = ("from trl import SFTConfig, DataCollatorForCompletionOnlyLM\n\n"
           'args = SFTConfig(output_dir="out", num_train_epochs=1)\n')
    out, findings = _run_in(tmp_path, None, src)
    assert 'args = SFTConfig(output_dir="out", num_train_epochs=1, gradient_checkpointing=False)' in out
    manual = [f.message for f in findings if f.severity == "manual"]
    assert len(manual) == 1 and manual[0].startswith("set learning_rate, logging_steps, bf16:")
    assert "DataCollatorForCompletionOnlyLM, last in 0.19.1" in manual[0]
    plain = "from trl import SFTConfig, SFTTrainer\n\nargs = SFTConfig(output_dir='out')\n"
    assert _run_in(tmp_path, None, plain) == (plain, [])

