"""local-config-base: a repository's TrainingArguments subclass fed to one TRL trainer is based on its TRL config.

The rule needs the run's index of local classes, so these tests migrate small trees through the real runner
(`migrate_paths`), with `trainer-kwargs-to-config` beside it (the two halves of the alignment-handbook shape).
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import transformers
import trl
from packaging.version import Version

from compat.migrate import migrate_paths
from migrations.base import Options
from migrations.v0_13 import trainer_kwargs_to_config as kwargs_rule
from migrations.v0_13.local_config_base import MIGRATION as RULE
from tests.migrations._driver import noop

# alignment-handbook's src/alignment/configs.py at 606d2e9, cut down
CONFIGS = """\
import dataclasses
from dataclasses import dataclass, field
from typing import Optional

import transformers
from transformers import HfArgumentParser


class H4ArgumentParser(HfArgumentParser):
    def parse(self):
        if len(sys.argv) == 2:
            output = self.parse_yaml_file(sys.argv[1])
        else:
            output = self.parse_args_into_dataclasses()
        if len(output) == 1:
            output = output[0]
        return output


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = None
    trust_remote_code: bool = False


@dataclass
class SFTConfig(transformers.TrainingArguments):
    max_seq_length: Optional[int] = field(default=None)
    logging_first_step: bool = field(default=True)
"""

CONFIGS_AFTER = CONFIGS.replace("HfArgumentParser\n\n", "HfArgumentParser\nimport trl\n\n", 1).replace(
    "class SFTConfig(transformers.TrainingArguments)", "class SFTConfig(trl.SFTConfig)") + """
    # TrainingArguments' defaults, which trl.SFTConfig changes (trl-compat)
    learning_rate: float = 5e-05
    logging_steps: float = 500
    gradient_checkpointing: bool = False
    bf16: bool = False

    # declared by a class parsed beside this one; trl.SFTConfig's default, as TRL 0.x had it (trl-compat)
    trust_remote_code: bool = dataclasses.field(default=False, init=False)
"""

SCRIPT = """\
from alignment import H4ArgumentParser, ModelArguments, SFTConfig
from trl import SFTTrainer


def main():
    parser = H4ArgumentParser((ModelArguments, SFTConfig))
    model_args, training_args = parser.parse()
    trainer = SFTTrainer(
        model=model_args.model_name_or_path,
        model_init_kwargs=model_kwargs,
        args=training_args,
        dataset_text_field="text",
        max_seq_length=training_args.max_seq_length,
        packing=True,
    )
"""

SCRIPT_AFTER = """\
from alignment import H4ArgumentParser, ModelArguments, SFTConfig
from trl import SFTTrainer


def main():
    parser = H4ArgumentParser((ModelArguments, SFTConfig))
    model_args, training_args = parser.parse()
    training_args.model_init_kwargs = model_kwargs
    training_args.dataset_text_field = "text"
    training_args.max_length = training_args.max_seq_length
    training_args.packing = True
    trainer = SFTTrainer(
        model=model_args.model_name_or_path,
        args=training_args,
    )
"""


def _migrate(tmp_path: Path, configs: str, scripts: dict[str, str]) -> tuple[str, dict[str, str], list]:
    """Write the tree (`src/alignment/configs.py`, re-exported by its package, and `scripts/*.py`), migrate it for
    TRL 1.16 with both rules, and return (configs.py, scripts, findings)."""
    package = tmp_path / "src" / "alignment"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from .configs import H4ArgumentParser, ModelArguments, SFTConfig\n")
    (package / "configs.py").write_text(textwrap.dedent(configs))
    (tmp_path / "scripts").mkdir()
    for name, text in scripts.items():
        (tmp_path / "scripts" / name).write_text(textwrap.dedent(text))
    report = migrate_paths([str(tmp_path)], options=Options(target_trl=Version("1.16.0")),
                           only=["local-config-base", "trainer-kwargs-to-config"], mode="write", allow_dirty=True,
                           jobs=1, verify_idempotent=True)
    assert not [f for f in report.files if f.status == "failed"], report.files
    findings = [x for f in report.files for x in f.findings]
    return ((package / "configs.py").read_text(),
            {name: (tmp_path / "scripts" / name).read_text() for name in scripts}, findings)


def test_the_handbook_shape(tmp_path: Path):
    configs, scripts, findings = _migrate(tmp_path, CONFIGS, {"run_sft.py": SCRIPT})
    assert configs == CONFIGS_AFTER
    assert scripts["run_sft.py"] == SCRIPT_AFTER
    assert not [f for f in findings if f.severity == "manual"]


def test_a_dpo_config_declaring_a_default_itself(tmp_path: Path):
    configs = CONFIGS.replace("class SFTConfig", "class DPOConfig").replace(
        "logging_first_step: bool = field(default=True)", "learning_rate: float = 1e-6\n    beta: float = 0.1")
    script = ("from alignment.configs import DPOConfig, H4ArgumentParser, ModelArguments\nfrom trl import DPOTrainer\n\n\n"
              "def main():\n    parser = H4ArgumentParser((ModelArguments, DPOConfig))\n"
              "    model_args, training_args = parser.parse()\n"
              "    DPOTrainer(model, ref, args=training_args, beta=training_args.beta, loss_type='ipo')\n")
    out, scripts, _ = _migrate(tmp_path, configs, {"run_dpo.py": script})
    assert "class DPOConfig(trl.DPOConfig):" in out
    assert "learning_rate: float = 5e-05" not in out and "    logging_steps: float = 500\n" in out
    assert scripts["run_dpo.py"].splitlines()[-2:] == [
        "    training_args.loss_type = 'ipo'", "    DPOTrainer(model, ref, args=training_args)"]


def test_a_config_built_by_the_script(tmp_path: Path):
    script = ("from alignment import SFTConfig\nfrom trl import SFTTrainer\n\n"
              "args = SFTConfig(output_dir='o')\nSFTTrainer(model=m, args=args, packing=True)\n")
    out, scripts, _ = _migrate(tmp_path, CONFIGS, {"run.py": script})
    # no parser takes it beside ModelArguments: trust_remote_code stays an option of the config
    assert out == CONFIGS_AFTER[:CONFIGS_AFTER.index("\n    # declared by")]
    assert scripts["run.py"].splitlines()[-2:] == ["args = SFTConfig(output_dir='o', packing=True)",
                                                   "SFTTrainer(model=m, args=args)"]


def test_imported_through_a_namespace_package(tmp_path: Path):
    """Phuc3010/self-alignment (an alignment-handbook fork): the scripts import `from src.alignment import ...`, and
    `src/` holds no `__init__.py` (a PEP 420 namespace package). The index knows the class as
    `alignment.configs.SFTConfig`; `src.alignment.SFTConfig` names the same class."""
    script = SCRIPT.replace("from alignment import", "from src.alignment import")
    configs, scripts, findings = _migrate(tmp_path, CONFIGS, {"run_sft.py": script})
    assert configs == CONFIGS_AFTER
    assert scripts["run_sft.py"] == SCRIPT_AFTER.replace("from alignment import", "from src.alignment import")
    assert not [f for f in findings if f.severity == "manual"]


def test_a_namespace_name_that_is_not_the_folder_is_not_followed(tmp_path: Path):
    # the package lives in src/: `lib.alignment` names another module (not in this tree), whatever its last part
    script = SCRIPT.replace("from alignment import", "from lib.alignment import")
    configs, scripts, _ = _migrate(tmp_path, CONFIGS, {"run_sft.py": script})
    assert configs == CONFIGS
    assert "packing=True" in scripts["run_sft.py"]


_DPO_USE = ("from alignment import SFTConfig\nfrom trl import DPOTrainer\n\n"
            "DPOTrainer(m, r, args=SFTConfig(output_dir='o'), beta=0.2)\n")


def test_not_proven_left_alone(tmp_path: Path):
    cases = {
        # the same class fed to two trainers (and a plain transformers.Trainer)
        "two trainers": (CONFIGS, {"run_sft.py": SCRIPT, "run_dpo.py": _DPO_USE}),
        "a plain Trainer too": (CONFIGS, {"run_sft.py": SCRIPT, "run.py": "from transformers import Trainer\n"
                                          "from alignment import SFTConfig\nTrainer(m, SFTConfig(output_dir='o'))\n"}),
        # a __post_init__ of its own, no @dataclass, a local subclass of it
        "post_init": (CONFIGS + "\n    def __post_init__(self):\n        super().__post_init__()\n",
                      {"run_sft.py": SCRIPT}),
        "not a dataclass": (CONFIGS.replace("@dataclass\nclass SFTConfig", "class SFTConfig"), {"run_sft.py": SCRIPT}),
        "subclassed": (CONFIGS + "\n\n@dataclass\nclass Child(SFTConfig):\n    pass\n", {"run_sft.py": SCRIPT}),
        # the repository's own SFTTrainer, not TRL's
        "local trainer": (CONFIGS, {"run_sft.py": SCRIPT.replace("from trl import SFTTrainer",
                                                                 "from mytrainers import SFTTrainer")}),
        # parsed beside a class declaring an option the TRL config adds (argparse refuses the same option twice),
        # or beside a class the index does not know
        "clash": (CONFIGS.replace("trust_remote_code: bool = False", "max_length: int = 512"), {"run_sft.py": SCRIPT}),
        "unknown sibling": (CONFIGS, {"run_sft.py": SCRIPT.replace("(ModelArguments, SFTConfig)",
                                                                   "(elsewhere.Args, SFTConfig)")}),
        # already based on the TRL config
        "migrated": (CONFIGS.replace("transformers.TrainingArguments", "trl.SFTConfig").replace(
            "import transformers\n", "import transformers\nimport trl\n"), {"run_sft.py": SCRIPT}),
    }
    for i, (name, (configs, scripts)) in enumerate(cases.items()):
        root = tmp_path / str(i)
        out, _, findings = _migrate(root, configs, scripts)
        assert out == textwrap.dedent(configs), name
        assert not [f for f in findings if f.rule == "local-config-base"], name


def test_trl_bound_to_something_else_is_marked(tmp_path: Path):
    out, _, findings = _migrate(tmp_path, CONFIGS + "\n\ntrl = None\n", {"run_sft.py": SCRIPT})
    assert "# TODO(trl-compat): base SFTConfig on trl.SFTConfig (`trl` is another name here)" in out
    assert "class SFTConfig(transformers.TrainingArguments):" in out


def test_without_the_index_nothing_happens():
    noop(RULE, CONFIGS)


def test_the_defaults_written_out_are_transformers_own():
    # what a TrainingArguments object holds (transformers 5.24 resolves its deprecated gradient_checkpointing=None to
    # False, the 4.x default), and what a TRL config holds instead
    fields = {f.name: f for f in dataclasses.fields(transformers.TrainingArguments)}
    plain = transformers.TrainingArguments(output_dir="o")
    for config in (trl.SFTConfig, trl.DPOConfig, trl.RewardConfig):
        # the TRL config's own defaults (bf16=None: True unless fp16, resolved in __post_init__)
        defaults = {f.name: f.default for f in dataclasses.fields(config)}
        for name, value in kwargs_rule.training_arguments_defaults().items():
            assert getattr(plain, name) == eval(value) != defaults[name], (name, config)
            assert kwargs_rule.TA_DEFAULT_TYPES[name] in str(fields[name].type), name


def test_a_class_of_the_script_itself(tmp_path: Path):
    """vlf-silkie/VLFeedback run_dpo.py declares `class TrainingArguments(transformers.TrainingArguments)` with `beta`
    in the script that parses it and passes `beta=training_args.beta, max_length=training_args.model_max_length` to
    DPOTrainer: the class is rebased on trl.DPOConfig, and the trainer keywords land on the parsed object (they were
    marked: the rule looked this module's own class up by an import name it does not have)."""
    script = textwrap.dedent("""\
        from dataclasses import dataclass, field

        import transformers
        from trl import DPOTrainer


        @dataclass
        class TrainingArguments(transformers.TrainingArguments):
            model_max_length: int = field(default=8192)
            beta: float = field(default=0.1)


        def train():
            parser = transformers.HfArgumentParser((TrainingArguments,))
            (training_args,) = parser.parse_args_into_dataclasses()
            trainer = DPOTrainer(model, args=training_args, beta=training_args.beta,
                                 max_length=training_args.model_max_length)
        """)
    (tmp_path / "run_dpo.py").write_text(script)
    report = migrate_paths([str(tmp_path)], options=Options(target_trl=Version("1.16.0")),
                           only=["local-config-base", "trainer-kwargs-to-config"], mode="write", allow_dirty=True,
                           jobs=1, verify_idempotent=True)
    assert not [f for f in report.files if f.status == "failed"], report.files
    out = (tmp_path / "run_dpo.py").read_text()
    assert "class TrainingArguments(trl.DPOConfig):" in out
    assert "    training_args.max_length = training_args.model_max_length\n" \
           "    trainer = DPOTrainer(\n        model,\n        args=training_args,\n    )\n" in out, out
    assert "TODO(trl-compat)" not in out


def test_a_repository_subclass_without_init_takes_the_trainer_keywords_path(tmp_path: Path):
    """luka-group/mDPO: `class mDPOTrainer(DPOTrainer)` (another module, overriding the loss, no `__init__`) called
    with `beta=`, `max_length=`: the call is DPOTrainer's, so the keywords move to its config like DPOTrainer's, as
    for one whose `__init__` only hands `*args, **kwargs` on; a subclass with an `__init__` of its own keeps its call
    (its signature decides)."""
    (tmp_path / "mdpo_trainer.py").write_text(textwrap.dedent("""\
        from trl import DPOTrainer


        class mDPOTrainer(DPOTrainer):
            def dpo_loss(self, *args):
                return super().dpo_loss(*args)


        class OwnInit(DPOTrainer):
            def __init__(self, *args, beta=0.1, **kwargs):
                super().__init__(*args, **kwargs)


        class Forwarding(DPOTrainer):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.steps = 0


        class Peeking(DPOTrainer):
            def __init__(self, *args, **kwargs):
                self.beta_seen = kwargs.get("beta")
                super().__init__(*args, **kwargs)
        """))
    (tmp_path / "run.py").write_text(textwrap.dedent("""\
        from trl import DPOConfig
        from mdpo_trainer import Forwarding, OwnInit, Peeking, mDPOTrainer

        args = DPOConfig(output_dir="o")
        mDPOTrainer(model, ref, args=args, beta=0.2, max_length=512)
        OwnInit(model, ref, args=args, beta=0.3)
        Peeking(model, ref, args=args, beta=0.4)
        second = DPOConfig(output_dir="p")
        Forwarding(model, ref, args=second, beta=0.5)
        """))
    report = migrate_paths([str(tmp_path)], options=Options(target_trl=Version("1.16.0")),
                           only=["trainer-kwargs-to-config"], mode="write", allow_dirty=True, jobs=1,
                           verify_idempotent=True)
    assert not [f for f in report.files if f.status == "failed"], report.files
    out = (tmp_path / "run.py").read_text()
    assert 'args = DPOConfig(output_dir="o", beta=0.2, max_length=512)' in out, out
    assert "mDPOTrainer(model, ref, args=args)" in out and "OwnInit(model, ref, args=args, beta=0.3)" in out
    # an __init__ that only hands *args, **kwargs on (the keywords reach DPOTrainer's) is DPOTrainer's call too; one
    # that reads kwargs, or takes a keyword of its own, decides itself
    assert 'second = DPOConfig(output_dir="p", beta=0.5)' in out and "Forwarding(model, ref, args=second)" in out
    assert "Peeking(model, ref, args=args, beta=0.4)" in out
