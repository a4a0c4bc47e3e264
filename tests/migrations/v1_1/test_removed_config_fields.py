"""Cases for `removed-config-fields`, and its table checked against the installed TRL."""

from __future__ import annotations

import pytest

from migrations.v1_1 import removed_config_fields as mod
from migrations.v1_1.removed_config_fields import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_removed_fields_are_marked():
    out, findings = run(RULE, """\
        from trl import DPOConfig
        from trl.experimental.orpo import ORPOConfig

        cfg = DPOConfig(output_dir="o", beta=0.1, max_prompt_length=128, rpo_alpha=0.5)
        o = ORPOConfig(output_dir="o", max_length=64)
    """)
    lines = out.splitlines()
    assert lines[3].startswith("# TODO(trl-compat): DPOConfig(max_prompt_length=) dropped")
    assert lines[3].endswith(" [removed-config-fields]") and len(lines[3]) <= 100
    assert findings[0].message == ("DPOConfig(max_prompt_length=) dropped: truncation is on max_length "
                                   "(prompt+completion) now (it was 128; last in TRL 0.28.0)")
    assert lines[4].startswith("# TODO(trl-compat): DPOConfig(rpo_alpha=) dropped")
    assert 'loss_type=["sigmoid", "sft"]' in findings[1].message
    # both are a TypeError on the target and their values are literals: dropped from the call, the markers say so
    assert lines[5] == 'cfg = DPOConfig(output_dir="o", beta=0.1)' and len(findings) == 2


def test_a_value_that_may_do_something_is_kept():
    out, findings = run(RULE, """\
        from trl import DPOConfig

        cfg = DPOConfig(output_dir="o", max_prompt_length=length_of(data), padding_value=args.pad)
    """)
    lines = out.splitlines()
    assert lines[-1] == 'cfg = DPOConfig(output_dir="o", max_prompt_length=length_of(data))'
    assert any(ln.startswith("# TODO(trl-compat): DPOConfig(max_prompt_length=) is gone") for ln in lines)
    assert any(ln.startswith("# TODO(trl-compat): DPOConfig(padding_value=) dropped") for ln in lines)
    assert len(findings) == 2


def test_noops():
    noop(RULE, """\
        from trl import DPOConfig, SFTConfig
        DPOConfig(output_dir="o", beta=0.1, max_length=512, truncation_mode="keep_start")
        SFTConfig(output_dir="o", use_liger_kernel=True)
    """)
    noop(RULE, """\
        from mylib import DPOConfig
        import trl
        DPOConfig(max_prompt_length=3)
        s = "DPOConfig(max_prompt_length=3)"
    """)


@pytest.mark.slow  # imports trl
def test_table_matches_the_installed_trl():
    import dataclasses
    import inspect

    import trl
    from trl.experimental.cpo import CPOConfig
    from trl.experimental.orpo import ORPOConfig

    classes = {"SFTConfig": trl.SFTConfig, "DPOConfig": trl.DPOConfig, "KTOConfig": trl.KTOConfig,
               "GRPOConfig": trl.GRPOConfig, "RLOOConfig": trl.RLOOConfig,
               "ORPOConfig": ORPOConfig, "CPOConfig": CPOConfig}
    for name, fields in mod.REMOVED.items():
        have = {f.name for f in dataclasses.fields(classes[name])} | set(inspect.signature(classes[name]).parameters)
        assert not set(fields) & have, (name, set(fields) & have)


def test_grpo_fields_are_dropped_and_marked():
    out, findings = run(RULE, """\
        from trl import GRPOConfig

        args = GRPOConfig(output_dir="o", max_prompt_length=256, max_completion_length=64, vllm_device="cuda:1")
    """)
    lines = out.splitlines()
    assert lines[-1] == 'args = GRPOConfig(output_dir="o", max_completion_length=64)'
    assert any(ln.startswith("# TODO(trl-compat): GRPOConfig(max_prompt_length=) dropped") for ln in lines)
    assert len(findings) == 2


def test_last_releases_match_the_atlas():
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    for config, fields in mod.REMOVED.items():
        paths = [p for p in mod._PATHS if p.endswith("." + config) and not p.startswith("compat.")]
        for field, last in fields.items():
            had = [p for p in paths if field in (atlas.config_fields(last, p) or {})]
            assert had, (config, field, last)


def test_adapter_names_say_what_dpo_does_with_a_peft_model():
    # emaroppo/phish-gen's finetuning/alignment/dpo.py: a PeftModel loaded with adapter_name="train" and a second
    # adapter "reference"; TRL 1.x's DPOTrainer copies the adapter named "default" into a frozen "ref" one
    _out, findings = run(RULE, """\
        from trl import DPOConfig

        training_args = DPOConfig(beta=0.1, model_adapter_name="train", ref_adapter_name="reference")
    """)
    messages = [f.message for f in findings]
    assert messages[0].startswith("DPOConfig(model_adapter_name=) dropped: load the trainable adapter as "
                                  "adapter_name='default'")
    assert "KeyError: 'default'" in messages[0] and messages[0].endswith("(it was \"train\"; last in TRL 0.28.0)")
    assert messages[1].startswith("DPOConfig(ref_adapter_name=) dropped: drop the separately loaded reference adapter")
    assert not any("drop it" in m for m in messages)


def test_a_removed_field_set_or_read_on_a_config_object_is_marked():
    """biosharp18/CS245-project sets `setattr(config, "max_prompt_length", 128)` on a DPOConfig, HollyRiver/HFRL
    `training_args.model_adapter_name = "policy"` on a parsed one: on TRL 1.13+ the attribute is set and nothing reads
    it (the prompt is no longer cut; the adapter name is ignored, then DPOTrainer wants "default"), and a read of it
    is an AttributeError. Marked where the object provably is that config; another object's attribute is not."""
    out, findings = run(RULE, """\
        from trl import DPOConfig, TrlParser

        config = DPOConfig(output_dir="o", beta=0.1)
        setattr(config, "max_prompt_length", 128)
        script_args, training_args = TrlParser((ScriptArguments, DPOConfig)).parse_args_and_config()
        training_args.model_adapter_name = "policy"
        n = config.max_prompt_length
        other.max_prompt_length = 5
        setattr(other, "max_prompt_length", 5)
        config.beta = 0.2
    """)
    lines = out.splitlines()
    assert [f.line for f in findings if f.severity == "manual"] == [4, 6, 7]
    assert lines[3].startswith("# TODO(trl-compat): config.max_prompt_length: DPOConfig has no")
    assert "does nothing now" in findings[0].message and "AttributeError" in findings[2].message
    assert "adapter_name='default'" in findings[1].message
    assert out.count("# TODO(trl-compat)") == 3
