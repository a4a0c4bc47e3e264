"""`migrations.kinds.options`: renamed and removed keywords of TRL calls, with a rule written here."""

from __future__ import annotations

from migrations.kinds.options import GRPO_CONFIGS, SFT_CONFIGS, OptionChange, OptionMigration, config_paths
from tests.migrations._driver import check, noop, run


class _Rule(OptionMigration):
    id = "test-options"
    release = "1.13"
    summary = "test"
    triggers = ("old_key", "old-value", "doomed")
    changes = (
        OptionChange(GRPO_CONFIGS, "old_key", "rename-key", new_key="new_key", message="renamed in 1.13"),
        OptionChange(SFT_CONFIGS, "strategy", "rename-value", old_value="old-value", new_value="new_value",
                     message="renamed value"),
        OptionChange(GRPO_CONFIGS, "doomed", "todo", message="doomed= is deprecated", skip_zero=True),
    )


RULE = _Rule()


def test_config_paths():
    assert config_paths("X", "x_config") == {"trl.X", "trl.trainer.X", "trl.trainer.x_config.X"}
    assert "trl.experimental.gmpo.GMPOConfig" in GRPO_CONFIGS


def test_rename_key_and_value_through_aliases():
    check(RULE, """\
        import trl
        from trl import GRPOConfig as G, SFTConfig

        a = G(old_key=1)
        b = trl.trainer.grpo_config.GRPOConfig(old_key=2)
        c = SFTConfig(strategy="old-value")
    """, """\
        import trl
        from trl import GRPOConfig as G, SFTConfig

        a = G(new_key=1)
        b = trl.trainer.grpo_config.GRPOConfig(new_key=2)
        c = SFTConfig(strategy="new_value")
    """)


def test_both_keys_passed_and_todo_changes_are_marked():
    out, findings = run(RULE, "from trl import GRPOConfig\n\nc = GRPOConfig(old_key=1, new_key=2, doomed=0.5)\n")
    assert out.count("# TODO(trl-compat)") == 2 and "old_key=1, new_key=2" in out
    assert "# TODO(trl-compat): both old_key= and new_key= are passed" in out
    assert not any(f.changed for f in findings)


def test_noops():
    noop(RULE, "from trl import GRPOConfig\nc = GRPOConfig(doomed=0)\n")  # the off value
    noop(RULE, "from mylib import GRPOConfig\nc = GRPOConfig(old_key=1)\n")  # not TRL's
    noop(RULE, "from trl import GRPOConfig\nd = dict(old_key=1)\n")
    noop(RULE, "from trl import SFTConfig\nc = SFTConfig(strategy=\"other\")\n")


def test_callees_named_by_pattern():
    from migrations.kinds.options import OptionChange

    change = OptionChange(frozenset({"x.Exact"}), "k", "rename-key", new_key="n", callee_prefixes=("transformers.",),
                          callee_suffixes=(".from_pretrained",), callee_excludes=("Config.",))
    assert change.matches({"x.Exact"})
    assert change.matches({"transformers.AutoModel.from_pretrained"})
    assert not change.matches({"transformers.AutoConfig.from_pretrained"})
    assert not change.matches({"mylib.AutoModel.from_pretrained", "transformers.AutoModel.save_pretrained"})
