"""What a training script expects of its data, found statically, so the smoke run's synthetic datasets match it.

Run in the parent (the smoke runner) over the script and the modules of its own that it imports; the result travels to the child
as a small JSON file (`TRL_COMPAT_SMOKE_SHAPE`). Two things are looked for:

* **Columns the code reads**: `example["dialogue"]`, `batch["meta"]["source"]`, `row["turns"][0]`. A key read from a
  plain name (a `.map` function's parameter, a loop variable) is a column; a second string subscript makes it a
  struct column with those fields, an integer subscript a list column. Keys that are model inputs (`input_ids`, ...),
  split names and environment-style upper-case keys are not columns.
* **Markers the code splits strings on**: the literal of `.split("### Response:")`, `.index(...)`, `.partition(...)`,
  `.find(...)`, `"Assistant:" in text`. Every text field of a synthetic dataset then contains each marker, so
  `text.split("### Response:")[1]` finds something, as it does on the real data.

This is a heuristic by design (the smoke run's stand-ins only need to be plausible); it never runs the code.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

# Keys that name model inputs/outputs or dataset splits, not columns a stand-in dataset should invent.
NOT_COLUMNS = frozenset({
    "input_ids", "attention_mask", "labels", "token_type_ids", "position_ids", "pixel_values", "logits", "loss",
    "past_key_values", "hidden_states", "decoder_input_ids", "decoder_attention_mask", "train", "test",
    "validation", "valid", "dev", "eval", "rewards", "scores", "query_tensors", "response_tensors",
})
# Bases whose string subscripts are configuration, not data.
NOT_DATA_BASES = frozenset({"os", "environ", "config", "cfg", "conf", "args", "kwargs", "params", "opts", "options",
                            "settings", "hparams", "gen_kwargs", "generation_kwargs", "sent_kwargs", "stats",
                            "metrics", "logs", "state", "state_dict", "sys", "globals", "locals", "results"})
SPLIT_METHODS = frozenset({"split", "rsplit", "partition", "rpartition", "index", "rindex", "find", "rfind"})
MAX_FILES = 50
MAX_FILE_BYTES = 512 * 1024
MAX_MARKERS = 12


@dataclass
class DataShape:
    """Columns (name -> "text" | "list" | {"field": "text", ...}) and split markers a script's code reads."""

    columns: dict[str, object] = field(default_factory=dict)
    markers: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"columns": self.columns, "markers": self.markers}


def _is_column_key(key: str) -> bool:
    return (bool(key) and len(key) <= 64 and key not in NOT_COLUMNS and not key.isupper()
            and key.replace("_", "").replace("-", "").replace(" ", "").isalnum())


def _base_name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _string_key(node: ast.Subscript) -> str | None:
    key = node.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    return None


class _Reader(ast.NodeVisitor):
    def __init__(self, shape: DataShape) -> None:
        self.shape = shape

    def visit_Subscript(self, node: ast.Subscript) -> None:
        inner = node.value
        key = _string_key(node)
        # batch["meta"]["source"] / row["turns"][0]: visit the outer subscript with its column
        if isinstance(inner, ast.Subscript) and _string_key(inner) is not None:
            column = _string_key(inner)
            base = _base_name(inner.value)
            if base and base not in NOT_DATA_BASES and _is_column_key(column or ""):
                current = self.shape.columns.get(column)
                if key is not None and _is_column_key(key):
                    fields = current if isinstance(current, dict) else {}
                    fields[key] = "text"
                    self.shape.columns[column] = fields
                elif isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                    if not isinstance(current, dict):
                        self.shape.columns[column] = "list"
                self.visit(inner.value)
                return
        base = _base_name(inner)
        if key is not None and base and base not in NOT_DATA_BASES and _is_column_key(key):
            self.shape.columns.setdefault(key, "text")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in SPLIT_METHODS and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                self._marker(arg.value)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        if (len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
                and not isinstance(node.comparators[0], (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Constant))):
            self._marker(node.left.value)
        self.generic_visit(node)

    def _marker(self, text: str) -> None:
        if text.strip() and len(text) <= 200 and text not in self.shape.markers \
                and len(self.shape.markers) < MAX_MARKERS:
            self.shape.markers.append(text)


def analyse_source(source: str, shape: DataShape | None = None) -> DataShape:
    """Add what `source` (one Python module) reads to `shape`; a file that does not parse adds nothing."""
    shape = shape if shape is not None else DataShape()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return shape
    _Reader(shape).visit(tree)
    return shape


def _local_imports(tree: ast.AST, folder: str, here: str) -> list[str]:
    """Files of the script's own modules that `tree` imports (`import utils`, `from data.prep import x`,
    `from . import x`), resolved under the script's folder (`folder`) or the importing file's (`here`)."""
    names: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(folder, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here if node.level else folder
            module = node.module or ""
            names.append((base, module))
            names += [(base, f"{module}.{a.name}" if module else a.name) for a in node.names]
    found = []
    for base, dotted in names:
        if not dotted:
            continue
        stem = os.path.join(base, *dotted.split("."))
        for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
            if os.path.isfile(candidate):
                found.append(os.path.abspath(candidate))
    return found


def analyse_script(script: str) -> DataShape:
    """What the script, and the modules of its own that it imports (followed transitively), read from their data."""
    shape = DataShape()
    folder = os.path.dirname(os.path.abspath(script))
    queue, seen = [os.path.abspath(script)], set()
    while queue and len(seen) < MAX_FILES:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        try:
            if os.path.getsize(path) > MAX_FILE_BYTES:
                continue
            with open(path, encoding="utf-8", errors="replace") as fh:
                source = fh.read()
            tree = ast.parse(source)
        except (OSError, SyntaxError, ValueError, RecursionError):
            continue
        _Reader(shape).visit(tree)
        queue += [f for f in _local_imports(tree, folder, os.path.dirname(path)) if f not in seen]
    return shape
