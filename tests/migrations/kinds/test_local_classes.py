"""`kinds.local_classes`: the run's index of the repository's classes, and the runner building it from a tree."""

from __future__ import annotations

from pathlib import Path

from compat.migrate import migrate_paths
from migrations.base import Options
from migrations.kinds.local_classes import LocalClasses, module_entries, worth_scanning

CONFIGS = """\
import trl
import transformers
from transformers import HfArgumentParser as HAP


class Parser(HAP):
    def parse(self):
        return self.parse_args_into_dataclasses()


class Base(trl.SFTConfig):
    pass


class MyConfig(Base):
    extra: int = 0


class Old(transformers.TrainingArguments):
    pass


class Twice(trl.SFTConfig):
    pass


Twice = object
"""


def _index() -> LocalClasses:
    return LocalClasses.merge([
        module_entries("pkg.configs", CONFIGS, "src/pkg/configs.py"),
        module_entries("pkg", "from .configs import MyConfig, Parser as P\n", "src/pkg/__init__.py", True),
    ])


def test_bases_through_modules_reexports_and_aliases():
    index = _index()
    assert index.base_in("pkg.MyConfig", {"trl.SFTConfig"}) == "trl.SFTConfig"  # re-export, then a local base
    assert index.base_in("pkg.configs.MyConfig", {"trl.SFTConfig", "transformers.TrainingArguments"}) == \
        "trl.SFTConfig"
    assert index.base_in("pkg.P", {"transformers.HfArgumentParser"}) == "transformers.HfArgumentParser"
    assert index.base_in("pkg.configs.Old", {"trl.SFTConfig"}) is None
    assert index.base_in("pkg.configs.Old", {"transformers.TrainingArguments"}) == "transformers.TrainingArguments"


def test_what_is_not_followed():
    index = _index()
    assert index.find("pkg.configs.Twice") is None  # bound twice at module level
    assert index.find("trl.SFTConfig") is None  # a library name is not a local class
    assert index.base_in("pkg.Old", {"transformers.TrainingArguments"}) is None  # not re-exported


def test_defines():
    index = _index()
    assert index.defines("pkg.P", "parse") and not index.defines("pkg.P", "parse_args_into_dataclasses")
    assert not index.defines("pkg.MyConfig", "__init__")


def test_gate():
    assert worth_scanning(b"class A(B):\n    pass\n", False)
    assert not worth_scanning(b"class A:\n    pass\nfrom x import y\n", False)
    assert worth_scanning(b"from .configs import A\n", True)


def test_the_runner_builds_it_from_the_walked_tree(tmp_path: Path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("from .configs import MyConfig\n")
    (tmp_path / "src" / "pkg" / "configs.py").write_text("import trl\n\n\nclass MyConfig(trl.SFTConfig):\n    pass\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run.py").write_text(
        "from pkg import MyConfig\nfrom transformers import HfArgumentParser\nfrom trl import SFTTrainer\n\n"
        "parser = HfArgumentParser((Args, MyConfig))\n"
        "script_args, training_args = parser.parse_args_into_dataclasses()\n"
        "trainer = SFTTrainer(model=script_args.model, model_init_kwargs=kw, args=training_args)\n")
    report = migrate_paths([str(tmp_path)], options=Options(), only=["trainer-kwargs-to-config"], mode="diff")
    (entry,) = [f for f in report.files if f.path.endswith("run.py")]
    diff = entry.diff.decode()
    assert "+training_args.model_init_kwargs = kw\n" in diff
    assert "+trainer = SFTTrainer(model=script_args.model, args=training_args)\n" in diff
