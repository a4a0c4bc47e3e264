"""Before/after and no-op cases for `old-script-arguments` (TRL 0.8's SftScriptArguments / DpoScriptArguments)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from compat.migrate import migrate_source
from migrations.v0_13.old_script_arguments import MIGRATION as RULE
from tests.migrations._driver import check, noop, run

# the shape of TRL 0.8's examples/scripts/sft.py (and its copies, e.g. SsmallSong/TRL_FT)
_SFT = """\
    from transformers import TrainingArguments
    from trl.commands.cli_utils import init_zero_verbose, SftScriptArguments, TrlParser
    from trl import ModelConfig, SFTTrainer

    if __name__ == "__main__":
        parser = TrlParser((SftScriptArguments, TrainingArguments, ModelConfig))
        args, training_args, model_config = parser.parse_args_and_config()
        raw = load_dataset(args.dataset_name)
        trainer = SFTTrainer(
            model=model_config.model_name_or_path,
            args=training_args,
            dataset_text_field=args.dataset_text_field,
            max_seq_length=args.max_seq_length,
            packing=args.packing,
        )
"""


def test_sft_script_arguments_move_and_moved_fields_read_from_the_config():
    out, findings = run(RULE, _SFT)
    assert "from trl.commands.cli_utils import init_zero_verbose, TrlParser\nfrom compat.trl import SftScriptArguments\n" \
        in out
    assert "TrlParser((SftScriptArguments, SFTConfig, ModelConfig))" in out
    assert "from trl import ModelConfig, SFTTrainer, SFTConfig" in out
    assert "from transformers import" not in out  # its last use is gone
    assert "dataset_text_field=training_args.dataset_text_field," in out and "packing=training_args.packing," in out
    assert "max_seq_length=args.max_seq_length," in out and "load_dataset(args.dataset_name)" in out
    manual = [f.message for f in findings if f.severity == "manual"]
    assert len(manual) == 2 and any('default "text"' in m for m in manual)
    assert any(m.startswith("TrainingArguments -> SFTConfig: its defaults differ") for m in manual)


def test_options_the_script_never_read_are_marked():
    # TRL 0.8's vsft_llava.py: the script reads only args.dataset_name; --packing was parsed and ignored
    out, findings = run(RULE, """\
        from transformers import TrainingArguments
        from trl.commands.cli_utils import SftScriptArguments, TrlParser
        parser = TrlParser((SftScriptArguments, TrainingArguments))
        args, training_args = parser.parse_args_and_config()
        raw = load_dataset(args.dataset_name)
    """)
    assert "from compat.trl import SftScriptArguments" in out
    assert any(f.message.startswith("--dataset_text_field, --packing now set SFTConfig fields") for f in findings)


def test_whole_pipeline_leaves_no_trainer_keyword_and_no_self_assignment():
    out = migrate_source(textwrap.dedent(_SFT)).text
    from_trl = {a.name for n in ast.walk(ast.parse(out)) if isinstance(n, ast.ImportFrom) and n.module == "trl"
                for a in n.names}
    assert {"init_zero_verbose", "TrlParser"} <= from_trl and "from compat.trl import SftScriptArguments" in out
    assert "training_args.max_length = args.max_seq_length\n" in out
    assert "training_args.packing = training_args.packing" not in out
    assert "packing=" not in out and "dataset_text_field=" not in out and "max_seq_length=" not in out


def test_dpo_script_arguments_with_a_dpo_config_already_in_the_tuple():
    check(RULE, """\
        from trl import DPOConfig, DPOTrainer, TrlParser
        from trl.commands.cli_utils import DpoScriptArguments as DSA

        parser = TrlParser((DSA, DPOConfig))
        args, cfg = parser.parse_args_and_config()
        DPOTrainer(model, ref, args=cfg, beta=args.beta, max_length=args.max_length,
                   max_prompt_length=args.max_prompt_length)
    """, """\
        from trl import DPOConfig, DPOTrainer, TrlParser
        from compat.trl import DpoScriptArguments as DSA

        # TODO(trl-compat): --max_length now sets DPOConfig.max_length, default 1024 [old-script-arguments]
        # TODO(trl-compat): sanity_check defaults to False (True in TRL 0.8.0-0.8.1) [old-script-arguments]
        parser = TrlParser((DSA, DPOConfig))
        args, cfg = parser.parse_args_and_config()
        DPOTrainer(model, ref, args=cfg, beta=cfg.beta, max_length=cfg.max_length,
                   max_prompt_length=args.max_prompt_length)
    """)


@pytest.mark.parametrize("tail", [
    "print(args)\n",  # the parse result used whole: its fields are not all there any more
    "args.packing = True\n",  # a moved field written
    "del args.packing\n",
    "parser.parse_args_and_config()\n",  # parsed twice
    "parser = None\n",  # the parser rebound
    "args = other\n",  # the parse result rebound
])
def test_uses_it_does_not_understand_are_left_alone(tail):
    src = """\
        from transformers import TrainingArguments
        from trl.commands.cli_utils import SftScriptArguments, TrlParser
        parser = TrlParser((SftScriptArguments, TrainingArguments))
        args, training_args = parser.parse_args_and_config()
        x = args.packing
    """
    noop(RULE, textwrap.dedent(src) + tail)


def test_noops():
    # no config class in the tuple: the moved options would have no home
    noop(RULE, """\
        from trl.commands.cli_utils import SftScriptArguments, TrlParser
        parser = TrlParser((SftScriptArguments,))
        (args,) = parser.parse_args_and_config()
        x = args.packing
    """)
    # the class used outside a parser
    noop(RULE, """\
        from trl.commands.cli_utils import SftScriptArguments
        args = SftScriptArguments(packing=True)
    """)
    # a local class of that name, and a local module of that name
    noop(RULE, """\
        from transformers import HfArgumentParser, TrainingArguments

        class SftScriptArguments:
            packing: bool = False

        args, training_args = HfArgumentParser((SftScriptArguments, TrainingArguments)).parse_args_into_dataclasses()
    """)
    noop(RULE, """\
        from transformers import HfArgumentParser, TrainingArguments
        from cli_utils import SftScriptArguments
        parser = HfArgumentParser((SftScriptArguments, TrainingArguments))
        args, training_args = parser.parse_args_into_dataclasses()
        x = args.packing
    """)
    # already migrated
    noop(RULE, """\
        from trl import SFTConfig, TrlParser
        from compat.trl import SftScriptArguments
        parser = TrlParser((SftScriptArguments, SFTConfig))
        args, training_args = parser.parse_args_and_config()
        x = training_args.packing
    """)
    # a string that mentions it
    noop(RULE, 'text = "from trl.commands.cli_utils import SftScriptArguments"\n')
