"""`migrations.kinds.cst`: call arguments, literal values, dotted names, layouts."""

from __future__ import annotations

import libcst as cst
import pytest

from migrations.kinds.cst import (
    arg_value,
    build_dotted,
    code,
    dotted,
    drop_kwarg,
    kwarg,
    kwarg_value,
    literal_value,
    replace_args,
    replace_string,
    set_kwarg,
    string_value,
)


def _call(text: str) -> cst.Call:
    node = cst.parse_expression(text)
    assert isinstance(node, cst.Call)
    return node


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



def test_replace_args_keeps_the_comment_lines_between_arguments() -> None:
    """Whole-line comments inside a multi-line call (commented-out arguments, notes) survive a rewrite of its
    arguments; those above an argument the rewrite drops move down to the next argument kept (llm-ai-book's SFT
    notebook lost `# push_to_hub=True,` and three more lines when its TrainingArguments became an SFTConfig)."""
    src = ("y = f(\n    # lead\n    a=0,\n    # above b\n    b=1,  # trailing b\n    # above c (dropped)\n"
           "    c=2,\n    d=3,\n    # tail\n)\n")
    call = cst.parse_module(src).body[0].body[0].value  # type: ignore[attr-defined]
    new = [call.args[0], call.args[1], call.args[3], cst.Arg(cst.Integer("4"), keyword=cst.Name("e"),
                                                             equal=call.args[0].equal)]
    assert code(replace_args(call, new)) == (
        "f(\n    # lead\n    a=0,\n    # above b\n    b=1,  # trailing b\n    # above c (dropped)\n    d=3,\n"
        "    e=4,\n    # tail\n)")
    reordered = replace_args(call, [call.args[3], call.args[0]])  # the lines go with the argument below them
    assert code(reordered) == ("f(\n    # above b\n    # above c (dropped)\n    d=3,\n    # lead\n    a=0,\n"
                               "    # tail\n)")


def test_keyword_and_positional_access():
    call = _call("f(a, b, c=3, **rest)")
    found = kwarg(call, "c")
    assert found is not None and code(found.value) == "3" and kwarg(call, "z") is None
    assert code(kwarg_value(call, "c")) == "3" and kwarg_value(call, "a") is None
    assert code(arg_value(call, 1, "b")) == "b" and code(arg_value(call, 5, "c")) == "3"
    assert arg_value(_call("f(*xs, y)"), 1, "y") is None  # positions after a star are unknown


def test_set_and_drop_kwarg_keep_the_layout():
    assert code(set_kwarg(_call("f(a, c=3)"), "c", cst.Integer("4"))) == "f(a, c=4)"
    assert code(set_kwarg(_call("f(a)"), "d", cst.Name("x"))) == "f(a, d=x)"
    multi = cst.parse_module("y = f(\n    a,\n    c=3,\n)\n").body[0].body[0].value  # type: ignore[attr-defined]
    assert code(set_kwarg(multi, "d", cst.Integer("1"))) == "f(\n    a,\n    c=3,\n    d=1,\n)"
    assert code(drop_kwarg(_call("f(a, c=3, d=4)"), "d")) == "f(a, c=3)"
    assert code(drop_kwarg(_call("f(a, c=3)"), "zz")) == "f(a, c=3)"


def test_drop_kwarg_keeps_the_comment_lines_around_the_dropped_argument() -> None:
    src = "y = f(\n    a=0,\n    b=1,  # b\n    # above c\n    c=2,\n    # tail\n)\n"
    call = cst.parse_module(src).body[0].body[0].value  # type: ignore[attr-defined]
    assert code(drop_kwarg(call, "a")) == "f(\n    b=1,  # b\n    # above c\n    c=2,\n    # tail\n)"
    assert code(drop_kwarg(call, "b")) == "f(\n    a=0,\n    # above c\n    c=2,\n    # tail\n)"
    assert code(drop_kwarg(call, "c")) == "f(\n    a=0,\n    b=1,  # b\n    # above c\n    # tail\n)"

def test_dotted_names_and_strings():
    assert dotted(cst.parse_expression("a.b.c")) == "a.b.c"
    assert dotted(cst.parse_expression("a().b")) is None
    assert code(build_dotted("x.y.z")) == "x.y.z"
    assert string_value(cst.parse_expression("'ab' 'c'")) == "abc"
    assert string_value(cst.parse_expression("f'x{y}'")) is None
    s = cst.parse_expression("r'old'")
    assert isinstance(s, cst.SimpleString) and replace_string(s, "new").value == "r'new'"


def test_side_effect_free():
    from migrations.kinds.cst import parse_expr, side_effect_free

    for text in ("x", "args.max_len", "128", "-1", "'a' 'b'", "a * 2 + b.c", "(1, x)", "[a, 2]", "{'k': v}",
                 "a and not b", "x < 3", "None"):
        assert side_effect_free(parse_expr(text)), text
    for text in ("f()", "a.b()", "d['k']", "lambda: 1", "[x for x in y]", "(y := 2)", "f'{x()}'", "await g",
                 "(1, f())", "x + g()"):
        assert not side_effect_free(parse_expr(text)), text
