"""What a module's code imports, read with `ast`: the engine's `needs_of` and the notebook's install lines ask it."""

from __future__ import annotations

import ast

from migrations.kinds import grammar


def code_imports(code: str) -> tuple[set[str], set[str]]:
    """What a module imports (absolute imports, anywhere in it): its top-level packages, and the `compat.trl` names
    it uses (`from compat.trl import X`, `compat.trl.X`); both empty when it does not parse."""
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return set(), set()
    roots: set[str] = set()
    compat_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            roots.add(node.module.split(".")[0])
            if node.module == "compat.trl":
                compat_names.update(alias.name for alias in node.names)
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
              and isinstance(node.value.value, ast.Name) and node.value.value.id == "compat"
              and node.value.attr == "trl"):
            compat_names.add(node.attr)
    return roots, compat_names
