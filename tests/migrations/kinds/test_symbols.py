"""`migrations.kinds.symbols`: the one transformer for moved and removed TRL symbols, in both policies.

The `replacement()` policy with a small rule written here (PPOTrainer -> GRPOTrainer, set_seed -> transformers,
LengthSampler -> a local definition) over every import form; the table policy (`SymbolMigration`) with a table
written here (a Moved and a Gone name, a removed module).
"""

from __future__ import annotations

import libcst as cst
import pytest

from migrations.base import Migration, RuleContext
from migrations.kinds.imports import TrlRef
from migrations.kinds.symbols import Gone, Moved, Replacement, SymbolMigration, SymbolTransformer
from tests.migrations._driver import check, noop, run as run_rule


class _Rule(Migration):
    id = "test-rule"
    release = "1.13"
    summary = "test"
    anchor = "ppo-to-grpo"


class _Rename(SymbolTransformer):
    """PPOTrainer -> trl.GRPOTrainer, set_seed -> transformers.set_seed, LengthSampler -> local (no import)."""

    def replacement(self, ref: TrlRef) -> Replacement | None:
        if ref.name == "PPOTrainer":
            return Replacement("trl", "GRPOTrainer")
        if ref.name == "set_seed" and ref.module in ("trl", "trl.core"):
            return Replacement("transformers", "set_seed")
        if ref.name == "LengthSampler" and ref.module == "trl.core":
            return Replacement(None, "LengthSampler")
        return None

    def owns_module(self, module: str) -> bool:
        return module in ("trl.core", "trl.trainer.ppo_trainer")


def run(src: str) -> str:
    t = _Rename(_Rule(), RuleContext())
    return t.transform_module(cst.MetadataWrapper(cst.parse_module(src))).code


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("from trl import PPOTrainer\nPPOTrainer()\n", "from trl import GRPOTrainer\nGRPOTrainer()\n"),
        ("from trl import PPOTrainer as T\nT()\n", "from trl import GRPOTrainer as T\nT()\n"),
        ("import trl as t\nt.PPOTrainer()\n", "import trl as t\nt.GRPOTrainer()\n"),
        ("import trl\ntrl.PPOTrainer()\n", "import trl\ntrl.GRPOTrainer()\n"),
        (
            "import trl.trainer.ppo_trainer\ntrl.trainer.ppo_trainer.PPOTrainer()\n",
            "import trl\nfrom trl import GRPOTrainer\n\nGRPOTrainer()\n",
        ),
        (
            "from trl.trainer.ppo_trainer import PPOTrainer\nPPOTrainer()\n",
            "from trl import GRPOTrainer\nGRPOTrainer()\n",
        ),
        (
            "from trl import PPOTrainer, set_seed, DPOTrainer\n",
            "from trl import GRPOTrainer, DPOTrainer\nfrom transformers import set_seed\n",
        ),
        (
            "try:\n    from trl import PPOTrainer\nexcept ImportError:\n    from trl.experimental.ppo import PPOTrainer\n",
            "try:\n    from trl import GRPOTrainer\nexcept ImportError:\n    from trl import GRPOTrainer\n",
        ),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from trl import PPOTrainer\n"
            "def f(t: 'PPOTrainer'): ...\n",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from trl import GRPOTrainer\n"
            "def f(t: 'GRPOTrainer'): ...\n",
        ),
        # a name replaced by a local definition: the import goes, a block keeps a `pass`
        ("from trl.core import LengthSampler\nLengthSampler(1, 2)\n", "LengthSampler(1, 2)\n"),
        ("try:\n    from trl.core import LengthSampler\nexcept ImportError:\n    pass\n",
         "try:\n    pass\nexcept ImportError:\n    pass\n"),
    ],
)
def test_rewrites_through_every_import_form(src: str, expected: str) -> None:
    assert run(src) == expected


@pytest.mark.parametrize(
    "src",
    [
        "class PPOTrainer:\n    pass\nPPOTrainer()\n",  # local class
        "from .trl import PPOTrainer\nPPOTrainer()\n",  # vendored package, relative import
        "from mylib.trl import PPOTrainer\nPPOTrainer()\n",  # another module
        "x = 'PPOTrainer'  # PPOTrainer\n",  # strings and comments
        "from trl import PPOTrainer as P\ndef f(PPOTrainer):\n    return PPOTrainer()\n",  # shadowed below
    ],
)
def test_leaves_non_trl_names_alone(src: str) -> None:
    out = run(src)
    if "from trl import" in src:
        assert out == src.replace("import PPOTrainer as P", "import GRPOTrainer as P")
    else:
        assert out == src



class _Table(SymbolMigration):
    id = "test-table"
    release = "1.14"
    summary = "test"
    triggers = ("old_pkg",)
    removed_modules = {"trl.experimental.old_pkg": "trl.experimental.old_pkg was removed in TRL 1.14"}
    symbols = {
        "trl.experimental.old_pkg.OldTrainer": Moved("compat.trl", "NewTrainer"),
        "trl.experimental.old_pkg.gone_helper": Gone("gone_helper has no successor"),
    }


TABLE = _Table()


def test_table_moves_every_import_form():
    check(TABLE, """\
        from trl.experimental.old_pkg import OldTrainer, OldTrainer as OT
        import trl.experimental.old_pkg as op
        from trl import GRPOConfig

        a = OldTrainer()
        b = OT()
        c = op.OldTrainer()
    """, """\
        from compat.trl import NewTrainer, NewTrainer as OT
        from trl import GRPOConfig
        import compat.trl

        a = NewTrainer()
        b = OT()
        c = compat.trl.NewTrainer()
    """)


def test_table_gone_names_are_marked_and_kept():
    out, findings = run_rule(TABLE, "from trl.experimental.old_pkg import gone_helper\n\ngone_helper(1)\n")
    assert out == (
        "# TODO(trl-compat): gone_helper has no successor [test-table]\n"
        "from trl.experimental.old_pkg import gone_helper\n\n"
        "# TODO(trl-compat): gone_helper has no successor [test-table]\n"
        "gone_helper(1)\n"
    )
    assert len(findings) == 2 and not any(f.changed for f in findings)


def test_table_unlisted_name_of_a_removed_module_is_gone():
    out, _ = run_rule(TABLE, "from trl.experimental.old_pkg import Other\n\nOther()\n")
    assert out.startswith("# TODO(trl-compat): trl.experimental.old_pkg was removed in TRL 1.14")


def test_table_drops_an_unused_import_of_a_gone_name():
    """ruff's F401 fix, for a name the target lacks: nothing in the module uses it, so the import goes (a marker
    would only ask the user to delete it); kept and marked where the module may reach it by name."""
    out, findings = run_rule(TABLE, "from trl.experimental.old_pkg import Other, OldTrainer\n\nOldTrainer()\n")
    assert out == "from compat.trl import NewTrainer\n\nNewTrainer()\n"
    assert any("never uses" in f.message and "old_pkg.Other" in f.message for f in findings)
    for kept in ("from trl.experimental.old_pkg import Other\n__all__ = ['Other']\n",  # a re-export
                 "from trl.experimental.old_pkg import Other\nf = globals()['Oth' + 'er']\n",
                 "from trl.experimental.old_pkg import Other\n# Other is needed by the plugin loader\n",
                 "try:\n    from trl.experimental.old_pkg import Other\nexcept ImportError:\n    Other = None\n"):
        out, _ = run_rule(TABLE, kept)
        assert "import Other" in out and "TODO(trl-compat)" in out, kept
    out, _ = run_rule(TABLE, "from trl.experimental.old_pkg import Other\n", path="pkg/__init__.py")
    assert "import Other" in out
    # inside a block the statement becomes `pass`, so the block stays valid
    out, _ = run_rule(TABLE, "try:\n    from trl.experimental.old_pkg import Other\nexcept ImportError:\n    pass\n")
    assert out == "try:\n    pass\nexcept ImportError:\n    pass\n"


def test_table_noops():
    noop(TABLE, "class OldTrainer:\n    pass\n\n\nOldTrainer()\n")
    noop(TABLE, "from mylib.old_pkg import OldTrainer\nOldTrainer()\n")
    noop(TABLE, "from trl.experimental.old_pkg import OldTrainer\n", target="1.13.0")


def test_table_keeps_a_parenthesised_import_layout():
    """Names moved out of a multi-line `from trl import (...)` leave it as it was laid out: one name per line and the
    magic trailing comma before `)` (not `last_name)`)."""
    check(TABLE, """\
        from trl.experimental.old_pkg import (
            Keep,
            OldTrainer,
            Other,
        )
        from trl.experimental.old_pkg import (Keep2,
            OldTrainer as OT2, Other2)
        use(Keep, Other, Keep2, Other2)
    """, """\
        # TODO(trl-compat): trl.experimental.old_pkg was removed in TRL 1.14 [test-table]
        from trl.experimental.old_pkg import (
            Keep,
            Other,
        )
        from compat.trl import NewTrainer
        # TODO(trl-compat): trl.experimental.old_pkg was removed in TRL 1.14 [test-table]
        from trl.experimental.old_pkg import (Keep2,
            Other2)
        from compat.trl import NewTrainer as OT2
        # TODO(trl-compat): trl.experimental.old_pkg was removed in TRL 1.14 [test-table]
        use(Keep, Other, Keep2, Other2)
    """)


def test_table_moves_join_an_import_line_of_the_same_module():
    """A moved name joins a one-line top-level `from compat.trl import ...` of the import block (two rules moving
    names there leave one line); not when the names are aliased, the import is in a block, or another import of the
    block binds the same name (the order of the bindings would change)."""
    check(TABLE, """\
        from compat.trl import Helper
        from trl.experimental.old_pkg import OldTrainer

        a = OldTrainer()
    """, """\
        from compat.trl import Helper, NewTrainer

        a = NewTrainer()
    """)
    check(TABLE, """\
        from trl.experimental.old_pkg import OldTrainer as OT
        from compat.trl import Helper
        try:
            from trl.experimental.old_pkg import OldTrainer
        except ImportError:
            OldTrainer = None
    """, """\
        from compat.trl import NewTrainer as OT
        from compat.trl import Helper
        try:
            from compat.trl import NewTrainer
        except ImportError:
            OldTrainer = None
    """)
    check(TABLE, """\
        from compat.trl import Helper
        from trl.experimental.old_pkg import OldTrainer
        from other import NewTrainer
    """, """\
        from compat.trl import Helper
        from compat.trl import NewTrainer
        from other import NewTrainer
    """)
    # the statement's own comment stays with it: the moved import keeps its line
    check(TABLE, """\
        from compat.trl import Helper
        # the trainer
        from trl.experimental.old_pkg import OldTrainer
    """, """\
        from compat.trl import Helper
        # the trainer
        from compat.trl import NewTrainer
    """)
    # nor does a statement that opens an import group (a blank line before it): the group's layout stays
    check(TABLE, """\
        from compat.trl import Helper

        from trl.experimental.old_pkg import OldTrainer
    """, """\
        from compat.trl import Helper

        from compat.trl import NewTrainer
    """)
