"""Which `trl` a file's names are (compat/migrate/resolution.py): `sys.path` insertions and local modules named like
TRL's get an info note in the report; a folder put on `sys.path` that holds its own `trl` makes the file's `trl` that
copy, and the file is left alone (as a vendored copy beside it is)."""

from __future__ import annotations

from compat.migrate.resolution import RULE, notes, vendored_by_sys_path
from compat.migrate.runner import migrate_paths

PPO = "from trl import PPOTrainer, PPOConfig\n\nt = PPOTrainer(PPOConfig(batch_size=4), model)\n"


def _notes(report, name):
    entry = next(e for e in report.files if e.path.endswith(name))
    return entry, [f for f in entry.findings if f.rule == RULE]


def test_sys_path_to_a_folder_with_its_own_trl_leaves_the_file_alone(tmp_path) -> None:
    (tmp_path / "third_party" / "trl").mkdir(parents=True)
    (tmp_path / "third_party" / "trl" / "__init__.py").write_text("PPOTrainer = PPOConfig = object\n")
    src = ("import os\nimport sys\n\n"
           "sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'third_party'))\n" + PPO)
    (tmp_path / "train.py").write_text(src)
    from pathlib import Path
    (tmp_path / "train2.py").write_text("import sys\nfrom pathlib import Path\n\n"
                                        "sys.path.append(str(Path(__file__).resolve().parent / 'third_party'))\n" + PPO)
    report = migrate_paths([str(tmp_path)], mode="check")
    for name in ("train.py", "train2.py"):
        entry, found = _notes(report, name)
        assert entry.status == "unchanged" and not entry.rules_applied, name
        (note,) = found
        assert note.severity == "info" and not note.changed and note.line == 4
        assert note.message.startswith("left alone: line 4 puts third_party on sys.path")
        assert "`trl.PPOTrainer`" in note.message and "third_party/trl/__init__.py" in note.message
    assert Path(tmp_path / "train.py").read_text() == src


def test_sys_path_that_cannot_be_resolved_is_noted_and_the_file_migrated(tmp_path) -> None:
    (tmp_path / "train.py").write_text("import sys\nsys.path.append(ROOT)\n" + PPO)
    (tmp_path / "other.py").write_text("import sys\nsys.path.insert(0, 'libs')\n" + PPO)  # no trl in libs/
    report = migrate_paths([str(tmp_path)], mode="check")
    entry, (note,) = _notes(report, "train.py")
    assert entry.status == "changed" and "ppo-to-grpo" in entry.rules_applied
    assert note.line == 2 and "changes sys.path (ROOT)" in note.message
    assert "cannot be worked out statically" in note.message and "`trl.PPOTrainer`" in note.message
    _, (other,) = _notes(report, "other.py")
    assert "libs holds no `trl` of its own" in other.message


def test_a_local_module_named_like_trl_is_noted(tmp_path) -> None:
    (tmp_path / "ppo_trainer.py").write_text("class PPOTrainer:\n    pass\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "models.py").write_text("class AutoModelForCausalLMWithValueHead:\n    pass\n")
    src = ("from ppo_trainer import PPOTrainer\nfrom pkg.models import AutoModelForCausalLMWithValueHead\n"
           "from trl import SFTConfig\n\ncfg = SFTConfig(output_dir='o', loss_type='chunked_nll')\nt = PPOTrainer()\n")
    (tmp_path / "train.py").write_text(src)
    report = migrate_paths([str(tmp_path)], mode="check")
    entry, found = _notes(report, "train.py")
    assert entry.status == "changed"  # the real TRL names are still migrated
    assert [(f.line, f.severity) for f in found] == [(1, "info"), (2, "info")]
    assert found[0].message == ("left alone: `PPOTrainer` come from the local module `ppo_trainer` (ppo_trainer.py), "
                                "named like TRL's but not TRL")
    assert "`AutoModelForCausalLMWithValueHead`" in found[1].message and "pkg/models.py" in found[1].message


def test_no_note_without_a_reason(tmp_path) -> None:
    path = str(tmp_path / "train.py")
    assert notes(path, PPO) == []
    assert notes(path, "import sys\nsys.path.append('x')\nprint(1)\n") == []  # no trl imported: nothing to say
    assert notes(path, "from os.path import join\nfrom collections import OrderedDict\n") == []
    assert vendored_by_sys_path(path, "import sys\nsys.path.append(X)\n" + PPO) is None
    assert notes(path, "def broken(:\n") == []


def test_a_copy_of_transformers_own_code_is_left_alone(tmp_path) -> None:
    """Yancy456/TRL keeps transformers' `modeling_utils.py` as `models/pretrained.py`: under HuggingFace's licence
    header it defines `PreTrainedModel`, and its `from_pretrained` handles `load_in_8bit` itself. No rule may mark or
    rewrite it. The same header on a project's copy of a TRL trainer (no transformers class defined) or a class of
    that name without the header is the project's code."""
    from compat.migrate.cli import main
    from compat.migrate.resolution import library_copy

    header = "# coding=utf-8\n# Copyright 2018 The HuggingFace Inc. team.\n#\n# Licensed under the Apache License\n"
    copy = header + ("from transformers import GenerationMixin\n\n\nclass PreTrainedModel(GenerationMixin):\n"
                     "    def from_pretrained(cls, path, load_in_8bit=False, torch_dtype=None):\n"
                     "        kwargs = {'load_in_8bit': load_in_8bit}\n        return cls(**kwargs)\n")
    finding = library_copy("models/pretrained.py", copy)
    assert finding is not None and "`PreTrainedModel`" in finding.message
    trainer_copy = header + "from trl.trainer import BaseTrainer\n\n\nclass PPOTrainer(BaseTrainer):\n    pass\n"
    assert library_copy("mytrl/ppo_trainer.py", trainer_copy) is None
    # DylanJoo/retrisound: the project's own `class Trainer(PPOv2Trainer)` under the header imports TRL
    own = header + "from trl.trainer.ppov2_trainer import PPOv2Trainer\n\n\nclass Trainer(PPOv2Trainer):\n    pass\n"
    assert library_copy("src/ppo/ppo_trainer.py", own) is None
    assert library_copy("models/mine.py", copy.replace(header, "")) is None
    (tmp_path / "models").mkdir()
    (tmp_path / "models/pretrained.py").write_text(copy, encoding="utf-8")
    (tmp_path / "train.py").write_text("from transformers import AutoModel\n"
                                       "m = AutoModel.from_pretrained(p, torch_dtype=t)\n", encoding="utf-8")
    assert main(["--allow-dirty", "--allow-no-vcs", "--target-trl", "1.16.0", str(tmp_path)]) == 0
    assert (tmp_path / "models/pretrained.py").read_text(encoding="utf-8") == copy
    assert "dtype=t" in (tmp_path / "train.py").read_text(encoding="utf-8")
