"""`migrations.base.LazyMetadata`: a provider resolved on first use answers what a declared provider answers, and a
pass that never asks never pays for it (the engine's per-MB cost: `benchmarks/migrate_cost_per_mb.py`)."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider

from migrations.base import LazyMetadata

CODE = "from trl import PPOTrainer as T\n\ndef f(x):\n    return T(model=x).train()\n"


class _Declared(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (ParentNodeProvider, PositionProvider)

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, object, object]] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.seen.append((node.value, self.get_metadata(ParentNodeProvider, node),
                          self.get_metadata(PositionProvider, node)))


class _Lazy(LazyMetadata, cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, ask: bool = True) -> None:
        super().__init__()
        self.ask = ask
        self.seen: list[tuple[str, object, object]] = []

    def visit_Name(self, node: cst.Name) -> None:
        if self.ask:
            self.seen.append((node.value, self.lazy_metadata(ParentNodeProvider, node),
                              self.lazy_metadata(PositionProvider, node)))


def test_lazy_answers_equal_declared_ones() -> None:
    wrapper = cst.MetadataWrapper(cst.parse_module(CODE), unsafe_skip_copy=True)
    declared, lazy = _Declared(), _Lazy()
    wrapper.visit(declared)
    wrapper.visit(lazy)
    assert [n for n, _, _ in lazy.seen] == ["trl", "PPOTrainer", "T", "f", "x", "T", "model", "x", "train"]
    assert lazy.seen == declared.seen  # the same parent node objects, the same positions


def test_not_resolved_unless_asked_and_cached_on_the_wrapper() -> None:
    wrapper = cst.MetadataWrapper(cst.parse_module(CODE), unsafe_skip_copy=True)
    wrapper.visit(_Lazy(ask=False))
    assert ParentNodeProvider not in wrapper._metadata  # never asked: never computed
    wrapper.visit(_Lazy())
    parents = wrapper._metadata[ParentNodeProvider]
    wrapper.visit(_Lazy())
    assert wrapper._metadata[ParentNodeProvider] is parents  # the second pass reuses the first one's map


def test_defaults_and_missing_wrapper() -> None:
    wrapper = cst.MetadataWrapper(cst.parse_module(CODE), unsafe_skip_copy=True)
    built = cst.Name("nowhere")  # a node not in the tree
    got: list[object] = []

    class _Probe(_Lazy):
        def visit_Module(self, node: cst.Module) -> None:
            got.append(self.lazy_metadata(ParentNodeProvider, built, None))
            with pytest.raises(KeyError):
                self.lazy_metadata(ParentNodeProvider, built)

    wrapper.visit(_Probe(ask=False))
    assert got == [None]
    with pytest.raises(KeyError, match="not run through a MetadataWrapper"):
        _Lazy().lazy_metadata(ParentNodeProvider, built, None)
