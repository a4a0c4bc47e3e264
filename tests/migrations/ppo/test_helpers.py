"""Unit tests of `migrations.helpers`, the CST helpers every TRL rule shares."""

from __future__ import annotations

import libcst as cst
import pytest

from migrations.base import Migration, RuleContext
from migrations.base import dedupe_header_todos
from migrations.kinds.cst import code, literal_value, replace_args
from migrations.kinds.imports import TrlRef, ensure_imports, imports_trl, split_qualified
from migrations.kinds.symbols import Replacement, SymbolTransformer


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


def test_split_qualified() -> None:
    assert split_qualified("trl.trainer.ppo_config.PPOConfig") == TrlRef("trl.trainer.ppo_config", "PPOConfig")
    assert split_qualified(".trl.PPOConfig") is None
    assert split_qualified("trlx.PPOConfig") is None


def test_ensure_imports_merges_and_skips_present() -> None:
    mod = cst.parse_module('"""doc"""\nfrom __future__ import annotations\nimport os\nfrom transformers import A\n\nx = 1\n')
    out = ensure_imports(mod, [("transformers", "B"), ("os", ""), ("peft", "get_peft_model"), ("transformers", "A")])
    assert out.code == (
        '"""doc"""\nfrom __future__ import annotations\nimport os\nfrom transformers import A, B\n'
        "from peft import get_peft_model\n\nx = 1\n"
    )


def test_imports_trl_gate() -> None:
    assert imports_trl(cst.parse_module("from trl import PPOTrainer\n"), {"PPOTrainer"})
    assert imports_trl(cst.parse_module("import trl.core\n"), set())
    assert imports_trl(cst.parse_module("from trl import *\n"), set())
    assert not imports_trl(cst.parse_module("from trl import GRPOTrainer\nPPOTrainer = 1\n"), {"PPOTrainer"})
    assert not imports_trl(cst.parse_module("from .trl import PPOTrainer\n"), {"PPOTrainer"})


def test_literal_value() -> None:
    assert literal_value(cst.parse_expression("-1.5e-3")) == -1.5e-3
    assert literal_value(cst.parse_expression("{'a': (1, None)}")) == {"a": (1, None)}
    assert literal_value(cst.parse_expression("args.lr"), None) is None
    with pytest.raises(ValueError):
        literal_value(cst.parse_expression("f()"))


def test_replace_args_layouts() -> None:
    one_line = cst.parse_expression("f(a, b=1)")
    assert isinstance(one_line, cst.Call)
    new = [cst.Arg(cst.Name("x"), keyword=cst.Name("k"))]
    assert code(replace_args(one_line, new)) == "f(k = x)"
    multi = cst.parse_module("y = f(\n    a=0,  # keep me\n    b=1,\n)\n")
    call = multi.body[0].body[0].value  # type: ignore[attr-defined]
    out = replace_args(call, [call.args[1], call.args[0]])
    assert code(out) == "f(\n    b=1,\n    a=0,  # keep me\n)"
    long = cst.parse_expression("g(" + ", ".join(f"a{i}={i}" for i in range(30)) + ")")
    assert code(replace_args(long, list(long.args))).count("\n") == 31  # type: ignore[attr-defined]


def test_dedupe_header_todos() -> None:
    marker = "# TODO(trl-compat): x (see MIGRATION.md#ppo-to-grpo)"
    mod = cst.parse_module(f"{marker}\nimport trl\n")
    stmt = mod.body[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(marker))])
    assert dedupe_header_todos(mod.with_changes(body=[stmt])).code == mod.code
