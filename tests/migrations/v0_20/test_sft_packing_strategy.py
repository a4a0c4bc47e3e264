"""sft-packing-strategy: `packing=True` under a TRL pin before 0.19, checked on its own and after the 0.x trainer
keyword moved into the config (the whole rule set, twice: the marker is written once)."""

from __future__ import annotations

from packaging.version import Version

import migrations
from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.v0_20 import sft_packing_strategy as mod
from migrations.v0_20.sft_packing_strategy import MIGRATION as RULE
from tests.migrations._driver import run

SRC = "from trl import SFTConfig\n\nargs = SFTConfig(output_dir='o', packing=True)\n"


def _at(folder, pin: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "requirements.txt").write_text(f"{pin}\n", encoding="utf-8")
    (folder / ".git").mkdir(exist_ok=True)
    mod._old_pin.cache_clear()
    return str(folder / "train.py")


def test_marked_under_an_old_pin_only(tmp_path):
    _out, findings = run(RULE, SRC, dedent=False, path=_at(tmp_path / "old", "trl==0.7.4"))
    assert [f.message for f in findings] == [mod.MESSAGE]
    for name, pin, src in (("new", "trl==0.20.0", SRC), ("open", "trl>=0.8", SRC),
                           ("off", "trl==0.7.4", SRC.replace("packing=True", "packing=False")),
                           ("set", "trl==0.7.4", SRC.replace("packing=True", "packing=True, packing_strategy='bfd'"))):
        out, findings = run(RULE, src, dedent=False, path=_at(tmp_path / name, pin))
        assert out == src and not findings, name


def test_a_keyword_moved_from_the_0x_trainer_is_marked_once(tmp_path):
    """LvBaolu/Mixtral_V2: `SFTTrainer(model, packing=True, args=TrainingArguments(...))` under trl==0.7.4."""
    src = ("from transformers import TrainingArguments\nfrom trl import SFTTrainer\n\n"
           "trainer = SFTTrainer(model, train_dataset=ds, packing=True, args=TrainingArguments(output_dir='o'))\n")
    path = _at(tmp_path / "mixtral", "trl==0.7.4")
    options = Options(target_trl=Version("1.16.0"))
    rules = migrations.select(options)
    result = migrate_source(src, options=options, rules=rules, path=path, verify_idempotent=True)
    assert result.ok, result.errors
    assert result.text.count("set packing_strategy") == 1 and "packing=True" in result.text
