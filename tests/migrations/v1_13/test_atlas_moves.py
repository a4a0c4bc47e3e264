"""`atlas-moves`: before/after and no-op cases, and the rule against the other rules' tables and the installed TRL."""

from __future__ import annotations

import importlib

import pytest

import migrations
from migrations.kinds.symbols import Moved, SymbolMigration
from migrations.v1_13.atlas_moves import MIGRATION as MOVES
from migrations.v1_13.atlas_moves import keyword_renames, removal, successor
from tests.migrations._driver import check, noop, run

TARGETS = ("1.13.0", "1.14.0", "1.15.0", "1.16.0")


@pytest.mark.parametrize("target", TARGETS)
def test_moved_import_forms(target):
    findings = check(MOVES, """\
        import trl
        from trl.trainer.utils import is_unsloth_available
        from trl.trainer.sft_trainer import maybe_apply_chat_template as apply_template
        if is_unsloth_available():
            trl.trainer.utils.is_unsloth_available()
    """, """\
        import trl
        from trl.import_utils import is_unsloth_available
        from trl import maybe_apply_chat_template as apply_template
        import trl.import_utils

        if is_unsloth_available():
            trl.import_utils.is_unsloth_available()
    """, target=target)
    assert {f.message.split(":")[0] for f in findings if f.changed} >= {
        "trl.trainer.utils.is_unsloth_available -> trl.import_utils.is_unsloth_available",
        "trl.trainer.sft_trainer.maybe_apply_chat_template -> trl.maybe_apply_chat_template"}


def test_moved_import_keeps_other_names_and_guards():
    check(MOVES, """\
        try:
            from trl.trainer.utils import is_unsloth_available, selective_log_softmax
        except ImportError:
            is_unsloth_available = None
    """, """\
        try:
            from trl.trainer.utils import selective_log_softmax
            from trl.import_utils import is_unsloth_available
        except ImportError:
            is_unsloth_available = None
    """)


@pytest.mark.parametrize("target", TARGETS)
def test_deprecate_kwarg_keyword_renamed(target):
    check(MOVES, """\
        from trl import ModelConfig, get_peft_config, get_quantization_config
        args = ModelConfig()
        peft = get_peft_config(model_config=args)
        quant = get_quantization_config(model_config=args)
    """, """\
        from trl import ModelConfig, get_peft_config, get_quantization_config
        args = ModelConfig()
        peft = get_peft_config(model_args=args)
        quant = get_quantization_config(model_args=args)
    """, target=target)


def test_both_keywords_passed_is_marked_not_rewritten():
    out, findings = run(MOVES, "from trl import get_peft_config\nget_peft_config(model_config=a, model_args=b)\n")
    assert "get_peft_config(model_config=a, model_args=b)" in out
    assert out.count("# TODO(trl-compat): both model_config= and model_args= are passed") == 1
    assert [f.severity for f in findings] == ["manual"]


@pytest.mark.parametrize("target", TARGETS)
def test_removed_without_successor_is_marked_once(target):
    out, findings = run(MOVES, """\
        import os
        from trl.core import respond_to_batch
        from trl import CPOTrainer, SFTTrainer
    """, target)
    lines = out.splitlines()
    assert lines[1].startswith("# TODO(trl-compat): trl.core was removed in TRL 0.")
    assert lines[2] == "from trl.core import respond_to_batch"
    assert lines[3].startswith("# TODO(trl-compat): trl.CPOTrainer was removed in TRL 0.29.0")
    assert lines[3].endswith(" [atlas-moves]")
    assert any("different definition of CPOTrainer at trl.experimental.cpo.CPOTrainer" in f.message for f in findings)
    assert "SFTTrainer" not in lines[3]  # still exported: not mentioned, not touched
    assert [f.severity for f in findings] == ["manual", "manual"]


@pytest.mark.parametrize("target", ("1.13.0", "1.16.0"))
def test_a_module_gone_as_a_whole_names_where_its_names_live_now(target):
    # open-r1's GRPO trainer copy (vangogh0318/handbook-LLM-DRL): trl.extras.vllm_client went in 0.28.0 and VLLMClient
    # lives on in trl.generation.vllm_client with another signature: marked, with the place to look
    out, findings = run(MOVES, "from trl.extras.vllm_client import VLLMClient\n", target)
    assert out.splitlines()[1] == "from trl.extras.vllm_client import VLLMClient"
    assert [f.severity for f in findings] == ["manual"]
    assert findings[0].message.startswith("trl.extras.vllm_client was removed in TRL 0.28.0 (TRL "
                                          f"{target} has a different definition of VLLMClient at "
                                          "trl.generation.vllm_client.VLLMClient: check it fits first)")


def test_statement_marked_by_another_rule_gets_no_second_marker():
    noop(MOVES, """\
        import os
        # TODO(trl-compat): CPOTrainer moved to trl.experimental.cpo (see MIGRATION.md#experimental-trainer-imports)
        from trl import CPOTrainer
    """)
    noop(MOVES, """\
        # TODO(trl-compat): trl.core is gone (see MIGRATION.md#ppo-core-helpers)
        from trl.core import respond_to_batch
    """)


def test_removals_after_1_13_are_left_to_their_folders():
    # trl.experimental.xpo went in 1.14: the removed-xpo rule (v1_14) owns it; this rule neither moves nor marks it
    assert removal("1.16.0", "trl.experimental.xpo.XPOTrainer") == "1.14.0"
    noop(MOVES, "from trl.experimental.xpo import XPOTrainer\n")


def test_noop_names_the_target_exports_and_look_alikes():
    noop(MOVES, """\
        from trl import SFTTrainer, create_reference_model, get_peft_config
        from trl.trainer.utils import selective_log_softmax
        get_peft_config(model_args=None)
    """)
    noop(MOVES, """\
        from .trl.trainer.utils import is_unsloth_available
        from mylib import get_peft_config
        get_peft_config(model_config=1)
        text = "get_peft_config(model_config=x) and trl.trainer.utils.is_unsloth_available"
    """)
    noop(MOVES, """\
        from trl import get_peft_config

        def f(get_peft_config):
            return get_peft_config(model_config=1)

        class is_unsloth_available:
            pass
    """)
    noop(MOVES, "from trl.trainer.utils import not_a_trl_name\n")


def test_atlas_answers():
    assert successor("1.16.0", "trl.trainer.utils.is_unsloth_available") == "trl.import_utils.is_unsloth_available"
    assert successor("1.16.0", "trl.SFTTrainer") is None  # still exported
    assert successor("1.16.0", "trl.CPOTrainer") is None  # a new definition in trl.experimental.cpo: not proven
    assert successor("1.16.0", "trl.core") is None  # a module
    assert keyword_renames("1.16.0", "trl.get_peft_config") == {"model_config": "model_args"}
    # 0.12-0.15 mapped tokenizer= through @deprecate_kwarg; 1.16 rejects it and takes processing_class=
    assert keyword_renames("1.16.0", "trl.SFTTrainer") == {"tokenizer": "processing_class"}
    assert keyword_renames("1.16.0", "trl.PPOTrainer") == {}  # gone from the target: nothing to call
    assert removal("1.16.0", "trl.SFTTrainer") is None


@pytest.mark.parametrize("target", TARGETS)
def test_other_rules_tables_run_first_where_they_name_a_path_this_rule_moves(target):
    """A tabled name of a hand-written rule that this rule would also move is handled by that rule first (registry
    order), so it is gone from the code before this rule looks: nothing is rewritten twice, and where a table and the
    atlas both give a successor it is the same module, or the table's (a compat copy) wins."""
    rules = migrations.all_migrations()
    mine = rules.index(MOVES)
    for position, rule in enumerate(rules):
        if rule is MOVES or not isinstance(rule, SymbolMigration):
            continue
        for qname, action in rule.symbols.items():
            moved = successor(target, qname)
            if moved is None:
                continue
            assert position < mine, (rule.id, qname)
            if isinstance(action, Moved) and not action.module.startswith("compat"):
                assert f"{action.module}.{action.name}" == moved, (rule.id, qname, action, moved)


def test_registry_runs_it_after_the_other_1_13_rules():
    from migrations.base import RUNS_LAST

    order = [m.id for m in migrations.all_migrations()
             if m.library == "trl" and (m.release == "1.13" or m.release.startswith("0."))
             and getattr(m, "order", 100) < RUNS_LAST]  # trl-api-leftovers runs after every folder
    assert order[-1] == "atlas-moves"


@pytest.mark.slow
def test_moves_are_the_same_object_in_the_installed_trl():
    """Independent of the atlas: in the installed TRL (1.16), the rewritten path is the object the old definition
    names (imported from its defining module)."""
    trl = importlib.import_module("trl")
    assert trl.__version__.startswith("1.16")
    for old in ("trl.trainer.utils.is_unsloth_available", "trl.trainer.sft_trainer.maybe_apply_chat_template"):
        new = successor("1.16.0", old)
        module, _, name = new.rpartition(".")
        from migrations.v1_13.atlas_moves import _definition

        dmod, _, dname = _definition(old).rpartition(".")
        assert getattr(importlib.import_module(module), name) is getattr(importlib.import_module(dmod), dname)


def test_a_name_no_release_had_is_named_first_in_the_gone_module_marker():
    """rlhf-length-biases imports `from trl.core import LengthSamplerimport` (two lines run together): the module is
    gone, and the name was never TRL's; the marker says so first (a known name keeps the module's marker)."""
    from migrations.v1_13.atlas_moves import MIGRATION as MOVES

    out, findings = run(MOVES, "from trl.core import LengthSamplerimport\n")
    assert out.startswith("# TODO(trl-compat): trl.core.LengthSamplerimport is in no TRL release (a typo?) "
                          "[atlas-moves]\n")
    assert any("trl.core was removed in TRL 0.25.0" in f.message for f in findings)
    out, findings = run(MOVES, "from trl.core import stack_dicts\n")
    assert "is in no TRL release" not in out + "".join(f.message for f in findings)


@pytest.mark.parametrize("target", TARGETS)
def test_another_path_to_a_top_level_name_moves_to_it(target):
    """`trl.trainer.training_configs.RewardConfig` (0.7.0 - 0.7.9) was `trl.RewardConfig` on every release that had
    it: the import moves to `trl.RewardConfig` although the class changed since, as it did for `from trl import`."""
    assert successor(target, "trl.trainer.training_configs.RewardConfig") == "trl.RewardConfig"
    assert removal(target, "trl.trainer.training_configs.RewardConfig") is None
    check(MOVES, """\
        from trl.trainer.training_configs import RewardConfig as Cfg

        cfg = Cfg(output_dir="o")
    """, """\
        from trl import RewardConfig as Cfg

        cfg = Cfg(output_dir="o")
    """, target=target)
    # no `trl.ConstantLengthDataset` on the target: nothing to move to (a removed helper, marked by its rule)
    assert successor(target, "trl.trainer.utils.ConstantLengthDataset") is None
    noop(MOVES, "from mylib.trainer.training_configs import RewardConfig\n", target=target)
