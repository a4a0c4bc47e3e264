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


def _index_parts() -> list:
    return [module_entries("pkg.configs", CONFIGS, "src/pkg/configs.py"),
            module_entries("pkg", "from .configs import MyConfig, Parser as P\n", "src/pkg/__init__.py", True)]


def _index() -> LocalClasses:
    return LocalClasses.merge(_index_parts())


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
    # configs.py names no TRL (not parsed as it is read): it is parsed once its base, a class of base.py, is known
    (tmp_path / "src" / "pkg" / "base.py").write_text("import trl\n\n\nclass Base(trl.SFTConfig):\n    pass\n")
    (tmp_path / "src" / "pkg" / "configs.py").write_text("from .base import Base\n\n\nclass MyConfig(Base):\n"
                                                        "    pass\n")
    (tmp_path / "src" / "pkg" / "other.py").write_text("class Unrelated(dict):\n    pass\n")
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


def test_the_runner_parses_only_what_the_index_needs(tmp_path: Path):
    from compat.migrate.runner import _LocalClassIndex

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .b import B\n")
    (tmp_path / "pkg" / "a.py").write_text("import trl\n\n\nclass A(trl.DPOConfig):\n    pass\n")
    (tmp_path / "pkg" / "b.py").write_text("from .a import A\n\n\nclass B(A):\n    pass\n")
    (tmp_path / "pkg" / "c.py").write_text("class C(dict):\n    pass\n")
    builder = _LocalClassIndex()
    for name in ("__init__.py", "a.py", "b.py", "c.py"):
        path = tmp_path / "pkg" / name
        builder.add(str(path), str(path), path.read_bytes())
    index = builder.index()
    assert index.base_in("pkg.B", {"trl.DPOConfig"}) == "trl.DPOConfig"
    assert index.find("pkg.c.C") is None and len(builder.parts) == 3  # c.py was never parsed


def test_a_dataclass_named_in_a_parser_tuple_is_parsed_for_its_fields(tmp_path: Path):
    """sayands/noisy-lms: `TrlParser((RLOOConfig, TokenizerConfig, ...))` with the script's own argument classes in
    `src/configs.py` (plain `@dataclass` classes, no base, no TRL): that file is parsed once a parser tuple names one
    of its dataclasses, so a rule can read their fields; a dataclass file no parser names is not parsed."""
    from compat.migrate.runner import _LocalClassIndex

    (tmp_path / "src").mkdir()
    files = {
        "src/configs.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass TokenizerConfig:\n"
                          "    tokenizer_path: str = ''\n\n\nclass Opaque(make_base()):\n    x: int = 0\n",
        "src/other.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass Unused:\n    y: int = 0\n",
        "train.py": "from trl import RLOOConfig, TrlParser\nfrom src.configs import TokenizerConfig\n\n"
                    "parser = TrlParser((RLOOConfig, TokenizerConfig))\n",
    }
    builder = _LocalClassIndex()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        builder.add(name, str(tmp_path / name), text.encode())
    index = builder.index()
    found = index.find("src.configs.TokenizerConfig")
    assert found is not None and found.fields == ("tokenizer_path",) and found.dataclass and not found.opaque
    assert index.find("src.configs.Opaque").opaque  # a base the module cannot resolve: it may be anything
    assert index.find("src.other.Unused") is None and len(builder.parts) == 2  # other.py was never parsed


_SCRIPT = """\
from pkg import MyConfig, Old
from pkg.configs import Parser
from transformers import Trainer
from trl import DPOTrainer, SFTTrainer


def main():
    parser = Parser((Args, MyConfig))
    script_args, training_args = parser.parse()
    SFTTrainer(model=m, args=training_args)
    Trainer(m, Old(output_dir="o"))
    other = Old(output_dir="o")
    other = Old(output_dir="p")
    DPOTrainer(m, args=other)  # bound twice: not followed
"""


def test_args_uses_through_parsers_names_and_calls():
    index = LocalClasses.merge([*_index_parts(), module_entries("run", _SCRIPT, "scripts/run.py")])
    assert {(u.callee, u.slot) for u in index.uses_of("pkg.configs.MyConfig")} == {("trl.SFTTrainer", "args")}
    assert {(u.callee, u.slot) for u in index.uses_of("pkg.Old")} == set()  # pkg does not re-export Old
    assert {(u.callee, u.slot) for u in index.uses_of("pkg.configs.Old")} == set()
    uses = {(u.cls, u.callee, u.slot) for u in index.args_uses}
    assert ("pkg.Old", "transformers.Trainer", "1") in uses  # recorded as written; `find` resolves it
    assert not any(u.callee == "trl.DPOTrainer" for u in index.args_uses)


def test_delegating_parser_methods_and_dataclass_flags():
    src = CONFIGS + (
        "\n\nclass Reordering(HAP):\n    def parse(self):\n        return self.parse_args_into_dataclasses()[::-1]\n"
        "\n\nclass Unwrapping(HAP):\n    def helper(self):\n        return []\n\n"
        "    def parse(self):\n        if flag:\n            output = self.parse_yaml_file(p)\n"
        "        else:\n            output = self.helper()\n        if len(output) == 1:\n"
        "            output = output[0]\n        return output\n"
        "\n\n@dataclasses.dataclass\nclass Fields(transformers.TrainingArguments):\n    beta: float = 0.1\n")
    index = LocalClasses.merge([module_entries("pkg.configs", "import dataclasses\n" + src, "src/pkg/configs.py")])
    assert index.delegates("pkg.configs.Parser", "parse") and index.delegates("pkg.configs.Unwrapping", "parse")
    assert not index.delegates("pkg.configs.Reordering", "parse")
    assert not index.delegates("pkg.configs.Unwrapping", "helper")  # calls no library parse method
    fields = index.find("pkg.configs.Fields")
    assert fields.dataclass and fields.fields == ("beta",) and not index.find("pkg.configs.Old").dataclass
    assert index.subclassed("pkg.configs.Base") and not index.subclassed("pkg.configs.MyConfig")


def test_gate_trainer_calls():
    assert worth_scanning(b"import trl\ntrainer = SFTTrainer(model=m)\n", False)


def test_parser_tuples_and_lineage():
    index = LocalClasses.merge([*_index_parts(), module_entries("run", _SCRIPT, "scripts/run.py")])
    assert index.parsed_with("pkg.MyConfig") == [""]  # `Args` is not bound in run.py: not resolved
    classes, outside = index.lineage("pkg.MyConfig")
    assert [c.qname for c in classes] == ["pkg.configs.MyConfig", "pkg.configs.Base"] and outside == ["trl.SFTConfig"]
    assert worth_scanning(b"parser = HfArgumentParser((A, B))\n", False)
