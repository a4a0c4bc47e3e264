"""`migrate_source` on Python text: the shipped chunked_nll rule, the one-parse/shared-metadata pipeline, the
re-parse check that catches a broken rule, and what a second run does."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import QualifiedNameProvider
from packaging.version import Version

from compat.migrate import Options, migrate_source
from migrations import select
from migrations.base import MigrationTransformer, PythonMigration, TODO_PREFIX

from ._util import NEW_SFT, OLD_SFT, RULE


def run(src: str, **kw):
    return migrate_source(textwrap.dedent(src), rules=[RULE], verify_idempotent=True, **kw)


@pytest.mark.parametrize(
    "before, after",
    [
        (OLD_SFT, NEW_SFT),
        ("from trl import SFTConfig as C\nC(loss_type='chunked_nll')\n", "from trl import SFTConfig as C\nC(loss_type='nll')\n"),
        ("import trl as t\nt.SFTConfig(loss_type=\"chunked_nll\")\n", "import trl as t\nt.SFTConfig(loss_type=\"nll\")\n"),
        ("import trl\ntrl.SFTConfig(loss_type=r'''chunked_nll''')\n", "import trl\ntrl.SFTConfig(loss_type=r'''nll''')\n"),
        (
            "from trl.trainer.sft_config import SFTConfig\nSFTConfig(\n    loss_type='chunked_nll',  # keep me\n)\n",
            "from trl.trainer.sft_config import SFTConfig\nSFTConfig(\n    loss_type='nll',  # keep me\n)\n",
        ),
        (
            "def f():\n    from trl import SFTConfig\n    return SFTConfig(loss_type='chunked_nll')\n",
            "def f():\n    from trl import SFTConfig\n    return SFTConfig(loss_type='nll')\n",
        ),
    ],
)
def test_rewrites_sftconfig_through_imports_and_aliases(before, after):
    result = run(before)
    assert result.ok, result.errors
    assert result.text == after
    assert result.changed and result.rules_applied == [RULE.id]
    assert [f.changed for f in result.findings] == [True]


@pytest.mark.parametrize(
    "src",
    [
        "class SFTConfig:\n    pass\nSFTConfig(loss_type='nll')\n",  # local class, no literal
        "from mylib import SFTConfig\nSFTConfig(loss_type='nll')\n",
        '"""Docs mention chunked_nll."""\n',
        '"""chunked_nll"""\n',  # a docstring equal to the literal is still a docstring
        "# loss_type='chunked_nll' in a comment\nx = 1\n",
    ],
)
def test_leaves_non_trl_code_alone(src):
    result = run(src)
    assert result.ok and not result.changed and result.text == src
    assert result.findings == []


def test_other_literals_get_one_todo_marker_even_on_a_second_run():
    src = "from mylib import SFTConfig\n\nif True:\n    cfg = SFTConfig(loss_type='chunked_nll')\n"
    first = run(src)
    assert first.changed
    lines = first.text.splitlines()
    assert lines[3].startswith(f"    {TODO_PREFIX} ") and lines[3].endswith(" [sft-chunked-nll-loss-type]")
    assert lines[4] == "    cfg = SFTConfig(loss_type='chunked_nll')"
    assert [(f.severity, f.line, f.column) for f in first.manual_steps] == [("manual", 4, 31)]
    second = migrate_source(first.text, rules=[RULE])
    assert not second.changed and second.text == first.text
    assert len(second.manual_steps) == 1  # still listed in the report, not marked twice
    assert second.text.count(TODO_PREFIX) == 1


def test_file_without_triggers_is_never_parsed():
    result = migrate_source("x = (\n", rules=[RULE])  # would not even parse
    assert result.ok and not result.parsed and not result.changed


def test_unparsable_file_with_trigger_is_reported_and_untouched():
    src = "x = 'chunked_nll'\ndef f(:\n"
    result = migrate_source(src, rules=[RULE])
    assert not result.ok and result.errors[0].kind == "parse" and result.errors[0].line == 2
    assert result.text == src and not result.changed


def test_a_notebook_exported_to_py_migrates_with_its_ipython_lines_kept():
    """Colab's "Download .py" keeps `!pip install` / `%cd` lines (llm-ai-book's fine-tuning-llama-7B-with-QLoRA.py
    failed to parse, its SFTTrainer left as it was): they are masked as in a notebook cell and put back verbatim."""
    src = "!pip install -q trl==0.8.6\n%cd /content\n" + OLD_SFT
    result = migrate_source(src, rules=[RULE])
    assert result.ok and result.changed
    assert result.text == "!pip install -q trl==0.8.6\n%cd /content\n" + NEW_SFT
    assert [f.line for f in result.findings] == [5]  # the line of the rewritten call in the file as it is
    again = migrate_source(result.text, rules=[RULE])
    assert again.ok and not again.changed


def test_an_exclamation_line_inside_a_string_is_no_ipython_line():
    src = 'from trl import SFTConfig\ns = """\n!inside\n"""\n!pip install x\ncfg = SFTConfig(loss_type="chunked_nll")\n'
    result = migrate_source(src, rules=[RULE])
    assert not result.ok and result.errors[0].kind == "parse" and result.text == src


def test_newer_syntax_than_the_interpreter_still_migrates():
    src = "from trl import SFTConfig\ntype Alias = int\ndef f[T](x: T) -> T:\n    return SFTConfig(loss_type='chunked_nll')\n"
    result = migrate_source(src, rules=[RULE])
    assert result.ok and result.text == src.replace("chunked_nll", "nll")


def test_crlf_mixed_newlines_tabs_and_no_final_newline_survive():
    src = "from trl import SFTConfig\r\nif x:\n\tcfg = SFTConfig(loss_type='chunked_nll')\r\n\ty = 1"
    result = migrate_source(src, rules=[RULE])
    assert result.text == src.replace("chunked_nll", "nll")


def test_target_gates_the_rule():
    assert RULE in select(Options(target_trl=Version("1.15.0")))
    assert RULE not in select(Options(target_trl=Version("1.14.2")))
    assert migrate_source(OLD_SFT, options=Options(target_trl=Version("1.14"))).text == OLD_SFT


# -- the engine's contract with rules ------------------------------------------------------------------------------


class _Recorder(PythonMigration):
    """A real rule that records the wrapper it got and optionally renames `a` to `b` (resolving qualified names)."""

    release = "1.13"
    summary = "test rule"
    triggers = ("a",)

    def __init__(self, rule_id: str, rename: bool, seen: list) -> None:
        self.id, self.rename, self.seen = rule_id, rename, seen

    def transform(self, wrapper, ctx):
        self.seen.append((self.id, wrapper, wrapper.resolve(QualifiedNameProvider)))
        if not self.rename:
            return wrapper.module
        return wrapper.module.visit(_Rename())


class _Rename(cst.CSTTransformer):
    def leave_Name(self, original_node, updated_node):
        return updated_node.with_changes(value="b") if updated_node.value == "a" else updated_node


def test_metadata_is_resolved_once_while_the_tree_is_unchanged():
    seen: list = []
    r4 = _Recorder("r4", False, seen)
    r4.triggers = ("b",)  # r3 writes `b` (rules are gated on the current text)
    rules = [_Recorder("r1", False, seen), _Recorder("r2", False, seen), _Recorder("r3", True, seen), r4]
    result = migrate_source("a = 1\n", rules=rules)
    assert result.text == "b = 1\n" and result.rules_applied == ["r3"]
    (_, w1, m1), (_, w2, m2), (_, w3, _), (_, w4, m4) = seen
    assert w1 is w2 is w3 and m1 is m2  # one wrapper, one resolution for r1..r3
    assert w4 is not w3 and m4 is not m1  # re-wrapped after r3 changed the tree
    assert w4.module.code == "b = 1\n"


def test_a_trigger_written_by_an_earlier_rule_brings_its_rule_in():
    seen: list = []
    late = _Recorder("late", False, seen)
    late.triggers = ("b",)  # not in the original text: only the rename before it writes a `b`
    result = migrate_source("a = 1\n", rules=[_Recorder("rename", True, seen), late])
    assert [rule_id for rule_id, _, _ in seen] == ["rename", "late"]
    assert seen[1][1].module.code == "b = 1\n" and result.text == "b = 1\n"


def test_a_trigger_an_earlier_rule_removed_skips_its_rule():
    seen: list = []
    result = migrate_source("a = 1\n", rules=[_Recorder("rename", True, seen), _Recorder("stale", False, seen)])
    assert [rule_id for rule_id, _, _ in seen] == ["rename"]  # `a` is gone when "stale" comes: never parsed for
    assert result.text == "b = 1\n" and result.rules_applied == ["rename"]


def test_rebuilt_but_identical_tree_keeps_the_wrapper():
    seen: list = []

    class Rebuild(_Recorder):
        def transform(self, wrapper, ctx):
            super().transform(wrapper, ctx)
            return wrapper.module.visit(cst.CSTTransformer())  # a new, equal tree

    rules = [Rebuild("r1", False, seen), _Recorder("r2", False, seen)]
    result = migrate_source("a = 1\n", rules=rules)
    assert not result.changed and seen[0][1] is seen[1][1]


class _Breaker(PythonMigration):
    """A rule with a real bug: it assigns to a call (`f() = 1`), which libcst builds but no parser accepts."""

    id = "breaker"
    release = "1.13"
    summary = "emits broken code"
    # gated on the current text: still there once the chunked_nll rule before it has rewritten the value
    triggers = ("SFTConfig",)

    class _T(MigrationTransformer):
        def leave_Assign(self, original_node, updated_node):
            return updated_node.with_changes(targets=[cst.AssignTarget(cst.parse_expression("f()"))])

    transformer = _T


def test_a_rule_producing_unparsable_code_is_named_and_the_file_untouched():
    src = "from trl import SFTConfig\nx = 1\ncfg = SFTConfig(loss_type='chunked_nll')\n"
    result = migrate_source(src, rules=[RULE, _Breaker()])
    assert not result.ok and result.text == src and not result.changed
    (error,) = result.errors
    assert error.kind == "rule-output" and error.rule == "breaker"


class _Crasher(PythonMigration):
    id = "crasher"
    release = "1.13"
    summary = "raises"
    # gated on the current text: still there once the chunked_nll rule before it has rewritten the value
    triggers = ("SFTConfig",)

    def transform(self, wrapper, ctx):
        raise RuntimeError("boom")


def test_a_crashing_rule_is_reported_and_the_file_untouched():
    result = migrate_source(OLD_SFT, rules=[RULE, _Crasher()])
    assert result.text == OLD_SFT and not result.changed
    assert result.errors[0].kind == "rule-crash" and result.errors[0].rule == "crasher" and "boom" in result.errors[0].message


class _AstReader(PythonMigration):
    id = "ast-reader"
    release = "1.13"
    summary = "reads the module with ast, as many rules do"
    triggers = ("SFTConfig",)

    def transform(self, wrapper, ctx):
        import ast

        ast.parse(ctx.module_code(wrapper))
        return wrapper.module


#: an f-string reusing its quotes: Python 3.12 syntax (PEP 701), which libcst reads and an older `ast` does not
PY312 = 'from trl import SFTConfig\nd = {"a": 1}\nprint(f"{d["a"]}")\nSFTConfig(output_dir="o")\n'


def test_code_written_for_a_newer_python_than_the_one_running_trl_compat():
    import ast
    import sys

    try:
        ast.parse(PY312)
    except SyntaxError:
        pass
    else:
        pytest.skip(f"Python {sys.version_info.major}.{sys.version_info.minor} reads 3.12 f-strings")
    result = migrate_source(PY312, rules=[_AstReader()])
    assert result.text == PY312 and not result.changed
    error = result.errors[0]
    assert error.kind == "parse" and error.rule is None and error.line == 3
    assert "written for a newer Python" in error.message and "a bug in the rule" not in error.message
    # the rules' own analyses read it through migrations.grammar (tests/migrations/test_grammar.py)


def test_default_transform_hands_back_the_same_module_when_nothing_changed():
    wrapper = cst.MetadataWrapper(cst.parse_module("x = 'chunked_nll'\n"), unsafe_skip_copy=True)
    from migrations.base import RuleContext

    assert RULE.transform(wrapper, RuleContext()) is not wrapper.module  # a TODO was added
    clean = cst.MetadataWrapper(cst.parse_module("y = 'nll'\n"), unsafe_skip_copy=True)
    assert RULE.transform(clean, RuleContext()) is clean.module
