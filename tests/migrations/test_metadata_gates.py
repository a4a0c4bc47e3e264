"""The metadata-free gates are exact: wherever a gate says "nothing to do", the full pass finds nothing.

Speed gates skip the scope / qualified-name resolution a rule would pay for nothing (`docs/migrate.md`, "Cost per MB
of candidate source"). Each is held here against the pass it stands in for, over every Python source the tests and
examples hold: the case files (`*.py` under `tests/migrations`), the examples, and every string literal of the test
modules that parses as a module with an import (the before/after and no-op cases written inline).

* `SymbolMigration.may_act` (every table rule, and `atlas-moves` for each target it serves): False -> the rule's
  first pass (`_Collector`, which resolves qualified names) finds no relevant name;
* `trainer-processing-class`: no `tokenizer=` keyword and no `.tokenizer` attribute -> its transformer changes and
  reports nothing;
* `import_statements` lists exactly the imports a visitor sees.
"""

from __future__ import annotations

import ast
import copy
import functools
import textwrap
from pathlib import Path

import libcst as cst
from libcst.metadata import QualifiedNameProvider

import migrations
from migrations.atlas import Atlas
from migrations.base import RuleContext
from migrations.kinds.cst import dotted
from migrations.kinds.imports import import_statements, imported_names, module_name
from migrations.kinds.symbols import SymbolMigration, _Collector
from migrations.transformers.v5_0 import trainer_processing_class as tpc
from migrations.v1_13.atlas_moves import MIGRATION as ATLAS_MOVES

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=1)
def _sources() -> tuple[tuple[str, str], ...]:
    """(where, code) of every case source, parsed by libcst, with at least one import."""
    found: dict[str, str] = {}
    files = sorted((ROOT / "tests" / "migrations").rglob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        found.setdefault(text, str(path.relative_to(ROOT)))
        if not path.name.startswith("test_"):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "import" in node.value:
                for variant in (node.value, textwrap.dedent(node.value)):
                    found.setdefault(variant, f"{path.relative_to(ROOT)}:{node.lineno}")
    out = []
    for code, where in found.items():
        try:
            module = cst.parse_module(code)
        except Exception:
            continue
        if import_statements(module):
            out.append((where, code))
    return tuple(out)


class _Imports(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.CSTNode] = []

    def visit_Import(self, node: cst.Import) -> bool:
        self.found.append(node)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        self.found.append(node)
        return False


def _table_rules() -> list[SymbolMigration]:
    return [r for r in migrations.all_migrations() if isinstance(r, SymbolMigration) and r is not ATLAS_MOVES]


def _atlas_views() -> list[SymbolMigration]:
    views = []
    for release in ("1.13.0", "1.14.0", "1.15.0", "1.16.0"):
        view = copy.copy(ATLAS_MOVES)
        view.target = Atlas.load("trl").release(release)
        views.append(view)
    return views


def test_the_corpus_of_cases_is_large():
    assert len(_sources()) > 500


def test_import_statements_lists_what_a_visitor_sees():
    for where, code in _sources():
        module = cst.parse_module(code)
        seen = _Imports()
        module.visit(seen)
        assert import_statements(module) == seen.found, where


class _ImportedNames(cst.CSTVisitor):
    """Every qualified name `_Collector` may hold against a rule's table: the imports' own paths (`import a.b` ->
    `a.b`, `from m import n` -> `m.n`, `from m import *` -> `m`) and every name an import gives a `Name` /
    `Attribute` outside the import statements. One walk per source serves every rule (the collector walks once per
    rule); `test_imported_names_decide_as_the_collector` checks the two agree."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        self.names.update(dotted(a.name) or "" for a in node.names)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = module_name(node)
        if module is not None:
            if isinstance(node.names, cst.ImportStar):
                self.names.add(module)
            else:
                self.names.update(f"{module}.{a.name.value}" for a in node.names)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names.update(imported_names(self, node))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.names.update(imported_names(self, node))


def _acts(rule: SymbolMigration, names: set[str]) -> bool:
    return any(rule.action_for(q) is not None for q in names)


def test_symbol_gates_are_exact():
    rules = [*_table_rules(), *_atlas_views()]
    skipped = passed = 0
    for where, code in _sources():
        imports = import_statements(cst.parse_module(code))
        names: set[str] | None = None
        for rule in rules:
            if rule.may_act(imports, code):
                passed += 1
                continue
            skipped += 1
            if names is None:
                found = _ImportedNames()
                cst.MetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True).visit(found)
                names = found.names
            assert not _acts(rule, names), f"{rule.id} gate refused {where}: {sorted(names)}"
    assert skipped and passed  # the gates decide both ways on these sources


def test_imported_names_decide_as_the_collector():
    """The shortcut above against the rules' own first pass, on every 8th source (the collector walks per rule)."""
    rules = [r for r in (*_table_rules(), *_atlas_views()) if type(r).wants_call is SymbolMigration.wants_call]
    for where, code in _sources()[::8]:
        wrapper = cst.MetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True)
        found = _ImportedNames()
        wrapper.visit(found)
        for rule in rules:
            collector = _Collector(rule)
            wrapper.visit(collector)
            assert collector.relevant == _acts(rule, found.names), (rule.id, where)


def test_trainer_processing_class_gate_is_exact():
    skipped = 0
    for where, code in _sources():
        tree = ast.parse(code) if _parses(code) else None
        if tree is None or any(tpc._names_tokenizer(n) for n in ast.walk(tree)):
            continue
        skipped += 1
        ctx = RuleContext()
        visitor = tpc._Transformer(tpc.MIGRATION, ctx, tree)
        cst.MetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True).visit(visitor)
        assert not visitor.changed and not ctx.findings, where
    assert skipped


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True
