"""neftune-hook: `transformers.trainer_utils.neftune_post_forward_hook` (gone in 5.2) -> compat.trl's copy.

The oracle for "the same function": transformers 4.56.2's own definition, read from its wheel, against compat's
(their bodies without docstrings), and the atlas for where the name lived.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import zipfile
from pathlib import Path

import pytest

from migrations.atlas import Atlas
from migrations.transformers.v5_2.neftune_hook import MIGRATION as RULE, OLD
from tests.migrations._driver import check, noop


def test_the_import_goes_to_compat():
    """thaihungle/MRPO's LLaMA-Factory DPO trainer (src/llmtuner/train/dpo/trainer_mref.py)."""
    check(RULE, """\
        from transformers.trainer_utils import EvalLoopOutput, neftune_post_forward_hook

        hook = embeddings.register_forward_hook(neftune_post_forward_hook)
        """, """\
        from transformers.trainer_utils import EvalLoopOutput
        from compat.trl import neftune_post_forward_hook

        hook = embeddings.register_forward_hook(neftune_post_forward_hook)
        """)


def test_noops():
    noop(RULE, "from transformers.integrations import neftune_post_forward_hook\n")
    noop(RULE, "def neftune_post_forward_hook(module, input, output):\n    return output\n")
    noop(RULE, "from transformers.trainer_utils import EvalLoopOutput\n")


def test_no_path_serves_4_56_to_5_24():
    atlas = Atlas.load("transformers")
    assert atlas.has("5.1.0", OLD) and not atlas.has("5.2.0", OLD) and not atlas.has("5.24.0", OLD)
    assert not any(atlas.has("4.56.2", q) for q in atlas.moved_to("5.24.0", "neftune_post_forward_hook"))


def _body(source: str) -> str:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    body = node.body[1:] if isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
        else node.body
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def test_compats_copy_is_transformers_4_56s_function():
    import compat.trl

    wheel = Path(__file__).resolve().parents[4] / ".cache" / "wheels" / "transformers-4.56.2-py3-none-any.whl"
    if not wheel.exists():
        pytest.skip("the transformers 4.56.2 wheel is not cached (make .cache/wheels/.downloaded)")
    source = zipfile.ZipFile(wheel).read("transformers/trainer_utils.py").decode()
    node = next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == "neftune_post_forward_hook")
    theirs = ast.get_source_segment(source, node)
    assert _body(theirs) == _body(inspect.getsource(compat.trl.neftune_post_forward_hook))
