"""Speed-ups of libcst internals that the rules pay for on every metadata resolution; the answers are unchanged.

libcst resolves its batchable metadata providers (`ScopeProvider`, `QualifiedNameProvider`, `ExpressionContextProvider`,
`ParentNodeProvider`, ...) with one batched walk, and before every such walk it asks each provider *instance* for its
`visit_*` / `leave_*` methods (`BatchableCSTVisitor.get_visitors`) with `inspect.getmembers`, which reads every
attribute of the instance (a few hundred) each time. The migrator resolves metadata again after every rule that changed
a tree, so that lookup ran about a thousand times on 150 PPO-era files and cost 5-7 % of the migrator's CPU.

`install()` puts two speed-ups in place:

* the lookup reads the method *names* once per provider class and binds them per instance (the same
  `{name: bound method}` mapping, in the same order). It is limited to libcst's own provider classes, whose methods
  never change at run time, and an instance that holds a `visit_*` / `leave_*` attribute of its own gets the full
  lookup;
* a visitor's no-op hooks are not looked up and called for every node: `CSTVisitor` / `CSTTransformer` dispatch
  each node to `visit_<Node>`, `leave_<Node>` and, for every child attribute, `visit_<Node>_<attr>` /
  `leave_<Node>_<attr>`, formatting the name and fetching the method each time, though nearly all of them are
  libcst's typed no-op stubs (`mark_no_op`: `pass`, or `return updated_node`). The hook of a (visitor class, node
  class, attribute) is looked up once; a no-op stub is then skipped (calling it does nothing), any other method is
  called as before. Hooks are read from the visitor's class, where every visitor here defines them (libcst's
  `get_visitors` reads them there too);
* an empty batch is not walked: when a non-batchable provider (`PositionProvider`) is resolved, libcst's
  `_resolve_impl` still runs a batched walk over the whole tree with no provider in it (no visitor method, nothing
  computed, `{}` returned): about 3 % of the migrator's CPU on the same files. The answer is `{}` without the walk.
"""

from __future__ import annotations

from collections.abc import Mapping

from libcst._batched_visitor import BatchableCSTVisitor
from libcst._visitors import CSTTransformer, CSTVisitor
from libcst.metadata import wrapper as _wrapper_module

_names_of: dict[type, tuple[str, ...]] = {}
_full_lookup = BatchableCSTVisitor.get_visitors
_full_batch = _wrapper_module._gen_batchable


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


#: Where a visitor class keeps its hook cache: in its own `__dict__` (never inherited), so a class made per call
#: (`class _V(cst.CSTVisitor)` inside a function) takes its cache with it when it is collected.
_CACHE = "_trl_compat_hooks"


def _hook(visitor: object, node: object, kind: str) -> str | None:
    """The name of the hook `kind` ("visit", "leave", "visit/<attr>", "leave/<attr>") of `visitor` for `node`, or
    None when it is absent or one of libcst's no-op stubs (cached per visitor class, node class and kind)."""
    cls = type(visitor)
    cache = cls.__dict__.get(_CACHE)
    if cache is None:
        cache = {}
        setattr(cls, _CACHE, cache)
    key = (type(node), kind)
    try:
        return cache[key]
    except KeyError:
        prefix, _, attribute = kind.partition("/")
        name = f"{prefix}_{type(node).__name__}" + (f"_{attribute}" if attribute else "")
        method = getattr(cls, name, None)
        found = cache[key] = None if method is None or getattr(method, "_is_no_op", False) else name
        return found


def _visit(self, node):  # type: ignore[no-untyped-def]
    name = _hook(self, node, "visit")
    return True if name is None else getattr(self, name)(node) is not False


def _visitor_leave(self, original_node):  # type: ignore[no-untyped-def]
    name = _hook(self, original_node, "leave")
    if name is not None:
        getattr(self, name)(original_node)


def _transformer_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
    name = _hook(self, original_node, "leave")
    return updated_node if name is None else getattr(self, name)(original_node, updated_node)


def _visit_attribute(self, node, attribute):  # type: ignore[no-untyped-def]
    name = _hook(self, node, "visit/" + attribute)
    if name is not None:
        getattr(self, name)(node)


def _leave_attribute(self, original_node, attribute):  # type: ignore[no-untyped-def]
    name = _hook(self, original_node, "leave/" + attribute)
    if name is not None:
        getattr(self, name)(original_node)


def install() -> None:
    """Put the speed-ups in place (idempotent)."""
    BatchableCSTVisitor.get_visitors = _get_visitors  # type: ignore[method-assign]
    _wrapper_module._gen_batchable = _gen_batchable
    for cls in (CSTVisitor, CSTTransformer):
        cls.on_visit = _visit  # type: ignore[method-assign]
        cls.on_visit_attribute = _visit_attribute  # type: ignore[method-assign]
        cls.on_leave_attribute = _leave_attribute  # type: ignore[method-assign]
    CSTVisitor.on_leave = _visitor_leave  # type: ignore[method-assign]
    CSTTransformer.on_leave = _transformer_leave  # type: ignore[method-assign]
