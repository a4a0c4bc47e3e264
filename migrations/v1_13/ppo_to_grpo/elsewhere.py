"""ppo-to-grpo: the fields a migrated PPO config lost that the project's other files still read.

A PPO config often leaves the file it is built in: handed to the project's own dataset builder or trainer
subclass (`DeterministicPromptDatasetBuilder(ppo_config)`, whose `__init__` reads `config.model_name`), or imported
by the other modules of a small project (`from config import config` in model.py, then
`AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)`). GRPOConfig has no `model_name`,
`batch_size`, `log_with`, ...: those reads raise AttributeError after the migration, in files the rule never sees
(they import no TRL). The rule cannot rewrite them from here, so the config statement is marked with where they are.

Only two kinds of file are read (with `ast`, nothing is imported): the project module files of the callables the
config variable is passed to, and the files beside this one that import the variable from this module by name.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from migrations.kinds import grammar
from migrations.kinds.trainer_subclasses import project_module_file

__all__ = ["reads_elsewhere"]

#: Files larger than this are not read (generated code, data).
MAX_BYTES = 1_000_000


def _parse(path: Path) -> ast.Module | None:
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        return grammar.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
        return None


def _handed_to(tree: ast.Module, path: str, var: str) -> list[Path]:
    """Project module files of the callables (imported by name at module level) that `var` is passed to."""
    imported: dict[str, Path] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            file = project_module_file(path, stmt.module, stmt.level)
            if file is not None:
                imported.update({a.asname or a.name: file for a in stmt.names})
    out: dict[Path, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in imported:
            values = [*node.args, *(k.value for k in node.keywords)]
            if any(isinstance(v, ast.Name) and v.id == var for v in values):
                out[imported[node.func.id]] = None
    return list(out)


def _importers(path: str, var: str) -> list[Path]:
    """The files beside `path` that import `var` from it (`from <stem> import var` / `from .<stem> import var`)."""
    here = Path(path)
    out = []
    for sibling in sorted(here.parent.glob("*.py")):
        if sibling.resolve() == here.resolve():
            continue
        tree = _parse(sibling)
        if tree is None:
            continue
        if any(isinstance(s, ast.ImportFrom) and s.module == here.stem and s.level <= 1
               and any(a.name == var for a in s.names) for s in tree.body):
            out.append(sibling)
    return out


def reads_elsewhere(code: str, path: str | None, var: str | None, fields: set[str]) -> list[str]:
    """`file .field` for each of `fields` read in the project files that receive or import the config variable
    `var` of the module at `path` (whose text is `code`), sorted. No line numbers: those files may be migrated
    before or after this one."""
    if not path or not var or not fields:
        return []
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return []
    hits: set[str] = set()
    for file in dict.fromkeys([*_handed_to(tree, path, var), *_importers(path, var)]):
        other = _parse(file)
        if other is None:
            continue
        rel = Path(os.path.relpath(file, Path(path).parent)).as_posix()
        hits.update(f"{rel} .{n.attr}" for n in ast.walk(other)
                    if isinstance(n, ast.Attribute) and n.attr in fields and isinstance(n.ctx, ast.Load))
    return sorted(hits)
