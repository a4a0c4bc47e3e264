"""The smoke runner on real training scripts with the installed TRL (fixtures in tests/smoke/fixtures/): hub models,
hub datasets and a sentiment pipeline stood in for, two real optimizer steps; and scripts that must fail, reported at
the right file and line. Each test is one child process that imports torch/transformers/trl (~10-30 s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.smoke import run

pytest.importorskip("trl")
FIXTURES = Path(__file__).parent / "fixtures"
pytestmark = [pytest.mark.slow, pytest.mark.trl]


def test_migrated_grpo_script_trains_two_steps(tmp_path: Path) -> None:
    result = run(FIXTURES / "grpo_sentiment.py", cwd=tmp_path)
    assert result.passed, result.format(verbose=True) + "\n" + result.output_tail
    assert result.steps == 2 and result.trainers == ["GRPOTrainer"]
    notices = "\n".join(result.notices)
    assert "model 'lvwerra/gpt2-imdb' -> tiny gpt2 GPT2LMHeadModel" in notices
    assert "dataset 'stanfordnlp/imdb' -> synthetic (text, label)" in notices
    assert "pipeline('sentiment-analysis') -> tiny TextClassificationPipeline" in notices
    assert "num_generations=2" in notices and "max_steps=2" in notices
    assert "push_to_hub() skipped" in notices
    assert list(tmp_path.iterdir()) == []  # output_dir, save_model(...) went to the smoke temp dir


def test_rloo_and_online_dpo_configs_are_made_valid(tmp_path: Path) -> None:
    result = run(FIXTURES / "rloo_online_dpo.py", cwd=tmp_path)
    assert result.passed, result.format(verbose=True) + "\n" + result.output_tail
    assert result.trainers == ["RLOOTrainer", "OnlineDPOTrainer"] and result.steps == 2


def test_stand_ins_seen_from_a_script() -> None:
    result = run(FIXTURES / "probe_standins.py", min_steps=0)
    assert result.passed and "PROBE OK" in result.output_tail, result.format(verbose=True) + result.output_tail


def test_removed_trl_import_is_reported_at_its_line() -> None:
    result = run(FIXTURES / "removed_import.py")
    assert not result.passed and result.returncode == 1
    assert result.error_type == "ImportError" and "PPOConfig" in (result.error_message or "")
    assert result.file == str(FIXTURES / "removed_import.py") and result.line == 6
    assert "compat.migrate" in (result.hint or "")


def test_wrong_config_field_is_reported_at_its_line() -> None:
    result = run(FIXTURES / "wrong_config_field.py")
    assert not result.passed
    assert result.error_type == "TypeError" and "cliprange" in (result.error_message or "")
    assert result.file == str(FIXTURES / "wrong_config_field.py") and result.line == 6
    assert "`cliprange` is not a parameter of GRPOConfig" in (result.hint or "")


def test_unresolved_todo_marker_near_the_failure_is_the_hint() -> None:
    result = run(FIXTURES / "todo_leftover.py")
    assert not result.passed and result.error_type == "AttributeError" and result.line == 6
    assert "TODO(trl-compat) marker at line 5" in (result.hint or "")
    assert "MIGRATION.md#value-head" in (result.hint or "")
