"""transformers 5.0 removed the `<Family>TokenizerFast` classes of many families (`BloomTokenizerFast`,
`GPT2TokenizerFast`, `GPTNeoXTokenizerFast`, ...): 5.x has one tokenizers-backed class per family (`GPT2Tokenizer`
is the fast one now) or none at all (bloom: `AutoTokenizer` builds a `TokenizersBackend` from `tokenizer.json`).

`AutoTokenizer.from_pretrained(path)` is the one spelling that loads the same fast tokenizer on 4.56.2 (it picks the
class the checkpoint's `tokenizer_config.json` / model type names, fast by default) and on 5.x, so a file whose every
use of such a class is `<Class>.from_pretrained(...)` is rewritten to it. Any other use (`isinstance`, subclassing,
direct construction, a checkpoint of another family loaded through that class) is marked instead, in that whole file.
The table (`_tokenizer_classes`, generated from the atlas) lists every path (top level, family package,
`tokenization_*_fast` module) the newest release lacks.
"""

from __future__ import annotations

import copy

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider

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

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.blocked: set[str] = set()

    def _check(self, node: cst.Name | cst.Attribute) -> bool:
        for qual in imported_names(self, node):
            if qual not in GONE:
                continue
            parent = self.get_metadata(ParentNodeProvider, node, None)
            grand = self.get_metadata(ParentNodeProvider, parent, None) if parent is not None else None
            ok = (isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "from_pretrained"
                  and isinstance(grand, cst.Call) and grand.func is parent)
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
