"""`python -m compat.demo` (`make demo`): migrate the bundled repository, show diff/report/TODOs, smoke-run the result."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat import demo

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ppo_era"  # the source tree, also under tox's wheel


@pytest.mark.slow
@pytest.mark.trl
def test_demo_migrates_reports_and_trains(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("trl")
    work = tmp_path / "work"
    code = demo.main(["--keep", str(work), "--examples", str(EXAMPLES), "--scripts", "classic_gpt2_sentiment.py"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1. python -m compat.migrate --diff" in out
    assert "-from trl import AutoModelForCausalLMWithValueHead" in out  # the diff is printed
    assert "+from trl import GRPOConfig, GRPOTrainer" in out
    assert "TODO(trl-compat) marker(s)" in out and "classic_gpt2_sentiment.py:" in out
    assert "trl-compat smoke: PASSED  classic_gpt2_sentiment.py  (2 training steps, GRPOTrainer" in out
    assert "1/1 migrated scripts trained for 2 steps" in out
    assert (work / "report.json").is_file()
    original = (EXAMPLES / "classic_gpt2_sentiment.py").read_text(encoding="utf-8")
    assert "PPOTrainer" in original  # the bundled example itself is never rewritten


@pytest.mark.slow
def test_demo_degrades_without_the_migrator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(demo, "_migrator_available", lambda: "compat.migrate cannot be imported (test)")
    code = demo.main(["--keep", str(tmp_path / "work"), "--examples", str(EXAMPLES)])
    out = capsys.readouterr().out
    assert code == 1
    assert "The migrator is not available in this checkout yet: compat.migrate cannot be imported (test)" in out
    assert "trl-compat smoke: FAILED" in out and "classic_gpt2_sentiment.py" in out


def test_demo_without_the_example_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--examples", str(tmp_path / "missing")]) == 2
    assert "no example repository" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.trl
def test_demo_on_the_era_faithful_repository_leaves_nothing_unmarked(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The default repository (examples/ppo_era_repo, TRL 0.8.6): migrated, checked and smoke-run; every script
    trains or stops at a line the migration marked (the demo's exit status 0 says nothing broke unmarked)."""
    pytest.importorskip("trl")
    code = demo.main(["--keep", str(tmp_path / "work"), "--scripts", "sft.py,ppo.py"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "example repository ppo_era_repo copied" in out
    assert "4. python -m compat.check ppo_era_repo/" in out and "marker(s) left" in out
    assert "5. python -m compat.smoke on the 2 migrated script(s)" in out
    assert "fail elsewhere" in out and " 0 fail elsewhere." in out
    # ppo.py reads config.model_name / query_dataset / reward_model back: bound where the config is built, it trains
    assert "trl-compat smoke: PASSED  ppo.py  (2 training steps, GRPOTrainer" in out
    original = (demo.EXAMPLES / "sft.py").read_text(encoding="utf-8")
    assert "dataset_text_field" in original and "SFTTrainer(" in original  # the bundled example is never rewritten
