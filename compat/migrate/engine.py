"""One text in, one text out: the rules applied to a single Python module, notebook or manifest.

Per Python text: prefilter (the trigger substrings of the selected rules), one libcst parse, then the rules in order
on the same tree, each one only when its triggers are in the text as the rules before it left it. Consecutive rules
share one `MetadataWrapper` while the tree is unchanged, so metadata (qualified names, scopes, positions) is resolved
once per file; a rule that changed the tree gets the new tree re-wrapped without a deep copy. The result is verified
before anyone may write it: it must parse again with libcst, and with `ast` too whenever the original did. If not,
the rules are replayed one at a time to name the rule that broke the code, and the text is handed back untouched.

Files and bytes are `compat.migrate.runner`'s business; this module only sees text.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
import sys
import tomllib
from collections.abc import Sequence

import libcst as cst

from . import depth

from migrations import select
from migrations.base import (
    Finding,
    ManifestMigration,
    Migration,
    Options,
    PythonMigration,
    RuleContext,
    fit_marker_lines,
    fit_markers,
)

from .imports import code_imports
from .notebook import MAGIC_MARK, migrate_notebook, unmask
from .result import ErrorKind, Kind, MigrateError, Result
from .textio import has_lone_cr

__all__ = ["ErrorKind", "Kind", "MigrateError", "Result", "file_kind", "migrate_source", "triggered_python_rules"]


def file_kind(path: str | None, rules: Sequence[Migration]) -> Kind:
    """How a path is treated: notebooks by suffix, manifests by a manifest rule's filename patterns; Python else."""
    if path is None:
        return "python"
    name = os.path.basename(path)
    if name.endswith(".ipynb"):
        return "notebook"
    if any(isinstance(r, ManifestMigration) and r.matches(path) for r in rules):
        return "python+manifest" if name.endswith(".py") else "manifest"
    return "python"


def migrate_source(
    text: str,
    *,
    options: Options | None = None,
    rules: Sequence[Migration] | None = None,
    path: str | None = None,
    verify_idempotent: bool = False,
) -> Result:
    """Apply the migrations to one text and return the new text, findings and errors.

    `rules` defaults to every rule the target TRL in `options` needs. `path` decides the kind of text (a `.ipynb`
    is a notebook's JSON, a base name a manifest rule matches is a manifest, anything else Python) and is handed to
    the rules. With `verify_idempotent`, the output is migrated again and must not change (tests use it).
    """
    options = options or Options()
    rules = select(options) if rules is None else tuple(rules)
    kind = file_kind(path, rules)
    if kind == "notebook":
        result = migrate_notebook(text, options=options, rules=rules, path=path, migrate_python=_migrate_python)
    else:
        result = Result(text, kind=kind)
        if kind in ("python", "python+manifest"):
            result = _migrate_python(text, options, rules, path)
            result.kind = kind
        if kind in ("manifest", "python+manifest") and result.ok:
            _migrate_manifest(result, options, rules, path or "")
    result.changed = result.ok and result.text != text
    if not result.ok:
        result.text = text
    if result.changed and kind in ("python", "python+manifest", "notebook"):
        result.needs = needs_of(text, result.text, notebook=kind == "notebook")
    if verify_idempotent and result.changed:
        again = migrate_source(result.text, options=options, rules=rules, path=path)
        if again.changed:
            result.errors.append(
                MigrateError("not-idempotent", "a second run changed the output again", ",".join(again.rules_applied))
            )
            result.text, result.changed = text, False
    return result


# -- Python ---------------------------------------------------------------------------------------------------------


def triggered_python_rules(text: str, rules: Sequence[Migration]) -> list[PythonMigration]:
    return [r for r in rules if isinstance(r, PythonMigration) and r.triggered_by(text)]


def needs_of(before: str, after: str, *, notebook: bool = False) -> list[str]:
    """The requirements the migrated code gained: `trl-compat` when it imports `compat` or `reference_impl`
    (trl-compat's packages) and the original did not, and what the `compat.trl` names it newly uses need beyond
    trl-compat (`compat._exports.NEEDS`: `diffusers>=...` for the diffusion trainers)."""
    from compat._exports import NEEDS

    def imports(text: str) -> tuple[set[str], set[str]]:
        if not notebook:
            return code_imports(text)
        import json

        try:
            cells = [c for c in json.loads(text).get("cells", []) if c.get("cell_type") == "code"]
        except (ValueError, AttributeError):
            return set(), set()
        roots: set[str] = set()
        names: set[str] = set()
        for cell in cells:
            source = cell.get("source", "")
            cell_roots, cell_names = code_imports("".join(source) if isinstance(source, list) else str(source))
            roots |= cell_roots
            names |= cell_names
        return roots, names

    (roots_before, names_before), (roots_after, names_after) = imports(before), imports(after)
    needs = ["trl-compat"] if {"compat", "reference_impl"} & (roots_after - roots_before) else []
    needs += sorted({req for name in names_after - names_before for req in NEEDS.get(name, ())})
    return needs


def _migrate_python(text: str, options: Options, rules: Sequence[Migration], path: str | None) -> Result:
    result = Result(text)
    triggered = triggered_python_rules(text, rules)
    if not triggered:
        return result
    if has_lone_cr(text):
        result.errors.append(MigrateError("parse", "old-Mac line endings (CR without LF) are not supported"))
        return result
    result.parsed = True
    deep, python_ok = _python_verdict(text)
    if deep is not None:
        result.errors.append(MigrateError("too-deep", deep))
        return result
    # libcst drops spaces and form feeds before the first statement on line 1: keep them aside, put them back
    lead = _LEAD.match(text).group()  # type: ignore[union-attr]
    try:
        module = cst.parse_module(text[len(lead):])
    except cst.ParserSyntaxError as exc:
        if python_ok:  # valid Python that libcst's parser cannot read (e.g. 4,000 implicitly joined strings)
            result.errors.append(MigrateError("too-deep", f"{_TOO_DEEP}: libcst's parser refuses this valid code "
                                              f"({exc.message.splitlines()[0][:120]})"))
        else:
            exported = _exported_notebook(text, options, rules, path)
            if exported is not None:
                return exported
            result.errors.append(MigrateError("parse", exc.message, line=exc.raw_line, column=exc.raw_column + 1))
        return result
    except RecursionError:
        result.errors.append(MigrateError("too-deep", f"{_TOO_DEEP} (libcst's parser ran out of depth)"))
        return result
    except Exception as exc:  # libcst raises a few other errors on odd input
        result.errors.append(MigrateError("parse", f"{type(exc).__name__}: {exc}"))
        return result
    # every Python rule in order, each gated on the text as the rules before it left it (`run_rules`)
    python_rules = [r for r in rules if isinstance(r, PythonMigration)]
    code, applied, findings, error = run_rules(module, text[len(lead):], python_rules, options, path)
    code = lead + fit_markers(code)
    if error is not None:  # the file is left as is: the other rules' findings would describe edits never made
        result.errors.append(error)
        return result
    result.findings = findings
    if code != text:
        problem = _verify(text, code, python_ok)
        if problem is not None:
            culprit = _find_culprit(text, python_rules, options, path)
            result.errors.append(
                MigrateError("rule-output", f"the rewritten code does not parse ({problem}); file left as is", culprit)
            )
            return result
    result.text = code
    result.rules_applied = applied
    return result


def _exported_notebook(text: str, options: Options, rules: Sequence[Migration], path: str | None) -> Result | None:
    """A `.py` a notebook was exported to (Colab's "Download .py" keeps `!pip install ...` and `%cd` lines): with
    those lines masked as in a notebook cell, is it Python? Then it is migrated like one, each IPython line put back
    verbatim; None when it is not such a file (or a rule lost one of the lines: then the parse error stands). Only
    one-line IPython lines are masked, so every finding keeps its line number."""
    out: list[str] = []
    taken: list[str] = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if _SHELL_LINE.match(body) and not body.endswith("\\"):
            indent = body[: len(body) - len(body.lstrip(" \t"))]
            out.append(f"{indent}{MAGIC_MARK}({len(taken)}){line[len(body):]}")
            taken.append(line)
        else:
            out.append(line)
    if not taken:
        return None
    masked = "".join(out)
    try:
        tree = ast.parse(masked)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    placeholders = [n for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                    and isinstance(n.value.func, ast.Name) and n.value.func.id == MAGIC_MARK]
    if len(placeholders) != len(taken):  # a `!`/`%` line inside a string: not an IPython line, not such a file
        return None
    result = _migrate_python(masked, options, rules, path)
    try:
        result.text = unmask(result.text, taken)
    except ValueError:
        return None
    return result


_LEAD = re.compile(r"[ \t\f]*")
_SHELL_LINE = re.compile(r"^[ \t]*[!%]")  # `!pip install ...`, `%cd dir`, `%%capture`: IPython, not Python
_TOO_DEEP = "too deep for the parser: the code is nested too deeply (or an expression is too long) for libcst; file " \
    "left as is (not a bug in any rule)"
# `ast` runs at CPython's default recursion limit: what it refuses as too deep, the interpreter cannot compile either
_AST_DEPTH_LIMIT = 1000
_AST_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation", "too complex", "too many nested")


def _python_verdict(text: str) -> tuple[str | None, bool]:
    """(why the code is too deep to parse, or None; whether `ast` parsed it), a cheap check before libcst (whose
    native parser can crash the process on code nested thousands of levels deep)."""
    try:
        with depth.lowered(_AST_DEPTH_LIMIT):
            ast.parse(text)
    except (RecursionError, MemoryError):
        return f"{_TOO_DEEP} (Python's own parser refuses it at its default recursion limit too)", False
    except SyntaxError as exc:
        if any(m in str(exc.msg) for m in _AST_TOO_DEEP):
            return f"{_TOO_DEEP} (Python: {exc.msg})", False
        return None, False
    except ValueError:  # e.g. a NUL byte
        return None, False
    return None, True


def _newer_syntax(code: str, exc: Exception) -> MigrateError | None:
    """A rule's `SyntaxError` on code this Python's `ast` cannot read though libcst could (an f-string reusing its
    quotes, Python 3.12+): the file is written for a newer Python than the one running trl-compat, not a bug in the
    rule. None for any other crash."""
    if not isinstance(exc, SyntaxError):
        return None
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        return MigrateError("parse", f"Python {version}, which runs trl-compat, cannot read this file ({exc.msg}, "
                                     f"line {exc.lineno}): it is written for a newer Python; run trl-compat under "
                                     "the Python the project uses. File left as is", line=exc.lineno or 0)
    return None


def run_rules(
    module: cst.Module,
    code: str,
    rules: Sequence[PythonMigration],
    options: Options,
    path: str | None,
) -> tuple[str, list[str], list[Finding], MigrateError | None]:
    """Every rule in order on one tree; returns (code, ids of rules that changed it, findings, crash or None).

    A rule runs only when its prefilter (`Migration.triggered_by`) passes on the *current* code: a trigger an earlier
    rule removed skips the rule, one an earlier rule wrote brings it in (selection by the original text alone missed
    those). The same wrapper (and its resolved metadata) serves consecutive rules until one changes the tree; only
    then is the new tree wrapped again, without a copy.
    """
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    applied: list[str] = []
    findings: list[Finding] = []
    for rule in rules:
        if not rule.triggered_by(code):
            continue
        ctx = RuleContext(options=options, path=path, code=code)
        try:
            new = rule.transform(wrapper, ctx)
        except RecursionError:
            return code, applied, findings, MigrateError("too-deep", f"{_TOO_DEEP} (its tree walk ran out of depth)")
        except Exception as exc:
            error = _newer_syntax(code, exc) or \
                MigrateError("rule-crash", f"{type(exc).__name__}: {exc}; file left as is (a bug in the rule)", rule.id)
            return code, applied, findings, error
        findings.extend(ctx.findings)
        if new is wrapper.module:
            continue
        if not isinstance(new, cst.Module):
            error = MigrateError("rule-crash", f"transform returned {type(new).__name__}, not a libcst Module", rule.id)
            return code, applied, findings, error
        try:
            new_code = new.code
        except RecursionError:
            return code, applied, findings, MigrateError("too-deep", f"{_TOO_DEEP} (writing it back ran out of depth)")
        if new_code == code:  # rebuilt but identical: keep the old wrapper, its metadata is still valid
            continue
        code = new_code
        applied.append(rule.id)
        wrapper = cst.MetadataWrapper(new, unsafe_skip_copy=True)
    return code, applied, findings, None


def _verify(original: str, code: str, original_parses: bool | None = None) -> str | None:
    """None when `code` is fit to be written; else why not. `original_parses`: whether `ast` parsed `original`,
    when the caller already knows (None: find out)."""
    try:
        cst.parse_module(code)
    except Exception as exc:
        return f"libcst: {getattr(exc, 'message', exc)}"
    if original_parses is None:
        try:
            ast.parse(original)
            original_parses = True
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            original_parses = False
    if not original_parses:
        return None  # the interpreter cannot judge this file (newer syntax, notebook await): libcst's word stands
    try:
        ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        return f"python: {exc}"
    except (RecursionError, MemoryError):
        return None  # as deep as the original, which parsed: libcst's word stands
    return None


def _find_culprit(text: str, rules: Sequence[PythonMigration], options: Options, path: str | None) -> str | None:
    """Replay the rules one by one on a fresh tree; the first whose output fails verification is at fault."""
    code = text
    last = None
    for rule in rules:
        new_code, applied, _, error = run_rules(cst.parse_module(code), code, [rule], options, path)
        if error is not None or not applied:
            continue
        last = rule.id
        if _verify(code, new_code) is not None:
            return rule.id
        code = new_code
    return last


# -- manifests ------------------------------------------------------------------------------------------------------


def _migrate_manifest(result: Result, options: Options, rules: Sequence[Migration], path: str) -> None:
    name = os.path.basename(path)
    text = result.text
    for rule in rules:
        if not isinstance(rule, ManifestMigration) or not rule.matches(path):
            continue
        if rule.triggers and not rule.triggered_by(text):
            continue
        ctx = RuleContext(options=options, path=path)
        try:
            new = rule.rewrite(text, name, ctx)
        except Exception as exc:
            result.errors.append(
                MigrateError("rule-crash", f"{type(exc).__name__}: {exc}; file left as is (a bug in the rule)", rule.id)
            )
            return
        result.findings.extend(ctx.findings)
        if new != text:
            problem = _verify_manifest(name, text, new)
            if problem is not None:
                result.errors.append(MigrateError("rule-output", f"{problem}; file left as is", rule.id))
                return
            text = new
            result.rules_applied.append(rule.id)
    result.text = fit_marker_lines(text)


def _verify_manifest(name: str, before: str, after: str) -> str | None:
    """A manifest that could be read before must still be readable after (TOML, INI, YAML, Python)."""
    checks = []
    if name.endswith(".toml"):
        checks.append(("TOML", tomllib.loads))
    elif name.endswith(".cfg"):
        checks.append(("INI", lambda t: configparser.ConfigParser(interpolation=None).read_string(t)))
    elif name.endswith((".yml", ".yaml")):
        try:
            import yaml
        except ImportError:  # pragma: no cover - pyyaml is a test dependency
            yaml = None
        if yaml is not None:
            checks.append(("YAML", yaml.safe_load))
    elif name.endswith(".py"):
        checks.append(("Python", cst.parse_module))
    for label, load in checks:
        try:
            load(before)
        except Exception:
            continue
        try:
            load(after)
        except Exception as exc:
            return f"the rewritten file is not valid {label} ({exc})"
    return None
