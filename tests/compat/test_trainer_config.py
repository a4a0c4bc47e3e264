"""`compat.trl.trainer_config`: the trainer's config with the keywords TRL 0.13 took from the trainers, built as TRL
0.9 - 0.12 built it (rule `trainer-kwargs-to-config`, for an `args` it cannot see built), on the installed TRL."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pytest
from packaging.version import Version

import migrations
from compat.migrate.engine import migrate_source
from migrations.base import Options

transformers = pytest.importorskip("transformers")
trl = pytest.importorskip("trl")

from compat.trl import trainer_config  # noqa: E402


def test_a_training_arguments_becomes_the_config_with_its_values(tmp_path):
    ta = transformers.TrainingArguments(output_dir=str(tmp_path), learning_rate=3e-4, logging_steps=7,
                                        hub_token="secret", use_cpu=True, report_to=[])
    cfg = trainer_config(trl.SFTConfig, ta, max_length=64, packing=True, dataset_text_field="body")
    assert type(cfg) is trl.SFTConfig
    # the TrainingArguments values stay (SFTConfig's own defaults are 2e-5 and 10), the redacted token comes back
    assert (cfg.learning_rate, cfg.logging_steps, cfg.hub_token, cfg.output_dir) == (3e-4, 7, "secret", str(tmp_path))
    assert (cfg.max_length, cfg.packing, cfg.dataset_text_field) == (64, True, "body")
    assert not hasattr(ta, "max_length")  # the object passed in is not changed


def test_a_config_keeps_its_class_and_post_init_sees_the_keywords(tmp_path):
    @dataclass
    class MyDPOConfig(trl.DPOConfig):
        extra: int = 3

    mine = MyDPOConfig(output_dir=str(tmp_path), extra=5, beta=0.3, use_cpu=True, bf16=False, report_to=[])
    cfg = trainer_config(trl.DPOConfig, mine, loss_type="ipo")
    assert type(cfg) is MyDPOConfig and cfg.extra == 5 and cfg.beta == 0.3
    assert cfg.loss_type == ["ipo"]  # DPOConfig.__post_init__ ran on the keyword (a string becomes a list)
    assert mine.loss_type == ["sigmoid"]


def test_none_and_foreign_classes():
    cfg = trainer_config(trl.RewardConfig, None, max_length=32, use_cpu=True, bf16=False)
    assert cfg.output_dir == "tmp_trainer" and cfg.max_length == 32

    @dataclass
    class Mine(transformers.TrainingArguments):
        seq_len: int = 8

    with pytest.raises(TypeError, match=r"Mine with fields SFTConfig lacks \(seq_len\), neither a SFTConfig nor"):
        trainer_config(trl.SFTConfig, Mine(output_dir="o", use_cpu=True), max_length=8)
    with pytest.raises(TypeError, match="neither a SFTConfig nor a transformers TrainingArguments"):
        trainer_config(trl.SFTConfig, {"output_dir": "o"}, max_length=8)


def test_a_subclass_that_only_changes_defaults_becomes_the_config(tmp_path):
    """cttmayi/AIDemo's `TrainTrainingArguments(TrainingArguments)` only redeclares TrainingArguments fields with
    other defaults: TRL 1.16's SFTTrainer itself rebuilds such an object as `SFTConfig(**args.to_dict())`; so does
    trainer_config, with the keywords. The subclass's values (not SFTConfig's defaults) are kept."""

    @dataclass
    class TrainArgs(transformers.TrainingArguments):
        num_train_epochs: float = 7.0
        save_strategy: str = "no"
        learning_rate: float = 3e-4

    mine = TrainArgs(output_dir=str(tmp_path), use_cpu=True, report_to=[], hub_token="secret")
    cfg = trainer_config(trl.SFTConfig, mine, packing=True, max_length=48)
    assert type(cfg) is trl.SFTConfig
    assert (cfg.num_train_epochs, cfg.save_strategy, cfg.learning_rate) == (7.0, "no", 3e-4)
    assert (cfg.packing, cfg.max_length, cfg.hub_token, cfg.output_dir) == (True, 48, "secret", str(tmp_path))


@pytest.mark.slow
def test_migrated_builder_trains_with_the_moved_keywords(tmp_path):
    """dhs-llm-workshop's shape (the TrainingArguments built in another function): migrated by every rule, the
    builder runs on the installed TRL and the trainer's args hold the keywords, with the caller's values."""
    from datasets import Dataset

    from compat.tiny import tiny_model, tiny_tokenizer

    src = textwrap.dedent("""\
        from trl import SFTTrainer


        def build(model, tokenizer, training_args, data_args, ds):
            return SFTTrainer(
                model=model,
                tokenizer=tokenizer,
                args=training_args,
                train_dataset=ds,
                packing=data_args.packing,
                dataset_text_field=data_args.dataset_text_field,
                max_seq_length=data_args.max_seq_length,
            )
    """)
    options = Options(target_trl=Version("1.16.0"))
    result = migrate_source(src, options=options, rules=list(migrations.select(options)), path="train.py")
    assert result.ok and "trainer_config(" in result.text and "TODO(trl-compat)" not in result.text, result.text
    namespace: dict = {}
    exec(compile(result.text, "train.py", "exec"), namespace)

    class DataArgs:
        packing, dataset_text_field, max_seq_length = False, "body", 24

    ta = transformers.TrainingArguments(output_dir=str(tmp_path), learning_rate=1e-3, max_steps=1,
                                        per_device_train_batch_size=2, use_cpu=True, report_to=[])
    tok = tiny_tokenizer()
    ds = Dataset.from_dict({"body": ["hello world " * 20, "a b c d " * 20]})
    trainer = namespace["build"](tiny_model(), tok, ta, DataArgs, ds)
    assert (trainer.args.max_length, trainer.args.dataset_text_field, trainer.args.learning_rate) == (24, "body", 1e-3)
    assert max(len(x) for x in trainer.train_dataset["input_ids"]) <= 24
    trainer.train()
