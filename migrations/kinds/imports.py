"""Import editing and name resolution: the one mechanism every rule uses to find TRL names and edit imports.

* resolution: `imported_names(visitor, node)` (the qualified names libcst's `QualifiedNameProvider` gives a node
  through an import: every import form, aliases, `try/except ImportError` and `TYPE_CHECKING` branches, string
  annotations; never locals or builtins), `TrlRef` / `split_qualified` / `trl_refs` (the same, as TRL symbols);
* reading: `module_name(import_from)`, `star_imports`, `imports_trl` (a cheap gate run before any metadata is
  computed), `top_level_imports`, `import_statements` (every import, without a full walk);
* gates without metadata: `binding_paths` (what the qualified names an import gives can start with), `code_words`,
  `reachable` (could a node of this code have that qualified name);
* editing: `split_import_from` (rename, move or drop the aliases of one `from m import ...`: the renamed ones stay
  in place, the moved ones go to new `from <successor> import ...` statements), `drop_unused_import` (remove `from m import n` once nothing uses `n`), `ensure_imports` (add `from m import n` / `import m` after the leading import block, merged into an
  existing top-level `from m import ...` in the order given, never a duplicate), `insert_after_imports` (local
  definitions after the import block), `commas` / `import_from` (build an import statement from aliases, for rules
  that split or rename the aliases of an import).

Rules never use libcst's `AddImportsVisitor` / `RemoveImportsVisitor`: one mechanism, one layout.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import QualifiedName, QualifiedNameProvider, QualifiedNameSource, ScopeProvider

from migrations.kinds.cst import build_dotted, code, dotted

__all__ = [
    "TrlRef",
    "binding_paths",
    "code_words",
    "commas",
    "drop_unused_import",
    "ensure_imports",
    "import_block_end",
    "import_from",
    "import_statements",
    "imported_names",
    "imports_trl",
    "insert_after_imports",
    "module_name",
    "reachable",
    "split_import_from",
    "split_qualified",
    "star_imports",
    "top_level_imports",
    "trl_refs",
]


@dataclass(frozen=True)
class TrlRef:
    """A TRL symbol as the code imports it: `module` (e.g. `trl.trainer.ppo_config`) and `name` (`PPOConfig`)."""

    module: str
    name: str

    @property
    def qualified(self) -> str:
        return f"{self.module}.{self.name}"




def split_qualified(qname: str) -> TrlRef | None:
    """`trl.a.b.Name` -> TrlRef("trl.a.b", "Name"); None for anything not absolutely under `trl`."""
    if not qname.startswith("trl.") or qname.count(".") < 1:
        return None
    module, _, name = qname.rpartition(".")
    return TrlRef(module, name)




def imported_names(visitor: cst.CSTVisitor | cst.CSTTransformer, node: cst.CSTNode) -> set[str]:
    """The qualified names of `node` that come from an import (locals and builtins are not TRL's).

    `visitor` is the visitor or transformer being run: it must declare `QualifiedNameProvider` in its
    `METADATA_DEPENDENCIES`. Nodes built by a rule (not in the original tree) have none.
    """
    try:
        names: set[QualifiedName] = visitor.get_metadata(QualifiedNameProvider, node, set())
    except KeyError:
        return set()
    return {q.name for q in names if q.source == QualifiedNameSource.IMPORT}


def trl_refs(visitor: cst.CSTVisitor | cst.CSTTransformer, node: cst.CSTNode) -> list[TrlRef]:
    """Every TRL symbol `node` may denote (several when imports differ by branch, e.g. try/except), sorted."""
    refs = [split_qualified(q) for q in sorted(imported_names(visitor, node))]
    return [r for r in refs if r is not None]


def module_name(node: cst.ImportFrom) -> str | None:
    """The absolute module of `from m import ...`; None for a relative import."""
    if node.relative or node.module is None:
        return None
    return dotted(node.module)


def commas(aliases: Sequence[cst.ImportAlias]) -> list[cst.ImportAlias]:
    """The aliases joined by `, ` (no comma after the last)."""
    out = []
    for i, alias in enumerate(aliases):
        last = i == len(aliases) - 1
        out.append(alias.with_changes(
            comma=cst.MaybeSentinel.DEFAULT if last else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    return out


def with_kept_aliases(node: cst.ImportFrom, aliases: Sequence[cst.ImportAlias]) -> cst.ImportFrom:
    """`node` importing only `aliases` (some of its own, in their order, possibly renamed), its layout kept: a
    parenthesised import left with several names stays parenthesised, one name per line as before, closed the way it
    was (with its magic trailing comma, if it had one); a single name left, or an import without parentheses, goes on
    one line."""
    if len(aliases) == 1 or node.lpar is None or isinstance(node.names, cst.ImportStar):
        return node.with_changes(names=commas(aliases), lpar=None, rpar=None)
    closing = node.names[-1].comma  # the original last alias's comma and the whitespace before `)`
    return node.with_changes(names=[*aliases[:-1], aliases[-1].with_changes(comma=closing)])


def import_from(module: str, aliases: Sequence[cst.ImportAlias]) -> cst.ImportFrom:
    """`from module import a, b as c` (one line) for these aliases."""
    return cst.ImportFrom(module=build_dotted(module), names=commas(aliases))  # type: ignore[arg-type]


def split_import_from(
    node: cst.ImportFrom,
    successor: Callable[[str, str], tuple[str | None, str] | None],
    *,
    last: Collection[str] = (),
) -> list[cst.BaseSmallStatement] | None:
    """`from m import a, b as c` with each alias renamed, moved or dropped; None when no alias changes.

    `successor(m, name)` is None (keep the alias), `(m, new)` (rename in place), `(other, new)` (move to a new
    `from other import new` statement after this one) or `(None, name)` (drop: the name is defined locally now). An
    alias keeps its local name (`b as c` -> `new as c`; `as` dropped when it equals the new name); duplicates are
    dropped. The statement's own module comes first (in place, without parentheses), then the others in the order
    met, modules in `last` at the end.
    """
    mod = module_name(node)
    if mod is None or isinstance(node.names, cst.ImportStar):
        return None
    groups: dict[str | None, list[cst.ImportAlias]] = {}
    changed = False
    for alias in node.names:
        found = successor(mod, dotted(alias.name) or "")
        if found is None:
            target_mod: str | None = mod
            new_alias = alias
        else:
            changed = True
            target_mod, new_name = found
            if target_mod is None:
                continue
            new_alias = alias.with_changes(name=cst.Name(new_name))
            if alias.asname is not None and alias.asname.name.value == new_name:  # type: ignore[union-attr]
                new_alias = new_alias.with_changes(asname=None)
        groups.setdefault(target_mod, [])
        if all(code(a.name) + str(a.asname and code(a.asname)) != code(new_alias.name) + str(
            new_alias.asname and code(new_alias.asname)) for a in groups[target_mod]):
            groups[target_mod].append(new_alias)
    if not changed:
        return None
    out: list[cst.BaseSmallStatement] = []
    for target in sorted(groups, key=lambda m: (m != mod, m in last)):
        aliases = groups[target]
        if not aliases:
            continue
        if target == mod:
            out.append(with_kept_aliases(node, aliases))
        else:
            out.append(import_from(target, aliases))  # type: ignore[arg-type]
    return out


def import_statements(module: cst.Module) -> list[cst.Import | cst.ImportFrom]:
    """Every `import` / `from ... import` statement of `module` at any depth (functions, classes, `try`/`if`/`with`
    bodies, one-line suites), in source order: the nodes a visitor's `visit_Import` / `visit_ImportFrom` would see.

    About 5x cheaper than a visitor pass, which walks every node: Python never nests a statement inside an
    expression, so this walk reads the statement fields of statements (`_STATEMENT_FIELDS`) and never enters an
    expression. A node it does not know (none today) is walked through all its children.
    """
    found: list[cst.Import | cst.ImportFrom] = []
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            found.extend(small for small in node.body if isinstance(small, cst.Import | cst.ImportFrom))
        elif isinstance(node, _BODIES):
            for field in reversed(_STATEMENT_FIELDS):
                held = getattr(node, field, None)
                if isinstance(held, cst.CSTNode):
                    stack.append(held)
                elif isinstance(held, Sequence):
                    stack.extend(reversed(held))
        elif isinstance(node, cst.Import | cst.ImportFrom):
            found.append(node)
        elif not isinstance(node, _NO_STATEMENTS):
            stack.extend(reversed(node.children))
    return found


#: The nodes whose statements `import_statements` reads from `_STATEMENT_FIELDS` (libcst names them so on all of
#: them: `If.orelse` is an `If` or `Else`, `Try.handlers` the `except` clauses, `Match.cases` the `case` clauses).
_BODIES = (cst.Module, cst.IndentedBlock, cst.BaseCompoundStatement, cst.Else, cst.Finally, cst.ExceptHandler,
           cst.ExceptStarHandler, cst.MatchCase)
_STATEMENT_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")
#: What cannot hold a statement (for a node `import_statements` does not know).
_NO_STATEMENTS = (cst.BaseExpression, cst.BaseSmallStatement, cst.Decorator, cst.Parameters, cst.Annotation,
                  cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Comment)


def binding_paths(imports: Iterable[cst.Import | cst.ImportFrom]) -> list[tuple[str, bool]]:
    """(dotted path, exact) per import alias: what every qualified name the alias gives a node starts with, for
    gates that must know, without scope metadata, which qualified names a module *can* contain.

    libcst's `QualifiedNameProvider` (its `ImportAssignment`) names a `Name`/`Attribute` bound by an import as the
    binding's path followed by the node's remaining attribute parts: `import a.b` binds `a` (path `a`: `a.b.c` is
    `a.b.c`), `import a.b as c` path `a.b` (`c.d` is `a.b.d`), `from m import n [as c]` path `m.n`. Relative imports
    give `.m.n` and are left out (never an absolute name); `from m import *` binds nothing libcst resolves, and is
    listed as `(m, True)` (exact: the path itself, for a rule that reads star imports). The parts after the path are
    `Name`s of the code, so words of it (`code_words`).
    """
    out: list[tuple[str, bool]] = []
    for node in imports:
        if isinstance(node, cst.Import):
            for alias in node.names:
                name = dotted(alias.name) or ""
                out.append((name if alias.asname is not None else name.split(".")[0], False))
            continue
        module = module_name(node)
        if module is None:
            continue
        if isinstance(node.names, cst.ImportStar):
            out.append((module, True))
        else:
            out.extend((f"{module}.{alias.name.value}", False) for alias in node.names
                       if isinstance(alias.name, cst.Name))
    return out


#: An identifier as the tokenizer delimits it (a digit run before it is a number's, `1if` -> `if`).
_WORD = re.compile(r"[^\W\d]\w*")


def code_words(text: str) -> set[str]:
    """Every identifier-like word of the code `text`: a superset of the `Name` values of its tree (comments and
    strings add words, never remove one)."""
    return set(_WORD.findall(text))


def reachable(qname: str, path: str, words: Collection[str]) -> bool:
    """Whether a binding with dotted `path` (`binding_paths`) can give a node the qualified name `qname`: it is
    `path` itself, or `path` followed by parts that are all `words` of the code."""
    if qname == path:
        return True
    return qname.startswith(path + ".") and all(p in words for p in qname[len(path) + 1:].split("."))


def star_imports(module: cst.Module) -> list[str]:
    """Modules under `trl` imported with `*` anywhere in the module."""
    found: list[str] = []
    for node in import_statements(module):
        mod = module_name(node) if isinstance(node, cst.ImportFrom) else None
        if mod and (mod == "trl" or mod.startswith("trl.")) and isinstance(node.names, cst.ImportStar):
            found.append(mod)
    return found


def imports_trl(module: cst.Module, names: Iterable[str], modules: Iterable[str] = ()) -> bool:
    """Cheap gate before any metadata is computed: could this module refer to one of `names` from TRL?

    True when it has `import trl...` (attribute access may reach anything), `from trl... import *`, an import of
    one of `names` from a `trl` module, or a `from <m> import ...` of one of `modules`.
    """
    wanted = set(names)
    mods = set(modules)
    for node in import_statements(module):
        if isinstance(node, cst.Import):
            if any((n := dotted(a.name) or "") == "trl" or n.startswith("trl.") for a in node.names):
                return True
            continue
        mod = module_name(node)
        if mod is None or not (mod == "trl" or mod.startswith("trl.")):
            continue
        if isinstance(node.names, cst.ImportStar) or mod in mods:
            return True
        if any((dotted(a.name) or "") in wanted for a in node.names):
            return True
    return False


#: the statements a notebook's joined module holds in place of a cell boundary and of a masked IPython line
#: (`compat.migrate.notebook.CELL_MARK` / `MAGIC_MARK`)
_NOTEBOOK_MARKS = frozenset({"__trl_compat_cell__", "__trl_compat_magic__"})


def _notebook_mark(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, cst.Call) and isinstance(stmt.body[0].value.func, cst.Name) \
        and stmt.body[0].value.func.value in _NOTEBOOK_MARKS


def import_block_end(module: cst.Module) -> int:
    """Index in module.body after the leading docstring / imports / import-only try or if blocks. In a notebook's
    joined module the cell boundaries and masked IPython lines of that leading run are passed over too, so an import
    lands after the imports of the first cell with code, never above a `!pip install` cell's lines (it would run
    before the install)."""
    end = 0
    imported = False
    for i, stmt in enumerate(module.body):
        if _notebook_mark(stmt):
            if end == i and not imported:  # into the first cell with code, not past its imports
                end = i + 1
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                end, imported = i + 1, True
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


def _top_level_import_lines(body: Sequence[cst.BaseStatement]) -> dict[tuple[str, str], int]:
    """(module, name) -> the index of the first top-level statement importing it (as in `top_level_imports`)."""
    out: dict[tuple[str, str], int] = {}
    for i, stmt in enumerate(body):
        for key in top_level_imports(cst.Module(body=[stmt])):
            out.setdefault(key, i)
    return out


def top_level_imports(module: cst.Module) -> set[tuple[str, str]]:
    have: set[tuple[str, str]] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for s in stmt.body:
                if isinstance(s, cst.ImportFrom) and not isinstance(s.names, cst.ImportStar):
                    mod = module_name(s)
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
    new names appended (in the order given) instead of a new line. New statements go after the leading import block,
    with a blank line between them and the code that follows.
    """
    needed = list(needed)
    body = list(module.body)
    # an import below the first statement that uses the name does not serve it (module-level code runs in order: a
    # notebook importing `AutoModelForCausalLM` in a later cell; dieai/generative-ai-on-aws's PPO notebook)
    first_use = _first_uses(body, {name for _mod, name in needed if name})
    have = {key for key, at in _top_level_import_lines(body).items() if at <= first_use.get(key[1], len(body))}
    todo: dict[str, list[str]] = {}
    for mod, name in needed:
        if (mod, name) in have or name in todo.get(mod, []):
            continue
        todo.setdefault(mod, []).append(name)
    if not todo:
        return module
    # append to an existing top-level `from mod import ...` (no star, no parenthesised multi-line layout change) that
    # comes before every use of the name: a notebook imports in the cell of the trainer, after the config's cell
    for i, stmt in enumerate(body):
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        s = stmt.body[0]
        if isinstance(s, cst.ImportFrom) and not isinstance(s.names, cst.ImportStar) and s.lpar is None:
            mod = module_name(s)
            if mod in todo and todo[mod] and "" not in todo[mod]:
                here = [n for n in todo[mod] if first_use.get(n, i) >= i]
                if not here:
                    continue
                todo[mod] = [n for n in todo[mod] if n not in here]
                if not todo[mod]:
                    del todo[mod]
                names = list(s.names)
                last = names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                extra = [cst.ImportAlias(name=build_dotted(n)) for n in here]
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
    at = import_block_end(module.with_changes(body=body))
    # unsloth patches trl / transformers / peft when it is imported first ("Unsloth should be imported before trl"):
    # a script importing it below the leading block (0PeterAdel/CyberBrain_Model: `import torch`, code, then `from
    # unsloth import FastLanguageModel`) gets the new imports after it, where that is still before their first use
    patcher = next((i for i, stmt in enumerate(body) if i >= at and _imports_root(stmt, "unsloth")), None)
    if patcher is not None and patcher < min((first_use.get(n, len(body)) for names in todo.values()
                                              for n in names), default=len(body)):
        at = patcher + 1
    # never insert above `from __future__` imports or a module docstring; keep one blank line before the code
    rest = body[at:]
    if rest and not _notebook_mark(rest[0]) and not (rest[0].leading_lines and rest[0].leading_lines[0].comment is None):
        rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine(), *rest[0].leading_lines])
    return module.with_changes(body=[*body[:at], *new_stmts, *rest])


def _imports_root(stmt: cst.BaseStatement, root: str) -> bool:
    """`stmt` is a top-level `import root...` / `from root... import ...` line."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for s in stmt.body:
        if isinstance(s, cst.ImportFrom) and s.module is not None and not s.relative \
                and (dotted(s.module) or "").split(".")[0] == root:
            return True
        if isinstance(s, cst.Import) and any((dotted(a.name) or "").split(".")[0] == root for a in s.names):
            return True
    return False


def _first_uses(body: Sequence[cst.BaseStatement], names: set[str]) -> dict[str, int]:
    """name -> the index of the first top-level statement that uses it (an import statement is no use)."""
    out: dict[str, int] = {}
    if not names:
        return out

    class _Uses(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: set[str] = set()

        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Name(self, node: cst.Name) -> None:
            if node.value in names:
                self.found.add(node.value)

    for i, stmt in enumerate(body):
        uses = _Uses()
        stmt.visit(uses)
        for name in uses.found:
            out.setdefault(name, i)
        if len(out) == len(names):
            break
    return out


def insert_after_imports(module: cst.Module, stmts: Sequence[cst.BaseStatement], blank_after: int = 2) -> cst.Module:
    """Insert statements right after the module's leading import block (blank lines after them as PEP 8 wants); at the
    very top of a module (nothing before them) without the blank lines they bring."""
    at = import_block_end(module)
    body = list(module.body)
    if at == 0 and stmts:
        first = stmts[0]
        lead = list(first.leading_lines)
        while lead and lead[0].comment is None:
            lead.pop(0)
        stmts = [first.with_changes(leading_lines=lead), *stmts[1:]]
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




def drop_unused_import(module: cst.Module, mod: str, name: str) -> cst.Module:
    """`module` without the `name` alias of its `from mod import ...` statements when nothing uses the name.

    Uses are found with libcst's `ScopeProvider` (every access of the binding the import makes, in any scope; a
    `__all__` entry counts as a use). An import left without aliases is removed; a block left empty gets `pass`.
    """
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    unused: set[int] = set()
    for scope in {s for s in scopes.values() if s is not None}:
        for assignment in scope.assignments[name]:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.ImportFrom) and module_name(node) == mod and not assignment.references:
                unused.add(id(node))
    if not unused:
        return module

    class _Drop(cst.CSTTransformer):
        def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom):  # type: ignore[no-untyped-def]
            if id(original_node) not in unused or isinstance(updated_node.names, cst.ImportStar):
                return updated_node
            keep = [a for a in updated_node.names if not (a.asname is None and dotted(a.name) == name)]
            if len(keep) == len(updated_node.names):
                return updated_node
            if not keep:
                return cst.RemoveFromParent()
            # the last alias keeps the comma the statement's last one had (a parenthesized list's trailing comma)
            last = keep[-1].with_changes(comma=updated_node.names[-1].comma)
            return updated_node.with_changes(names=[*keep[:-1], last])

    return module.visit(_Drop())
