"""`ppo_to_grpo.defaults`: the PPOConfig defaults a script got, from the atlas, for the releases it could run on.

Oracle: the values below were read by hand from the release wheels' `trl/trainer/ppo_config.py`
(`unzip -p trl-0.7.10-py3-none-any.whl trl/trainer/ppo_config.py`): `model_name: Optional[str] = None` and
`batch_size: int = 256` in 0.7.10; `"gpt2"` and `128` in 0.7.11; `query_dataset` first declared in 0.7.2;
`trl.import_utils.is_npu_available` exported 0.7.5 .. 0.10.1; `trl/experimental/ppo/ppo_config.py` declares no
`learning_rate` in 0.28.0 (TrainingArguments' 5e-5) and `learning_rate: float = field(default=3e-6, ...)` in 0.29.0.
"""

from __future__ import annotations

from migrations.v1_13.ppo_to_grpo.defaults import (
    Unknown,
    admitted_releases,
    field_default,
    ppo_fields,
)


def test_classic_defaults_per_release() -> None:
    assert ppo_fields("0.7.10", "classic", False)["model_name"] == "None"
    assert ppo_fields("0.7.11", "classic", False)["model_name"] == "'gpt2'"
    assert ppo_fields("0.7.10", "classic", False)["batch_size"] == "256"
    assert ppo_fields("0.8.6", "classic", False)["batch_size"] == "128"
    assert ppo_fields("0.12.2", "classic", False) is None  # the classic config ended with 0.11


def test_a_pin_gives_one_default() -> None:
    releases = admitted_releases("classic", False, ("0.8.5", "0.8.6"), {"model_name"}, set())
    assert releases == ["0.8.5", "0.8.6"]
    assert field_default("model_name", releases, "classic", False) == "gpt2"
    assert field_default("batch_size", releases, "classic", False) == 128
    assert field_default("log_with", releases, "classic", False) is None


def test_unpinned_defaults_that_changed_are_unknown() -> None:
    releases = admitted_releases("classic", False, None, set(), set())
    assert releases[0] == "0.4.0" and releases[-1] == "0.11.4"
    found = field_default("model_name", releases, "classic", False)
    assert isinstance(found, Unknown) and "None in 0.4.0..0.7.10" in found.why and "'gpt2' in 0.7.11..0.11.4" in found.why
    assert field_default("log_with", releases, "classic", False) is None  # None in every classic release


def test_fields_and_imports_narrow_the_releases() -> None:
    assert admitted_releases("classic", False, None, {"query_dataset"}, set())[0] == "0.7.2"
    narrowed = admitted_releases("classic", False, None, set(), {"trl.import_utils.is_npu_available"})
    assert (narrowed[0], narrowed[-1]) == ("0.7.5", "0.10.1")
    # a pin none of whose releases has the code's API (0.12 has no classic PPOConfig; a requirements file shared by
    # scripts of several eras) says nothing about the file: every release with its fields and imports counts
    assert admitted_releases("classic", False, ("0.12.0",), set(), set()) == \
        admitted_releases("classic", False, None, set(), set())
    experimental = admitted_releases("experimental", False, ("0.11.4",), {"reward_model_path"},
                                     {"trl.experimental.ppo.PPOConfig"})
    assert experimental and all(not r.startswith("0.11.") for r in experimental)
    assert isinstance(field_default("model_name", [], "classic", False), Unknown)


SCRIPT = """\
from trl import PPOConfig, PPOTrainer

config = PPOConfig(model_name="gpt2")
trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=ds)
print(config.model_name, config.batch_size)
"""


def _migrate_pinned(tmp_path, pin: str):  # type: ignore[no-untyped-def]
    from compat.migrate.engine import migrate_source
    from migrations import get
    from migrations.base import Options

    (tmp_path / "requirements.txt").write_text(f"{pin}\n")
    result = migrate_source(SCRIPT, options=Options(), rules=[get("ppo-to-grpo")], path=str(tmp_path / "ppo.py"),
                            verify_idempotent=True)
    assert result.ok, result.errors
    return result.text


def test_the_pin_decides_the_written_defaults(tmp_path) -> None:
    new = tmp_path / "new"
    new.mkdir()
    text = _migrate_pinned(new, "trl==0.8.6")
    assert "learning_rate=1.41e-5," in text and "per_device_train_batch_size=128," in text
    assert "was not set" not in text
    assert 'print("gpt2", 128)' in text  # the keyword's value and the 0.8.6 default of batch_size

    old = tmp_path / "old"
    old.mkdir()
    text = _migrate_pinned(old, "trl==0.4.7")
    assert "learning_rate=1e-5," in text and "per_device_train_batch_size=1," in text
    assert 'print("gpt2", 256)' in text


def test_unpinned_defaults_are_marked(tmp_path) -> None:
    text = _migrate_pinned(tmp_path, "transformers==4.40.2")
    lines = text.splitlines()
    assert any(ln.startswith("# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain") for ln in lines)
    assert any(ln.startswith("# TODO(trl-compat): batch_size was not set") for ln in lines)
    assert "config.batch_size" in text  # the read stays (marked), never a guessed default


EXPERIMENTAL = """\
from trl.experimental.ppo import PPOConfig, PPOTrainer

config = PPOConfig(output_dir="out", per_device_train_batch_size=2)
trainer = PPOTrainer(args=config, processing_class=tok, model=policy, ref_model=ref, reward_model=rm,
                     value_model=vm, train_dataset=ds)
"""


def _migrate_experimental(folder, pin: str | None) -> str:  # type: ignore[no-untyped-def]
    from compat.migrate.engine import migrate_source
    from migrations import get
    from migrations.base import Options

    folder.mkdir()
    if pin:
        (folder / "requirements.txt").write_text(f"{pin}\n")
    result = migrate_source(EXPERIMENTAL, options=Options(), rules=[get("ppo-to-grpo")],
                            path=str(folder / "ppo.py"), verify_idempotent=True)
    assert result.ok, result.errors
    return result.text


def test_experimental_learning_rate_follows_the_release(tmp_path) -> None:
    """`trl.experimental.ppo.PPOConfig`'s learning rate: 5e-5 in 0.26-0.28, 3e-6 from 0.29; never guessed silently."""
    assert field_default("learning_rate", ["0.27.0", "0.28.0"], "experimental", False) == 5e-5
    assert field_default("learning_rate", ["0.29.0", "1.12.0"], "experimental", False) == 3e-6
    old = _migrate_experimental(tmp_path / "old", "trl==0.28.0")
    assert "learning_rate=5e-5," in old and "uncertain" not in old
    new = _migrate_experimental(tmp_path / "new", "trl>=1.0,<1.13")
    assert "learning_rate=3e-6," in new and "uncertain" not in new
    unpinned = _migrate_experimental(tmp_path / "unpinned", None)
    assert "learning_rate=3e-6," in unpinned
    assert "# TODO(trl-compat): learning_rate=3e-06 written, old default uncertain (pin trl)" in unpinned


def test_alternative_imports_in_a_try_do_not_narrow_the_releases() -> None:
    import libcst as cst

    from migrations.v1_13.ppo_to_grpo.defaults import trl_imports

    module = cst.parse_module(
        "try:\n    from trl.experimental.ppo import PPOConfig\nexcept ImportError:\n    from trl import PPOConfig\n"
        "from trl import AutoModelForCausalLMWithValueHead\n")
    assert trl_imports(module) == {"trl.AutoModelForCausalLMWithValueHead"}
