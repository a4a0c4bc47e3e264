"""The check on transformers / peft / accelerate code (issue 14): the issue's examples are flagged on the stack TRL's
floors force, and migrated code passes on transformers 4.56.2 and the newest 5.x (what is only marked stays flagged)."""

from __future__ import annotations

import textwrap

from packaging.version import Version

from compat.check.analyze import Checker
from compat.migrate.engine import migrate_source
from migrations import Options, select

NEWEST = {"transformers": "5.24.0", "peft": "0.21.2", "accelerate": "1.15.0"}
FLOOR = {"transformers": "4.56.2", "peft": "0.21.2", "accelerate": "1.15.0"}

EXAMPLES = textwrap.dedent("""\
    import torch
    from transformers import AutoModelForCausalLM, BloomTokenizerFast, Trainer, TrainingArguments
    from transformers.deepspeed import is_deepspeed_zero3_enabled
    from peft import LoraConfig, get_peft_model, prepare_model_for_int8_training
    from trl import GRPOConfig

    model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16, use_auth_token=True)
    tok = BloomTokenizerFast.from_pretrained("bigscience/bloom-560m")
    model = get_peft_model(prepare_model_for_int8_training(model), LoraConfig(r=8, lora_alpha=16))
    args = TrainingArguments("out", evaluation_strategy="steps", no_cuda=True)
    trainer = Trainer(model=model, args=args, tokenizer=tok)
    config = GRPOConfig(output_dir="o", logging_dir="logs", report_to="tensorboard")
    print(is_deepspeed_zero3_enabled())
""")


def _problems(code: str, libraries: dict[str, str]) -> set[tuple[str, str]]:
    return {(p.code, p.name) for p in Checker("1.16.0", libraries=libraries).check(code)}


def test_the_examples_are_flagged_on_the_newest_stack():
    found = _problems(EXAMPLES, NEWEST)
    assert found == {
        ("missing-name", "transformers.BloomTokenizerFast"),
        ("missing-module", "transformers.deepspeed"),
        ("missing-name", "peft.prepare_model_for_int8_training"),
        ("unknown-keyword", "transformers.AutoModelForCausalLM.from_pretrained(use_auth_token=)"),
        ("unknown-keyword", "transformers.TrainingArguments(evaluation_strategy=)"),
        ("unknown-keyword", "transformers.TrainingArguments(no_cuda=)"),
        ("unknown-keyword", "transformers.Trainer(tokenizer=)"),
        ("unknown-keyword", "trl.GRPOConfig(logging_dir=)"),
    }


def test_on_the_floor_only_what_4_56_lacks():
    found = _problems(EXAMPLES, FLOOR)
    assert found == {("missing-module", "transformers.deepspeed"),
                     ("missing-name", "peft.prepare_model_for_int8_training"),
                     ("unknown-keyword", "transformers.TrainingArguments(evaluation_strategy=)")}


def test_migrated_for_5_the_code_passes_on_4_56_2_and_5_x():
    options = Options(target_trl=Version("1.16.0"), targets=tuple((k, Version(v)) for k, v in NEWEST.items()))
    result = migrate_source(EXAMPLES, options=options, rules=select(options), path="train.py")
    assert result.ok, result.errors
    # logging_dir= read by TensorBoard: the keyword up to 5.14, TENSORBOARD_LOGGING_DIR on 5.15+ (compat.trl)
    assert '**tensorboard_dir("logs", tensorboard=True)' in result.text
    assert _problems(result.text, NEWEST) == set()
    assert _problems(result.text, FLOOR) == set()


def test_names_the_atlas_did_not_read_are_never_flagged():
    code = ("from transformers.utils import is_peft_available\nfrom transformers.models.t5.modeling_t5 import T5Stack\n"
            "from transformers.models.t5 import T5ForConditionalGeneration\nimport accelerate\nimport transformers\n"
            "print(transformers._import_structure)\n"
            "acc = accelerate.Accelerator(gradient_accumulation_steps=2)\n")
    assert _problems(code, NEWEST) == set()
    assert _problems("from transformers.models.t5 import T5Nope\n", NEWEST) == {
        ("missing-name", "transformers.models.t5.T5Nope")}


def test_accelerate_keywords():
    code = "from accelerate import Accelerator\nacc = Accelerator(dispatch_batches=True)\n"
    assert _problems(code, NEWEST) == {("unknown-keyword", "accelerate.Accelerator(dispatch_batches=)")}
    assert _problems(code, {**NEWEST, "accelerate": "0.34.2"}) == set()
