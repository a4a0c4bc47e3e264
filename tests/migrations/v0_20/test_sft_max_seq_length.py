"""Before/after and no-op cases for `sft-max-seq-length`."""

from __future__ import annotations

from migrations.v0_20.sft_max_seq_length import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_keyword_and_attributes_of_provable_configs():
    check(RULE, """\
        from trl import SFTConfig, SFTTrainer
        from transformers import HfArgumentParser

        cfg = SFTConfig(output_dir="o", max_seq_length=512)  # keep
        print(cfg.max_seq_length)
        parser = HfArgumentParser((ScriptArgs, SFTConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        training_args.max_seq_length = script_args.max_seq_length

        class MyTrainer(SFTTrainer):
            def f(self):
                return self.args.max_seq_length
    """, """\
        from trl import SFTConfig, SFTTrainer
        from transformers import HfArgumentParser

        cfg = SFTConfig(output_dir="o", max_length=512)  # keep
        print(cfg.max_length)
        parser = HfArgumentParser((ScriptArgs, SFTConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        # TODO(trl-compat): set after the config was built: on TRL 0.16 [sft-max-seq-length]
        training_args.max_length = script_args.max_seq_length

        class MyTrainer(SFTTrainer):
            def f(self):
                return self.args.max_length
    """)


def test_a_write_after_construction_is_marked_unless_the_pin_predates_the_alias(tmp_path):
    """AI-Plans/Model-Diffing's SFT notebook (run on TRL 0.25) sets `training_args.max_seq_length = MAX_LENGTH` after
    building the config: from 0.16 on that changed nothing, so the renamed line (it now sets max_length) is marked.
    With a pin admitting only releases before 0.16 the write set the field the trainer read: renamed, no marker."""
    src = ("from trl import SFTConfig\nargs = SFTConfig(output_dir='o')\nargs.max_seq_length = 2048\n"
           "print(args.max_seq_length)\n")
    for pin, marked in (("trl==0.12.2", False), ("trl>=0.12,<0.20", True), ("trl==0.25.1", True)):
        folder = tmp_path / pin.replace("=", "").replace(",", "_").replace("<", "").replace(">", "")
        folder.mkdir()
        (folder / "requirements.txt").write_text(pin + "\n")
        out, _ = run(RULE, src, path=str(folder / "train.py"))
        assert "args.max_length = 2048\nprint(args.max_length)" in out
        assert ("# TODO(trl-compat): set after the config was built" in out) is marked, (pin, out)


def test_gkd_config_and_both_given():
    check(RULE, """\
        from trl.experimental.gkd import GKDConfig
        GKDConfig(max_seq_length=256)
    """, """\
        from trl.experimental.gkd import GKDConfig
        GKDConfig(max_length=256)
    """)
    out, _ = run(RULE, """\
        from trl import SFTConfig
        SFTConfig(max_seq_length=1, max_length=2)
    """)
    assert out.count("# TODO(trl-compat)") == 1 and "max_seq_length=1, max_length=2" in out


def test_noops():
    noop(RULE, """\
        from trl import SFTConfig
        from dataclasses import dataclass

        @dataclass
        class ScriptArguments:
            max_seq_length: int = 512

        args = ScriptArguments()
        print(args.max_seq_length)
        tokenizer(text, max_length=args.max_seq_length)
        msg = "SFTConfig(max_seq_length=512)"

        def f(config):
            return config.max_seq_length
    """)
    noop(RULE, """\
        from .trl import SFTConfig
        SFTConfig(max_seq_length=3)
    """)
    noop(RULE, """\
        from trl import SFTConfig

        class SFTTrainerLike:
            def f(self):
                return self.args.max_seq_length
    """)
