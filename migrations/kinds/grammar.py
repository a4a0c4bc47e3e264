"""Read Python code written for a newer Python than the one running trl-compat.

`ast.parse` knows only the grammar of the interpreter it runs on: on Python 3.11 a file that nests quotes inside an
f-string the way PEP 701 (Python 3.12) allows, `f"{row["text"]}"`, is a SyntaxError, although the project runs it
on 3.12 and TRL 1.16 supports both. libcst's parser reads the grammar of every Python 3 release whatever runs it, as
the migrator's rewrites do. So when `ast.parse` refuses a file that libcst reads, each f-string is written as a
tuple of the expressions it interpolates (padded with the newlines it spanned), and `ast` reads that: what the check
and the rules' analyses look at, the imports, calls, names and attributes, keeps its line numbers; only the text of
the f-strings goes, and their columns shift. Nothing is written back to the file.
"""
from __future__ import annotations

import ast
import functools
import re

_FSTRING = re.compile(r"(?<![\w.])(?:[fF][rR]?|[rR][fF])['\"]")
# what CPython says of code too deep to parse, which libcst's native parser might not survive (compat.migrate.engine)
_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation", "too complex", "too many nested")


def parse(text: str) -> ast.Module:
    """`ast.parse(text)`, falling back to the f-strings written as tuples (above); raises the interpreter's
    SyntaxError when that cannot read the file either (a file no Python parses, or other newer syntax)."""
    try:
        return ast.parse(text)
    except SyntaxError as error:
        if not _FSTRING.search(text) or any(m in str(error.msg) for m in _TOO_DEEP):
            raise
        down = _down_levelled(text)
        if down is None:  # libcst refuses it too, or no f-string: the interpreter's message says where
            raise
        try:
            return ast.parse(down)
        except SyntaxError:
            raise error from None


@functools.lru_cache(maxsize=16)
def _down_levelled(text: str) -> str | None:
    """`without_fstrings(text)`, None where libcst refuses it too; cached, as each rule that reads the file with
    `ast` asks again."""
    try:
        return without_fstrings(text)
    except Exception:  # noqa: BLE001 - libcst's ParserSyntaxError, or its native parser's other refusals
        return None


def without_fstrings(text: str) -> str | None:
    """`text` with every f-string replaced by a tuple of its expressions on the same lines; None when the file has
    no f-string (so it is not what the interpreter refused). Raises libcst's ParserSyntaxError when libcst cannot
    read it either."""
    import libcst as cst

    module = cst.parse_module(text)
    code = module.code_for_node
    # id of each tuple written for an f-string -> its expressions, each with its line within the f-string
    made: dict[int, list[tuple[int, cst.BaseExpression]]] = {}

    def placed(parts, line: int = 0) -> tuple[list[tuple[int, cst.BaseExpression]], int]:
        """The expressions of an f-string's parts with the line (from the f-string's first) each starts on, and the
        line the parts end on."""
        found: list[tuple[int, cst.BaseExpression]] = []
        for part in parts:
            if isinstance(part, cst.FormattedStringText):
                line += part.value.count("\n")
                continue
            line += code(part.whitespace_before_expression).count("\n")
            found.append((line, part.expression))
            line += code(part.expression).count("\n") + code(part.whitespace_after_expression).count("\n")
            spec, line = placed(part.format_spec or (), line)  # `{x:{width}}`
            found.extend(spec)
        return found, line

    def written(original: cst.CSTNode, items: list[tuple[int, cst.BaseExpression]]) -> cst.BaseExpression:
        body = ""
        for line, expr in items:  # each expression on the line it stood on
            body += "\n" * max(0, line - body.count("\n")) + code(expr) + ", "
        body = body.rstrip(" ") or '""'
        padding = "\n" * max(0, code(original).count("\n") - body.count("\n"))
        node = cst.parse_expression(f"({body}{padding})")
        made[id(node)] = items
        return node

    class FStringsToTuples(cst.CSTTransformer):
        def leave_FormattedString(self, original, updated):
            return written(original, placed(updated.parts)[0])

        def visit_ConcatenatedString(self, node) -> bool:
            return False  # `"text" f"{x}"`: a tuple cannot be concatenated, so the whole goes as one (below)

        def leave_ConcatenatedString(self, original, updated):
            items: list[tuple[int, cst.BaseExpression]] = []
            line = 0

            def walk(node) -> None:
                nonlocal line
                if isinstance(node, cst.ConcatenatedString):
                    walk(node.left)
                    line += code(node.whitespace_between).count("\n")
                    walk(node.right)
                elif isinstance(node, cst.FormattedString):
                    items.extend((line + at, e) for at, e in made[id(node.visit(self))])
                    line += code(node).count("\n")
                else:
                    line += code(node).count("\n")

            walk(original)
            return written(original, items) if items or _has_fstring(original) else updated

    def _has_fstring(node) -> bool:
        if isinstance(node, cst.ConcatenatedString):
            return _has_fstring(node.left) or _has_fstring(node.right)
        return isinstance(node, cst.FormattedString)

    down = module.visit(FStringsToTuples())
    return down.code if made else None
