"""CST helpers every rule shares: source text, dotted names, call arguments, literal values.

Pure functions over libcst nodes; nothing here knows TRL or imports. Call editing keeps the call's layout:

* source: `code(node)`, `parse_expr`, `parse_stmts`;
* names: `dotted(expr)` (`a.b.c` or None), `build_dotted("a.b.c")`;
* arguments: `kwarg` / `kwarg_value` / `arg_value` (by keyword or position) / `set_kwarg` / `drop_kwarg` /
  `make_kwarg`, `replace_args` and `explode_call` (rewrite an argument list keeping the call's layout and the
  comments after arguments);
* values: `literal_value` (the Python value of a literal expression), `string_value` (a plain string literal's value),
  `replace_string` (same quotes, new text), `side_effect_free` (an expression that can be dropped without losing
  anything it does).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any, TypeVar

import libcst as cst

__all__ = [
    "FunctionBodyVisitor",
    "arg_value",
    "build_dotted",
    "code",
    "dotted",
    "drop_kwarg",
    "explode_call",
    "kwarg",
    "kwarg_value",
    "literal_value",
    "make_kwarg",
    "parse_expr",
    "parse_stmts",
    "replace_args",
    "replace_string",
    "set_kwarg",
    "side_effect_free",
    "string_value",
]

_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """The source text of a node."""
    return _EMPTY.code_for_node(node)


def parse_expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def parse_stmts(text: str) -> list[cst.BaseStatement]:
    """Parse statements (dedented source) into a list of libcst statements."""
    return list(cst.parse_module(text).body)



def names_in(*nodes: cst.CSTNode) -> set[str]:
    """Every name the nodes' code spells (variables, attributes, import aliases), none inside a string or a comment."""
    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    for node in nodes:
        node.visit(_V())
    return found


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, None otherwise."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None



def build_dotted(name: str) -> cst.BaseExpression:
    parts = name.split(".")
    expr: cst.BaseExpression = cst.Name(parts[0])
    for p in parts[1:]:
        expr = cst.Attribute(value=expr, attr=cst.Name(p))
    return expr


# -- call arguments ----------------------------------------------------------------------------------------------
def kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a
    return None


def kwarg_value(call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The value passed as keyword `name`, None when it is not passed by keyword."""
    arg = kwarg(call, name)
    return arg.value if arg is not None else None


def arg_value(call: cst.Call, position: int, name: str) -> cst.BaseExpression | None:
    """The value passed for a parameter, by keyword or by position (positional args before any star)."""
    k = kwarg(call, name)
    if k is not None:
        return k.value
    positional = [a for a in call.args if a.keyword is None]
    for i, a in enumerate(positional):
        if a.star:
            return None
        if i == position:
            return a.value
    return None


def set_kwarg(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """Set (replace or append) keyword `name`."""
    args = list(call.args)
    for i, a in enumerate(args):
        if a.keyword is not None and a.keyword.value == name:
            args[i] = a.with_changes(value=value)
            return call.with_changes(args=args)
    return call.with_changes(args=append_items(args, [make_kwarg(name, value)]))


_Item = TypeVar("_Item", cst.Arg, cst.Param)


def make_kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def append_items(args: list[_Item], new: list[_Item]) -> list[_Item]:
    """Append arguments (or parameters), copying the comma/whitespace style of a multi-line call (or signature)."""
    if not new:
        return args
    if not args:
        return new
    last = args[-1]
    comma = last.comma
    if isinstance(comma, cst.Comma):
        # a call with a trailing comma: the comma between two arguments (newline + indent in a multi-line call)
        # separates the new ones; the trailing comma (newline before the closing parenthesis) stays last
        inner = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else comma
        out = [*args[:-1], last.with_changes(comma=inner)]
        out += [a.with_changes(comma=inner) for a in new[:-1]]
        out.append(new[-1].with_changes(comma=comma))
        return out
    sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    out = args[:-1] + [last.with_changes(comma=sep)]
    for i, a in enumerate(new):
        out.append(a.with_changes(comma=sep if i < len(new) - 1 else cst.MaybeSentinel.DEFAULT))
    return out


def _lines_after(arg: cst.Arg) -> list[cst.EmptyLine]:
    """The whole lines (comments, blank lines) between `arg`'s comma and what follows it in a multi-line call."""
    ws = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else None
    return list(ws.empty_lines) if isinstance(ws, cst.ParenthesizedWhitespace) else []


def _with_lines_after(arg: cst.Arg, lines: list[cst.EmptyLine]) -> cst.Arg:
    ws = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else None
    if not isinstance(ws, cst.ParenthesizedWhitespace):
        return arg
    return arg.with_changes(comma=arg.comma.with_changes(whitespace_after=ws.with_changes(empty_lines=lines)))


def drop_kwarg(call: cst.Call, name: str) -> cst.Call:
    """Drop keyword `name`; the whole-line comments around it stay where they were (above the next argument)."""
    args: list[cst.Arg] = []
    opening = call.whitespace_before_args
    carry: list[cst.EmptyLine] = []  # the lines after a dropped argument, for the argument kept before them
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            carry.extend(_lines_after(a))
            continue
        if carry and args:
            args[-1] = _with_lines_after(args[-1], [*_lines_after(args[-1]), *carry])
        elif carry and isinstance(opening, cst.ParenthesizedWhitespace):
            opening = opening.with_changes(empty_lines=[*opening.empty_lines, *carry])
        carry = []
        args.append(a)
    if args and call.args and args[-1] is not call.args[-1]:
        # keep the original trailing-comma style of the last argument, its own trailing comment and the lines
        # before `)`
        last = args[-1]
        own = last.comma.whitespace_after if isinstance(last.comma, cst.Comma) else None
        last = last.with_changes(comma=call.args[-1].comma, whitespace_after_arg=call.args[-1].whitespace_after_arg)
        end = last.comma.whitespace_after if isinstance(last.comma, cst.Comma) else None
        if isinstance(own, cst.ParenthesizedWhitespace) and isinstance(end, cst.ParenthesizedWhitespace):
            last = last.with_changes(comma=last.comma.with_changes(whitespace_after=end.with_changes(
                first_line=own.first_line, empty_lines=[*own.empty_lines, *carry])))
        args[-1] = last
    return call.with_changes(args=args, whitespace_before_args=opening)


def replace_args(call: cst.Call, args: Sequence[cst.Arg], max_width: int = 100) -> cst.Call:
    """Replace all arguments, keeping the call's layout: one-per-line stays one-per-line (comments after an
    argument travel with its value), a one-line call stays one line unless it grows past `max_width`."""
    args = list(args)
    comments: dict[int, cst.TrailingWhitespace] = {}
    sep_ws: cst.ParenthesizedWhitespace | None = None
    for a in call.args:
        ws = a.comma.whitespace_after if isinstance(a.comma, cst.Comma) else None
        if isinstance(ws, cst.ParenthesizedWhitespace):
            sep_ws = sep_ws or ws
            if ws.first_line.comment is not None:
                comments[id(a.value)] = ws.first_line
    hanging = isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace)
    if (hanging or sep_ws is not None) and call.args:
        above, tail = _comment_lines(call, args)
        # a multi-line call (hanging or aligned): one argument per line, hanging indent (an aligned layout would
        # be misaligned as soon as the callee's name changes); a hanging call keeps its own indentation
        opening = closing = None
        if hanging:
            opening = call.whitespace_before_args
            last = call.args[-1]
            if isinstance(last.comma, cst.Comma) and isinstance(last.comma.whitespace_after, cst.ParenthesizedWhitespace):
                closing = last.comma.whitespace_after
            elif isinstance(last.whitespace_after_arg, cst.ParenthesizedWhitespace):
                closing = last.whitespace_after_arg
        return explode_call(call.with_changes(args=args), comments, opening, closing, above, tail)
    out = []
    for i, a in enumerate(args):
        out.append(
            a.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                if i < len(args) - 1
                else cst.MaybeSentinel.DEFAULT
            )
        )
    flat = call.with_changes(args=out)
    if len(code(flat)) > max_width:
        return explode_call(flat)
    return flat


def _comment_lines(call: cst.Call, args: Sequence[cst.Arg]) -> tuple[dict[int, list[cst.EmptyLine]], list[cst.EmptyLine]]:
    """The whole lines (comments, commented-out arguments, blank lines) between the arguments of a multi-line `call`:
    id(value of the argument of `args` they stood above) -> lines, and the lines left before the closing parenthesis.

    Lines above an argument that `args` no longer holds move down to the next argument kept (or to the end): a rule
    dropping or moving a keyword never takes the comments around it with it.
    """
    kept = {id(a.value) for a in args}
    above: dict[int, list[cst.EmptyLine]] = {}
    opening = call.whitespace_before_args
    pending = list(opening.empty_lines) if isinstance(opening, cst.ParenthesizedWhitespace) else []
    for a in call.args:
        if pending and id(a.value) in kept:
            above[id(a.value)], pending = pending, []
        ws = a.comma.whitespace_after if isinstance(a.comma, cst.Comma) else a.whitespace_after_arg
        if isinstance(ws, cst.ParenthesizedWhitespace):
            pending.extend(ws.empty_lines)
    return above, pending


def explode_call(
    call: cst.Call,
    comments: dict[int, cst.TrailingWhitespace] | None = None,
    opening: cst.ParenthesizedWhitespace | None = None,
    closing: cst.ParenthesizedWhitespace | None = None,
    above: dict[int, list[cst.EmptyLine]] | None = None,
    tail: Sequence[cst.EmptyLine] = (),
) -> cst.Call:
    """One argument per line with a trailing comma, indented one level below the enclosing statement (or as
    `opening` / `closing`, the whitespace after `(` and before `)` of the original call, say).

    `comments` maps id(argument value) to the trailing comment that followed that argument in the original call;
    `above` maps it to the whole lines that stood above that argument, `tail` holds those before `)`.
    """
    comments = comments or {}
    above = above or {}
    inner_last = opening.last_line if opening is not None else cst.SimpleWhitespace("    ")
    close_last = closing.last_line if closing is not None else cst.SimpleWhitespace("")
    indent = opening.indent if opening is not None else True

    def ws(first: cst.TrailingWhitespace, last: cst.SimpleWhitespace, ind: bool,
           lines: Sequence[cst.EmptyLine] = ()) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(first_line=first, empty_lines=list(lines), indent=ind, last_line=last)

    args = []
    n = len(call.args)
    for i, a in enumerate(call.args):
        first = comments.get(id(a.value), cst.TrailingWhitespace())
        if i < n - 1:
            after = ws(first, inner_last, indent, above.get(id(call.args[i + 1].value), ()))
        else:
            after = ws(first, close_last, closing.indent if closing is not None else True, tail)
        args.append(a.with_changes(comma=cst.Comma(whitespace_after=after), whitespace_after_arg=cst.SimpleWhitespace("")))
    lead = above.get(id(call.args[0].value), ()) if call.args else ()
    opening_ws = ws(opening.first_line if opening is not None else cst.TrailingWhitespace(), inner_last, indent, lead)
    return call.with_changes(args=args, whitespace_before_args=opening_ws)


# -- static values ------------------------------------------------------------------------------------------------
_NO_VALUE = object()


def literal_value(node: cst.BaseExpression | None, default: Any = _NO_VALUE) -> Any:
    """The Python value of a literal (numbers, strings, None/True/False, tuples/lists/dicts of those, unary minus).

    Returns `default` (or raises ValueError when no default is given) for anything that is not a literal.
    """
    if node is None:
        if default is _NO_VALUE:
            raise ValueError("no node")
        return default
    try:
        return ast.literal_eval(code(node).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        if default is _NO_VALUE:
            raise ValueError(f"not a literal: {code(node)!r}") from None
        return default


def as_test(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node` written where a condition or an `or` operand goes (`x if <here> else y`, `<here> or z`), read for its
    truth only: `True if c else False` is `c` there (its truth, evaluated once, as before); a conditional expression,
    lambda or walrus of lower precedence gets parentheses (libcst writes the tree as given: `a if b if c else d else
    e` would not parse)."""
    if isinstance(node, cst.IfExp) and not node.lpar and literal_value(node.body, None) is True \
            and literal_value(node.orelse, None) is False:
        node = node.test
    if isinstance(node, (cst.IfExp, cst.Lambda, cst.NamedExpr)) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def side_effect_free(node: cst.BaseExpression) -> bool:
    """True when evaluating `node` can do nothing but produce a value: names, attribute reads of names, literals, and
    unary/binary/boolean/comparison operators, conditional expressions, tuples, lists and dicts of those. A call, subscript, lambda, walrus or
    comprehension is not (it may run user code or bind a name), so an argument holding one is never dropped.

    Attribute reads can in principle run a property; a rule dropping one still marks the line it edits.
    """
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis)):
        return True
    if isinstance(node, cst.ConcatenatedString):
        return True
    if isinstance(node, cst.Attribute):
        return side_effect_free(node.value)
    if isinstance(node, cst.UnaryOperation):
        return side_effect_free(node.expression)
    if isinstance(node, (cst.BinaryOperation, cst.BooleanOperation)):
        return side_effect_free(node.left) and side_effect_free(node.right)
    if isinstance(node, cst.Comparison):
        return side_effect_free(node.left) and all(side_effect_free(t.comparator) for t in node.comparisons)
    if isinstance(node, cst.IfExp):
        return side_effect_free(node.test) and side_effect_free(node.body) and side_effect_free(node.orelse)
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return all(isinstance(e, cst.Element) and side_effect_free(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and side_effect_free(e.key) and side_effect_free(e.value)
                   for e in node.elements)
    return False


def string_value(node: cst.BaseExpression) -> str | None:
    """The value of a plain (non f-) string literal, else None."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value if isinstance(node.evaluated_value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def replace_string(node: cst.SimpleString, value: str) -> cst.SimpleString:
    """A string literal with the same quotes and prefix as `node`, holding `value` (no escapes needed)."""
    quote = node.quote
    return node.with_changes(value=f"{node.prefix}{quote}{value}{quote}")


class FunctionBodyVisitor(cst.CSTVisitor):
    """Visits the statements of function `fn` itself, not those of the functions, classes and lambdas in it (another
    scope): subclass it with the `visit_*` methods you need and call `fn.visit(visitor)`."""

    def __init__(self, fn: cst.FunctionDef) -> None:
        super().__init__()
        self.fn = fn

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.fn

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False
