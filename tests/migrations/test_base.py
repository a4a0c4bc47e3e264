"""`migrations.base`: the rule contract (derived identity, prefilter gates, TODO markers)."""

from __future__ import annotations

import libcst as cst
import pytest

from migrations.base import (
    Migration,
    RuleIdentity,
    RuleLayoutError,
    dedupe_header_todos,
    gates,
    gates_match,
    rule_identity,
)


def test_identity_is_derived_from_the_module_path():
    assert rule_identity("migrations.v1_13.ppo_to_grpo") == RuleIdentity(
        "ppo-to-grpo", "1.13", "trl", "migrations.v1_13.ppo_to_grpo")
    # a rule package: any module inside it belongs to the rule
    assert rule_identity("migrations.v1_13.ppo_to_grpo.trainer_call").id == "ppo-to-grpo"  # type: ignore[union-attr]
    assert rule_identity("migrations.v0_12.old_thing").release == "0.12"  # type: ignore[union-attr]
    lib = rule_identity("migrations.transformers.v4_57.rename_x")
    assert lib == RuleIdentity("rename-x", "4.57", "transformers", "migrations.transformers.v4_57.rename_x")
    for not_a_rule in ("migrations.kinds.symbols", "migrations.v1_13._ppo_fields", "migrations.v1_13", "tests.x",
                       "migrations._private.v1_13.x"):
        assert rule_identity(not_a_rule) is None, not_a_rule


def test_a_rule_outside_a_rule_module_must_say_who_it_is():
    class Loose(Migration):
        summary = "x"

    with pytest.raises(RuleLayoutError, match="not a rule module"):
        _ = Loose().id

    class Named(Migration):
        id = "named"
        release = "1.14"
        summary = "x"

    rule = Named()
    assert (rule.id, rule.release, rule.anchor, rule.library) == ("named", "1.14", "named", "trl")


def test_gates_are_the_prefilter_of_triggered_by():
    class A(Migration):
        id, release, summary = "a", "1.13", "x"
        triggers = ("PPOTrainer",)
        requires = ("trl",)

    class B(Migration):
        id, release, summary = "b", "1.13", "x"
        triggers = (".float()",)
        pattern = r"weight\.float\(\)"

    a, b = A(), B()
    cases = ["from trl import PPOTrainer", "PPOTrainer = 1", "w.float()", "lm_head.weight.float()", ""]
    for text in cases:
        expected = a.triggered_by(text) or b.triggered_by(text)
        assert gates_match(gates([a, b]), text) is expected, text
        assert gates_match(gates([a, b], as_bytes=True), text.encode()) is expected, text
    assert [a.triggered_by(t) for t in cases] == [True, False, False, False, False]
    assert [b.triggered_by(t) for t in cases] == [False, False, False, True, False]
    assert a.triggered_by(b"from trl import PPOTrainer")


def test_dedupe_header_todos() -> None:
    marker = "# TODO(trl-compat): x (see MIGRATION.md#ppo-to-grpo)"
    mod = cst.parse_module(f"{marker}\nimport trl\n")
    stmt = mod.body[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(marker))])
    assert dedupe_header_todos(mod.with_changes(body=[stmt])).code == mod.code


def test_atlas_trl_spells_the_target_as_the_atlas_does():
    from packaging.version import Version

    from migrations.atlas import Atlas
    from migrations.base import Options

    releases = Atlas.load("trl").releases()
    assert Options(target_trl=Version("1.16")).atlas_trl == "1.16.0" in releases
    assert Options(target_trl=Version("1.14.2")).atlas_trl == "1.14.2" in releases
    newest = Version(releases[-1])
    past = Version(f"{newest.major}.{newest.minor}.{newest.micro + 7}")  # a patch the atlas does not hold yet
    assert Options(target_trl=past).atlas_trl == releases[-1]


def test_a_marker_carried_onto_a_statement_asking_the_same_is_one_step():
    """Myashka/CQA_RLHF's train_ppo.py: ppo-to-grpo marks `config.model_name` (no GRPOConfig field) in the `ref_model`
    construction it then removes; the marker is carried to the next statement, which asks the same. The file holds
    one marker there, and the report one manual step: every manual finding is a marker in the file."""
    import re

    from migrations import get
    from tests.migrations._driver import run

    src = """\
        from transformers import AutoTokenizer
        from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

        def main(args_config):
            config = PPOConfig(**args_config["ppo_config"])
            model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
            ref_model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
            tokenizer = AutoTokenizer.from_pretrained(config.model_name)
            ppo_trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset)
    """
    out, findings = run(get("ppo-to-grpo"), src)
    manual = [f for f in findings if f.severity == "manual"]
    assert len(re.findall(r"# TODO\(trl-compat\)", out)) == len(manual)
    assert len([f for f in manual if "model_name" in f.message]) == 2  # the model's and the tokenizer's reads
