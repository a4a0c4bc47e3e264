"""Which names provably hold an instance of a TRL config: one assignment from a config call, or a parser's output.

Rules that rewrite reads of config fields (`cfg.max_seq_length`, `config.rloo_k`) must not touch a script's own
dataclass with a field of the same name. `holds_config` answers True only when the name is bound exactly once in its
scope, either to a call of one of the given config classes (resolved by qualified name) or by unpacking
`HfArgumentParser((A, Config, ...)).parse_*()` / `TrlParser(...)` (the parser built inline or bound once to a
name) at the position of the config class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ParentNodeProvider, ScopeProvider

from migrations.kinds.options import ARGUMENT_PARSERS, PARSE_METHODS

__all__ = ["ConfigBinding", "config_binding", "holds_config", "parser_classes"]

QNames = Callable[[cst.CSTNode], set[str]]


def _single_assignment(t: cst.MetadataDependent, name: cst.Name) -> cst.CSTNode | None:
    scope = t.get_metadata(ScopeProvider, name, None)
    if scope is None:
        return None
    found = [a for a in scope[name.value] if hasattr(a, "node")]
    return found[0].node if len(found) == 1 else None


def _statement(t: cst.MetadataDependent, node: cst.CSTNode) -> cst.CSTNode | None:
    parent = t.get_metadata(ParentNodeProvider, node, None)
    while parent is not None and not isinstance(parent, (cst.Assign, cst.BaseStatement)):
        parent = t.get_metadata(ParentNodeProvider, parent, None)
    return parent


@dataclass(frozen=True)
class ConfigBinding:
    """How a name got its value: `names[index]` of an unpacking of a parser's `parse_*()` whose dataclass tuple is
    `classes` (`names` holds None for a target that is not a plain name), or a direct call (`classes` is
    `[call.func]`, `names` is `[name]`)."""

    names: list[str | None]
    classes: list[cst.BaseExpression]
    index: int
    targets: tuple[cst.CSTNode, ...] = ()  # the Name nodes bound (in the order of `names`)

    @property
    def cls(self) -> cst.BaseExpression:
        """The class expression whose instance the name holds."""
        return self.classes[self.index]


def config_binding(t: cst.MetadataDependent, value: cst.BaseExpression, qnames: QNames) -> ConfigBinding | None:
    """The binding of `value` when it is a name bound exactly once in its scope, to a call or to one position of a
    parser's output (see the module docstring); None otherwise."""
    if not isinstance(value, cst.Name):
        return None
    node = _single_assignment(t, value)
    parent = _statement(t, node) if node is not None else None
    if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
        return None
    target, assigned = parent.targets[0].target, parent.value
    if isinstance(target, cst.Name):
        return ConfigBinding([target.value], [assigned.func], 0, (target,)) if isinstance(assigned, cst.Call) else None
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    classes = parser_classes(t, assigned, qnames)
    names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
    if classes is None or len(classes) != len(names) or value.value not in names:
        return None
    return ConfigBinding(names, classes, names.index(value.value), tuple(e.value for e in target.elements))



def holds_config(t: cst.MetadataDependent, value: cst.BaseExpression, configs: frozenset[str] | set[str],
                 qnames: QNames) -> bool:
    """True when `value` is a name provably bound to an instance of one of `configs` (qualified names)."""
    binding = config_binding(t, value, qnames)
    return binding is not None and bool(qnames(binding.cls) & configs)


def parser_classes(t: cst.MetadataDependent, call: cst.BaseExpression, qnames: QNames) -> list[cst.BaseExpression] | None:
    """The dataclass tuple of `parser.parse_*()` (`HfArgumentParser((A, B))` / `TrlParser(...)`), inline or bound
    once to a name; None when `call` is not such a call or the tuple is not visible."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in PARSE_METHODS):
        return None
    parser = call.func.value
    built: cst.BaseExpression | None = None
    if isinstance(parser, cst.Call):
        built = parser
    elif isinstance(parser, cst.Name):
        node = _single_assignment(t, parser)
        p = _statement(t, node) if node is not None else None
        if isinstance(p, cst.Assign):
            built = p.value
    if not (isinstance(built, cst.Call) and qnames(built.func) & ARGUMENT_PARSERS and built.args):
        return None
    classes = built.args[0].value
    if not isinstance(classes, (cst.Tuple, cst.List)):
        return None
    return [e.value for e in classes.elements]
