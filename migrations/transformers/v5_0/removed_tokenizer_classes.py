"""transformers 5.0 removed the `<Family>TokenizerFast` classes of many families (`BloomTokenizerFast`,
`GPT2TokenizerFast`, `GPTNeoXTokenizerFast`, ...): 5.x has one tokenizers-backed class per family (`GPT2Tokenizer`
is the fast one now) or none at all (bloom: `AutoTokenizer` builds a `TokenizersBackend` from `tokenizer.json`).

`AutoTokenizer.from_pretrained(path)` is the one spelling that loads the same fast tokenizer on 4.56.2 (it picks the
class the checkpoint's `tokenizer_config.json` / model type names, fast by default) and on 5.x, so a file whose every
use of such a class is `<Class>.from_pretrained(...)` is rewritten to it. Any other use (`isinstance`, subclassing,
direct construction, a checkpoint of another family loaded through that class) is marked instead, in that whole file.
One other use is rewritten too, the model-type table (MedicalGPT and others):

    MODEL_CLASSES = {"bloom": (AutoConfig, BloomForCausalLM, BloomTokenizerFast), "auto": (..., AutoTokenizer)}
    config_class, model_class, tokenizer_class = MODEL_CLASSES[args.model_type]
    tokenizer = tokenizer_class.from_pretrained(path)

when the table is a module-level dict bound once, used only as `D.keys()` and as the right-hand side of tuple
unpackings `a, b, c = D[key]` of its tuples' length, and every name unpacked at the class's position is only ever
used as `<name>.from_pretrained(...)`: then the class only ever reaches `from_pretrained`, as above.
The table (`_tokenizer_classes`, generated from the atlas) lists every path (top level, family package,
`tokenization_*_fast` module) the newest release lacks.
"""

from __future__ import annotations

import copy

import libcst as cst
from libcst.metadata import (
    GlobalScope,
    ParentNodeProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from migrations.base import RuleContext
from migrations.kinds.imports import imported_names
from migrations.kinds.symbols import Gone, Moved, SymbolMigration
from migrations.transformers.v5_0._tokenizer_classes import GONE


def _gone(qual: str) -> Gone:
    name = qual.rsplit(".", 1)[-1]
    return Gone(f"{name} was removed in transformers 5.0: load the tokenizer with "
                "AutoTokenizer.from_pretrained(...) (fast on 4.56 and 5.x), or use the family's tokenizer class on 5.x")


class _Uses(cst.CSTVisitor):
    """Which tabled names are used other than as `<Class>.from_pretrained(...)` in a file."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider, ScopeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.blocked: set[str] = set()

    def _parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def _from_pretrained_only(self, node: cst.CSTNode) -> bool:
        parent = self._parent(node)
        grand = self._parent(parent) if parent is not None else None
        return (isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "from_pretrained"
                and isinstance(grand, cst.Call) and grand.func is parent)

    def _in_model_table(self, node: cst.CSTNode) -> bool:
        """`node` is an element of a tuple in a module-level dict that only ever feeds `from_pretrained` at that
        position (see the module docstring)."""
        element = self._parent(node)
        tup = self._parent(element) if isinstance(element, cst.Element) else None
        entry = self._parent(tup) if isinstance(tup, cst.Tuple) else None
        table = self._parent(entry) if isinstance(entry, cst.DictElement) and entry.value is tup else None
        target = self._parent(table) if isinstance(table, cst.Dict) else None
        if not (isinstance(target, cst.Assign) and target.value is table and len(target.targets) == 1
                and isinstance(target.targets[0].target, cst.Name)):
            return False
        index = next(i for i, e in enumerate(tup.elements) if e is element)
        width = len(tup.elements)
        scope = self.get_metadata(ScopeProvider, target.targets[0].target, None)
        if not isinstance(scope, GlobalScope):
            return False
        name = target.targets[0].target.value
        bindings = list(scope.assignments[name])
        if len(bindings) != 1:
            return False
        # an assignment's references are every read that resolves to it, nested scopes included
        for access in bindings[0].references:
            use = access.node
            up = self._parent(use)
            if isinstance(up, cst.Attribute) and up.value is use and up.attr.value == "keys":
                continue
            stmt = self._parent(up) if isinstance(up, cst.Subscript) and up.value is use else None
            if not (isinstance(stmt, cst.Assign) and stmt.value is up and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0].target, cst.Tuple)
                    and len(stmt.targets[0].target.elements) == width):
                return False
            unpacked = stmt.targets[0].target.elements[index].value
            if not isinstance(unpacked, cst.Name):
                return False
            inner = self.get_metadata(ScopeProvider, unpacked, None)
            if inner is None:
                return False
            reads = [r.node for a in inner.assignments[unpacked.value] for r in a.references]
            if not reads or not all(self._from_pretrained_only(r) for r in reads):
                return False
        return True

    def _check(self, node: cst.Name | cst.Attribute) -> bool:
        for qual in imported_names(self, node):
            if qual not in GONE:
                continue
            parent = self._parent(node)
            ok = self._from_pretrained_only(node) or self._in_model_table(node)
            if not ok and not isinstance(parent, (cst.ImportAlias, cst.ImportFrom)):
                self.blocked.add(qual)
            return False
        return True

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Name(self, node: cst.Name) -> bool:
        return self._check(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._check(node)


class RemovedTokenizerClasses(SymbolMigration):
    summary = "*TokenizerFast classes removed in transformers 5.0 -> AutoTokenizer (from_pretrained uses), else TODO"
    triggers = ("TokenizerFast",)
    requires = ("transformers",)
    symbols = {qual: Moved("transformers", "AutoTokenizer", "AutoTokenizer loads the same fast tokenizer on 4.56 "
                           "and 5.x") for qual in GONE}

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        uses = _Uses()
        wrapper.visit(uses)
        if not uses.blocked:
            return SymbolMigration.transform(self, wrapper, ctx)
        rule = copy.copy(self)  # a file with one other use keeps every such class, marked
        rule.symbols = {q: (_gone(q) if q in uses.blocked else a) for q, a in self.symbols.items()}
        return SymbolMigration.transform(rule, wrapper, ctx)


MIGRATION = RemovedTokenizerClasses()
