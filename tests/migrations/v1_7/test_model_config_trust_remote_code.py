"""Cases for `model-config-trust-remote-code`: the option moved to the training config of the same parser."""

from __future__ import annotations

import pytest

from migrations.v1_7.model_config_trust_remote_code import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_read_moves_to_the_training_config():
    check(RULE, """\
        from transformers import AutoTokenizer
        from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

        parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
        script_args, training_args, model_args = parser.parse_args_and_config()
        tok = AutoTokenizer.from_pretrained(model_args.model_name_or_path, trust_remote_code=model_args.trust_remote_code)
    """, """\
        from transformers import AutoTokenizer
        from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

        parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
        script_args, training_args, model_args = parser.parse_args_and_config()
        tok = AutoTokenizer.from_pretrained(model_args.model_name_or_path, trust_remote_code=training_args.trust_remote_code)
    """)


def test_annotated_parameters():
    check(RULE, """\
        from trl import GRPOConfig, ModelConfig

        def train(model_args: ModelConfig, training_args: GRPOConfig):
            return model_args.trust_remote_code
    """, """\
        from trl import GRPOConfig, ModelConfig

        def train(model_args: ModelConfig, training_args: GRPOConfig):
            return training_args.trust_remote_code
    """)


def test_unannotated_main_of_trl_scripts():
    # trl/scripts/dpo.py since 0.13: main()'s parameters are what the parser's output passes, position by position
    check(RULE, """\
        from trl import DPOConfig, ModelConfig, ScriptArguments, TrlParser

        def main(script_args, training_args, model_args):
            return model_args.trust_remote_code

        if __name__ == "__main__":
            parser = TrlParser((ScriptArguments, DPOConfig, ModelConfig))
            script_args, training_args, model_args = parser.parse_args_and_config()
            main(script_args, training_args, model_args)
    """, """\
        from trl import DPOConfig, ModelConfig, ScriptArguments, TrlParser

        def main(script_args, training_args, model_args):
            return training_args.trust_remote_code

        if __name__ == "__main__":
            parser = TrlParser((ScriptArguments, DPOConfig, ModelConfig))
            script_args, training_args, model_args = parser.parse_args_and_config()
            main(script_args, training_args, model_args)
    """)
    # the call passes the training config under another name, by keyword: main's own parameter name is used
    check(RULE, """\
        from trl import DPOConfig, ModelConfig, TrlParser

        def main(model_args, cfg=None):
            return model_args.trust_remote_code

        a, b = TrlParser((DPOConfig, ModelConfig)).parse_args_and_config()
        main(b, cfg=a)
    """, """\
        from trl import DPOConfig, ModelConfig, TrlParser

        def main(model_args, cfg=None):
            return cfg.trust_remote_code

        a, b = TrlParser((DPOConfig, ModelConfig)).parse_args_and_config()
        main(b, cfg=a)
    """)


def test_a_local_subclass_of_a_training_config_holds_the_field():
    """kyleliang919/C-Optim's ppo_tldr.py: `class CustomPPOConfig(PPOConfig)` (GRPOConfig once ppo-to-grpo ran) in the
    parser tuple inherits the field and the option; a subclass that declares the field itself, or a name bound twice,
    is not followed."""
    src = """\
        from dataclasses import dataclass
        from transformers import HfArgumentParser
        from trl import GRPOConfig, ModelConfig

        @dataclass
        class Custom(GRPOConfig):
            sft_model_path: str = "m"

        parser = HfArgumentParser((Custom, ModelConfig))
        training_args, model_args = parser.parse_args_into_dataclasses()
        trust = model_args.trust_remote_code
    """
    check(RULE, src, src.replace("model_args.trust_remote_code", "training_args.trust_remote_code"))
    for body in ('    trust_remote_code: bool = True\n', '    sft_model_path: str = "m"\nCustom = GRPOConfig\n'):
        out, findings = run(RULE, "from transformers import HfArgumentParser\nfrom trl import GRPOConfig, ModelConfig\n"
                                  f"class Custom(GRPOConfig):\n{body}"
                                  "parser = HfArgumentParser((Custom, ModelConfig))\n"
                                  "training_args, model_args = parser.parse_args_into_dataclasses()\n"
                                  "trust = model_args.trust_remote_code\n")
        assert "trust = model_args.trust_remote_code" in out and "# TODO(trl-compat)" in out


def test_no_config_with_the_field_is_marked():
    out, findings = run(RULE, """\
        from transformers import HfArgumentParser
        from trl import ModelConfig, PRMConfig, ScriptArguments

        parser = HfArgumentParser((ScriptArguments, PRMConfig, ModelConfig))
        script_args, training_args, model_config = parser.parse_args_into_dataclasses()
        trust = model_config.trust_remote_code
    """)
    lines = out.splitlines()
    assert lines[5].startswith("# TODO(trl-compat): ModelConfig.trust_remote_code is gone since")
    assert lines[5].endswith("[model-config-trust-remote-code]") and len(lines[5]) <= 100
    assert findings[0].message == (
        "ModelConfig.trust_remote_code is gone since TRL 1.7.0: --trust_remote_code now sets "
        "DPO/GRPO/KTO/RLOO/Reward/SFTConfig.trust_remote_code: read it from that config, or declare it in a "
        "dataclass of your own")
    assert lines[6] == "trust = model_config.trust_remote_code"


def test_construction_keyword_dropped_and_marked():
    out, findings = run(RULE, """\
        from trl import ModelConfig

        mc = ModelConfig(model_name_or_path="m", trust_remote_code=True)
        flag = ModelConfig(trust_remote_code=ask())
    """)
    lines = out.splitlines()
    assert lines[2].startswith("# TODO(trl-compat): ModelConfig(trust_remote_code=) is gone")
    assert 'dropped (it was True)' in findings[0].message
    assert lines[3] == 'mc = ModelConfig(model_name_or_path="m")'
    assert lines[5] == "flag = ModelConfig(trust_remote_code=ask())"


def test_noops():
    # the training-config name is rebound before the read: not the parsed config any more
    out, _ = run(RULE, """\
        from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

        script_args, training_args, model_args = TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()
        training_args = something_else()
        x = model_args.trust_remote_code
    """)
    assert "training_args.trust_remote_code" not in out and "# TODO(trl-compat): ModelConfig.trust_remote_code" in out
    noop(RULE, """\
        from trl import ModelConfig, SFTConfig, TrlParser
        from mylib import ModelConfig as Other

        a = Other(trust_remote_code=True)
        print(a.trust_remote_code)
        script_args, training_args, model_args = TrlParser((SFTConfig, ModelConfig)).parse_args_and_config()
        print(training_args.trust_remote_code)
    """)
    noop(RULE, """\
        from trl import ModelConfig, SFTConfig, TrlParser
        model_args = ModelConfig()
        print(model_args.trust_remote_code)
    """, target="1.6.0")


def test_a_compat_config_that_is_the_reference_one_holds_the_field():
    """`compat.trl.PRMConfig` (and BCO / XPO / Nash-MD) is reference_impl's on 1.14+, which declares
    trust_remote_code; on 1.13 it is TRL's `trl.experimental.prm.PRMConfig`, which does not (the atlas): there the
    read stays marked. TRL 1.13's XPOConfig inherits the field from its OnlineDPOConfig (the 1.13.0 wheel), so
    `compat.trl.XPOConfig` holds it from 1.13 on."""
    src = """\
        from compat.trl import PRMConfig
        from trl import ModelConfig, ScriptArguments, TrlParser

        parser = TrlParser((ScriptArguments, PRMConfig, ModelConfig))
        script_args, training_args, model_args = parser.parse_args_and_config()
        trust = model_args.trust_remote_code
    """
    out, _ = run(RULE, src, target="1.16.0")
    assert out.splitlines()[-1] == "trust = training_args.trust_remote_code" and "TODO" not in out
    out, findings = run(RULE, src, target="1.13.0")
    assert out.splitlines()[-1] == "trust = model_args.trust_remote_code" and "TODO(trl-compat)" in out
    for target in ("1.13.0", "1.16.0"):
        out, _ = run(RULE, src.replace("PRMConfig", "XPOConfig"), target=target)
        assert out.splitlines()[-1] == "trust = training_args.trust_remote_code" and "TODO" not in out
    out, _ = run(RULE, src.replace("compat.trl", "mylib"))  # not trl-compat's: nothing is known of it, marked
    assert out.splitlines()[-1] == "trust = model_args.trust_remote_code" and "TODO(trl-compat)" in out


@pytest.mark.parametrize("target", ["1.13.0", "1.16.0"])
@pytest.mark.parametrize("config", ["XPOConfig", "NashMDConfig", "OnlineDPOConfig"])
def test_a_reference_impl_config_holds_the_field_on_every_target(config, target):
    """`reference_impl.XPOConfig` (what `online-dpo-arguments` gives a judged XPO / Nash-MD / Online DPO file) is the
    same class on every TRL and declares trust_remote_code: the read moves on 1.13 too. A reference config the table
    does not list, or a module of the same name that is not trl-compat's, is not known to hold it: marked."""
    src = f"""\
        from reference_impl import {config}
        from trl import ModelConfig, ScriptArguments, TrlParser

        parser = TrlParser((ScriptArguments, {config}, ModelConfig))
        script_args, training_args, model_args = parser.parse_args_and_config()
        trust = model_args.trust_remote_code
    """
    out, _ = run(RULE, src, target=target)
    assert out.splitlines()[-1] == "trust = training_args.trust_remote_code" and "TODO" not in out
    out, _ = run(RULE, src.replace(config, "A2POConfig"), target=target)
    assert out.splitlines()[-1] == "trust = model_args.trust_remote_code" and "TODO(trl-compat)" in out
    out, _ = run(RULE, src.replace("from reference_impl", "from my_reference_impl"), target=target)
    assert out.splitlines()[-1] == "trust = model_args.trust_remote_code" and "TODO(trl-compat)" in out


def test_the_reference_config_table_is_what_reference_impl_declares():
    import dataclasses

    import pytest

    pytest.importorskip("torch")
    import reference_impl
    from migrations.kinds.script_fields import REFERENCE_CONFIG_FIELDS

    for field, names in REFERENCE_CONFIG_FIELDS.items():
        for name in names:
            assert field in {f.name for f in dataclasses.fields(getattr(reference_impl, name))}, (name, field)


_ONLINE = """\
    from {module} import OnlineDPOConfig
    from trl import ModelConfig, ScriptArguments, TrlParser

    parser = TrlParser((ScriptArguments, OnlineDPOConfig, ModelConfig))
    script_args, training_args, model_config = parser.parse_args_and_config()
    trust = model_config.trust_remote_code
"""


def test_online_dpo_config_holds_the_field_on_every_target():
    """The Online DPO rules write `from reference_impl import OnlineDPOConfig` (this project's class, the same on
    every TRL release, declaring trust_remote_code); `compat.trl.OnlineDPOConfig` is TRL's
    `trl.experimental.online_dpo.OnlineDPOConfig` on 1.13-1.16, which has the field there (the atlas)."""
    for module in ("reference_impl", "reference_impl.trainers", "compat.trl", "trl.experimental.online_dpo"):
        for target in ("1.13.0", "1.16.0"):
            out, findings = run(RULE, _ONLINE.format(module=module), target=target)
            assert out.splitlines()[-1] == "trust = training_args.trust_remote_code", (module, target)
            assert "TODO" not in out and findings, (module, target)


def test_online_dpo_lookalikes_stay_marked():
    # a module of the user's named like nothing of ours, a reference name that is not a config with the field,
    # a reference_impl submodule that is not an export path
    for src in (_ONLINE.format(module="mylib"),
                _ONLINE.format(module="reference_impl").replace("OnlineDPOConfig", "A2POTrainer"),
                _ONLINE.format(module="reference_impl.losses")):
        out, _ = run(RULE, src)
        assert out.splitlines()[-1] == "trust = model_config.trust_remote_code", src
        assert "TODO(trl-compat): ModelConfig.trust_remote_code" in out, src
    # a local class of the same name holds nothing: it provably lacks the option, which gets a class of its own
    out, _ = run(RULE, _ONLINE.format(module="reference_impl").replace(
        "from reference_impl import OnlineDPOConfig", "class OnlineDPOConfig:\n        pass"))
    assert out.splitlines()[-1] == "trust = remote_code_args.trust_remote_code", out
    assert "TrlParser((ScriptArguments, OnlineDPOConfig, ModelConfig, TrustRemoteCodeArguments))" in out


def test_the_parser_puts_the_flag_where_the_rewrite_reads_it(tmp_path):
    """The rewrite is the option itself: with the parser tuple of the migrated script, `--trust_remote_code` is
    parsed into the Online DPO config (default False), and the installed ModelConfig has no such field."""
    import dataclasses

    import pytest

    pytest.importorskip("torch")
    from transformers import HfArgumentParser
    from trl import ModelConfig, ScriptArguments, TrlParser

    import reference_impl
    from compat.trl import OnlineDPOConfig as CompatOnlineDPOConfig

    assert "trust_remote_code" not in {f.name for f in dataclasses.fields(ModelConfig)}
    base = ["--output_dir", str(tmp_path), "--dataset_name", "d", "--model_name_or_path", "m", "--report_to", "none",
            "--bf16", "False"]
    for config in (reference_impl.OnlineDPOConfig, CompatOnlineDPOConfig):
        for parser in (TrlParser((ScriptArguments, config, ModelConfig)),
                       HfArgumentParser((ScriptArguments, config, ModelConfig))):
            parse = parser.parse_args_and_config if isinstance(parser, TrlParser) else \
                parser.parse_args_into_dataclasses
            _script, training_args, model_config = parse(args=[*base, "--trust_remote_code"])
            assert training_args.trust_remote_code is True and not hasattr(model_config, "trust_remote_code")
            _script, training_args, _model = parse(args=base)
            assert training_args.trust_remote_code is False


# open-r1 forks (vangogh0318/handbook-LLM-DRL at b532136): the training configs are the repository's own subclasses,
# defined in another module, imported absolutely by the scripts and relatively by the package's utilities
OPEN_R1_CONFIGS = """\
from dataclasses import dataclass, field

import trl


@dataclass
class GRPOConfig(trl.GRPOConfig):
    benchmarks: list[str] = field(default_factory=list)


@dataclass
class SFTConfig(trl.SFTConfig):
    benchmarks: list[str] = field(default_factory=list)


@dataclass
class OwnConfig(trl.GRPOConfig):
    trust_remote_code: bool = True
"""
OPEN_R1_SCRIPT = """\
from open_r1.configs import GRPOConfig
from trl import ModelConfig, TrlParser


def main(script_args, training_args, model_args):
    return model_args.trust_remote_code


if __name__ == "__main__":
    parser = TrlParser((object, GRPOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
    main(script_args, training_args, model_args)
"""
OPEN_R1_UTILS = """\
from trl import ModelConfig

from ..configs import GRPOConfig, OwnConfig, SFTConfig


def get_tokenizer(model_args: ModelConfig, training_args: SFTConfig | GRPOConfig):
    return model_args.trust_remote_code


def own(model_args: ModelConfig, training_args: OwnConfig):
    return model_args.trust_remote_code


def maybe(model_args: ModelConfig, training_args: SFTConfig | None):
    return model_args.trust_remote_code
"""


def test_repository_configs_of_other_modules_hold_the_field(tmp_path):
    """A class of another module of the repository (the run's index of local classes) deriving from a TRL config
    that has the field, and not declaring it itself, holds the option: through an absolute import in a script whose
    `main` the parser's output is passed to, and through a relative import in an annotated union (every member must
    hold it: `| None` does not). A local class declaring the field itself is not followed (marked)."""
    from compat.migrate import migrate_paths
    from migrations.base import Options
    from packaging.version import Version

    package = tmp_path / "src" / "open_r1"
    (package / "utils").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "configs.py").write_text(OPEN_R1_CONFIGS)
    (package / "grpo.py").write_text(OPEN_R1_SCRIPT)
    (package / "utils" / "__init__.py").write_text("")
    (package / "utils" / "model_utils.py").write_text(OPEN_R1_UTILS)
    report = migrate_paths([str(tmp_path)], options=Options(target_trl=Version("1.16.0")), only=[RULE.id],
                           mode="write", allow_dirty=True, jobs=1, verify_idempotent=True)
    assert not [f for f in report.files if f.status == "failed"], report.files
    script = (package / "grpo.py").read_text()
    assert script == OPEN_R1_SCRIPT.replace("return model_args.trust_remote_code",
                                            "return training_args.trust_remote_code")
    utils = (package / "utils" / "model_utils.py").read_text().split("\n\n\n")
    assert utils[1].endswith("    return training_args.trust_remote_code")
    for kept in utils[2:]:  # OwnConfig declares the field; `SFTConfig | None` may be None
        assert "# TODO(trl-compat): ModelConfig.trust_remote_code is gone" in kept
        assert kept.rstrip().endswith("return model_args.trust_remote_code")


def test_a_holder_rebound_after_the_read(tmp_path):
    """sayands/noisy-lms' reward script reads `model_config.trust_remote_code` in straight-line code after the parser
    and only later rebinds the training config's name (`reward_config = RewardConfig(...)`): at the read the name
    still holds the parsed config. Rebound before the read, or in a loop around both, it is not followed."""
    head = ("from transformers import HfArgumentParser\nfrom trl import ModelConfig, RewardConfig\n"
            "if __name__ == '__main__':\n"
            "    parser = HfArgumentParser((ModelConfig, RewardConfig))\n"
            "    model_config, reward_config = parser.parse_args_into_dataclasses()\n")
    later = "    reward_config = RewardConfig(output_dir=reward_config.output_dir)\n"
    read = "    trust = model_config.trust_remote_code\n"
    check(RULE, head + read + later, head + read.replace("model_config", "reward_config") + later)
    for src in (head + later + read,
                head.replace("if __name__ == '__main__':", "for _ in range(2):") + read + later,
                head + f"    def f():\n    {read}" + later):
        out, _ = run(RULE, src)
        assert "trust = model_config.trust_remote_code" in out and "# TODO(trl-compat)" in out, src


def test_a_parser_without_the_option_gets_a_class_of_its_own():
    """HCY123902/HAPO-like and kyleliang919/C-Optim PPO scripts (TRL 0.12-era ppo.py copies reading
    `model_args.trust_remote_code`) whose other classes have no such option on the target (the project's own PPO
    config on `compat.trl.OnPolicyConfig`, TRL's ScriptArguments): `TrustRemoteCodeArguments` is appended to the
    tuple and the unpacking, and the reads go to it."""
    check(RULE, """\
        from dataclasses import dataclass
        from transformers import HfArgumentParser
        from trl import ModelConfig, ScriptArguments
        from compat.trl import OnPolicyConfig

        @dataclass
        class PPOConfig(OnPolicyConfig):
            vf_coef: float = 0.1

        if __name__ == "__main__":
            parser = HfArgumentParser((ScriptArguments, PPOConfig, ModelConfig))
            script_args, training_args, model_args = parser.parse_args_into_dataclasses()
            tok = load(model_args.model_name_or_path, trust_remote_code=model_args.trust_remote_code)
            ref = load(training_args.sft_model_path, trust_remote_code=model_args.trust_remote_code)
    """, """\
        from dataclasses import dataclass
        from transformers import HfArgumentParser
        from trl import ModelConfig, ScriptArguments
        from compat.trl import OnPolicyConfig, TrustRemoteCodeArguments

        @dataclass
        class PPOConfig(OnPolicyConfig):
            vf_coef: float = 0.1

        if __name__ == "__main__":
            parser = HfArgumentParser((ScriptArguments, PPOConfig, ModelConfig, TrustRemoteCodeArguments))
            script_args, training_args, model_args, remote_code_args = parser.parse_args_into_dataclasses()
            tok = load(model_args.model_name_or_path, trust_remote_code=remote_code_args.trust_remote_code)
            ref = load(training_args.sft_model_path, trust_remote_code=remote_code_args.trust_remote_code)
    """)
    # a multi-line tuple with a trailing comma keeps its layout; a transformers TrainingArguments; a name taken
    check(RULE, """\
        from transformers import HfArgumentParser, TrainingArguments
        from trl import ModelConfig

        remote_code_args = None
        parser = HfArgumentParser(
            (
                TrainingArguments,
                ModelConfig,
            )
        )
        (training_args, model_args) = parser.parse_args_into_dataclasses()
        x = model_args.trust_remote_code
    """, """\
        from transformers import HfArgumentParser, TrainingArguments
        from trl import ModelConfig
        from compat.trl import TrustRemoteCodeArguments

        remote_code_args = None
        parser = HfArgumentParser(
            (
                TrainingArguments,
                ModelConfig,
                TrustRemoteCodeArguments,
            )
        )
        (training_args, model_args, remote_code_args_2) = parser.parse_args_into_dataclasses()
        x = remote_code_args_2.trust_remote_code
    """)


@pytest.mark.parametrize("src", [
    # a class the rule cannot see into (another package), or one declaring the field (argparse would refuse the
    # duplicate option)
    "from mylib import Mine\nparser = HfArgumentParser((Mine, ModelConfig))\n"
    "a, model_args = parser.parse_args_into_dataclasses()\n",
    "class Mine:\n    trust_remote_code: bool = True\nparser = HfArgumentParser((Mine, ModelConfig))\n"
    "a, model_args = parser.parse_args_into_dataclasses()\n",
    # the parser used twice (a YAML branch would unpack one value too few), the output's shape changed, an index
    "parser = HfArgumentParser((TrainingArguments, ModelConfig))\n"
    "a, model_args = parser.parse_args_into_dataclasses()\nb = parser.parse_yaml_file('x.yaml')\n",
    "parser = HfArgumentParser((TrainingArguments, ModelConfig))\n"
    "a, model_args, rest = parser.parse_args_into_dataclasses(return_remaining_strings=True)\n",
    "parser = HfArgumentParser((TrainingArguments, ModelConfig))\n"
    "a, model_args = parser.parse_args_into_dataclasses(None, True)\n",
    # the tuple built elsewhere and used twice; a starred target
    "classes = (TrainingArguments, ModelConfig)\nparser = HfArgumentParser(classes)\nprint(classes)\n"
    "a, model_args = parser.parse_args_into_dataclasses()\n",
])
def test_a_parser_that_may_declare_the_option_or_is_reused_stays_marked(src):
    head = "from transformers import HfArgumentParser, TrainingArguments\nfrom trl import ModelConfig\n"
    out, _ = run(RULE, head + src + "x = model_args.trust_remote_code\n")
    assert "TrustRemoteCodeArguments" not in out and out.endswith("x = model_args.trust_remote_code\n"), out
    assert "# TODO(trl-compat): ModelConfig.trust_remote_code is gone" in out


def test_the_appended_class_parses_the_option_as_model_config_did(tmp_path):
    """The rewrite is the option itself: `--trust_remote_code` on the command line and in a TrlParser `--config`
    YAML lands in `TrustRemoteCodeArguments` (default False), beside classes without it."""
    import dataclasses

    from transformers import HfArgumentParser, TrainingArguments
    from trl import ModelConfig, TrlParser

    from compat.trl import OnPolicyConfig, TrustRemoteCodeArguments

    @dataclasses.dataclass
    class PPOConfig(OnPolicyConfig):
        vf_coef: float = 0.1

    base = ["--output_dir", str(tmp_path), "--model_name_or_path", "m", "--report_to", "none"]
    for classes in ((PPOConfig, ModelConfig, TrustRemoteCodeArguments),
                    (TrainingArguments, ModelConfig, TrustRemoteCodeArguments)):
        parser = HfArgumentParser(classes)
        *_, remote = parser.parse_args_into_dataclasses(args=[*base, "--trust_remote_code"])
        assert remote.trust_remote_code is True
        *_, remote = parser.parse_args_into_dataclasses(args=base)
        assert remote.trust_remote_code is False
    config = tmp_path / "c.yaml"
    config.write_text("trust_remote_code: true\n")
    *_, remote = TrlParser((TrainingArguments, ModelConfig, TrustRemoteCodeArguments)).parse_args_and_config(
        args=[*base, "--config", str(config)])
    assert remote.trust_remote_code is True
