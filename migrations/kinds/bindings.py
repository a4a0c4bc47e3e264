"""Which names provably hold an instance of a TRL config: one assignment from a config call, or a parser's output.

Rules that rewrite reads of config fields (`cfg.max_seq_length`, `config.rloo_k`) must not touch a script's own
dataclass with a field of the same name. `holds_config` answers True only when the name is bound exactly once in its
scope, and that binding is one of:

* a call of one of the given config classes (resolved by qualified name);
* the unpacking of `HfArgumentParser((A, Config, ...)).parse_*()` / `TrlParser(...)` at the position of the config
  class: the parser built inline, bound once to a name, or returned by a module-level function of the file whose
  every parser construction takes the same dataclass tuple (TRL's `make_parser()` since 0.13:
  `TrlParser(dataclass_types)` or `subparsers.add_parser(..., dataclass_types=dataclass_types)`); with
  `return_remaining_strings=True` the unpacking has one more target, the leftover strings;
* a parameter of a function, never rebound in it, annotated with the class (`def main(model_args: ModelConfig)`), or
  of a module-level function that the file only ever calls (never passes on, never rebinds) and whose every call
  passes, at that parameter, a name that holds the same class by these same rules (TRL's scripts since 0.13:
  `def main(script_args, training_args, model_args)` called as `main(script_args, training_args, model_args)`
  after the parser). A caller in another module is not seen: the file's own calls decide.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import GlobalScope, ParentNodeProvider, ScopeProvider

from migrations.kinds.cst import code
from migrations.kinds.options import ARGUMENT_PARSERS, PARSE_METHODS

__all__ = ["ConfigBinding", "config_binding", "holds_config", "holds_namespace", "module_class", "parameter_binding",
           "parser_classes", "plain_value", "still_bound"]

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


def module_class(t: cst.MetadataDependent, name: cst.Name) -> cst.ClassDef | None:
    """The class `name` means when the module defines it once at its top level and binds the name nothing else."""
    node = _single_assignment(t, name)
    if isinstance(node, cst.ClassDef) and isinstance(t.get_metadata(ScopeProvider, node, None), GlobalScope):
        return node
    return None


def plain_value(t: cst.MetadataDependent, name: cst.Name, *, read_once: bool = False) -> cst.BaseExpression | None:
    """The value of `name` when its scope binds it once, by a plain `name = value` (with `read_once`: and reads it
    only at one place); None otherwise."""
    scope = t.get_metadata(ScopeProvider, name, None)
    found = [a for a in scope[name.value] if hasattr(a, "node")] if scope is not None else []
    if len(found) != 1 or read_once and len(found[0].references) != 1:
        return None
    node = found[0].node
    target = t.get_metadata(ParentNodeProvider, node, None)
    assign = t.get_metadata(ParentNodeProvider, target, None) if target is not None else None
    if isinstance(target, cst.AssignTarget) and target.target is node and isinstance(assign, cst.Assign) \
            and len(assign.targets) == 1:
        return assign.value
    return None


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


def config_binding(t: cst.MetadataDependent, value: cst.BaseExpression, qnames: QNames,
                   _depth: int = 0) -> ConfigBinding | None:
    """The binding of `value` when it is a name bound exactly once in its scope, to a call, to one position of a
    parser's output or as a parameter (see the module docstring); None otherwise."""
    if not isinstance(value, cst.Name):
        return None
    node = _single_assignment(t, value)
    if isinstance(node, cst.Param):
        return parameter_binding(t, node, qnames, _depth)
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
    if classes is not None and _returns_remaining(assigned):
        names = names[:-1]  # the last target takes the strings the parser did not consume
    if classes is None or len(classes) != len(names) or value.value not in names:
        return None
    return ConfigBinding(names, classes, names.index(value.value), tuple(e.value for e in target.elements))


def _returns_remaining(call: cst.BaseExpression) -> bool:
    """`parse_*(return_remaining_strings=True)`: the output tuple ends with the strings left over."""
    return isinstance(call, cst.Call) and any(
        a.keyword is not None and a.keyword.value == "return_remaining_strings"
        and isinstance(a.value, cst.Name) and a.value.value == "True" for a in call.args)


def _function_params(fn: cst.FunctionDef) -> list[cst.Param]:
    p = fn.params
    return [*p.posonly_params, *p.params, *p.kwonly_params]


def parameter_binding(t: cst.MetadataDependent, param: cst.Param, qnames: QNames,
                      _depth: int = 0) -> ConfigBinding | None:
    """The binding of a function parameter never rebound in its function (see the module docstring): the
    function's parameters are the `names`, `index` is this one's; `classes` holds, for each parameter, its annotation
    or the class every call passes there (else the parameter's own name, which resolves to nothing)."""
    params_node = t.get_metadata(ParentNodeProvider, param, None)
    fn = t.get_metadata(ParentNodeProvider, params_node, None) if params_node is not None else None
    if not isinstance(fn, cst.FunctionDef):
        return None
    params = _function_params(fn)
    if param not in params:
        return None  # *args / **kwargs
    index = params.index(param)
    names = [p.name.value for p in params]
    targets = tuple(p.name for p in params)
    if param.annotation is not None:
        return ConfigBinding(names, [p.annotation.annotation if p.annotation is not None else p.name
                                     for p in params], index, targets)
    calls = _only_calls(t, fn) if _depth < 3 else None
    if not calls:
        return None
    per_call = [_call_classes(t, call, fn, qnames, _depth + 1) for call in calls]
    if any(c is None for c in per_call):
        return None
    classes: list[cst.BaseExpression] = []
    for i, p in enumerate(params):
        seen = [c[i] for c in per_call if c is not None]
        paths = [frozenset(qnames(c)) if c is not None else frozenset() for c in seen]
        agreed = seen[0] is not None and bool(paths[0]) and all(q == paths[0] for q in paths)
        if i == index and not agreed:
            return None
        classes.append(seen[0] if agreed and seen[0] is not None else p.name)
    return ConfigBinding(names, classes, index, targets)


def _only_calls(t: cst.MetadataDependent, fn: cst.FunctionDef) -> list[cst.Call] | None:
    """Every call of the module-level function `fn` in the file, when the file binds its name once (the `def`) and
    uses it only as the callee of a call; None otherwise (passed on, decorated, rebound, exported by `__all__`...)."""
    if fn.decorators or not isinstance(t.get_metadata(ParentNodeProvider, fn, None), cst.Module):
        return None
    scope = t.get_metadata(ScopeProvider, fn, None)
    if scope is None:
        return None
    assignments = list(scope.assignments[fn.name.value])
    if len(assignments) != 1 or assignments[0].node is not fn:
        return None
    calls = []
    for access in assignments[0].references:
        parent = t.get_metadata(ParentNodeProvider, access.node, None)
        if not (isinstance(parent, cst.Call) and parent.func is access.node):
            return None
        calls.append(parent)
    return calls


def _call_classes(t: cst.MetadataDependent, call: cst.Call, fn: cst.FunctionDef, qnames: QNames,
                  depth: int) -> list[cst.BaseExpression | None] | None:
    """For each parameter, the class of the config the call passes there (None where it is not a provable config
    instance); None when the call's arguments cannot be matched to the parameters (`*args`, `**kwargs`)."""
    params = _function_params(fn)
    posonly_count = len(fn.params.posonly_params)
    positional_count = posonly_count + len(fn.params.params)
    given: dict[int, cst.BaseExpression] = {}
    by_name = {p.name.value: i for i, p in enumerate(params) if i >= posonly_count}
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if len(given) >= positional_count:  # positional arguments come first: len(given) is the position
                return None
            given[len(given)] = arg.value
        elif arg.keyword.value in by_name:
            given[by_name[arg.keyword.value]] = arg.value
        else:
            return None
    out: list[cst.BaseExpression | None] = []
    for i in range(len(params)):
        value = given.get(i)
        binding = config_binding(t, value, qnames, depth) if isinstance(value, cst.Name) else None
        out.append(binding.cls if binding is not None else None)
    return out


def holds_config(t: cst.MetadataDependent, value: cst.BaseExpression, configs: frozenset[str] | set[str],
                 qnames: QNames) -> bool:
    """True when `value` is a name provably bound to an instance of one of `configs` (qualified names)."""
    binding = config_binding(t, value, qnames)
    return binding is not None and bool(qnames(binding.cls) & configs)


def _suite_statement(t: cst.MetadataDependent, node: cst.CSTNode, suite: cst.CSTNode) -> cst.CSTNode | None:
    """The statement of `suite`'s body (an `IndentedBlock` or the `Module`) that holds `node`; None if none does."""
    child, parent = node, t.get_metadata(ParentNodeProvider, node, None)
    while parent is not None and parent is not suite:
        child, parent = parent, t.get_metadata(ParentNodeProvider, parent, None)
    return child if parent is suite else None


def still_bound(t: cst.MetadataDependent, read: cst.Name, assigned: cst.CSTNode, others: list[cst.CSTNode]) -> bool:
    """Whether the name `read` reads still holds what `assigned` (a target Name) bound, though `others` bind it too:
    in straight-line code of one scope, the binding statement comes before the statement holding the read in the
    same block, and every other binding sits in a later statement of that block, none of them inside a loop of the
    scope (whose next round would read the later value) and the read in no nested function or class (run later)."""
    scope = t.get_metadata(ScopeProvider, read, None)
    if scope is None or t.get_metadata(ScopeProvider, assigned, None) is not scope:
        return False
    first = _statement(t, assigned)
    line = t.get_metadata(ParentNodeProvider, first, None) if first is not None else None
    suite = t.get_metadata(ParentNodeProvider, line, None) if line is not None else None
    if not isinstance(suite, (cst.IndentedBlock, cst.Module)):
        return False
    node: cst.CSTNode | None = suite
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
        if isinstance(node, (cst.For, cst.While)):
            return False
        node = t.get_metadata(ParentNodeProvider, node, None)
    body = list(suite.body)
    at = _suite_statement(t, read, suite)
    if at is None or line not in body or body.index(line) >= body.index(at):
        return False
    later = [_suite_statement(t, other, suite) for other in others]
    return all(s is not None and body.index(s) > body.index(at) for s in later)


_ARGPARSE_PARSER = frozenset({"argparse.ArgumentParser"})
_NAMESPACE = "argparse.Namespace"


def _parse_args_of_argparse(t: cst.MetadataDependent, node: cst.CSTNode, qnames: QNames) -> bool:
    """`parser.parse_args` where `parser` is a name bound once, to `argparse.ArgumentParser(...)`."""
    if not (isinstance(node, cst.Attribute) and node.attr.value == "parse_args" and isinstance(node.value, cst.Name)):
        return False
    bound = _single_assignment(t, node.value)
    stmt = _statement(t, bound) if bound is not None else None
    return (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and stmt.targets[0].target is bound
            and isinstance(stmt.value, cst.Call) and bool(qnames(stmt.value.func) & _ARGPARSE_PARSER))


def holds_namespace(t: cst.MetadataDependent, value: cst.BaseExpression, qnames: QNames) -> bool:
    """True when `value` is a name provably bound to the `argparse.Namespace` that `parser.parse_args()` returns
    (`parser` bound once to `argparse.ArgumentParser(...)`): assigned once from that call, or a parameter annotated
    `argparse.Namespace` or that every call of its function passes such a name (the rules of `config_binding`). Its
    attributes are the parser's
    options, never a `TrainingArguments` field, and reading one runs no code."""

    def names(node: cst.CSTNode) -> set[str]:
        return {_NAMESPACE} if _parse_args_of_argparse(t, node, qnames) else qnames(node)

    binding = config_binding(t, value, names)
    return binding is not None and names(binding.cls) == {_NAMESPACE}


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
    if not isinstance(built, cst.Call):
        return None
    if qnames(built.func) & ARGUMENT_PARSERS:
        return _dataclass_tuple(t, built.args[0].value) if built.args else None
    return _factory_classes(t, built, qnames)


def _dataclass_tuple(t: cst.MetadataDependent, value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The classes of a parser's dataclass tuple: written out, or a name bound once to one."""
    if isinstance(value, cst.Name):
        node = _single_assignment(t, value)
        p = _statement(t, node) if node is not None else None
        if not (isinstance(p, cst.Assign) and len(p.targets) == 1 and p.targets[0].target is node):
            return None
        value = p.value
    if not isinstance(value, (cst.Tuple, cst.List)) or any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    return [e.value for e in value.elements]


def _factory_classes(t: cst.MetadataDependent, call: cst.Call, qnames: QNames) -> list[cst.BaseExpression] | None:
    """`make_parser()`: a module-level function of the file (bound once) whose every parser construction -
    `TrlParser(X)` / `HfArgumentParser(X)`, or `subparsers.add_parser(..., dataclass_types=X)` as TRL's scripts
    register themselves with `trl` - takes the same dataclass tuple X (same classes, same order)."""
    if not isinstance(call.func, cst.Name):
        return None
    node = _single_assignment(t, call.func)
    if not isinstance(node, cst.FunctionDef) or not isinstance(t.get_metadata(ParentNodeProvider, node, None),
                                                              cst.Module):
        return None
    found: list[list[cst.BaseExpression] | None] = []

    class _Parsers(cst.CSTVisitor):
        def visit_Call(self, c: cst.Call) -> None:
            if qnames(c.func) & ARGUMENT_PARSERS:
                found.append(_dataclass_tuple(t, c.args[0].value) if c.args else None)
            elif isinstance(c.func, cst.Attribute) and c.func.attr.value == "add_parser":
                given = [a.value for a in c.args if a.keyword is not None and a.keyword.value == "dataclass_types"]
                found.append(_dataclass_tuple(t, given[0]) if given else None)

    node.body.visit(_Parsers())
    if not found or any(f is None for f in found):
        return None
    shapes = {tuple(code(e) for e in f) for f in found if f is not None}
    return found[0] if len(shapes) == 1 else None
