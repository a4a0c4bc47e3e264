"""Before/after and no-op cases for `trainer-kwargs-to-config`."""

from __future__ import annotations

import ast
import dataclasses
import textwrap

import pytest
from packaging.version import Version

from migrations.v0_13 import trainer_kwargs_to_config as mod
from migrations.v0_13.trainer_kwargs_to_config import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_assigned_training_arguments_becomes_dpo_config():
    findings = check(RULE, """\
        from transformers import TrainingArguments
        from trl import DPOTrainer

        training_args = TrainingArguments(
            output_dir="out",  # where
            learning_rate=5e-7,
        )
        trainer = DPOTrainer(
            model,
            ref_model,
            args=training_args,
            beta=0.2,  # the beta
            loss_type="sigmoid",
            tokenizer=tok,
        )
    """, """\
        from trl import DPOTrainer, DPOConfig

        training_args = DPOConfig(
            output_dir="out",  # where
            learning_rate=5e-7,
            beta=0.2,
            loss_type="sigmoid",
            logging_steps=500,
            gradient_checkpointing=False,
            bf16=False,
        )
        trainer = DPOTrainer(
            model,
            ref_model,
            args=training_args,
            tokenizer=tok,
        )
    """)
    assert not [f for f in findings if f.severity == "manual"]


def test_inline_args_and_sft_rename_of_max_seq_length():
    check(RULE, """\
        import transformers
        from trl import SFTTrainer

        t = SFTTrainer(model, args=transformers.TrainingArguments(output_dir="o"), dataset_text_field="text",
                       max_seq_length=512, packing=True)
    """, """\
        import transformers
        from trl import SFTTrainer, SFTConfig

        t = SFTTrainer(
            model,
            args=SFTConfig(
                output_dir="o",
                dataset_text_field="text",
                max_length=512,
                packing=True,
                learning_rate=5e-05,
                logging_steps=500,
                gradient_checkpointing=False,
                bf16=False,
            ),
        )
    """)


def test_existing_config_same_value_dropped_and_conflict_marked():
    check(RULE, """\
        from trl import DPOConfig, DPOTrainer
        cfg = DPOConfig(output_dir="o", beta=0.1)
        DPOTrainer(model, args=cfg, beta=0.1, max_length=256)
    """, """\
        from trl import DPOConfig, DPOTrainer
        cfg = DPOConfig(output_dir="o", beta=0.1, max_length=256)
        DPOTrainer(model, args=cfg)
    """)
    out, _ = run(RULE, """\
        from trl import DPOConfig, DPOTrainer
        cfg = DPOConfig(output_dir="o", beta=0.2)
        DPOTrainer(model, args=cfg, beta=0.3)
    """)
    assert "beta=0.2" in out and "beta=0.3" in out and out.count("# TODO(trl-compat)") == 1
    code_lines = [ln for ln in out.splitlines() if not ln.startswith("#")]
    assert "\n".join(code_lines).count("beta=") == 2  # never duplicated on the config


def test_value_bound_after_the_config_is_assigned_before_the_trainer():
    check(RULE, """\
        from trl import DPOConfig, DPOTrainer
        cfg = DPOConfig(output_dir="o")
        tok = load()
        # build it
        trainer = DPOTrainer(model, args=cfg, max_length=tok.model_max_length, beta=0.5)
    """, """\
        from trl import DPOConfig, DPOTrainer
        cfg = DPOConfig(output_dir="o", beta=0.5)
        tok = load()
        # build it
        cfg.max_length = tok.model_max_length
        trainer = DPOTrainer(model, args=cfg)
    """)


def test_a_keyword_passing_the_configs_own_field_is_dropped_not_assigned_to_itself():
    """The zephyr DPO notebook passed `DPOTrainer(args=training_args, beta=training_args.beta, ...)`: moving it wrote
    `training_args.beta = training_args.beta`; the keyword only repeated the config's value, so it just goes."""
    check(RULE, """\
        from trl import DPOConfig, DPOTrainer
        training_args = DPOConfig(output_dir="o", beta=0.01)
        trainer = DPOTrainer(model, args=training_args, beta=training_args.beta, max_length=training_args.max_length,
                             loss_type=other.loss_type)
    """, """\
        from trl import DPOConfig, DPOTrainer
        training_args = DPOConfig(output_dir="o", beta=0.01, loss_type=other.loss_type)
        trainer = DPOTrainer(
            model,
            args=training_args,
        )
    """)

def test_hf_argument_parser_switches_class_and_assigns():
    out, findings = run(RULE, """\
        from dataclasses import dataclass
        from transformers import HfArgumentParser, TrainingArguments
        from trl import DPOTrainer

        @dataclass
        class ScriptArguments:
            model_name: str = "gpt2"

        parser = HfArgumentParser((ScriptArguments, TrainingArguments))
        script_args, training_args = parser.parse_args_into_dataclasses()
        trainer = DPOTrainer(model, ref, args=training_args, beta=script_args.model_name, max_length=1024)
    """)
    assert "from transformers import HfArgumentParser\n" in out
    assert "HfArgumentParser((ScriptArguments, DPOConfig))" in out and "from trl import DPOTrainer, DPOConfig" in out
    assert "training_args.beta = script_args.model_name\ntraining_args.max_length = 1024\n" \
           "trainer = DPOTrainer(model, ref, args=training_args)" in out
    assert [f.severity for f in findings].count("manual") == 1  # the changed defaults of the CLI


def test_a_parser_whose_other_class_declares_a_config_option_is_not_switched():
    """mesolitica/malaya `session/mistral/dpo.py`: `ScriptArguments` declares `beta` and `max_length`, which DPOConfig
    declares too: `HfArgumentParser((ScriptArguments, DPOConfig))` is an argparse error at start-up, so the parser
    keeps TrainingArguments and the trainer gets `trainer_config(DPOConfig, training_args, ...)`; a class the rule
    cannot see into counts as a clash."""
    for script_args in ("@dataclass\nclass ScriptArguments:\n    beta: float = 0.1\n    max_length: int = 512\n",
                        "from mylib import ScriptArguments\n"):
        out, _ = run(RULE, "from dataclasses import dataclass\nfrom transformers import HfArgumentParser, "
                           "TrainingArguments\nfrom trl import DPOTrainer\n" + script_args +
                           "parser = HfArgumentParser((ScriptArguments, TrainingArguments))\n"
                           "script_args, training_args = parser.parse_args_into_dataclasses()\n"
                           "trainer = DPOTrainer(model, ref, args=training_args, beta=script_args.beta)\n")
        assert "HfArgumentParser((ScriptArguments, TrainingArguments))" in out, out
        assert "    args=trainer_config(\n        DPOConfig,\n        training_args,\n        beta=script_args.beta,\n" in out, out


def test_trl_parser_of_the_0_8_example_scripts():
    # the shape of TRL 0.8-0.12's examples/scripts/sft.py: TrlParser(...).parse_args_and_config(), the trainer built
    # inside a `with` block with the SFT keywords read from the script's own dataclass
    out, findings = run(RULE, """\
        from transformers import TrainingArguments
        from trl import ModelConfig, SFTTrainer, TrlParser
        from compat.trl import SftScriptArguments

        if __name__ == "__main__":
            parser = TrlParser((SftScriptArguments, TrainingArguments, ModelConfig))
            args, training_args, model_config = parser.parse_args_and_config()
            with init_context:
                trainer = SFTTrainer(
                    model=model_config.model_name_or_path,
                    args=training_args,
                    dataset_text_field=args.dataset_text_field,
                    max_seq_length=args.max_seq_length,
                    packing=args.packing,
                )
    """)
    assert "TrlParser((SftScriptArguments, SFTConfig, ModelConfig))" in out
    assert ("        training_args.dataset_text_field = args.dataset_text_field\n"
            "        training_args.max_length = args.max_seq_length\n"
            "        training_args.packing = args.packing\n") in out
    assert "max_seq_length=" not in out and "from trl import ModelConfig, SFTTrainer, TrlParser, SFTConfig" in out
    assert [f.severity for f in findings].count("manual") == 1  # the changed defaults of the CLI


def test_old_positional_layout_and_missing_args():
    check(RULE, """\
        from trl import DPOTrainer
        DPOTrainer(model, ref, 0.1, 0, "hinge", train_dataset=ds)
    """, """\
        from trl import DPOTrainer, DPOConfig
        DPOTrainer(
            model,
            ref,
            train_dataset=ds,
            args=DPOConfig(
                output_dir="tmp_trainer",
                loss_type="hinge",
                learning_rate=5e-05,
                logging_steps=500,
                gradient_checkpointing=False,
                bf16=False,
            ),
        )
    """)


def test_invisible_args_and_gone_keywords_are_marked():
    out, findings = run(RULE, """\
        from trl import SFTTrainer, DPOTrainer

        def build(args, model):
            return SFTTrainer(model, packing=True, args=args())

        DPOTrainer(model, beta=0.2, max_prompt_length=128, args=make_args())
    """)
    lines = out.splitlines()
    # `args=` built by a call, with the keywords written before it: marked (see test_args_built_by_a_call_...)
    assert lines[3].strip().startswith("# TODO(trl-compat): move packing= to args, a trl.SFTConfig")
    # max_prompt_length= is a TypeError on every target: its plain value is dropped, and the line says so
    assert "DPOTrainer(model, beta=0.2, args=make_args())" in lines
    marker = lines[lines.index("DPOTrainer(model, beta=0.2, args=make_args())") - 2]
    assert marker.startswith("# TODO(trl-compat): DPOTrainer(max_prompt_length=) dropped"), marker
    assert sum(f.severity == "manual" for f in findings) == 3


def test_unseen_args_object_gets_the_keywords_through_trainer_config():
    """`args=` a parameter (dhs-llm-workshop, openfedllm: built in another function or module): the keywords go
    to `compat.trl.trainer_config(<the config>, args, ...)`, the config TRL 0.9 - 0.12 built from that object."""
    check(RULE, """\
        from trl import DPOTrainer, SFTTrainer

        def build(model, training_args, script_args, ds):
            sft = SFTTrainer(model=model, args=training_args, max_seq_length=script_args.seq_length, train_dataset=ds)
            return DPOTrainer(model, None, args=self.args, beta=script_args.beta, train_dataset=ds)
    """, """\
        from trl import DPOTrainer, SFTTrainer, SFTConfig, DPOConfig
        from compat.trl import trainer_config

        def build(model, training_args, script_args, ds):
            sft = SFTTrainer(
                model=model,
                args=trainer_config(
                    SFTConfig,
                    training_args,
                    max_length=script_args.seq_length,
                ),
                train_dataset=ds,
            )
            return DPOTrainer(
                model,
                None,
                args=trainer_config(DPOConfig, self.args, beta=script_args.beta),
                train_dataset=ds,
            )
    """)
    # marked instead: a value that may have side effects, the helper's name taken, a config name not TRL's
    for src in ("from trl import SFTTrainer\nSFTTrainer(m, args=a, packing=pick())\n",
                "from trl import SFTTrainer\ntrainer_config = 1\nSFTTrainer(m, args=a, packing=p)\n",
                "from trl import SFTTrainer\nfrom mylib import SFTConfig\nSFTTrainer(m, args=a, packing=p)\n"):
        out, findings = run(RULE, src)
        assert "trainer_config(" not in out and "# TODO(trl-compat): move packing= to args" in out, out


def test_args_from_a_function_annotated_to_return_training_arguments_is_unseen_too():
    """deepradadiya/RLHF-Pipeline: `training_args = self._create_sft_training_arguments()`, a method annotated
    `-> TrainingArguments` defined after the trainer call (an override could return another object: `trainer_config`
    checks what it gets). Called inline with a moved keyword written before `args=` (`trainer_config` would evaluate
    it after the call), or without that annotation, or with another class: marked."""
    check(RULE, """\
        from transformers import TrainingArguments
        from trl import SFTTrainer

        class Orchestrator:
            def run(self, m, ds):
                training_args = self._create_sft_training_arguments()
                trainer = SFTTrainer(model=m, args=training_args, train_dataset=ds, dataset_text_field="text")
                SFTTrainer(model=m, packing=True, args=self._create_sft_training_arguments())

            def _create_sft_training_arguments(self) -> TrainingArguments:
                return TrainingArguments(output_dir="out")
    """, """\
        from transformers import TrainingArguments
        from trl import SFTTrainer, SFTConfig
        from compat.trl import trainer_config

        class Orchestrator:
            def run(self, m, ds):
                training_args = self._create_sft_training_arguments()
                trainer = SFTTrainer(
                    model=m,
                    args=trainer_config(
                        SFTConfig,
                        training_args,
                        dataset_text_field="text",
                    ),
                    train_dataset=ds,
                )
                # TODO(trl-compat): move packing= to args, a trl.SFTConfig [trainer-kwargs-to-config]
                SFTTrainer(model=m, packing=True, args=self._create_sft_training_arguments())

            def _create_sft_training_arguments(self) -> TrainingArguments:
                return TrainingArguments(output_dir="out")
    """)
    for returns in ("", " -> MyArguments"):
        out, _ = run(RULE, f"""\
            from transformers import TrainingArguments
            from trl import SFTTrainer

            def make(){returns}:
                return build()

            args = make()
            SFTTrainer(model=m, args=args, packing=True)
        """)
        assert "trainer_config(" not in out and "# TODO(trl-compat): move packing= to args" in out, out


def test_args_built_by_a_call_in_the_trainer_call_is_unseen():
    """umass-ml4ed/feedback-gen-dpo: `args=get_training_args(args)`, a function returning a plain TrainingArguments
    that the SFT run calls too (switching its class would change that run): the keywords, written after `args=`, go
    to `trainer_config(DPOConfig, get_training_args(args), ...)`, evaluated in the order the call had."""
    check(RULE, """\
        from transformers import TrainingArguments
        from trl import DPOTrainer

        def get_training_args(args):
            return TrainingArguments(output_dir=args.model_name, remove_unused_columns=False)

        def sft(args):
            return Trainer(model, args=get_training_args(args))

        def dpo(args):
            return DPOTrainer(model, args=get_training_args(args), beta=args.beta, train_dataset=ds, max_length=2048)
    """, """\
        from transformers import TrainingArguments
        from trl import DPOTrainer, DPOConfig
        from compat.trl import trainer_config

        def get_training_args(args):
            return TrainingArguments(output_dir=args.model_name, remove_unused_columns=False)

        def sft(args):
            return Trainer(model, args=get_training_args(args))

        def dpo(args):
            return DPOTrainer(
                model,
                args=trainer_config(
                    DPOConfig,
                    get_training_args(args),
                    beta=args.beta,
                    max_length=2048,
                ),
                train_dataset=ds,
            )
    """)


def test_a_parameter_annotated_with_training_arguments_or_the_config_is_unseen_too():
    """`def main(script_args, training_args: TrainingArguments, ...)` called with a parser's output
    (alexisrozhkov/llm-calib): the two kinds of object `trainer_config` takes; another annotation is marked."""
    check(RULE, """\
        from transformers import TrainingArguments
        from trl import SFTConfig, SFTTrainer

        def main(script_args, training_args: TrainingArguments, m):
            SFTTrainer(model=m, args=training_args, packing=True)

        def again(args: SFTConfig, m):
            SFTTrainer(model=m, args=args, max_seq_length=512)
    """, """\
        from transformers import TrainingArguments
        from trl import SFTConfig, SFTTrainer
        from compat.trl import trainer_config

        def main(script_args, training_args: TrainingArguments, m):
            SFTTrainer(model=m, args=trainer_config(SFTConfig, training_args, packing=True))

        def again(args: SFTConfig, m):
            SFTTrainer(model=m, args=trainer_config(SFTConfig, args, max_length=512))
    """)
    # TRL's stack_llama_2 sft_llama2.py and its copies (Z3R6X/ToM_in_small_LLMs): a TrainingArguments field of the
    # script's dataclass, read into a name
    check(RULE, """\
        from trl import SFTTrainer

        training_args = script_args.training_args
        SFTTrainer(model=m, args=training_args, packing=script_args.packing)
    """, """\
        from trl import SFTTrainer, SFTConfig
        from compat.trl import trainer_config

        training_args = script_args.training_args
        SFTTrainer(
            model=m,
            args=trainer_config(
                SFTConfig,
                training_args,
                packing=script_args.packing,
            ),
        )
    """)
    for annotation in ("MyArguments", "DPOConfig", '"TrainingArguments"'):
        out, _findings = run(RULE, f"""\
            from trl import DPOConfig, SFTTrainer
            from mine import MyArguments

            def main(training_args: {annotation}, m):
                SFTTrainer(model=m, args=training_args, packing=True)
        """)
        assert "trainer_config(" not in out and "# TODO(trl-compat): move packing= to args" in out, out


def test_a_name_from_a_star_import_is_unseen_too():
    """andreeatomescu16/MoonLandingAI: `training_arguments` comes from `from training_args import *` (a module of the
    project building a TrainingArguments): bound nowhere in the file, so `trainer_config` gets it. Without a star
    import, or where the name is a builtin, nothing says where it comes from: marked."""
    check(RULE, """\
        from trl import SFTTrainer
        from training_args import *

        t = SFTTrainer(model=m, args=training_arguments, dataset_text_field="text")
    """, """\
        from trl import SFTTrainer, SFTConfig
        from training_args import *
        from compat.trl import trainer_config

        t = SFTTrainer(
            model=m,
            args=trainer_config(
                SFTConfig,
                training_arguments,
                dataset_text_field="text",
            ),
        )
    """)
    for source in ("from trl import SFTTrainer\n\nt = SFTTrainer(model=m, args=training_arguments, packing=True)\n",
                   "from trl import SFTTrainer\nfrom x import *\n\nt = SFTTrainer(model=m, args=vars, packing=True)\n"):
        out, _findings = run(RULE, source)
        assert "trainer_config(" not in out and "# TODO(trl-compat): move packing= to args" in out, out


def test_gone_keyword_with_a_call_value_is_kept_and_marked():
    out, findings = run(RULE, """\
        from trl import DPOConfig, DPOTrainer

        DPOTrainer(model, args=DPOConfig(output_dir="o"), max_prompt_length=pick_length(), padding_value=pad)
    """)
    # pick_length() may do something: kept (and marked); pad is a plain name: dropped (and marked)
    assert "max_prompt_length=pick_length()" in out and "padding_value" not in out.splitlines()[-1]
    assert any("DPOTrainer(padding_value=) dropped (it was pad)" in ln for ln in out.splitlines())
    assert any(ln.startswith("# TODO(trl-compat): DPOTrainer(max_prompt_length=): gone") for ln in out.splitlines())


def test_subclass_super_init_is_marked():
    out, findings = run(RULE, """\
        from trl import DPOTrainer

        class MyDPO(DPOTrainer):
            def __init__(self, model, beta=0.1, **kw):
                super().__init__(model, beta=beta, max_prompt_length=64, **kw)
    """)
    assert "# TODO(trl-compat): DPOTrainer.__init__ takes no beta=" in out
    assert findings[0].message.startswith("DPOTrainer.__init__ takes no beta=, max_prompt_length= since TRL 0.13")
    assert "super().__init__(model, beta=beta, max_prompt_length=64, **kw)" in out and len(findings) == 1


def test_subclass_forwarding_the_0x_positional_layout_is_passed_by_keyword():
    # the shape of a VL-RLHF-style subclass: the whole 0.8 DPOTrainer signature forwarded by position; on 0.x the
    # positionals bound these parameters, so naming them is the same call; then the moved keywords are marked
    out, findings = run(RULE, """\
        from trl import DPOTrainer

        class VLDPOTrainer(DPOTrainer):
            def __init__(self, model, ref_model, beta, label_smoothing, loss_type, args):
                super().__init__(model, ref_model, beta, label_smoothing, loss_type, args)

        class Other(DPOTrainer):
            def __init__(self, model, ref_model):
                DPOTrainer.__init__(self, model, ref_model)
    """)
    lines = out.splitlines()
    i = lines.index("        super().__init__(")
    assert lines[i - 1].startswith("        # TODO(trl-compat): DPOTrainer.__init__ takes no beta=")
    assert [line.strip() for line in lines[i + 1:i + 8]] == [
        "model,", "ref_model,", "beta=beta,", "label_smoothing=label_smoothing,", "loss_type=loss_type,", "args=args,",
        ")"]
    manual = [f for f in findings if f.severity == "manual"]
    assert len(manual) == 1 and "beta=, label_smoothing=, loss_type= since TRL 0.13" in manual[0].message
    assert "DPOTrainer.__init__(self, model, ref_model)" in out  # fine on every target


def test_subclass_positionals_that_cannot_be_named_stay_marked():
    # past the 0.x signature's length, or after a star: no keyword to give them
    out, findings = run(RULE, """\
        from trl import DPOTrainer

        class A(DPOTrainer):
            def __init__(self, *a):
                super().__init__(a[0], a[1], *a[2:], a[3])

        class B(DPOTrainer):
            def __init__(self, model, ref_model, beta):
                DPOTrainer.__init__(self, model, ref_model, beta)
    """)
    assert "super().__init__(a[0], a[1], *a[2:], a[3])" in out
    assert "DPOTrainer.__init__(self, model, ref_model, beta)" in out
    assert sum("gets 1 positionals in the TRL 0.x order" in f.message for f in findings) == 2


def test_sft_subclass_positionals_are_passed_by_keyword():
    out, _ = run(RULE, """\
        from trl import SFTTrainer

        class VLSFT(SFTTrainer):
            def __init__(self, model, args, collator, train, evals, tok, init, metrics):
                super().__init__(model, args, collator, train, evals, tok, init, metrics)
    """)
    assert "super().__init__(model, args, collator, train, evals, tok, model_init=init, compute_metrics=metrics)" \
        in out


def test_dpo_with_plain_training_arguments_and_no_moved_keyword_is_switched():
    out, _ = run(RULE, """\
        from transformers import TrainingArguments
        from trl import DPOTrainer
        args = TrainingArguments(output_dir="o")
        DPOTrainer(model, ref, args=args, train_dataset=ds)
    """)
    assert 'args = DPOConfig(\n    output_dir="o",\n    learning_rate=5e-05,\n' in out
    assert "from transformers" not in out  # the last use of TrainingArguments is gone, so is its import


def test_noops():
    # SFTTrainer converts a TrainingArguments itself (1.16 sft_trainer: `SFTConfig(**args.to_dict())`): left alone
    noop(RULE, """\
        from transformers import TrainingArguments
        from trl import SFTTrainer
        SFTTrainer(model, args=TrainingArguments(output_dir="o"), train_dataset=ds)
    """)
    noop(RULE, """\
        from transformers import Trainer
        from trl import SFTConfig

        class DPOTrainer:
            def __init__(self, **kw):
                pass

        DPOTrainer(beta=0.1, max_length=3)
        Trainer(model, max_length=3)
        text = "DPOTrainer(beta=0.1)"
    """)
    noop(RULE, """\
        from .trl import DPOTrainer
        DPOTrainer(model, beta=0.1)
    """)
    noop(RULE, """\
        from trl import DPOConfig, DPOTrainer
        DPOTrainer(model, args=DPOConfig(output_dir="o", beta=0.1))
    """)


def test_keywords_passed_with_their_0x_default_are_dropped():
    # SFTTrainer(max_seq_length=None) is SFTTrainer() on every 0.x release: dropped, not moved (SFTConfig(max_length=
    # None) would turn truncation off on TRL 1.x), even where `args` is out of sight
    out, findings = run(RULE, """\
        from trl import DPOTrainer, SFTConfig, SFTTrainer

        cfg = SFTConfig(output_dir="o", packing=True)
        SFTTrainer(model, args=cfg, max_seq_length=None, packing=False, dataset_text_field="text")

        def build(args):
            return DPOTrainer(model, ref, args=args, beta=0.1, label_smoothing=0, truncation_mode="keep_end")
    """)
    assert 'cfg = SFTConfig(output_dir="o", packing=True, dataset_text_field="text")' in out
    assert "SFTTrainer(model, args=cfg)" in out
    assert "return DPOTrainer(model, ref, args=args)" in out
    assert not [f for f in findings if f.severity == "manual"]
    # not the default: another type (0.0 is no `0`, 0 is no `False`) or another value is moved as before
    out, _ = run(RULE, """\
        from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer
        cfg = DPOConfig(output_dir="o")
        DPOTrainer(model, ref, args=cfg, label_smoothing=0.0, beta=0.2)
        SFTTrainer(model, args=SFTConfig(output_dir="o"), packing=0)
    """)
    assert 'DPOConfig(output_dir="o", label_smoothing=0.0, beta=0.2)' in out
    assert 'SFTConfig(output_dir="o", packing=0)' in out
    # NomanTrips/verify_step_by_step pretrain.py: the default through a name bound once to it
    out, _ = run(RULE, """\
        from trl import SFTConfig, SFTTrainer
        max_seq_length = None
        SFTTrainer(model, args=SFTConfig(output_dir="o"), max_seq_length=max_seq_length)
    """)
    assert 'SFTTrainer(model, args=SFTConfig(output_dir="o"))' in out and "max_length" not in out, out


def test_a_dropped_keyword_before_an_inline_config():
    # unsloth's notebooks (RLHF-Hackathon): `packing = False` (the 0.x default, dropped) precedes the inline
    # `args = TrainingArguments(...)`; the config was looked up by its position before the drop (IndexError)
    check(RULE, """\
        from trl import SFTTrainer
        from transformers import TrainingArguments

        trainer = SFTTrainer(
            model = model,
            train_dataset = dataset,
            dataset_text_field = "text",
            packing = False,
            args = TrainingArguments(output_dir = "outputs", gradient_checkpointing = True),
        )
    """, """\
        from trl import SFTTrainer, SFTConfig

        trainer = SFTTrainer(
            model = model,
            train_dataset = dataset,
            args = SFTConfig(
                output_dir = "outputs",
                gradient_checkpointing = True,
                dataset_text_field="text",
                learning_rate=5e-05,
                logging_steps=500,
                bf16=False,
            ),
        )
    """)


@pytest.mark.parametrize("trainer", sorted(mod._SIGNATURE_DEFAULTS))
def test_signature_defaults_match_every_0x_wheel(trainer):
    """The table holds the trainer signature's default in every release up to 0.12.2 that has the keyword (the
    atlas), and every keyword is there in 0.8.6 - 0.12.2."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    releases = [r for r in atlas.releases() if Version(r) <= Version("0.12.2")]
    checked = 0
    for release in releases:
        signature = atlas.signature(release, f"trl.{trainer}")
        if signature is None:
            continue  # no such trainer yet
        params = {p.name: p.default for p in signature.params}
        for keyword, default in mod._SIGNATURE_DEFAULTS[trainer].items():
            if keyword in params:
                assert ast.literal_eval(params[keyword]) == default, (release, keyword)
                checked += 1
            else:
                assert Version(release) < Version("0.8.6"), (release, keyword)
    assert checked


def test_parser_of_the_trainers_own_config_assigns_before_the_trainer():
    # TRL 0.9-0.12's stack_llama_2/sft_llama2.py: HfArgumentParser((ScriptArguments, SFTConfig)), the SFT keywords on
    # the trainer (TRL 0.x set `args.<field> = value` from them)
    out, findings = run(RULE, """\
        from transformers import HfArgumentParser
        from trl import SFTConfig, SFTTrainer

        parser = HfArgumentParser((ScriptArguments, SFTConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        trainer = SFTTrainer(model=m, max_seq_length=script_args.seq_length, max_seq_length_x=1, args=training_args)
    """)
    assert "training_args.max_length = script_args.seq_length\n" \
           "trainer = SFTTrainer(model=m, max_seq_length_x=1, args=training_args)" in out
    assert "HfArgumentParser((ScriptArguments, SFTConfig))" in out
    assert not [f for f in findings if f.severity == "manual"]
    # a parser of a local class named SFTConfig (alignment-handbook's TrainingArguments subclass): out of sight
    out, findings = run(RULE, """\
        from alignment import H4ArgumentParser, SFTConfig
        from transformers import HfArgumentParser
        from trl import SFTTrainer

        parser = HfArgumentParser((ModelArguments, SFTConfig))
        model_args, training_args = parser.parse_args_into_dataclasses()
        trainer = SFTTrainer(model=m, args=training_args, packing=True)
    """)
    assert "# TODO(trl-compat): move packing= to args, a trl.SFTConfig" in out and "packing=True" in out
    # another trainer's config in the tuple: not this trainer's fields
    out, _ = run(RULE, """\
        from transformers import HfArgumentParser
        from trl import DPOConfig, SFTTrainer

        parser = HfArgumentParser((ScriptArguments, DPOConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        SFTTrainer(model=m, args=training_args, packing=True)
    """)
    assert "move packing= to args" in out and "training_args.packing" not in out
    # already migrated: nothing on the trainer to move
    noop(RULE, """\
        from transformers import HfArgumentParser
        from trl import SFTConfig, SFTTrainer

        parser = HfArgumentParser((ScriptArguments, SFTConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        training_args.max_length = script_args.seq_length
        SFTTrainer(model=m, args=training_args)
    """)


def test_config_bound_to_an_attribute_in_the_same_method():
    # pykoi's supervised_finetuning.py: self.training_args = TrainingArguments(...) then SFTTrainer(args=self...)
    check(RULE, """\
        from transformers import TrainingArguments
        from trl import SFTTrainer

        class Step:
            def __init__(self, cfg):
                self.training_args = TrainingArguments(
                    output_dir=cfg.out,
                    learning_rate=cfg.lr,
                    logging_steps=cfg.log,
                    gradient_checkpointing=cfg.gc,
                    bf16=cfg.bf16,
                )
                self.trainer = SFTTrainer(model=m, args=self.training_args, packing=True)
    """, """\
        from trl import SFTTrainer, SFTConfig

        class Step:
            def __init__(self, cfg):
                self.training_args = SFTConfig(
                    output_dir=cfg.out,
                    learning_rate=cfg.lr,
                    logging_steps=cfg.log,
                    gradient_checkpointing=cfg.gc,
                    bf16=cfg.bf16,
                    packing=True,
                )
                self.trainer = SFTTrainer(model=m, args=self.training_args)
    """)


@pytest.mark.parametrize("source", [
    # bound twice in the module (another method may rebind it before the trainer is built)
    """\
        class Step:
            def __init__(self):
                self.training_args = TrainingArguments(output_dir="o")
                self.trainer = SFTTrainer(model=m, args=self.training_args, packing=True)

            def reset(self):
                self.training_args = TrainingArguments(output_dir="p")
    """,
    # bound in another method
    """\
        class Step:
            def setup(self):
                self.training_args = TrainingArguments(output_dir="o")

            def build(self):
                self.trainer = SFTTrainer(model=m, args=self.training_args, packing=True)
    """,
    # bound after the trainer call
    """\
        def build(self):
            self.trainer = SFTTrainer(model=m, args=self.training_args, packing=True)
            self.training_args = TrainingArguments(output_dir="o")
    """,
    # an attribute of an attribute
    """\
        def build(self):
            self.cfg.training_args = TrainingArguments(output_dir="o")
            self.trainer = SFTTrainer(model=m, args=self.cfg.training_args, packing=True)
    """,
])
def test_attribute_config_out_of_sight_is_marked(source):
    out, findings = run(RULE, "from transformers import TrainingArguments\nfrom trl import SFTTrainer\n"
                        + textwrap.dedent(source))
    assert "TrainingArguments(" in out and "packing=True" in out
    assert [f.severity for f in findings].count("manual") == 1


@pytest.mark.slow  # importing trl costs ~20 s on a loaded 2-core machine
@pytest.mark.parametrize("trainer", ["DPOTrainer", "SFTTrainer", "RewardTrainer"])
def test_tables_match_the_installed_trl(trainer):
    """Every moved keyword is a field of the installed config; every 'gone' one is not (TRL 1.16 here)."""
    import trl

    config = getattr(trl, mod._CONFIG[trainer])
    fields = {f.name for f in dataclasses.fields(config)}
    assert set(mod._MOVED[trainer].values()) <= fields
    assert not set(mod._GONE[trainer]) & fields
    import inspect
    params = set(inspect.signature(getattr(trl, trainer).__init__).parameters)
    assert not (set(mod._MOVED[trainer]) | set(mod._GONE[trainer])) & params


# --- the repository's own config and parser classes of other modules (the run's `Options.local_classes`) ---

_LOCAL_CONFIGS = """\
from dataclasses import dataclass

import trl
import transformers
from transformers import HfArgumentParser


class Parser(HfArgumentParser):
    def parse(self):
        return self.parse_args_into_dataclasses()


class Overriding(HfArgumentParser):
    def parse_args_into_dataclasses(self):
        return ()


class Custom(HfArgumentParser):
    def parse(self):
        return self.parse_args_into_dataclasses()[::-1]


class MyConfig(trl.SFTConfig):
    extra: int = 0


class WithInit(trl.SFTConfig):
    def __init__(self, **kw):
        super().__init__(**kw)


class Old(transformers.TrainingArguments):
    max_seq_length: int = 512


@dataclass
class Plain(transformers.TrainingArguments):
    num_train_epochs: float = 7.0


@dataclass
class PlainWithMethod(transformers.TrainingArguments):
    num_train_epochs: float = 7.0

    def steps(self):
        return 1


@dataclass
class PlainExtra(transformers.TrainingArguments):
    seq_len: int = 8
"""


def _run_local(src: str) -> tuple[str, list]:
    from compat.migrate.engine import migrate_source
    from migrations.base import Options
    from migrations.kinds.local_classes import LocalClasses, module_entries

    index = LocalClasses.merge([module_entries("pkg.configs", _LOCAL_CONFIGS, "src/pkg/configs.py"),
                                module_entries("pkg", "from .configs import *\nfrom .configs import MyConfig, Old\n",
                                               "src/pkg/__init__.py", True)])
    result = migrate_source(textwrap.dedent(src), options=Options(local_classes=index), rules=[RULE],
                            verify_idempotent=True)
    assert result.ok, result.errors
    return result.text, result.findings


def test_local_subclass_of_the_config_parsed_by_a_local_parser():
    out, _ = _run_local("""\
        from pkg import MyConfig
        from pkg.configs import Parser
        from trl import SFTTrainer
        parser = Parser((Args, MyConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        trainer = SFTTrainer(model=name, model_init_kwargs=kw, args=training_args, train_dataset=ds)
        """)
    assert out.splitlines()[-2:] == ["training_args.model_init_kwargs = kw",
                                     "trainer = SFTTrainer(model=name, args=training_args, train_dataset=ds)"]


def test_local_subclass_of_the_config_inline():
    out, _ = _run_local("""\
        from pkg import MyConfig
        from trl import SFTTrainer
        trainer = SFTTrainer(model=name, model_init_kwargs=kw, args=MyConfig(output_dir="o"), train_dataset=ds)
        """)
    assert 'args=MyConfig(output_dir="o", model_init_kwargs=kw)' in out and "model_init_kwargs=kw," not in out


def test_local_parser_method_built_on_the_library_parse_methods():
    # `Parser.parse` returns `self.parse_args_into_dataclasses()` (alignment-handbook's H4ArgumentParser.parse shape)
    out, _ = _run_local("from pkg.configs import MyConfig, Parser as P\nfrom trl import SFTTrainer\n"
                        "parser = P((Args, MyConfig))\nscript_args, training_args = parser.parse()\n"
                        "trainer = SFTTrainer(model=name, model_init_kwargs=kw, args=training_args)\n")
    assert out.splitlines()[-2:] == ["training_args.model_init_kwargs = kw",
                                     "trainer = SFTTrainer(model=name, args=training_args)"]


def test_local_classes_not_proven_are_marked():
    # a parser that overrides the parse method, a method of the repository's parser that is not only the library's
    # (it reorders), a library parser's method that is none of the parse methods, a config with its own __init__
    for src in ("from pkg.configs import MyConfig, Overriding as P\n", "from pkg.configs import MyConfig, Custom as P\n",
                "from pkg.configs import MyConfig\nfrom transformers import HfArgumentParser as P\n"):
        method = "parse_args_into_dataclasses" if "Overriding" in src else "parse"
        out, findings = _run_local(src + "from trl import SFTTrainer\nparser = P((Args, MyConfig))\n"
                                   f"script_args, training_args = parser.{method}()\n"
                                   "trainer = SFTTrainer(model=name, model_init_kwargs=kw, args=training_args)\n")
        assert "# TODO(trl-compat): move model_init_kwargs= to args" in out and "training_args.model_init" not in out
    out, _ = _run_local("from pkg.configs import WithInit\nfrom trl import SFTTrainer\n"
                        "trainer = SFTTrainer(model=name, model_init_kwargs=kw, args=WithInit(output_dir='o'))\n")
    assert "# TODO(trl-compat): move model_init_kwargs= to args" in out


def test_local_training_arguments_subclass_gets_the_exact_fix():
    out, findings = _run_local("""\
        from pkg import Old
        from pkg.configs import Parser
        from trl import SFTTrainer
        parser = Parser((Args, Old))
        script_args, training_args = parser.parse()
        trainer = SFTTrainer(model=name, model_init_kwargs=kw, args=training_args, train_dataset=ds)
        """)
    assert "# TODO(trl-compat): base pkg.configs.Old on trl.SFTConfig" in out
    (message,) = [f.message for f in findings if not f.changed]
    assert "SFTConfig(**args.to_dict())" in message and "then set model_init_kwargs= on it" in message


def test_a_training_arguments_subclass_that_only_changes_defaults_gets_trainer_config():
    """cttmayi/AIDemo fine-tune/ftstep: `main(..., training_args: TrainTrainingArguments)`, a project dataclass of
    another module that only redeclares TrainingArguments fields with other defaults, parsed by HfArgumentParser
    beside a data class holding packing / dataset_text_field / max_seq_length. Rebasing it on SFTConfig would clash
    with those options in the parser; `trainer_config(SFTConfig, training_args, ...)` builds what TRL 1.x itself
    builds from such an object, plus the keywords. A class with a method or a field SFTConfig lacks stays marked."""
    moved = "packing=data_args.packing, max_seq_length=data_args.max_seq_length"
    for prologue in ("def main(data_args, training_args: Plain):\n",
                     "def main(data_args):\n    parser = HfArgumentParser((Args, Plain))\n"
                     "    script_args, training_args = parser.parse_args_into_dataclasses()\n"):
        out, findings = _run_local("from pkg.configs import Plain\nfrom transformers import HfArgumentParser\n"
                                   "from trl import SFTTrainer\n\n" + prologue +
                                   f"    return SFTTrainer(model=m, args=training_args, {moved})\n")
        assert "TODO(trl-compat)" not in out, out
        assert "trainer_config(\n            SFTConfig,\n            training_args,\n" \
               "            packing=data_args.packing,\n            max_length=data_args.max_seq_length,\n" in out, out
        assert "from compat.trl import trainer_config" in out
    for cls in ("PlainWithMethod", "PlainExtra"):
        out, _ = _run_local(f"from pkg.configs import {cls}\nfrom trl import SFTTrainer\n\n"
                            f"def main(data_args, training_args: {cls}):\n"
                            f"    return SFTTrainer(model=m, args=training_args, {moved})\n")
        assert "# TODO(trl-compat): move packing=" in out and "trainer_config" not in out, out


def test_without_the_index_nothing_is_known_beyond_the_file():
    out, findings = run(RULE, """\
        from pkg import MyConfig
        from transformers import HfArgumentParser
        from trl import SFTTrainer
        parser = HfArgumentParser((Args, MyConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        trainer = SFTTrainer(model=name, model_init_kwargs=kw, args=training_args)
        """)
    assert "# TODO(trl-compat): move model_init_kwargs= to args" in out


def test_the_binding_that_reaches_the_trainer_of_a_name_bound_twice():
    """`args` first holds argparse's namespace, then the TrainingArguments the trainer gets (a real script's layout,
    asherps/DPO-RLHF_generalization train_sft.py): the later plain assignment of the same block reaches the call."""
    check(RULE, """\
        from transformers import TrainingArguments
        from trl import SFTTrainer

        def main():
            args = parser.parse_args()
            hps = load(args.hyperparam_file)
            if hps:
                model = build(hps)
            args = TrainingArguments(output_dir="o")
            for _ in range(1):
                trainer = SFTTrainer(model, args=args, dataset_text_field="prompt", packing=True)
    """, """\
        from trl import SFTTrainer, SFTConfig

        def main():
            args = parser.parse_args()
            hps = load(args.hyperparam_file)
            if hps:
                model = build(hps)
            args = SFTConfig(
                output_dir="o",
                dataset_text_field="prompt",
                packing=True,
                learning_rate=5e-05,
                logging_steps=500,
                gradient_checkpointing=False,
                bf16=False,
            )
            for _ in range(1):
                trainer = SFTTrainer(model, args=args)
    """)


@pytest.mark.parametrize("source", [
    # the last binding above the call is in a branch: the other branch's binding may reach it
    """\
    args = parser.parse_args()
    if x:
        args = TrainingArguments(output_dir="o")
    SFTTrainer(model, args=args, packing=True)
    """,
    # the call is in a block the assignment is not in front of (another branch)
    """\
    if x:
        args = TrainingArguments(output_dir="o")
    else:
        args = other()
        SFTTrainer(model, args=args, packing=True)
    """,
    # a loop around the call rebinds the name after it: the second round gets that value
    """\
    args = TrainingArguments(output_dir="o")
    for i in range(2):
        SFTTrainer(model, args=args, packing=True)
        args = other()
    """,
    # read in a nested function, which may run after a later rebinding
    """\
    args = TrainingArguments(output_dir="o")
    def go():
        SFTTrainer(model, args=args, packing=True)
    args = other()
    """,
    # two bindings on one line
    """\
    args = other(); args = TrainingArguments(output_dir="o")
    SFTTrainer(model, args=args, packing=True)
    """,
], ids=["branch", "other-branch", "loop", "closure", "one-line"])
def test_a_binding_that_may_not_reach_the_trainer_is_marked(source):
    out, findings = run(RULE, "from transformers import TrainingArguments\nfrom trl import SFTTrainer\n"
                        + textwrap.dedent(source), dedent=False)
    assert "SFTConfig(" not in out and "packing=True" in out
    assert [f for f in findings if f.severity == "manual" and "packing=" in f.message]


_FACTORY = """\
    from transformers import TrainingArguments
    from trl import SFTTrainer


    def create_training_args(cfg):
        return TrainingArguments(
            output_dir=cfg["output_dir"],
            learning_rate=2e-4,
        )


    def train_model(cfg, model, tokenizer, train_dataset, seq_len):
        training_args = create_training_args(cfg)
        trainer = SFTTrainer(
            model=model,
            args=training_args,
            train_dataset=train_dataset,
            dataset_text_field="text",
            max_seq_length=seq_len,
        )
        trainer.train()
"""


def test_the_config_a_module_function_returns():
    """train-test-regime's scripts/lora_unsloth_train.py: `training_args = create_training_args(cfg)`, a function of
    the file returning `TrainingArguments(...)`. Its call is the config: switched to SFTConfig with the defaults
    written out, the literal moved into it, the value only the caller sees assigned before the trainer."""
    out, findings = run(RULE, _FACTORY)
    tree = ast.parse(out)
    factory = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "create_training_args")
    config = factory.body[0].value
    assert config.func.id == "SFTConfig"
    keywords = {k.arg: ast.unparse(k.value) for k in config.keywords}
    assert keywords["dataset_text_field"] == "'text'" and keywords["learning_rate"] == "0.0002"
    assert {"logging_steps", "gradient_checkpointing", "bf16"} <= keywords.keys()  # TrainingArguments' defaults
    assert "    training_args.max_length = seq_len\n    trainer = SFTTrainer(" in out
    trainer = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "SFTTrainer")
    assert {k.arg for k in trainer.keywords} == {"model", "args", "train_dataset"}
    assert "TODO(trl-compat)" not in out and not [f for f in findings if f.severity == "manual"]


_DEF = 'def create_training_args(cfg):\n    return TrainingArguments(\n        output_dir=cfg["output_dir"],\n' \
    '        learning_rate=2e-4,\n    )\n'


@pytest.mark.parametrize("change", [
    # called twice: the other caller would get the switched class too
    lambda s: s + "\nother = create_training_args({})\n",
    # defined below the trainer call
    lambda s: s.replace(_DEF, "") + "\n\n" + _DEF,
    # two returns
    lambda s: s.replace("    return TrainingArguments(", "    if cfg is None:\n        return None\n"
                        "    return TrainingArguments("),
    # imported from another module, not defined here
    lambda s: s.replace("def create_training_args(cfg):", "def unused(cfg):")
    .replace("from trl import SFTTrainer", "from trl import SFTTrainer\nfrom mylib import create_training_args"),
])
def test_a_function_that_may_not_be_the_only_source_is_not_followed(change):
    source = change(textwrap.dedent(_FACTORY))
    assert source != textwrap.dedent(_FACTORY)
    out, findings = run(RULE, source)
    assert "SFTConfig" not in out
    assert any("move dataset_text_field=, max_seq_length= to args" in f.message for f in findings)


def test_a_switched_config_call_with_a_splat_merges_in_order():
    """zucchini-nlp/RLHF-GPT2: `DPOTrainer(args=TrainingArguments(**vars(training_args)), max_length=...)` with the
    project's own dataclass (it holds learning_rate, logging_steps, ...). The defaults written out and the moved
    keyword were keywords beside the splat: `TypeError: got multiple values for keyword argument 'learning_rate'`
    (and the pinned defaults would have beaten the user's). One mapping keeps TRL 0.x's precedence: the defaults,
    then the splat, then the moved keywords (set on the config after it was built)."""
    out, _ = run(RULE, """\
        from transformers import TrainingArguments
        from trl import DPOTrainer

        def main(training_args, data_args):
            return DPOTrainer(model, ref, args=TrainingArguments(**vars(training_args)), max_length=data_args.n)
        """)
    assert ('args=DPOConfig(\n            **{"learning_rate": 5e-05, "logging_steps": 500, "gradient_checkpointing": '
            'False, "bf16": False, **vars(training_args), "max_length": data_args.n},\n        ),') in out, out
    # run it with the real DPOConfig (the trainer call only hands back its args): the user's values win over the
    # defaults written out, the moved keyword over both
    from types import SimpleNamespace

    import trl

    scope = {"DPOTrainer": lambda model, ref, args: args, "DPOConfig": trl.DPOConfig, "model": None, "ref": None}
    exec(compile(out.split("\n\n", 1)[1], "migrated.py", "exec"), scope)
    opts = SimpleNamespace(output_dir="o", learning_rate=1e-05, logging_steps=100, max_length=7, report_to="none")
    config = scope["main"](opts, SimpleNamespace(n=9))
    assert (config.learning_rate, config.logging_steps, config.max_length) == (1e-05, 100, 9)
    assert config.gradient_checkpointing is False and config.bf16 is False


def test_a_factory_that_returns_the_name_it_binds_to_the_config_call():
    """LvBaolu/Mixtral_V2's simple_train.py: `training_args = TrainingArguments(...)` then `return training_args` in
    `get_train_args`, called once, and `SFTTrainer(..., packing=True, max_seq_length=config.max_seq_length,
    args=training_args)`: the call in the function becomes the SFTConfig, as for a factory returning the call."""
    out, _ = run(RULE, """\
        from transformers import TrainingArguments
        from trl import SFTTrainer

        def get_train_args(config, output_dir="./output/"):
            training_args = TrainingArguments(output_dir=output_dir, bf16=True)
            training_args.seed = 3
            return training_args

        def main(config):
            training_args = get_train_args(config)
            trainer = SFTTrainer(model, train_dataset=ds, packing=True, max_seq_length=config.max_seq_length,
                                 args=training_args)
    """)
    function = out[out.index("def get_train_args"):out.index("def main")]
    assert "training_args = SFTConfig(" in function and "packing=True," in function, out
    assert "TrainingArguments" not in out and "from trl import SFTTrainer, SFTConfig" in out
    main = out[out.index("def main"):]
    assert "training_args.max_length = config.max_seq_length" in main, out
    assert "packing" not in main and "max_seq_length=" not in main
    for rebound in ("training_args, other = TrainingArguments(output_dir='o'), 1",
                    "for training_args in [TrainingArguments(output_dir='o')]:\n                    pass"):
        src = f"""\
            from transformers import TrainingArguments
            from trl import SFTTrainer

            def get_train_args():
                training_args = TrainingArguments(output_dir='o')
                {rebound}
                return training_args

            def main():
                training_args = get_train_args()
                SFTTrainer(model, packing=True, args=training_args)
        """
        out, _ = run(RULE, src)
        assert "TrainingArguments(output_dir='o')" in out and "SFTConfig(output_dir" not in out, out


def test_a_parser_built_in_the_unpacking_expression():
    """HeegyuKim/tuna train_unsloth.py: `a, b, trainer_args = HfArgumentParser([A, task_cls.ARG_CLASS,
    TrainingArguments]).parse_args_into_dataclasses()`, no parser name. The class whose fields are unknown may declare
    an option SFTConfig adds (`max_length`): the parsed object stays, the trainer gets `trainer_config(...)`. With
    only classes whose fields are known and free of those options, the parser's class becomes the config."""
    out, findings = run(RULE, """\
        from transformers import HfArgumentParser, TrainingArguments
        from trl import SFTTrainer

        def main():
            a, task_args, trainer_args = HfArgumentParser([A, task_cls.ARG_CLASS, TrainingArguments]).parse_args_into_dataclasses()
            return SFTTrainer(model=m, max_seq_length=task_args.max_length, dataset_num_proc=1, args=trainer_args)
        """)
    assert "args=trainer_config(\n            SFTConfig,\n            trainer_args,\n" \
           "            max_length=task_args.max_length,\n            dataset_num_proc=1,\n        ),\n" in out, out
    assert "TODO(trl-compat)" not in out
    out, findings = run(RULE, """\
        from dataclasses import dataclass
        from transformers import HfArgumentParser, TrainingArguments
        from trl import SFTTrainer

        @dataclass
        class A:
            seq: int = 8

        def main():
            a, trainer_args = HfArgumentParser((A, TrainingArguments)).parse_args_into_dataclasses()
            return SFTTrainer(model=m, max_seq_length=a.seq, args=trainer_args)
        """)
    assert "HfArgumentParser((A, SFTConfig))" in out and "trainer_args.max_length = a.seq" in out, out


def test_a_trainer_call_with_a_splat_gets_no_new_args():
    """jujuliaa12/rlhf-compact-llm src/dpo_train.py (its TRL 0.9 branch): `DPOTrainer(**base_kwargs, beta=...,
    max_length=...)` where `base_kwargs = dict(model=..., args=args, ...)`. A new `args=DPOConfig(...)` beside the splat
    was passed twice (TypeError: got multiple values for keyword argument 'args'); the keywords now stay, marked."""
    out, findings = run(RULE, """\
        from trl import DPOTrainer

        def build(policy, args, ds):
            base_kwargs = dict(model=policy, ref_model=None, args=args, train_dataset=ds)
            return DPOTrainer(**base_kwargs, beta=0.2, max_length=512)
        """)
    assert "args=DPOConfig" not in out and "beta=0.2, max_length=512" in out, out
    assert any("move beta=, max_length= to args" in f.message for f in findings if not f.changed)
