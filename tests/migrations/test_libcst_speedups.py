"""`migrations.libcst_speedups`: the same answers as libcst's own dispatch, for this project's visitors and others.

Oracle: libcst's original methods (kept in `_ORIGINAL`), run on the same tree.
"""

from __future__ import annotations

import types

import libcst as cst

import migrations.base  # noqa: F401 - installs the speed-ups
from migrations import libcst_speedups

SOURCE = "import os\nx = f(a=1, b=[1, 2])\nclass C:\n    def m(self):\n        return self.y\n"


class _Names(cst.CSTVisitor):  # a project visitor (module tests.*): the cached dispatch
    def __init__(self) -> None:
        self.seen: list[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.seen.append(node.value)

    def visit_Call_args(self, node: cst.Call) -> None:
        self.seen.append("<args>")


class _Rename(cst.CSTTransformer):
    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=updated_node.value.upper())


def _with_libcst_dispatch(run):  # type: ignore[no-untyped-def]
    """`run()` with libcst's own dispatch methods back in place (the oracle), then the speed-ups again."""
    try:
        for cls, (visit, leave, visit_attribute, leave_attribute) in libcst_speedups._ORIGINAL.items():
            cls.on_visit, cls.on_leave = visit, leave
            cls.on_visit_attribute, cls.on_leave_attribute = visit_attribute, leave_attribute
        return run()
    finally:
        libcst_speedups.install()


def test_project_visitors_see_what_libcst_dispatch_shows() -> None:
    module = cst.parse_module(SOURCE)
    fast = _Names()
    module.visit(fast)
    assert libcst_speedups._own(fast)
    slow = _Names()
    _with_libcst_dispatch(lambda: module.visit(slow))
    assert fast.seen == slow.seen and "<args>" in fast.seen
    renamed = module.visit(_Rename()).code
    assert renamed == _with_libcst_dispatch(lambda: module.visit(_Rename()).code)
    assert renamed.startswith("import OS\nX = F(A=1, B=[1, 2])")


def test_other_libraries_visitors_keep_libcst_dispatch() -> None:
    """A visitor from another module that sets a hook on its instance (which a per-class cache would miss)."""
    other = types.new_class("Other", (cst.CSTVisitor,))
    other.__module__ = "someone_elses_lib"
    seen: list[str] = []
    visitor = other()
    visitor.visit_Name = lambda node: seen.append(node.value)  # type: ignore[attr-defined]
    assert not libcst_speedups._own(visitor)
    cst.parse_module(SOURCE).visit(visitor)
    assert seen == ["os", "x", "f", "a", "b", "C", "m", "self", "self", "y"]
