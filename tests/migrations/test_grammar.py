"""`migrations.kinds.grammar`: the check and the rules' `ast` analyses read code written for a newer Python (PEP 701
f-strings, Python 3.12) on the Python that runs trl-compat.

The oracle for line numbers is libcst's own PositionProvider on the original text (libcst reads every grammar), not
the function under test. Lexsi-Labs/aligntune (src/aligntune/backends/*, 2026) and a Korean RLHF course
(SFT/SFT.py: `f"{example["instruction"]}"`) were "does not parse" in the check on Python 3.11 for exactly this.
"""

from __future__ import annotations

import ast
import sys
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from compat.check import check_source
from compat.check.analyze import Checker
from migrations.kinds import grammar

#: every f-string shape the fallback rewrites, in code the check looks at
PY312 = textwrap.dedent('''\
    from trl import SFTConfig, SFTTrainer

    row = {"text": "a", "n": 3}
    width = 4
    one = f"{row["text"]}"
    spec = f"{row["n"]:{width}}"
    nested = f"{f"{row["text"]}"!r}"
    joined = ("prefix " f"{row["text"]}"
              " suffix")
    block = f"""
    {row["text"]}
    {SFTTrainer(tokenizer=None)}
    """
    trainer = SFTTrainer(
        args=SFTConfig(output_dir=f"{row["text"]}/out", max_seq_length=8),
        tokenizer=None,
    )
''')


def _statement_lines(text: str) -> list[int]:
    """The first line of every statement, by libcst's positions on the original text (the oracle)."""
    wrapper = MetadataWrapper(cst.parse_module(text))
    positions = wrapper.resolve(PositionProvider)
    return sorted(positions[n].start.line for n in positions
                  if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)))


def _ast_statement_lines(tree: ast.Module) -> list[int]:
    return sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt))


def _interpreter_reads(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def test_without_fstrings_keeps_every_statement_on_its_line_and_parses_anywhere():
    down = grammar.without_fstrings(PY312)
    assert down is not None and "f\"" not in down and 'f"""' not in down
    tree = ast.parse(down)  # Python 3.11's grammar reads it
    assert _ast_statement_lines(tree) == _statement_lines(PY312)
    assert down.count("\n") == PY312.count("\n")
    # the interpolated expressions stay, with their calls: the one inside the triple-quoted f-string is on line 12
    calls = {(n.lineno, n.func.id) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert (12, "SFTTrainer") in calls and (14, "SFTTrainer") in calls and (15, "SFTConfig") in calls


def test_parse_falls_back_only_where_the_interpreter_refuses():
    plain = "x = f'{1}'\n"
    assert ast.dump(grammar.parse(plain)) == ast.dump(ast.parse(plain))  # read by the interpreter: its own tree
    tree = grammar.parse(PY312)
    assert _ast_statement_lines(tree) == _statement_lines(PY312)


def test_code_no_python_reads_keeps_the_interpreters_error():
    broken = 'x = f"{1}"\ndef (:\n    pass\n'
    with pytest.raises(SyntaxError) as caught:
        grammar.parse(broken)
    with pytest.raises(SyntaxError) as expected:
        ast.parse(broken)
    assert (caught.value.msg, caught.value.lineno) == (expected.value.msg, expected.value.lineno)
    assert grammar.without_fstrings("x = 1\n") is None  # nothing to rewrite


def test_the_check_reads_a_python_3_12_file_and_flags_it_at_its_lines():
    if _interpreter_reads(PY312):
        pytest.skip(f"Python {sys.version_info.major}.{sys.version_info.minor} reads 3.12 f-strings itself")
    found = {(p.line, p.name) for p in Checker("1.16.0").check(PY312)}
    # the keywords of era SFT (TRL 1.16 rejects each), at the lines where they stand in the original
    assert {(12, "trl.SFTTrainer(tokenizer=)"), (15, "trl.SFTConfig(max_seq_length=)"),
            (16, "trl.SFTTrainer(tokenizer=)")} <= found
    result = check_source("sft.py", PY312, Checker("1.16.0"))
    assert result.checked and not result.errors


def test_a_rule_reading_the_module_with_ast_sees_a_python_3_12_file():
    from migrations.kinds.training_args import binds_name

    # a name bound in a 3.12 file is found, one that is only mentioned is not (it used to assume every name taken)
    assert binds_name(PY312 + "warmup = 1\n", "warmup")
    assert not binds_name(PY312 + "x = 1  # warmup\n", "warmup")
