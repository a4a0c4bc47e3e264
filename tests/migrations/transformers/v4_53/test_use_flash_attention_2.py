"""`use-flash-attention-2`: before/after, markers, no-ops; the removal read in the wheels and run on the installed
transformers."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from migrations.transformers.v4_53.use_flash_attention_2 import MIGRATION as RULE
from tests.migrations._driver import check, noop, run

WHEELS = Path(__file__).resolve().parents[4] / ".cache" / "wheels"


def test_alignment_handbook_model_kwargs():
    """alignment-handbook (2024) run_sft.py / run_dpo.py: the options dict goes to `model_init_kwargs=`, a write of
    another key in between; the keyword of a model's from_pretrained; a literal true, a literal false."""
    check(RULE, """\
        import torch
        from transformers import AutoModelForCausalLM
        from trl import SFTTrainer

        def main(model_args):
            model_kwargs = dict(
                revision=model_args.model_revision,
                use_flash_attention_2=model_args.use_flash_attention_2,
                torch_dtype=torch.bfloat16,
            )
            model_kwargs["device_map"] = "auto"
            trainer = SFTTrainer(model=model_args.model_name_or_path, model_init_kwargs=model_kwargs)
            m = AutoModelForCausalLM.from_pretrained("x", use_flash_attention_2=True, torch_dtype=torch.bfloat16)
            n = AutoModelForCausalLM.from_pretrained("x", **{"use_flash_attention_2": False, "torch_dtype": "auto"})
        """, """\
        import torch
        from transformers import AutoModelForCausalLM
        from trl import SFTTrainer

        def main(model_args):
            model_kwargs = dict(
                revision=model_args.model_revision,
                attn_implementation="flash_attention_2" if model_args.use_flash_attention_2 else None,
                torch_dtype=torch.bfloat16,
            )
            model_kwargs["device_map"] = "auto"
            trainer = SFTTrainer(model=model_args.model_name_or_path, model_init_kwargs=model_kwargs)
            m = AutoModelForCausalLM.from_pretrained(
                "x",
                attn_implementation="flash_attention_2",
                torch_dtype=torch.bfloat16,
            )
            n = AutoModelForCausalLM.from_pretrained("x", **{"torch_dtype": "auto"})
        """)


def test_what_cannot_be_followed_is_marked():
    out, findings = run(RULE, """\
        from transformers import AutoModelForCausalLM

        kwargs = {"use_flash_attention_2": True, "x": 1}
        print(kwargs)
        m = model_class.from_pretrained("x", use_flash_attention_2=True)
        n = AutoModelForCausalLM.from_pretrained("x", use_flash_attention_2=True, attn_implementation="sdpa")
        o = dict(use_flash_attention_2=True)
        """)
    assert [f.line for f in findings if f.severity == "manual"] == [3, 5, 6, 7]
    code_lines = [line for line in out.splitlines() if not line.lstrip().startswith("#")]
    assert sum(line.count("use_flash_attention_2") for line in code_lines) == 4  # each kept as written


def test_noops():
    noop(RULE, "def load(name, use_flash_attention_2=False):\n    return name\n\n\nload('x', use_flash_attention_2=True)\n")
    noop(RULE, "from transformers import AutoTokenizer\nt = AutoTokenizer.from_pretrained('x')\n")
    noop(RULE, "print(model_args.use_flash_attention_2)\n")


def test_transformers_dropped_the_keyword_before_the_floor():
    wheel = next(WHEELS.glob("transformers-4.56.2-*.whl"), None)
    if wheel is None:
        pytest.skip("the transformers 4.56.2 wheel is not cached (make .cache/wheels/.downloaded)")
    assert "use_flash_attention_2" not in zipfile.ZipFile(wheel).read("transformers/modeling_utils.py").decode()


def test_the_installed_transformers_refuses_it_and_takes_the_rewrite(tmp_path):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from compat.tiny import tiny_model

    tiny_model().save_pretrained(tmp_path)
    with pytest.raises(TypeError, match="use_flash_attention_2"):
        transformers.AutoModelForCausalLM.from_pretrained(tmp_path, use_flash_attention_2=False)
    flag = False
    model = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path, attn_implementation="flash_attention_2" if flag else None)
    assert model.config._attn_implementation != "flash_attention_2"


def test_a_name_bound_to_the_model_class_is_its_loader():
    """mesolitica/malaya's sessions: `selected_model = AutoModelForCausalLM` then `selected_model.from_pretrained(...,
    use_flash_attention_2=True)`; a name bound to something the rule cannot resolve stays marked."""
    out, findings = run(RULE, """\
        from transformers import AutoModelForCausalLM
        from liger_kernel.transformers import AutoLigerKernelForCausalLM

        def main(liger):
            selected_model = AutoModelForCausalLM
            model = selected_model.from_pretrained("x", use_flash_attention_2=True)
            other = AutoLigerKernelForCausalLM if liger else AutoModelForCausalLM
            return model, other.from_pretrained("x", use_flash_attention_2=True)
        """)
    assert 'model = selected_model.from_pretrained("x", attn_implementation="flash_attention_2")' in out
    assert [f.line for f in findings if f.severity == "manual"] == [8]


def test_a_conditional_flag_stays_one_condition():
    """tianyang-x/SaySelf training/finetune.py: `use_flash_attention_2=True if args.use_flash_attn else False`. The
    rewrite put that conditional expression unparenthesized into its own test (`... if True if a else False else
    None`, which does not parse: the file was refused). `True if c else False` read for its truth is `c`; any other
    conditional flag gets parentheses."""
    check(RULE, """\
        from transformers import AutoModelForCausalLM

        m = AutoModelForCausalLM.from_pretrained(name, use_flash_attention_2=True if args.use_flash_attn else False)
        n = AutoModelForCausalLM.from_pretrained(name, use_flash_attention_2=args.fa if args.gpu else args.fa_cpu)
        """, """\
        from transformers import AutoModelForCausalLM

        m = AutoModelForCausalLM.from_pretrained(
            name,
            attn_implementation="flash_attention_2" if args.use_flash_attn else None,
        )
        n = AutoModelForCausalLM.from_pretrained(
            name,
            attn_implementation="flash_attention_2" if (args.fa if args.gpu else args.fa_cpu) else None,
        )
        """)
