"""Speed-ups of libcst internals that the rules pay for on every metadata resolution; the answers are unchanged.

libcst resolves its batchable metadata providers (`ScopeProvider`, `QualifiedNameProvider`, `ExpressionContextProvider`,
`ParentNodeProvider`, ...) with one batched walk, and before every such walk it asks each provider *instance* for its
`visit_*` / `leave_*` methods (`BatchableCSTVisitor.get_visitors`) with `inspect.getmembers`, which reads every
attribute of the instance (a few hundred) each time. The migrator resolves metadata again after every rule that changed
a tree, so that lookup ran about a thousand times on 150 PPO-era files and cost 5-7 % of the migrator's CPU.

`install()` makes the lookup read the method *names* once per provider class and bind them per instance (the same
`{name: bound method}` mapping, in the same order). It is limited to libcst's own provider classes, whose methods
never change at run time, and an instance that holds a `visit_*` / `leave_*` attribute of its own gets the full lookup.
"""

from __future__ import annotations

from collections.abc import Mapping

from libcst._batched_visitor import BatchableCSTVisitor

_names_of: dict[type, tuple[str, ...]] = {}
_full_lookup = BatchableCSTVisitor.get_visitors


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


def install() -> None:
    """Put the cached lookup in place (idempotent)."""
    BatchableCSTVisitor.get_visitors = _get_visitors  # type: ignore[method-assign]
