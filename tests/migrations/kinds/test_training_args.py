"""`migrations.kinds.training_args`: the helpers the removed-`TrainingArguments`-field rules share."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.kinds.imports import imported_names
from migrations.kinds.training_args import (
    binds_name,
    foreign_splat,
    is_training_config,
    pin_admits_none_before,
)


def test_is_training_config():
    assert is_training_config({"transformers.TrainingArguments"})
    assert is_training_config({"transformers.training_args_seq2seq.Seq2SeqTrainingArguments"})
    assert is_training_config({"trl.SFTConfig"}) and is_training_config({"trl.experimental.gkd.GKDConfig"})
    assert not is_training_config({"mylib.SFTConfig"}) and not is_training_config({"trl.SFTTrainer"})
    assert not is_training_config(set())


def test_binds_name():
    assert not binds_name("from compat.trl import warmup\nx = warmup(0.1)\n", "warmup")
    assert not binds_name("warmup_ratio = 0.1\n", "warmup")  # another word
    for text in ("def warmup():\n    pass\n", "class warmup:\n    pass\n", "warmup = 1\n", "for warmup in x:\n    pass\n",
                 "def f(warmup):\n    pass\n", "from mylib import warmup\n", "import warmup\n",
                 "from mylib import other as warmup\n"):
        assert binds_name(text, "warmup"), text


def test_pin_admits_none_before(tmp_path):
    assert not pin_admits_none_before(None, "transformers", "5.2.0")
    assert not pin_admits_none_before(str(tmp_path / "train.py"), "transformers", "5.2.0")  # no pin
    cases = (("transformers>=5.2", "5.2.0", True), ("transformers>=5.0", "5.2.0", False),
             ("transformers>=5.0", "5.0.0", True), ("transformers==4.57.6", "5.0.0", False),
             # HahmDY/reward-modeling-develop: a release the atlas does not list, older than `first`; the manifest
             # rule raises it to the floor (4.56.2), which admits 4.x again
             ("transformers==4.53.1", "5.0.0", False), ("transformers==99.0", "5.0.0", False))
    for i, (pin, first, expected) in enumerate(cases):
        folder = tmp_path / str(i)
        folder.mkdir()
        (folder / "requirements.txt").write_text(f"{pin}\n")
        assert pin_admits_none_before(str(folder / "train.py"), "transformers", first) is expected, (pin, first)


class _Splats(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, keywords: set[str]) -> None:
        super().__init__()
        self.keywords, self.found = keywords, []

    def visit_Call(self, node: cst.Call) -> None:
        if imported_names(self, node.func) & {"trl.SFTConfig"}:
            self.found.append(foreign_splat(self, node, self.keywords))


def _foreign(src: str, keywords: set[str]) -> bool:
    visitor = _Splats(keywords)
    cst.MetadataWrapper(cst.parse_module(src)).visit(visitor)
    (found,) = visitor.found
    return found


def test_foreign_splat():
    head = "from trl import SFTConfig\nfrom compat.trl import warmup, length_grouping\n"
    warm, group = {"warmup_ratio", "warmup_steps"}, {"group_by_length", "train_sampling_strategy"}
    assert not _foreign(head + "SFTConfig(output_dir='o')\n", group)
    assert not _foreign(head + "SFTConfig(**warmup(r))\n", group)  # carries only warmup keywords
    assert not _foreign(head + "SFTConfig(**length_grouping(g))\n", warm)
    assert _foreign(head + "SFTConfig(**warmup(r))\n", warm)  # carries the very keywords
    assert _foreign(head + "SFTConfig(**kw)\n", group) and _foreign(head + "SFTConfig(*a)\n", group)
    assert _foreign("from trl import SFTConfig\nfrom mylib import warmup\nSFTConfig(**warmup(r))\n", group)
