"""Shared libcst helpers for the TRL rules: resolve names to TRL symbols, rewrite imports, edit calls, add TODOs.

Every rule that renames or removes a TRL symbol has the same three problems, solved here once:

1. *Which nodes mean the TRL symbol?* Never decided by text. `TrlTransformer.trl_refs(node)` asks libcst's
   `QualifiedNameProvider`, which follows every import form: `from trl import X`, `from trl import X as Y`,
   `import trl` / `import trl as t` + attribute access, deep module paths (`trl.trainer.ppo_config.PPOConfig`), imports
   inside `try/except ImportError` or `if TYPE_CHECKING:` (a name bound by several imports has several qualified
   names), and string annotations (`x: "PPOTrainer"`). A local class called `PPOTrainer`, a parameter shadowing the
   import, or a relative import of a vendored package (`from .trl import PPOTrainer`, qualified `.trl.PPOTrainer`)
   do not resolve to `trl.*` and are left alone.
2. *How is the import rewritten?* `TrlTransformer` rewrites `from <trl module> import a, b as c` in place: each
   alias is renamed to its replacement, aliases whose replacement lives in another module are split into a new
   `from <module> import ...` statement right after (same block, so a `try/except` or `TYPE_CHECKING` guard keeps
   guarding it), aliases replaced by a local definition are dropped. `import trl.core` (a module that no longer
   exists) becomes `import trl`; `import trl.experimental.ppo as ppo` is dropped once its uses are rewritten.
   Uses are renamed consistently: an un-aliased `PPOTrainer` becomes `GRPOTrainer`, an alias keeps its local name,
   `t.PPOTrainer` becomes `t.GRPOTrainer` when the successor is exported by `trl`, a bare name otherwise (with the
   import added).
3. *What does a rule implement?* `replacement(ref)`: a `Replacement` for a TRL symbol the rule owns, or None.
   Everything else (calls, attributes) is the rule's own `leave_*` logic, with `trl_ref(node)` to test nodes.

Other helpers:

* imports: `imports_trl` (a cheap gate run before any metadata is computed: does the module import the names at all?),
  `ensure_imports` (add `from m import n` after the import block, merged into an existing `from m import ...`,
  skipping ones present), `insert_after_imports` (local definitions after the import block), `star_imports`;
* calls: `kwarg` / `arg_value` (by keyword or position) / `set_kwarg` / `drop_kwarg` / `make_kwarg`, `replace_args`
  and `explode_call` (rewrite an argument list keeping the call's layout and the comments after arguments);
* values: `literal_value` (the Python value of a literal expression, for static reasoning about config values),
  `dotted`, `code`, `parse_expr`, `parse_stmts`;
* TODO markers: `MigrationTransformer.todo` (migrations.base) places them; `dedupe_header_todos` keeps a marker above
  the module's first statement idempotent (libcst stores those comments in `Module.header`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, QualifiedNameSource

from migrations.base import TODO_PREFIX, Migration, MigrationTransformer, RuleContext

__all__ = [
    "REMOVED_TRL_MODULES",
    "Replacement",
    "TrlRef",
    "TrlTransformer",
    "arg_value",
    "code",
    "dedupe_header_todos",
    "dotted",
    "drop_kwarg",
    "ensure_imports",
    "explode_call",
    "imports_trl",
    "insert_after_imports",
    "kwarg",
    "literal_value",
    "make_kwarg",
    "parse_expr",
    "parse_stmts",
    "replace_args",
    "set_kwarg",
    "split_qualified",
    "star_imports",
]

# TRL modules that no longer exist in TRL >= 1.13 (importing them raises ModuleNotFoundError).
REMOVED_TRL_MODULES = frozenset(
    {
        "trl.core",
        "trl.gpt2",
        "trl.ppo",
        "trl.trainer.ppo_trainer",
        "trl.trainer.ppo_config",
        "trl.trainer.ppov2_trainer",
        "trl.trainer.ppov2_config",
        "trl.models.modeling_value_head",
        "trl.models.modeling_base",
        "trl.experimental.ppo",
        "trl.experimental.ppo.ppo_trainer",
        "trl.experimental.ppo.ppo_config",
        "trl.experimental.ppo.modeling_value_head",
    }
)

_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """The source text of a node."""
    return _EMPTY.code_for_node(node)


def parse_expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def parse_stmts(text: str) -> list[cst.BaseStatement]:
    """Parse statements (dedented source) into a list of libcst statements."""
    return list(cst.parse_module(text).body)


@dataclass(frozen=True)
class TrlRef:
    """A TRL symbol as the code imports it: `module` (e.g. `trl.trainer.ppo_config`) and `name` (`PPOConfig`)."""

    module: str
    name: str

    @property
    def qualified(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(frozen=True)
class Replacement:
    """Where a TRL symbol went. `module=None` means: no import any more (the rule defines it locally or drops it)."""

    module: str | None
    name: str

    @property
    def in_trl_root(self) -> bool:
        return self.module == "trl"


def split_qualified(qname: str) -> TrlRef | None:
    """`trl.a.b.Name` -> TrlRef("trl.a.b", "Name"); None for anything not absolutely under `trl`."""
    if not qname.startswith("trl.") or qname.count(".") < 1:
        return None
    module, _, name = qname.rpartition(".")
    return TrlRef(module, name)


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, None otherwise."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _module_name(node: cst.ImportFrom) -> str | None:
    if node.relative or node.module is None:
        return None
    return dotted(node.module)


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
    return call.with_changes(args=_append_args(args, [make_kwarg(name, value)]))


def make_kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def _append_args(args: list[cst.Arg], new: list[cst.Arg]) -> list[cst.Arg]:
    """Append args, copying the comma/whitespace style of a multi-line call."""
    if not new:
        return args
    if not args:
        return new
    last = args[-1]
    comma = last.comma
    if isinstance(comma, cst.Comma):
        # a multi-line call with a trailing comma: reuse its comma (whitespace incl. newline+indent) between args
        sep = comma
        out = args[:-1] + [last]
        for a in new:
            out.append(a.with_changes(comma=sep))
        return out
    sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    out = args[:-1] + [last.with_changes(comma=sep)]
    for i, a in enumerate(new):
        out.append(a.with_changes(comma=sep if i < len(new) - 1 else cst.MaybeSentinel.DEFAULT))
    return out


def drop_kwarg(call: cst.Call, name: str) -> cst.Call:
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == name)]
    return call.with_changes(args=_fix_last_comma(call, args))


def _fix_last_comma(call: cst.Call, args: list[cst.Arg]) -> list[cst.Arg]:
    if args and call.args and args[-1] is not call.args[-1]:
        # keep the original trailing-comma style of the last argument
        args[-1] = args[-1].with_changes(comma=call.args[-1].comma)
    return args


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
        return explode_call(call.with_changes(args=args), comments, opening, closing)
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


def explode_call(
    call: cst.Call,
    comments: dict[int, cst.TrailingWhitespace] | None = None,
    opening: cst.ParenthesizedWhitespace | None = None,
    closing: cst.ParenthesizedWhitespace | None = None,
) -> cst.Call:
    """One argument per line with a trailing comma, indented one level below the enclosing statement (or as
    `opening` / `closing`, the whitespace after `(` and before `)` of the original call, say).

    `comments` maps id(argument value) to the trailing comment that followed that argument in the original call.
    """
    comments = comments or {}
    inner_last = opening.last_line if opening is not None else cst.SimpleWhitespace("    ")
    close_last = closing.last_line if closing is not None else cst.SimpleWhitespace("")
    indent = opening.indent if opening is not None else True

    def ws(first: cst.TrailingWhitespace, last: cst.SimpleWhitespace, ind: bool) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(first_line=first, empty_lines=[], indent=ind, last_line=last)

    args = []
    for i, a in enumerate(call.args):
        first = comments.get(id(a.value), cst.TrailingWhitespace())
        if i < len(call.args) - 1:
            after = ws(first, inner_last, indent)
        else:
            after = ws(first, close_last, closing.indent if closing is not None else True)
        args.append(a.with_changes(comma=cst.Comma(whitespace_after=after), whitespace_after_arg=cst.SimpleWhitespace("")))
    opening_ws = ws(opening.first_line if opening is not None else cst.TrailingWhitespace(), inner_last, indent)
    return call.with_changes(args=args, whitespace_before_args=opening_ws)


def _ws(ws: Any) -> str:
    if isinstance(ws, cst.SimpleWhitespace):
        return ws.value
    if isinstance(ws, cst.ParenthesizedWhitespace):
        return "\n"
    return ""


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


# -- imports -------------------------------------------------------------------------------------------------------
def star_imports(module: cst.Module) -> list[str]:
    """Modules under `trl` imported with `*` anywhere in the module."""
    found: list[str] = []

    class _V(cst.CSTVisitor):
        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            mod = _module_name(node)
            if mod and (mod == "trl" or mod.startswith("trl.")) and isinstance(node.names, cst.ImportStar):
                found.append(mod)

    module.visit(_V())
    return found


def imports_trl(module: cst.Module, names: Iterable[str], modules: Iterable[str] = ()) -> bool:
    """Cheap gate before any metadata is computed: could this module refer to one of `names` from TRL?

    True when it has `import trl...` (attribute access may reach anything), `from trl... import *`, an import of
    one of `names` from a `trl` module, or a `from <m> import ...` of one of `modules`.
    """
    wanted = set(names)
    mods = set(modules)
    found = False

    class _V(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> bool:
            nonlocal found
            for a in node.names:
                n = dotted(a.name) or ""
                if n == "trl" or n.startswith("trl."):
                    found = True
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            nonlocal found
            mod = _module_name(node)
            if mod is None or not (mod == "trl" or mod.startswith("trl.")):
                return False
            if isinstance(node.names, cst.ImportStar) or mod in mods:
                found = True
                return False
            if any((dotted(a.name) or "") in wanted for a in node.names):
                found = True
            return False

        # nothing else holds imports worth visiting deeply, but imports can sit in any block
        def visit_Expr(self, node: cst.Expr) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> bool:
            return False

    module.visit(_V())
    return found


def _import_block_end(module: cst.Module) -> int:
    """Index in module.body after the leading docstring / imports / import-only try or if blocks."""
    end = 0
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.SimpleStatementLine):
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                end = i + 1
                continue
            if i == 0 and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
                if isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
                    end = i + 1
                    continue
            break
        if isinstance(stmt, (cst.Try, cst.If)) and _only_imports(stmt):
            end = i + 1
            continue
        break
    return end


def _only_imports(stmt: cst.CSTNode) -> bool:
    found = {"imp": False, "other": False}

    class _V(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
            for s in node.body:
                if isinstance(s, (cst.Import, cst.ImportFrom)):
                    found["imp"] = True
                elif not isinstance(s, (cst.Pass, cst.Expr, cst.Assign)):
                    found["other"] = True
            return False

    stmt.visit(_V())
    return found["imp"] and not found["other"]


def _top_level_imports(module: cst.Module) -> set[tuple[str, str]]:
    have: set[tuple[str, str]] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for s in stmt.body:
                if isinstance(s, cst.ImportFrom) and not isinstance(s.names, cst.ImportStar):
                    mod = _module_name(s)
                    for a in s.names:
                        if mod and a.asname is None:
                            have.add((mod, dotted(a.name) or ""))
                elif isinstance(s, cst.Import):
                    for a in s.names:
                        if a.asname is None:
                            have.add((dotted(a.name) or "", ""))
    return have


def ensure_imports(module: cst.Module, needed: Iterable[tuple[str, str]]) -> cst.Module:
    """Add `from mod import name` (or `import mod` when name is "") after the import block, skipping present ones.

    Imports of the same module are merged into one statement; an existing top-level `from mod import ...` gets the
    new names appended instead of a new line.
    """
    have = _top_level_imports(module)
    todo: dict[str, list[str]] = {}
    for mod, name in needed:
        if (mod, name) in have or name in todo.get(mod, []):
            continue
        todo.setdefault(mod, []).append(name)
    if not todo:
        return module
    body = list(module.body)
    # append to an existing top-level `from mod import ...` (no star, no parenthesised multi-line layout change)
    for i, stmt in enumerate(body):
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        s = stmt.body[0]
        if isinstance(s, cst.ImportFrom) and not isinstance(s.names, cst.ImportStar) and s.lpar is None:
            mod = _module_name(s)
            if mod in todo and todo[mod] and "" not in todo[mod]:
                names = list(s.names)
                last = names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                extra = [cst.ImportAlias(name=build_dotted(n)) for n in todo.pop(mod)]
                for j in range(len(extra) - 1):
                    extra[j] = extra[j].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                body[i] = stmt.with_changes(body=[s.with_changes(names=[*names[:-1], last, *extra])])
    new_stmts: list[cst.BaseStatement] = []
    for mod, names in todo.items():
        plain = [n for n in names if n]
        if "" in names:
            new_stmts.append(cst.parse_statement(f"import {mod}\n"))
        if plain:
            new_stmts.append(cst.parse_statement(f"from {mod} import {', '.join(plain)}\n"))
    if not new_stmts:
        return module.with_changes(body=body)
    at = _import_block_end(module.with_changes(body=body))
    # never insert above `from __future__` imports or a module docstring
    return module.with_changes(body=[*body[:at], *new_stmts, *body[at:]])


def insert_after_imports(module: cst.Module, stmts: Sequence[cst.BaseStatement], blank_after: int = 2) -> cst.Module:
    """Insert statements right after the module's leading import block (blank lines after them as PEP 8 wants)."""
    at = _import_block_end(module)
    body = list(module.body)
    if at < len(body) and blank_after:
        nxt = body[at]
        lead = list(nxt.leading_lines)
        blanks = 0
        for ln in lead:
            if ln.comment is not None:
                break
            blanks += 1
        if blanks < blank_after:
            body[at] = nxt.with_changes(leading_lines=[cst.EmptyLine(indent=False) for _ in range(blank_after - blanks)] + lead)
    return module.with_changes(body=[*body[:at], *stmts, *body[at:]])


# -- the base transformer ------------------------------------------------------------------------------------------
class TrlTransformer(MigrationTransformer):
    """A MigrationTransformer that resolves TRL symbols by qualified name and rewrites the ones its rule replaces.

    Subclasses implement `replacement(ref)` and may override `leave_*` (calling `super()` for Name, Attribute,
    SimpleString and SimpleStatementLine). After `module.visit(t)`, `t.needed_imports` lists the `(module, name)`
    imports the rewritten uses need; `transform_module` applies both steps.
    """

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider)

    def __init__(self, rule: Migration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self.needed_imports: list[tuple[str, str]] = []
        self._skip_names: set[int] = set()
        self._emitted_import_trl = False
        self.changed = False

    # ---- what the rule owns ----
    def replacement(self, ref: TrlRef) -> Replacement | None:  # pragma: no cover - overridden
        return None

    # ---- resolution ----
    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        try:
            names = self.get_metadata(QualifiedNameProvider, node, set())
        except KeyError:
            return set()
        return {q.name for q in names if q.source in (QualifiedNameSource.IMPORT,)}

    def trl_refs(self, node: cst.CSTNode) -> list[TrlRef]:
        """Every TRL symbol `node` may denote (several when imports differ by branch, e.g. try/except)."""
        refs = [split_qualified(q) for q in sorted(self.qualified_names(node))]
        return [r for r in refs if r is not None]

    def trl_ref(self, node: cst.CSTNode, names: Iterable[str] | None = None) -> TrlRef | None:
        """The TRL symbol `node` denotes (first one whose name is in `names`, when given)."""
        wanted = set(names) if names is not None else None
        for r in self.trl_refs(node):
            if wanted is None or r.name in wanted:
                return r
        return None

    def replaced_ref(self, node: cst.CSTNode) -> tuple[TrlRef, Replacement] | None:
        for r in self.trl_refs(node):
            rep = self.replacement(r)
            if rep is not None:
                return r, rep
        return None

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        try:
            return self.get_metadata(ParentNodeProvider, node)
        except KeyError:
            return None

    # ---- imports ----
    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        if not any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in updated_node.body):
            return updated_node
        new_small: list[cst.BaseSmallStatement] = []
        extra: list[cst.BaseSmallStatement] = []
        touched = False
        for s in updated_node.body:
            if isinstance(s, cst.ImportFrom):
                out = self._rewrite_import_from(s)
            elif isinstance(s, cst.Import):
                out = self._rewrite_import(s)
            else:
                out = None
            if out is None:
                new_small.append(s)
                continue
            touched = True
            if out:
                new_small.append(out[0])
                extra.extend(out[1:])
        if not touched:
            return updated_node
        self.changed = True
        stmts: list[cst.BaseStatement] = []
        if new_small:
            new_small[-1] = new_small[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            stmts.append(updated_node.with_changes(body=new_small))
        for e in extra:
            stmts.append(cst.SimpleStatementLine(body=[e]))
        if stmts and not new_small:
            stmts[0] = stmts[0].with_changes(leading_lines=updated_node.leading_lines)
        if not stmts:
            if len(self._stmt_stack) > 1:  # inside a block: keep it non-empty
                return updated_node.with_changes(body=[cst.Pass()])
            return cst.RemovalSentinel.REMOVE
        return stmts[0] if len(stmts) == 1 else cst.FlattenSentinel(stmts)

    def _rewrite_import_from(self, node: cst.ImportFrom) -> list[cst.BaseSmallStatement] | None:
        mod = _module_name(node)
        if mod is None or not (mod == "trl" or mod.startswith("trl.")) or isinstance(node.names, cst.ImportStar):
            return None
        groups: dict[str | None, list[cst.ImportAlias]] = {}
        changed = False
        for alias in node.names:
            name = dotted(alias.name) or ""
            rep = self.replacement(TrlRef(mod, name))
            if rep is None:
                target_mod: str | None = mod
                new_alias = alias
            else:
                changed = True
                target_mod = rep.module
                if target_mod is None:
                    continue
                new_alias = alias.with_changes(name=cst.Name(rep.name))
                if alias.asname is not None and alias.asname.name.value == rep.name:  # type: ignore[union-attr]
                    new_alias = new_alias.with_changes(asname=None)
            groups.setdefault(target_mod, [])
            if all(code(a.name) + str(a.asname and code(a.asname)) != code(new_alias.name) + str(
                new_alias.asname and code(new_alias.asname)) for a in groups[target_mod]):
                groups[target_mod].append(new_alias)
        if not changed:
            return None
        out: list[cst.BaseSmallStatement] = []
        # the statement's own module first (in place) if it still exists, then the others
        order = sorted(groups, key=lambda m: (m != mod, m in REMOVED_TRL_MODULES))
        for target in order:
            aliases = groups[target]
            if not aliases:
                continue
            if target in REMOVED_TRL_MODULES:
                # a still-present alias from a module that no longer exists: keep it, the rule flags it
                pass
            fixed = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases]
            for i in range(len(fixed) - 1):
                fixed[i] = fixed[i].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            if target == mod:
                out.append(node.with_changes(names=fixed, lpar=None, rpar=None))
            else:
                out.append(cst.ImportFrom(module=build_dotted(target), names=fixed))  # type: ignore[arg-type]
        return out

    def _rewrite_import(self, node: cst.Import) -> list[cst.BaseSmallStatement] | None:
        """`import trl.core` -> `import trl`; `import trl.experimental.ppo as ppo` dropped (its uses are rewritten)."""
        keep: list[cst.ImportAlias] = []
        changed = False
        for alias in node.names:
            name = dotted(alias.name) or ""
            if name in REMOVED_TRL_MODULES and self.owns_module(name):
                changed = True
                if alias.asname is None:
                    new = alias.with_changes(name=cst.Name("trl"))
                    if all(code(a.name) != "trl" or a.asname is not None for a in keep):
                        keep.append(new)
                continue
            keep.append(alias)
        if not changed:
            return None
        # `import trl.a` + `import trl.b` both became `import trl`: keep the first only
        if any(code(a.name) == "trl" and a.asname is None for a in keep):
            if self._emitted_import_trl:
                keep = [a for a in keep if not (code(a.name) == "trl" and a.asname is None)]
            self._emitted_import_trl = True
        if not keep:
            return []
        fixed = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in keep]
        for i in range(len(fixed) - 1):
            fixed[i] = fixed[i].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return [node.with_changes(names=fixed)]

    def owns_module(self, module: str) -> bool:
        """Whether this rule rewrites `import <module>` (a removed module whose symbols it replaces)."""
        return False

    def visit_Module(self, node: cst.Module) -> bool:
        # an existing `import trl` makes a rewritten `import trl.core` -> `import trl` redundant
        for stmt in node.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Import) and any(
                        code(a.name) == "trl" and a.asname is None for a in small.names
                    ):
                        self._emitted_import_trl = True
        return True

    # ---- uses ----
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._skip_names.add(id(node.attr))
        return True

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        found = self.replaced_ref(original_node)
        if found is None:
            return updated_node
        ref, rep = found
        self.changed = True
        if rep.in_trl_root:
            base = dotted(updated_node.value)
            base_q = {q for q in self.qualified_names(original_node.value)}
            if base is not None and "trl" in base_q:
                return updated_node.with_changes(attr=cst.Name(rep.name))
        if rep.module is not None:
            self.needed_imports.append((rep.module, rep.name))
        return cst.Name(rep.name)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if id(original_node) in self._skip_names:
            return updated_node
        found = self.replaced_ref(original_node)
        if found is None:
            return updated_node
        ref, rep = found
        if original_node.value != ref.name:  # an alias (`... as Alias`): the local name stays
            return updated_node
        if rep.name != original_node.value:
            self.changed = True
            return updated_node.with_changes(value=rep.name)
        return updated_node

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.BaseExpression:
        """String annotations: libcst resolves `"PPOTrainer"` in annotation position; rename inside the string."""
        refs = self.trl_refs(original_node)
        if not refs:
            return updated_node
        value = updated_node.value
        for ref in refs:
            rep = self.replacement(ref)
            if rep is None or rep.name == ref.name:
                continue
            new = re.sub(rf"(?<![\w.]){re.escape(ref.name)}\b", rep.name, value)
            if new != value:
                value = new
                self.changed = True
        return updated_node.with_changes(value=value)

    # ---- running ----
    def transform_module(self, wrapper: cst.MetadataWrapper) -> cst.Module:
        module = wrapper.visit(self)
        if self.needed_imports:
            module = ensure_imports(module, self.needed_imports)
        return dedupe_header_todos(module)


def dedupe_header_todos(module: cst.Module) -> cst.Module:
    """Drop TODO markers added to the first statement that the module header already holds.

    libcst keeps the comments above a module's first statement in `Module.header`, not in the statement's
    `leading_lines`, so `add_todo_lines` cannot see them there; without this a second run would add them again.
    """
    if not module.body or not module.header:
        return module
    present = {ln.comment.value for ln in module.header if ln.comment is not None}
    first = module.body[0]
    lines = list(getattr(first, "leading_lines", ()))
    keep = [ln for ln in lines if not (ln.comment is not None and ln.comment.value.startswith(TODO_PREFIX)
                                       and ln.comment.value in present)]
    if len(keep) == len(lines):
        return module
    return module.with_changes(body=[first.with_changes(leading_lines=keep), *module.body[1:]])

