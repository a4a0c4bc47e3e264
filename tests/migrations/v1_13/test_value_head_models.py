"""`value-head-models`: before/after and no-op cases (the PPO case files in `ppo_cases/` cover the rest, run with
the other PPO rules by `test_ppo_to_grpo.py`)."""

from __future__ import annotations

from migrations.v1_13.value_head_models import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_causal_value_head_model_becomes_the_transformers_class():
    check(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead

        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
    """, """\
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("gpt2")
    """)


def test_module_access_and_value_head_kwargs_dropped():
    findings = check(RULE, """\
        import trl

        model = trl.AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", v_head_init_strategy="normal")
    """, """\
        import trl
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("gpt2")
    """)
    assert any(f.changed and "v_head_init_strategy" in f.message for f in findings)


def test_noops():
    noop(RULE, "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('gpt2')\n")
    noop(RULE, "class AutoModelForCausalLMWithValueHead:\n    pass\n\n\nm = AutoModelForCausalLMWithValueHead()\n")
    noop(RULE, "from trl import AutoModelForCausalLMWithValueHead\n", target="1.12.0")
