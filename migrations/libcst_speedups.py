"""Speed-ups of libcst internals that the rules pay on every pass and metadata resolution; the answers are unchanged.

libcst resolves its batchable metadata providers (`ScopeProvider`, `QualifiedNameProvider`, `ExpressionContextProvider`,
`ParentNodeProvider`, ...) with one batched walk, and before every such walk it asks each provider *instance* for its
`visit_*` / `leave_*` methods (`BatchableCSTVisitor.get_visitors`) with `inspect.getmembers`, which reads every
attribute of the instance (a few hundred) each time. The migrator resolves metadata again after every rule that changed
a tree, so that lookup ran about a thousand times on 150 PPO-era files and cost 5-7 % of the migrator's CPU.

`install()` puts three speed-ups in place:

* the lookup reads the method *names* once per provider class and binds them per instance (the same
  `{name: bound method}` mapping, in the same order). It is limited to libcst's own provider classes, whose methods
  never change at run time, and an instance that holds a `visit_*` / `leave_*` attribute of its own gets the full
  lookup;
* a visitor's no-op hooks are not looked up and called for every node: `CSTVisitor` / `CSTTransformer` dispatch
  each node to `visit_<Node>`, `leave_<Node>` and, for every child attribute, `visit_<Node>_<attr>` /
  `leave_<Node>_<attr>`, formatting the name and fetching the method each time, though nearly all of them are
  libcst's typed no-op stubs (`mark_no_op`: `pass`, or `return updated_node`). The hooks a visitor class really
  defines are read once per class; a no-op stub is then skipped (calling it does nothing), any other method is
  called as before, and a class without attribute hooks (nearly all) pays nothing per attribute. Hooks are read
  from the visitor's class, where every visitor here defines them; only this project's visitor classes (modules
  `migrations.*`, `compat.*`, `tests.*`) are dispatched this way, any other keeps libcst's own dispatch;
* an empty batch is not walked: when a non-batchable provider (`PositionProvider`) is resolved, libcst's
  `_resolve_impl` still runs a batched walk over the whole tree with no provider in it (no visitor method, nothing
  computed, `{}` returned): about 3 % of the migrator's CPU on the same files. The answer is `{}` without the walk.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

try:  # libcst internals: where a libcst release moves them, the speed-ups are simply not installed
    from libcst._batched_visitor import BatchableCSTVisitor
    from libcst._visitors import CSTTransformer, CSTVisitor
    from libcst.metadata import wrapper as _wrapper_module

    _full_lookup = BatchableCSTVisitor.get_visitors
    _full_batch = _wrapper_module._gen_batchable
    _ORIGINAL = {cls: (cls.on_visit, cls.on_leave, cls.on_visit_attribute, cls.on_leave_attribute)
                 for cls in (CSTVisitor, CSTTransformer)}
except (ImportError, AttributeError):  # pragma: no cover - depends on the libcst release
    _ORIGINAL = {}

_names_of: dict[type, tuple[str, ...]] = {}
#: The dispatch speed-up serves this project's own visitors only: another library's visitors in the same process
#: (which may set hooks on instances, or change them at run time) keep libcst's own dispatch.
_OWN_MODULES = ("migrations.", "compat.", "tests.")


def _own_visitor_attribute(visitor: BatchableCSTVisitor) -> bool:
    return any(k.startswith(("visit_", "leave_")) for k in getattr(visitor, "__dict__", ()))


def _get_visitors(self: BatchableCSTVisitor) -> Mapping[str, object]:
    """`BatchableCSTVisitor.get_visitors`, with the method names of a libcst provider class looked up once."""
    cls = type(self)
    if not cls.__module__.startswith("libcst.") or _own_visitor_attribute(self):
        return _full_lookup(self)
    names = _names_of.get(cls)
    if names is None:
        methods = _full_lookup(self)
        _names_of[cls] = tuple(methods)
        return methods
    return {name: getattr(self, name) for name in names}


def _gen_batchable(wrapper, providers):  # type: ignore[no-untyped-def]
    """libcst's `_gen_batchable`, which answers `{}` for an empty batch without walking the tree."""
    if not providers:
        return {}
    return _full_batch(wrapper, providers)


#: Where a visitor class keeps its hooks: in its own `__dict__` (never inherited), so a class made per call
#: (`class _V(cst.CSTVisitor)` inside a function) takes them with it when it is collected.
_CACHE = "_trl_compat_hooks"
#: libcst's generated stubs (`CSTTypedVisitorFunctions` ...): every method there is a no-op, none is read.
_STUBS = "libcst._typed_visitor"
_NODE_NAMES = frozenset(name for name, value in vars(cst).items()
                        if isinstance(value, type) and issubclass(value, cst.CSTNode))


def _hooks(cls: type) -> tuple[frozenset[str], bool]:
    """(the names of the `visit_*` / `leave_*` methods of visitor class `cls` that are not libcst's no-op stubs,
    whether any of them is an attribute hook `visit_<Node>_<attr>`), read once per class from its own classes'
    namespaces (the stub classes skipped) and kept on the class."""
    found = cls.__dict__.get(_CACHE)
    if found is None:
        names = {n for k in cls.__mro__ if k.__module__ != _STUBS
                 for n in vars(k) if n.startswith(("visit_", "leave_"))}
        hooks = frozenset(n for n in names if callable(method := getattr(cls, n, None))
                          and not getattr(method, "_is_no_op", False))
        found = (hooks, any(n.partition("_")[2] not in _NODE_NAMES for n in hooks))
        setattr(cls, _CACHE, found)
    return found


def _own(visitor: object) -> bool:
    return type(visitor).__module__.startswith(_OWN_MODULES)


def _base(visitor: object) -> type:
    return CSTTransformer if isinstance(visitor, CSTTransformer) else CSTVisitor


def _visit(self, node):  # type: ignore[no-untyped-def]
    if not _own(self):
        return _ORIGINAL[_base(self)][0](self, node)
    hooks, _ = _hooks(type(self))
    name = f"visit_{type(node).__name__}"
    return name not in hooks or getattr(self, name)(node) is not False


def _visitor_leave(self, original_node):  # type: ignore[no-untyped-def]
    if not _own(self):
        return _ORIGINAL[CSTVisitor][1](self, original_node)
    hooks, _ = _hooks(type(self))
    name = f"leave_{type(original_node).__name__}"
    if name in hooks:
        getattr(self, name)(original_node)
    return None


def _transformer_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
    if not _own(self):
        return _ORIGINAL[CSTTransformer][1](self, original_node, updated_node)
    hooks, _ = _hooks(type(self))
    name = f"leave_{type(original_node).__name__}"
    return getattr(self, name)(original_node, updated_node) if name in hooks else updated_node


def _visit_attribute(self, node, attribute):  # type: ignore[no-untyped-def]
    if not _own(self):
        return _ORIGINAL[_base(self)][2](self, node, attribute)
    hooks, any_attribute_hook = _hooks(type(self))
    if any_attribute_hook and (name := f"visit_{type(node).__name__}_{attribute}") in hooks:
        getattr(self, name)(node)
    return None


def _leave_attribute(self, original_node, attribute):  # type: ignore[no-untyped-def]
    if not _own(self):
        return _ORIGINAL[_base(self)][3](self, original_node, attribute)
    hooks, any_attribute_hook = _hooks(type(self))
    if any_attribute_hook and (name := f"leave_{type(original_node).__name__}_{attribute}") in hooks:
        getattr(self, name)(original_node)
    return None


def install() -> None:
    """Put the speed-ups in place (idempotent; nothing when this libcst keeps its internals elsewhere)."""
    if not _ORIGINAL:  # pragma: no cover - depends on the libcst release
        return
    BatchableCSTVisitor.get_visitors = _get_visitors  # type: ignore[method-assign]
    _wrapper_module._gen_batchable = _gen_batchable
    for cls in (CSTVisitor, CSTTransformer):
        cls.on_visit = _visit  # type: ignore[method-assign]
        cls.on_visit_attribute = _visit_attribute  # type: ignore[method-assign]
        cls.on_leave_attribute = _leave_attribute  # type: ignore[method-assign]
    CSTVisitor.on_leave = _visitor_leave  # type: ignore[method-assign]
    CSTTransformer.on_leave = _transformer_leave  # type: ignore[method-assign]
