"""Cases for `removed-script-fields`: ModelConfig.torch_dtype -> dtype on instances TRL's parser or a call made."""

from __future__ import annotations

from migrations.kinds.script_fields import removed_fields
from migrations.v0_27.removed_script_fields import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_parsed_instance_reads_are_renamed():
    check(RULE, """\
        import torch
        from trl import ModelConfig, PRMConfig, ScriptArguments, TrlParser

        parser = TrlParser((ScriptArguments, PRMConfig, ModelConfig))
        script_args, training_args, model_config = parser.parse_args_and_config()
        torch_dtype = (
            model_config.torch_dtype
            if model_config.torch_dtype in ["auto", None]
            else getattr(torch, model_config.torch_dtype)
        )
    """, """\
        import torch
        from trl import ModelConfig, PRMConfig, ScriptArguments, TrlParser

        parser = TrlParser((ScriptArguments, PRMConfig, ModelConfig))
        script_args, training_args, model_config = parser.parse_args_and_config()
        # TODO(trl-compat): ModelConfig.dtype defaults to "float32" since TRL 0.27 [removed-script-fields]
        torch_dtype = (
            model_config.dtype
            if model_config.dtype in ["auto", None]
            else getattr(torch, model_config.dtype)
        )
    """)


def test_hf_argument_parser_inline_in_a_function_and_a_write():
    check(RULE, """\
        from transformers import HfArgumentParser
        import trl

        def main():
            args, margs = HfArgumentParser((Mine, trl.ModelConfig)).parse_args_into_dataclasses()
            margs.torch_dtype = "bfloat16"
            return margs.torch_dtype
    """, """\
        from transformers import HfArgumentParser
        import trl

        def main():
            args, margs = HfArgumentParser((Mine, trl.ModelConfig)).parse_args_into_dataclasses()
            margs.dtype = "bfloat16"
            return margs.dtype
    """)


def test_annotated_parameter():
    check(RULE, """\
        from trl import ModelConfig, TrlParser

        def train(model_args: ModelConfig, other: Mine, again: ModelConfig):
            again = load()
            return model_args.torch_dtype, other.torch_dtype, again.torch_dtype
    """, """\
        from trl import ModelConfig, TrlParser

        def train(model_args: ModelConfig, other: Mine, again: ModelConfig):
            again = load()
            return model_args.dtype, other.torch_dtype, again.torch_dtype
    """)


def test_construction_keyword_and_none_test_marked():
    out, findings = run(RULE, """\
        from trl import ModelConfig as MC

        cfg = MC(model_name_or_path="m", torch_dtype="bfloat16")
        if cfg.torch_dtype is None:
            pass
        both = MC(torch_dtype="auto", dtype="bfloat16")
    """)
    lines = out.splitlines()
    assert lines[2] == 'cfg = MC(model_name_or_path="m", dtype="bfloat16")'
    assert lines[3].startswith('# TODO(trl-compat): ModelConfig.dtype defaults to "float32" since TRL 0.27')
    assert lines[3].endswith("[removed-script-fields]") and len(lines[3]) <= 100
    assert lines[4] == "if cfg.dtype is None:"
    assert lines[6].startswith("# TODO(trl-compat): both torch_dtype= and dtype= are passed")
    assert lines[7] == 'both = MC(torch_dtype="auto", dtype="bfloat16")'
    assert sum(not f.changed for f in findings) == 2


def test_gradient_checkpointing_use_reentrant_marked():
    out, findings = run(RULE, """\
        from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

        script_args, training_args, model_args = TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()
        kw = {"use_reentrant": script_args.gradient_checkpointing_use_reentrant}
    """)
    lines = out.splitlines()
    assert lines[3].startswith("# TODO(trl-compat): ScriptArguments.gradient_checkpointing_use_reentrant")
    assert "gradient_checkpointing_use_reentrant is gone since TRL 0.27.0: TRL never read it" in findings[0].message
    assert lines[4].endswith("script_args.gradient_checkpointing_use_reentrant}")


def test_noops():
    # a local ModelConfig class
    noop(RULE, """\
        from dataclasses import dataclass
        from trl import SFTConfig, TrlParser

        @dataclass
        class ModelConfig:
            torch_dtype: str = "auto"

        a, b = TrlParser((SFTConfig, ModelConfig)).parse_args_and_config()
        print(b.torch_dtype)
        m = ModelConfig(torch_dtype="auto")
    """)
    # a variable of another type named model_config; a shadowed name; already dtype
    noop(RULE, """\
        from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

        model_config = load_my_config()
        print(model_config.torch_dtype)
        s, t, m = TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()
        m = other()
        print(m.torch_dtype)
        s2, t2, m2 = TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()
        print(m2.dtype)

        def f(m2):
            return m2.torch_dtype
    """)
    # a subclass of ModelConfig that declares its own torch_dtype field
    noop(RULE, """\
        from dataclasses import dataclass
        from trl import ModelConfig, SFTConfig, TrlParser

        @dataclass
        class MyModelConfig(ModelConfig):
            torch_dtype: str = "bfloat16"

        t, m = TrlParser((SFTConfig, MyModelConfig)).parse_args_and_config()
        print(m.torch_dtype)
        x = MyModelConfig(torch_dtype="auto")
    """)
    # the parser's tuple is not visible, or the unpacking does not match it
    noop(RULE, """\
        from trl import ModelConfig, SFTConfig, TrlParser

        parser = TrlParser(CLASSES)
        a, b = parser.parse_args_and_config()
        print(b.torch_dtype)
        c, d, e = TrlParser((SFTConfig, ModelConfig)).parse_args_and_config()
        print(d.torch_dtype)
        f, g = TrlParser((SFTConfig, ModelConfig)).parse_args_and_config(return_remaining_strings=True)
        print(f.torch_dtype)
    """)
    # TRL's script layout, but main() is also called with something else, passed on, or called with *args
    noop(RULE, """\
        from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

        def main(script_args, training_args, model_args):
            return model_args.torch_dtype

        def other(model_args):
            return model_args.torch_dtype

        def third(model_args):
            return model_args.torch_dtype

        if __name__ == "__main__":
            s, t, m = TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()
            main(s, t, m)
            main(s, t, load_mine())
            other(m)
            run_later(other)
            third(*[m])
    """)
    # make_parser() builds two different tuples: which one the output follows is not known
    noop(RULE, """\
        from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

        def make_parser(full):
            if full:
                return TrlParser((ScriptArguments, SFTConfig, ModelConfig))
            return TrlParser((ScriptArguments, ModelConfig, SFTConfig))

        s, t, m = make_parser(True).parse_args_and_config()
        print(m.torch_dtype)
    """)


def test_trl_script_layout_main_and_make_parser():
    # TRL's own scripts since 0.13 (trl/scripts/sft.py at v0.19.1): the parser comes from make_parser(), the
    # output (with the leftover strings) goes to main() positionally, and main's parameters carry no annotation
    out, _ = run(RULE, """\
        import argparse
        from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

        def main(script_args, training_args, model_args):
            model_kwargs = dict(torch_dtype=model_args.torch_dtype)
            return helper(model_args=model_args)

        def helper(model_args=None):
            return model_args.torch_dtype

        def make_parser(subparsers: argparse._SubParsersAction = None):
            dataclass_types = (ScriptArguments, SFTConfig, ModelConfig)
            if subparsers is not None:
                parser = subparsers.add_parser("sft", help="Run", dataclass_types=dataclass_types)
            else:
                parser = TrlParser(dataclass_types)
            return parser

        if __name__ == "__main__":
            parser = make_parser()
            script_args, training_args, model_args, _ = parser.parse_args_and_config(return_remaining_strings=True)
            main(script_args, training_args, model_args)
    """)
    assert "model_kwargs = dict(torch_dtype=model_args.dtype)" in out
    assert "    return model_args.dtype" in out  # helper(model_args=...) followed through main's parameter
    assert "torch_dtype" not in out.replace("dict(torch_dtype=", "")


def test_table_is_the_atlas():
    gone = removed_fields()
    assert gone["ModelConfig"]["torch_dtype"].removed == "0.27.0"
    assert gone["ModelConfig"]["trust_remote_code"].removed == "1.7.0"
    assert set(gone["ModelConfig"]) == {"torch_dtype", "trust_remote_code"}
    assert RULE.triggers == ("gradient_checkpointing_use_reentrant", "torch_dtype")
