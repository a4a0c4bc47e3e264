"""Which `trl` a file's names are: notes for the report where it may not be the installed TRL.

`runner.vendored_trl` already leaves alone a file whose folder holds its own `trl`. This module looks at two more
ways Python may resolve a TRL-looking name to something else, from the file's own code (`ast`, no import):

* **`sys.path` insertions** (`sys.path.insert(...)`, `.append(...)`, `.extend([...])`). Where the inserted folder can
  be worked out statically (string literals, `__file__`, `os.path.dirname/abspath/realpath/join`, `pathlib.Path`
  `.parent` / `/`, `str()`, `.resolve()`; relative paths against the file's folder) and holds its own `trl`
  (`trl/__init__.py` or `trl.py`), the file's `trl` is that copy: `vendored_by_sys_path` says so and the runner leaves
  the file alone, as for a vendored copy beside it. Otherwise the file is migrated and an info finding says that the
  file changes `sys.path`, what was inserted, and that its `trl` names were taken to be the installed TRL's.
* **Local modules named like TRL's**: an import from a module of the tree (`from ppo_trainer import PPOTrainer`, a
  relative `from .trainer import PPOConfig`) whose name, or an imported name, is a TRL module or class name. The rules
  resolve names through imports, so those names are not TRL's and were left alone; the info finding says which and
  why, for a reader who expected them migrated.

Everything here is an `info` finding (rule `trl-resolution`) without a rewrite; a file that does not parse with `ast`
gets none.
"""

from __future__ import annotations

import ast
import functools
import os
import re

from migrations.base import Finding
from migrations.kinds import grammar

RULE = "trl-resolution"


@functools.lru_cache(maxsize=1)
def _trl_names() -> tuple[frozenset[str], frozenset[str]]:
    """(class-like names TRL exported at its top level in any release of the atlas, last components of TRL module
    paths that are specific to TRL: `ppo_trainer`, `modeling_value_head`, ...)."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    classes: set[str] = set()
    modules: set[str] = set()
    for version in atlas.releases():
        classes.update(n for n in atlas.exports(version, "trl") if n[:1].isupper())
        modules.update(m.rsplit(".", 1)[-1] for m in atlas.modules(version) if m.count(".") >= 2)
    generic = {"utils", "core", "base", "config", "configs", "models", "trainer", "cli", "main", "env", "data",
               "callbacks", "import_utils", "extras", "scripts", "commands", "rewards", "types", "__init__"}
    return frozenset(classes), frozenset(m for m in modules if "_" in m and m not in generic)


def _trl_imports(tree: ast.Module) -> list[str]:
    """The `trl` names the file imports (`trl.PPOTrainer`, `trl.core`), in order."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and (
                node.module == "trl" or node.module.startswith("trl.")):
            names += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names if a.name == "trl" or a.name.startswith("trl.")]
    return list(dict.fromkeys(names))


class _Unknown(Exception):
    """A path expression this module cannot work out statically."""


def _path_value(node: ast.expr, file: str) -> str:
    """The folder a `sys.path` argument names, or `_Unknown`."""
    here = os.path.dirname(os.path.abspath(file))
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return os.path.normpath(os.path.join(here, node.value))
    if isinstance(node, ast.Name) and node.id == "__file__":
        return os.path.abspath(file)
    if isinstance(node, ast.Call):
        func = ast.unparse(node.func)
        args = node.args
        if func in ("os.path.dirname", "path.dirname", "dirname") and len(args) == 1:
            return os.path.dirname(_path_value(args[0], file))
        if func in ("os.path.abspath", "os.path.realpath", "os.path.normpath", "str", "Path", "pathlib.Path",
                    "os.fspath") and len(args) == 1:
            return os.path.normpath(_path_value(args[0], file))
        if func in ("os.path.join", "path.join", "join") and args:
            parts = [_path_value(args[0], file)] + [_part(a) for a in args[1:]]
            return os.path.normpath(os.path.join(*parts))
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute") and not args:
            return _path_value(node.func.value, file)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        return os.path.dirname(_path_value(node.value, file))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return os.path.normpath(os.path.join(_path_value(node.left, file), _part(node.right)))
    raise _Unknown


def _part(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise _Unknown


def _sys_path_inserts(tree: ast.Module) -> list[tuple[ast.Call, list[ast.expr]]]:
    """Each `sys.path.insert/append/extend` call with the expressions it puts on the path."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and ast.unparse(node.func.value) == "sys.path"):
            continue
        meth, args = node.func.attr, node.args
        if meth == "insert" and len(args) == 2:
            found.append((node, [args[1]]))
        elif meth == "append" and len(args) == 1:
            found.append((node, [args[0]]))
        elif meth == "extend" and len(args) == 1:
            found.append((node, list(args[0].elts) if isinstance(args[0], (ast.List, ast.Tuple)) else [args[0]]))
    return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))


def _own_trl(folder: str) -> str | None:
    for candidate in (os.path.join(folder, "trl", "__init__.py"), os.path.join(folder, "trl.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _parse(text: str) -> ast.Module | None:
    try:
        return grammar.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def vendored_by_sys_path(path: str, text: str) -> Finding | None:
    """An info finding when the file puts on `sys.path` a folder that holds its own `trl` (the runner then leaves the
    file alone); None otherwise."""
    if "sys.path" not in text or "trl" not in text:
        return None
    tree = _parse(text)
    if tree is None:
        return None
    names = _trl_imports(tree)
    if not names:
        return None
    for call, exprs in _sys_path_inserts(tree):
        for expr in exprs:
            try:
                folder = _path_value(expr, path)
            except _Unknown:
                continue
            own = _own_trl(folder)
            if own is not None:
                return Finding(RULE, f"left alone: line {call.lineno} puts {_rel(folder, path)} on sys.path, "
                               f"which holds its own `trl` ({_rel(own, path)}); this file's {_listed(names)} "
                               "are that copy's, not the installed TRL's", call.lineno, call.col_offset + 1, "",
                               "info", False)
    return None


def _defines(module_file: str, name: str) -> bool:
    """Whether the copy's module (its file) binds `name` at the start of a line: a def, a class, an assignment or
    an import naming it, or a submodule file of that name beside a package's `__init__.py`."""
    if os.path.basename(module_file) == "__init__.py" and _module_file(os.path.dirname(module_file), name):
        return True
    try:
        with open(module_file, encoding="utf-8", errors="replace") as fh:
            source = fh.read()
    except OSError:
        return False
    word = re.escape(name)
    return re.search(rf"^[ \t]*(?:(?:async[ \t]+)?def[ \t]+{word}\b|class[ \t]+{word}\b|{word}[ \t]*[:=]"
                     rf"|(?:from[ \t]+\S+[ \t]+)?import\b[^\n]*\b{word}\b)", source, re.MULTILINE) is not None


def _module_file(folder: str, dotted: str) -> str | None:
    """The file of module `dotted` (`trl.gpt2`) under `folder`: `trl/gpt2.py` or `trl/gpt2/__init__.py`."""
    base = os.path.join(folder, *dotted.split("."))
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def vendored_above(path: str, text: str) -> Finding | None:
    """An info finding when a folder above the file's, up to the repository's root (the first folder with `.git`),
    holds the repository's own `trl` package and every TRL name the file imports is found in that copy (the module
    file exists and binds the name): run from that folder, or with it on `PYTHONPATH`, the file imports the copy
    (alkaid72/RLHF-on-Sentence-Generating's `test/inference_ppo_gpt.py` imports `trl.gpt2.GPT2HeadWithValueModel`
    from the TRL 0.1 copy at the root). The runner then leaves the file alone. A file that imports a name the copy
    lacks (`respond_to_batch` where the copy's `trl/core.py` has no such function) can only mean the installed TRL:
    None, and it is migrated. The file's own folder is `runner.vendored_trl`'s."""
    if "trl" not in text:
        return None
    tree = _parse(text)
    if tree is None:
        return None
    wanted: list[tuple[str, str | None]] = []  # (module, name imported from it, or None for `import trl.x`)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and (
                node.module == "trl" or node.module.startswith("trl.")):
            wanted += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            wanted += [(a.name, None) for a in node.names if a.name.startswith("trl.")]
    if not wanted or any(name == "*" for _, name in wanted):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    above: list[str] = []  # the folders above the file's, up to the repository's root
    while not os.path.exists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None  # no repository root above: nothing bounds the search
        folder = parent
        above.append(folder)
    for folder in above:
        copy = os.path.join(folder, "trl", "__init__.py")
        if not os.path.isfile(copy):
            continue
        files = [_module_file(folder, module) for module, _ in wanted]
        if all(f is not None and (name is None or _defines(f, name)) for f, (_, name) in zip(files, wanted)):
            names = _listed(list(dict.fromkeys(f"{m}.{n}" if n else m for m, n in wanted)))
            return Finding(RULE, f"left alone: {_rel(os.path.dirname(copy), path)} above this file is the repository's "
                           f"own `trl`, and it defines this file's {names}: run from {_rel(folder, path)} (or with it "
                           "on PYTHONPATH) the file imports that copy, not the installed TRL", 1, 1, "", "info", False)
    return None


#: the licence header of HuggingFace's own source files (transformers, TRL, peft, ...)
_HF_HEADER = re.compile(r"^#[^\n]*Copyright[^\n]*Hugging ?Face", re.IGNORECASE | re.MULTILINE)


@functools.lru_cache(maxsize=1)
def _transformers_classes() -> frozenset[str]:
    """Every class-like name transformers exported at its top level in a release of the atlas."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("transformers")
    names: set[str] = set()
    for version in atlas.releases():
        names.update(n for n in atlas.exports(version, "transformers") if n[:1].isupper())
    return frozenset(names)


def library_copy(path: str, text: str) -> Finding | None:
    """An info finding when the file is a copy of transformers' own code: it opens with HuggingFace's licence header
    and defines, at its top level, a class transformers exports (`class PreTrainedModel(...)`: Yancy456/TRL keeps
    `modeling_utils.py` as `models/pretrained.py`, `modeling_gpt2.py` as `models/gpt2.py`). Its code is that
    release's internals, which the rules (written for code that calls transformers) must not rewrite or mark: the
    runner leaves it alone. A project's copy of a TRL trainer (`class PPOTrainer(BaseTrainer)` under the same header)
    defines no transformers name, and a module importing TRL is no copy of transformers: both stay the project's
    code."""
    if not _HF_HEADER.search(text[:3000]):
        return None
    tree = _parse(text)
    if tree is None or _trl_imports(tree):
        return None  # transformers' code never imports TRL: a project module (DylanJoo/retrisound's `class
        # Trainer(PPOv2Trainer)` under the same header) is the project's
    exported = _transformers_classes()
    defined = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name in exported]
    if not defined:
        return None
    shown = ", ".join(f"`{n}`" for n in defined[:4]) + (" ..." if len(defined) > 4 else "")
    return Finding(RULE, f"left alone: a copy of transformers' own code (HuggingFace's licence header; it defines "
                   f"{shown}, which transformers exports): its internals are that release's, not code that calls "
                   "transformers", 1, 1, "", "info", False)


def notes(path: str, text: str) -> list[Finding]:
    """Info findings for a file that is migrated: `sys.path` changes it makes, and TRL-named local imports."""
    if "import" not in text:
        return []
    tree = _parse(text)
    if tree is None:
        return []
    found: list[Finding] = []
    names = _trl_imports(tree)
    if names and "sys.path" in text:
        for call, exprs in _sys_path_inserts(tree):
            shown = ", ".join(ast.unparse(e) for e in exprs)
            try:
                folders = [_path_value(e, path) for e in exprs]
                why = (f"{', '.join(_rel(f, path) for f in folders)} holds no `trl` of its own")
            except _Unknown:
                why = "the inserted path cannot be worked out statically"
            found.append(Finding(
                RULE, f"line {call.lineno} changes sys.path ({shown}): {why}, so this file's {_listed(names)} are "
                "treated as the installed TRL's (migrated); if that path holds a copy of TRL, revert this file",
                call.lineno, call.col_offset + 1, "", "info", False))
    classes, modules = _trl_names()
    folder = os.path.dirname(os.path.abspath(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = node.module or ""
        if not node.level and (module == "trl" or module.startswith("trl.") or not module):
            continue
        local = _local_module(folder, module, node.level)
        if local is None:
            continue
        last = module.rsplit(".", 1)[-1]
        like = [a.name for a in node.names if a.name in classes]
        if not like and last not in modules:
            continue
        what = ", ".join(f"`{n}`" for n in like) if like else f"the names of `{'.' * node.level}{module}`"
        found.append(Finding(
            RULE, f"left alone: {what} come from the local module `{'.' * node.level}{module}` "
            f"({_rel(local, path)}), named like TRL's but not TRL", node.lineno, node.col_offset + 1, "",
            "info", False))
    return found


def _local_module(folder: str, module: str, level: int) -> str | None:
    """The file of `module` as Python finds it for a file in `folder` run as a script (or, relative, in its
    package); None when the tree has no such module."""
    base = folder
    for _ in range(max(level - 1, 0)):
        base = os.path.dirname(base)
    rel = module.replace(".", os.sep) if module else ""
    for candidate in (os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")):
        if rel and os.path.isfile(candidate):
            return candidate
    return None


def _rel(target: str, path: str) -> str:
    """`target` relative to the folder of the file at `path` (how the file's own code names it)."""
    return os.path.relpath(target, os.path.dirname(os.path.abspath(path)))


def _listed(names: list[str]) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"trl name(s) {shown}"
