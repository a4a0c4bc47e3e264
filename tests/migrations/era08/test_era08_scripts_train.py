"""0.8-era SFT / DPO / reward / ORPO scripts: migrated with every rule the 1.16 target selects, then trained 1 step.

Each script is written the way TRL 0.8 examples and user code were (trainer keywords, `tokenizer=`, a plain
`transformers.TrainingArguments`, ORPO from `trl`). The migrated text must parse, carry no marker, and run on the
installed TRL (1.16) with a tiny random model built in-process (`compat.tiny`). Only the datasets are in the shape
TRL 1.16 expects (text / prompt-chosen-rejected): data formats are not code and are out of the migrator's reach.
"""

from __future__ import annotations

import textwrap

import pytest
from packaging.version import Version

import migrations
from compat.migrate.engine import migrate_source
from migrations.base import Options

pytestmark = pytest.mark.slow

SFT_08 = """\
from transformers import TrainingArguments
from trl import SFTTrainer

training_args = TrainingArguments(
    output_dir=OUT,
    per_device_train_batch_size=2,
    max_steps=1,
    report_to=[],
)
trainer = SFTTrainer(
    model,
    args=training_args,
    train_dataset=dataset,
    dataset_text_field="text",
    max_seq_length=32,
    packing=False,
    tokenizer=tokenizer,
)
trainer.train()
"""

DPO_08 = """\
from transformers import TrainingArguments
from trl import DPOTrainer

training_args = TrainingArguments(output_dir=OUT, per_device_train_batch_size=2, max_steps=1, report_to=[],
                                  remove_unused_columns=False)
dpo_trainer = DPOTrainer(
    model,
    ref_model,
    args=training_args,
    beta=0.2,
    loss_type="sigmoid",
    train_dataset=dataset,
    tokenizer=tokenizer,
    max_length=32,
)
dpo_trainer.train()
"""

REWARD_08 = """\
from transformers import TrainingArguments
from trl import RewardTrainer

args = TrainingArguments(output_dir=OUT, per_device_train_batch_size=2, max_steps=1, report_to=[])
trainer = RewardTrainer(model=model, args=args, tokenizer=tokenizer, train_dataset=dataset, max_length=32)
trainer.train()
"""

ORPO_08 = """\
from trl import ORPOConfig, ORPOTrainer

orpo_args = ORPOConfig(output_dir=OUT, per_device_train_batch_size=2, max_steps=1, report_to=[], max_length=32,
                       beta=0.1)
trainer = ORPOTrainer(model, args=orpo_args, train_dataset=dataset, tokenizer=tokenizer)
trainer.train()
"""


def _migrate(src: str, folder) -> str:
    """Migrate as in a repository whose requirements pin the 0.8 stack (the pin decides `config-defaults`)."""
    (folder / "requirements.txt").write_text("torch==2.2.0\ntransformers==4.40.2\ntrl==0.8.6\n", encoding="utf-8")
    (folder / ".git").mkdir(exist_ok=True)
    options = Options(target_trl=Version("1.16.0"))
    result = migrate_source(src, options=options, rules=list(migrations.select(options)),
                            path=str(folder / "train.py"), verify_idempotent=True)
    assert result.ok, result.errors
    assert "TODO(trl-compat)" not in result.text, result.text
    assert not [f for f in result.findings if f.severity == "manual"], result.findings
    return result.text


def _preference_data():
    from datasets import Dataset

    return Dataset.from_dict({
        "prompt": ["hello there", "how are you", "tell me", "what is"],
        "chosen": [" fine thanks", " very well", " a story", " a test"],
        "rejected": [" no", " bad", " nothing", " ?"],
    })


def _run(code: str, tmp_path, **names) -> None:
    namespace = {"OUT": str(tmp_path / "out"), **names}
    exec(compile(code, "train.py", "exec"), namespace)  # noqa: S102 - the migrated test script


def test_sft_08_script(tmp_path):
    from datasets import Dataset

    from compat.tiny import tiny_model, tiny_tokenizer

    code = _migrate(SFT_08, tmp_path)
    assert "SFTConfig(" in code and "max_length=32" in code and "processing_class=tokenizer" in code
    tok = tiny_tokenizer()
    _run(code, tmp_path, model=tiny_model(vocab_size=len(tok)), tokenizer=tok,
         dataset=Dataset.from_dict({"text": ["hello there friend", "the cat sat", "a b c d", "one two"]}))


def test_dpo_08_script(tmp_path):
    from compat.tiny import tiny_model, tiny_tokenizer

    code = _migrate(DPO_08, tmp_path)
    assert "DPOConfig(" in code and "beta=0.2" in code and "TrainingArguments" not in code
    tok = tiny_tokenizer()
    _run(code, tmp_path, model=tiny_model(vocab_size=len(tok)), ref_model=tiny_model(vocab_size=len(tok), seed=1),
         tokenizer=tok, dataset=_preference_data())


def test_reward_08_script(tmp_path):
    from compat.tiny import tiny_model, tiny_tokenizer

    code = _migrate(REWARD_08, tmp_path)
    assert "RewardConfig(" in code and "processing_class=tokenizer" in code
    tok = tiny_tokenizer()
    model = tiny_model("sequence-classification", vocab_size=len(tok), num_labels=1, pad_token_id=tok.pad_token_id)
    data = _preference_data().map(lambda r: {"chosen": r["prompt"] + r["chosen"],
                                             "rejected": r["prompt"] + r["rejected"]}, remove_columns=["prompt"])
    _run(code, tmp_path, model=model, tokenizer=tok, dataset=data)


def test_orpo_08_script(tmp_path):
    from compat.tiny import tiny_model, tiny_tokenizer

    code = _migrate(ORPO_08, tmp_path)
    assert "from trl.experimental.orpo import ORPOConfig, ORPOTrainer" in code
    assert "bf16=False" in code and "learning_rate=5e-05" in code  # the 0.8.6 defaults, written out
    tok = tiny_tokenizer()
    _run(code, tmp_path, model=tiny_model(vocab_size=len(tok)), tokenizer=tok, dataset=_preference_data())


def test_scripts_are_unchanged_on_what_still_works():
    """Item 3: a 1.16-era script passes through every rule unchanged."""
    src = textwrap.dedent("""\
        from trl import DPOConfig, DPOTrainer, create_reference_model, get_peft_config

        ref = create_reference_model(model)
        trainer = DPOTrainer(model, ref, args=DPOConfig(output_dir="o", beta=0.1), processing_class=tok)
    """)
    options = Options(target_trl=Version("1.16.0"))
    rules = list(migrations.select(options))
    result = migrate_source(src, options=options, rules=rules, path="x.py")
    assert result.ok and result.text == src
