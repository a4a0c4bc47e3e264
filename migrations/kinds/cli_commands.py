"""Command lines that run an `HfArgumentParser` / `TrlParser` script: find them, judge their flags, rename or mark.

Shell launchers (`python sft.py --torch_dtype bfloat16`, `accelerate launch ... ppo.py ...`, `\\`-continued) and the
fenced code blocks of a README call a script whose parser rejects a flag its dataclasses lost ("Some specified
arguments are not used by the HfArgumentParser"). This module is what the rules of such flags share:

* `rewrite_commands`: walks the command blocks of a text (every line of a shell file; only fenced blocks of a
  Markdown file), hands each command's script word and flags to the rule's `judge`, renames the flags the verdict
  renames and puts one marker above a command whose verdict has one (never twice);
* `script_path`: the script a command names, next to the launcher or above it up to the repository root;
* `parser_classes` / `parser_fields`: the dataclass tuple of the first parser a script builds (its own classes,
  TRL's as qualified names) and the fields (flags) it accepts on a target release, from the atlas.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from migrations.base import (
    Finding,
    ManifestMigration,
    Options,
    RuleContext,
    same_marker,
    todo_text,
)
from migrations.kinds import grammar

__all__ = ["CommandFlagsMigration", "TrainingParser", "Verdict", "parser_classes", "parser_fields",
           "rewrite_commands", "script_path", "training_parser"]

_FLAG = re.compile(r"^--([A-Za-z][\w-]*)(=.*)?$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Verdict:
    """What to do with one command: `renames` flag (as written, without `--`) -> new name, each with its note in
    `notes`; `marker`: the message of the marker to put above the command (and `manual`, its finding's text)."""

    renames: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    marker: str | None = None
    manual: str | None = None


Judge = Callable[[str, list[str]], "Verdict | None"]


class CommandFlagsMigration(ManifestMigration):
    """A rule over the command lines of shell launchers (and Markdown fences, with `*.md` in `patterns`): each
    command's script word and flags go to `judge`, its verdict is applied by `rewrite_commands`."""

    def applies(self, options: Options) -> bool:
        return options.uses_trl and super().applies(options)

    def rewrite(self, text: str, filename: str, ctx: RuleContext) -> str:
        if ctx.path is None:
            return text
        here = Path(ctx.path).resolve().parent
        return rewrite_commands(text, lambda word, flags: self.judge(word, flags, here, ctx), ctx, self.id,
                                self.anchor, markdown=filename.endswith(".md"))

    def judge(self, word: str, flags: list[str], here: Path, ctx: RuleContext) -> Verdict | None:
        """What to do with a command running `word` with these flags (names without `--`); None: nothing."""
        raise NotImplementedError


def rewrite_commands(text: str, judge: Judge, ctx: RuleContext, rule_id: str, anchor: str,
                     markdown: bool = False) -> str:
    """`text` with every command's verdict applied (`judge(script word, flag names)`; None: left alone)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    fenced = not markdown
    i = 0
    while i < len(lines):
        if markdown and _FENCE.match(lines[i]):
            fenced = not fenced
            out.append(lines[i])
            i += 1
            continue
        start = i
        while i < len(lines) - 1 and lines[i].rstrip("\r\n").endswith("\\"):
            i += 1
        block = lines[start:i + 1]
        i += 1
        out.extend(_command(block, start, judge, ctx, rule_id, anchor, out) if fenced else block)
    return "".join(out)


def _command(block: list[str], start: int, judge: Judge, ctx: RuleContext, rule_id: str, anchor: str,
             out: list[str]) -> list[str]:
    joined = " ".join(b.rstrip("\r\n").rstrip("\\") for b in block)
    if joined.lstrip().startswith("#"):
        return block
    try:
        words = shlex.split(joined, comments=True)
    except ValueError:
        return block
    at = next((k for k, w in enumerate(words) if w.endswith(".py")), None)
    if at is None:
        return block
    flags = [m.group(1) for w in words[at + 1:] if (m := _FLAG.match(w))]
    verdict = judge(words[at], flags) if flags else None
    if verdict is None:
        return block
    new_block = list(block)
    for old, new in verdict.renames.items():
        pattern = re.compile(rf"(?<![\w-])--{re.escape(old)}(?=[\s=\\]|$)")
        new_block = [pattern.sub(f"--{new}", b) for b in new_block]
        ctx.report(Finding(rule_id, verdict.notes.get(old, f"--{old} -> --{new}"), start + 1, 1, anchor, "info",
                           True))
    if verdict.marker:
        marker = todo_text(verdict.marker, anchor)
        indent = re.match(r"[ \t]*", block[0]).group(0)  # type: ignore[union-attr]
        newline = "\r\n" if block[0].endswith("\r\n") else "\n"
        if not (out and same_marker(out[-1], marker)):
            new_block.insert(0, indent + marker + newline)
        ctx.report(Finding(rule_id, verdict.manual or verdict.marker, start + 1, 1, anchor, "manual", False))
    return new_block


def script_path(word: str, here: Path) -> Path | None:
    """The file a command's script word names: relative to the launcher's folder or one above it, up to the
    repository root; None for a word with a variable or no such file."""
    if "$" in word:
        return None
    for base in (here, *here.parents):
        candidate = (base / word).resolve()
        if candidate.is_file():
            return candidate
        if (base / ".git").exists():
            break
    return None


def parser_classes(tree: ast.Module) -> list[tuple[str, str]] | None:
    """The dataclass tuple of the first `HfArgumentParser(...)` / `TrlParser(...)` a script builds, as
    ("local", class name) for its own classes and ("trl", qualified import path) for TRL's; None when a class is
    neither (a variable, an attribute, another package's class) or no parser is built."""
    local = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                node.module == "trl" or node.module.startswith("trl.")):
            for a in node.names:
                imported[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in
                ("HfArgumentParser", "TrlParser") and node.args):
            continue
        first = node.args[0]
        out: list[tuple[str, str]] = []
        for c in first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]:
            if isinstance(c, ast.Name) and c.id in local:
                out.append(("local", c.id))
            elif isinstance(c, ast.Name) and c.id in imported:
                out.append(("trl", imported[c.id]))
            else:
                return None
        return out
    return None


def parser_fields(tree: ast.Module, release: str) -> set[str] | None:
    """The fields the script's parser accepts on TRL `release` (its own dataclasses' from the text, TRL's from the
    atlas); None when they cannot be known (see `parser_classes`; a local class with bases inherits fields)."""
    from migrations.atlas import Atlas

    classes = parser_classes(tree)
    if classes is None:
        return None
    atlas = Atlas.load("trl")
    if release not in atlas.releases():
        return None
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    fields: set[str] = set()
    for kind, name in classes:
        if kind == "local":
            if defs[name].bases:
                return None  # a local subclass (of a TRL config, say) inherits fields: not followed, not judged
            fields |= {s.target.id for s in defs[name].body if isinstance(s, ast.AnnAssign)
                       and isinstance(s.target, ast.Name)}
            continue
        resolved = atlas.resolve(release, name)
        if resolved is None:
            return None
        fields |= set(atlas.config_fields(release, resolved.qualname))
    return fields


@dataclass(frozen=True)
class TrainingParser:
    """What a script's first `HfArgumentParser` / `TrlParser` holds, for the flags of `TrainingArguments`: whether
    one of its classes derives from `TrainingArguments` (transformers' own, a TRL config, a project subclass of
    either), and the fields the project's own classes on the way declare (a flag of theirs is never the library's)."""

    training: bool
    own_fields: frozenset[str]


def _parser_call(tree: ast.Module) -> ast.Call | None:
    return next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args
                 and getattr(n.func, "id", getattr(n.func, "attr", None)) in ("HfArgumentParser", "TrlParser")), None)


def training_parser(tree: ast.Module, path: Path | None = None) -> TrainingParser | None:
    """The `TrainingParser` of the script `tree` (the file at `path`), or of the project module whose function it
    runs when it builds no parser itself (LLaVA's `train_mem.py`: `from llava.train.train import train` then
    `train()`; one step, module-level imports only); None when a class of the parser is neither transformers' nor
    TRL's nor the project's own in that module (its fields cannot be known), or no parser is found."""
    call = _parser_call(tree)
    if call is None and path is not None:
        from migrations.kinds.trainer_subclasses import project_module_file

        called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom) and any((a.asname or a.name) in called for a in stmt.names):
                file = project_module_file(str(path), stmt.module, stmt.level)
                try:
                    inner = grammar.parse(file.read_text(encoding="utf-8")) if file is not None else None
                except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
                    inner = None
                if inner is not None and _parser_call(inner) is not None:
                    return training_parser(inner)
        return None
    if call is None:
        return None
    from migrations.kinds.trainer_subclasses import ast_dotted, import_bindings
    from migrations.kinds.training_args import TRAINING_ARGUMENTS

    names = import_bindings(tree, everywhere=True)
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}

    def qualified(expr: ast.expr) -> str | None:
        dotted = ast_dotted(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        return f"{names[head]}.{rest}".rstrip(".") if head in names else None

    def library_training(q: str | None) -> bool:
        return q is not None and (q in TRAINING_ARGUMENTS or (q.startswith("trl.") and q.endswith("Config")))

    own: set[str] = set()
    training = False
    first = call.args[0]
    for expr in first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]:
        seen: set[str] = set()
        while True:
            if isinstance(expr, ast.Name) and expr.id in classes and expr.id not in seen:
                seen.add(expr.id)
                cls = classes[expr.id]
                own |= {s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
                bases = [b for b in cls.bases if not (isinstance(b, ast.Name) and b.id == "object")]
                if not bases:
                    break
                if len(bases) != 1:
                    return None
                expr = bases[0]
                continue
            q = qualified(expr)
            if library_training(q):
                training = True
                break
            return None
    return TrainingParser(training, frozenset(own))
