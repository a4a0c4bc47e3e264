"""`removed-optim-adamw-hf`: `optim="adamw_hf"` (removed in transformers 4.50) is marked wherever a literal sets it,
never rewritten; the rule marks exactly the statements `trl-compat check` reports (`removed-value`)."""

from __future__ import annotations

import textwrap

import pytest

from compat.check.analyze import Checker
from migrations.transformers.v4_50.removed_optim_adamw_hf import MIGRATION as RULE
from tests.migrations._driver import noop, run

MARK = '# TODO(trl-compat): optim="adamw_hf" was removed in transformers 4.50'

#: one site of every kind (TRL 0.4.7's examples/research_projects/stack_llama/scripts/reward_modeling.py is the
#: first; axolotl 2024 the subscript assignment; llms-in-production-book the keyword)
SITES = """\
    from dataclasses import dataclass, field
    from typing import Optional

    from transformers import TrainingArguments
    from trl import RewardConfig


    @dataclass
    class ScriptArguments:
        optim: Optional[str] = field(default="adamw_hf", metadata={"help": "The optimizer to use."})
        other: str = "adamw_hf"


    class Defaults:
        optim = "adamw_hf"


    args = TrainingArguments(output_dir="out", optim="adamw_hf")
    config = RewardConfig(output_dir="out", optim="adamw_torch" if fused else "adamw_hf")
    cfg = {}
    cfg["optim"] = "adamw_hf"
    args.optim = "adamw_hf"
    kwargs = dict(optim="adamw_hf")
    literal = {"optim": "adamw_hf", "lr": 1e-5}
    same = args.optim == "adamw_hf"
    user_function(optim="adamw_hf")
    """
#: the statements (first line) holding a site, in SITES
MARKED = ["optim: Optional[str]", "optim = \"adamw_hf\"", "args = TrainingArguments", "config = RewardConfig",
          "cfg[\"optim\"]", "args.optim = ", "kwargs = dict", "literal = {"]


def test_every_site_is_marked_and_nothing_is_rewritten():
    out, findings = run(RULE, SITES)
    lines = out.splitlines()
    marked = [lines[i + 1].strip() for i, line in enumerate(lines) if line.strip().startswith(MARK)]
    assert len(marked) == len(MARKED) and all(m.startswith(s) for m, s in zip(marked, MARKED)), marked
    assert all(line.endswith(f" [{RULE.id}]") for line in lines if MARK in line)
    assert [line for line in lines if "TODO" not in line] == textwrap.dedent(SITES).splitlines()
    assert len(findings) == len(MARKED) and all(f.severity == "manual" and not f.changed for f in findings)
    assert "adamw_torch" in findings[0].message and "compat.trl.AdamW" in findings[0].message


def test_rule_and_check_agree_on_the_sites():
    problems = [p for p in Checker("1.16.0").check(textwrap.dedent(SITES)) if p.code == "removed-value"]
    out, _ = run(RULE, SITES)
    lines = out.splitlines()
    # the statement right below each marker, in the original numbering (markers removed)
    original, below = 0, []
    for line in lines:
        if MARK in line:
            below.append(original + 1)
        else:
            original += 1
    assert below == [p.line for p in problems]  # every site of SITES is on its statement's first line
    assert all("transformers 5.19.0 has no optim='adamw_hf'" in p.message for p in problems)


def test_left_alone():
    noop(RULE, 'from transformers import TrainingArguments\n\nif args.optim == "adamw_hf":\n    pass\n')
    noop(RULE, 'from transformers import TrainingArguments\n\nuser_function(optim="adamw_hf")\n')
    noop(RULE, 'import transformers\n\nlr_scheduler_type = "adamw_hf"\nprint({"name": "adamw_hf"})\n')
    noop(RULE, 'import torch\n\nargs = TrainingArguments(optim="adamw_hf")\n')  # neither transformers nor TRL
    noop(RULE, 'from transformers import Trainer\n\n\ndef dict(**kw):\n    return kw\n\n\nd = dict(optim="adamw_hf")\n')
    noop(RULE, 'import transformers\n\n\nclass TrainingArguments:\n    pass\n\n\n'
               'args = TrainingArguments(optim="adamw_hf")\n')


def test_transformers_before_4_50_keeps_it():
    src = 'from transformers import TrainingArguments\n\nargs = TrainingArguments(output_dir="o", optim="adamw_hf")\n'
    assert run(RULE, src, stack={"transformers": "4.49.0"}) == (src, [])
    assert not [p for p in Checker("0.8.6").check(src) if p.code == "removed-value"]  # paired with 4.39.3
    assert [p.line for p in Checker("1.13.0", transformers="4.56.2").check(src) if p.code == "removed-value"] == [3]


def test_the_installed_transformers_rejects_it(tmp_path):
    from transformers import TrainingArguments
    from transformers.training_args import OptimizerNames

    assert "adamw_hf" not in {o.value for o in OptimizerNames}
    with pytest.raises(ValueError, match="adamw_hf"):
        TrainingArguments(output_dir=str(tmp_path), optim="adamw_hf", report_to="none")


def test_the_recipe_keeps_the_4_49_optimizer(tmp_path):
    """The marker's second way out: 4.49's `(AdamW, {"lr", "betas", "eps"})` through `optimizer_cls_and_kwargs`,
    with the Trainer's own weight-decay grouping."""
    import torch
    from transformers import Trainer, TrainingArguments

    import compat.trl

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LayerNorm(4))
    args = TrainingArguments(output_dir=str(tmp_path), optim="adamw_torch", learning_rate=3e-4, adam_beta1=0.8,
                             adam_beta2=0.95, adam_epsilon=1e-6, weight_decay=0.1, report_to="none")
    trainer = Trainer(model=model, args=args, optimizer_cls_and_kwargs=(compat.trl.AdamW, {
        "lr": args.learning_rate, "betas": (args.adam_beta1, args.adam_beta2), "eps": args.adam_epsilon}))
    optimizer = trainer.create_optimizer()
    optimizer = getattr(optimizer, "optimizer", optimizer)  # accelerate may wrap it
    assert type(optimizer) is compat.trl.AdamW
    groups = optimizer.param_groups
    assert {g["lr"] for g in groups} == {3e-4} and {g["betas"] for g in groups} == {(0.8, 0.95)}
    assert {g["eps"] for g in groups} == {1e-6}
    assert sorted(g["weight_decay"] for g in groups) == [0.0, 0.1]
