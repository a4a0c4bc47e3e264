"""One text in, one text out: the rules applied to a single Python module, notebook or manifest.

Per Python text: prefilter (the trigger substrings of the selected rules), one libcst parse, then every triggered rule
in order on the same tree. Consecutive rules share one `MetadataWrapper` while the tree is unchanged, so metadata
(qualified names, scopes, positions) is resolved once per file; a rule that changed the tree gets the new tree
re-wrapped without a deep copy. The result is verified before anyone may write it: it must parse again with libcst,
and with `ast` too whenever the original did. If not, the rules are replayed one at a time to name the rule that broke
the code, and the text is handed back untouched.

Files and bytes are `compat.migrate.runner`'s business; this module only sees text.
"""

from __future__ import annotations

import ast
import configparser
import os
import tomllib
from collections.abc import Sequence

import libcst as cst

from migrations import select
from migrations.base import Finding, ManifestMigration, Migration, Options, PythonMigration, RuleContext

from .notebook import migrate_notebook
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


def _import_roots(code: str) -> set[str]:
    """Top-level packages a module imports (absolute imports, anywhere in it); empty when it does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def needs_of(before: str, after: str, *, notebook: bool = False) -> list[str]:
    """["trl-compat"] when the migrated code imports `compat` (trl-compat's package) and the original did not."""

    def roots(text: str) -> set[str]:
        if not notebook:
            return _import_roots(text)
        import json

        try:
            cells = [c for c in json.loads(text).get("cells", []) if c.get("cell_type") == "code"]
        except (ValueError, AttributeError):
            return set()
        found: set[str] = set()
        for cell in cells:
            source = cell.get("source", "")
            found |= _import_roots("".join(source) if isinstance(source, list) else str(source))
        return found

    return ["trl-compat"] if "compat" in roots(after) - roots(before) else []


def _migrate_python(text: str, options: Options, rules: Sequence[Migration], path: str | None) -> Result:
    result = Result(text)
    triggered = triggered_python_rules(text, rules)
    if not triggered:
        return result
    if has_lone_cr(text):
        result.errors.append(MigrateError("parse", "old-Mac line endings (CR without LF) are not supported"))
        return result
    result.parsed = True
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        result.errors.append(MigrateError("parse", exc.message, line=exc.raw_line, column=exc.raw_column + 1))
        return result
    except Exception as exc:  # libcst raises a few other errors on odd input (e.g. recursion depth)
        result.errors.append(MigrateError("parse", f"{type(exc).__name__}: {exc}"))
        return result
    code, applied, findings, error = run_rules(module, text, triggered, options, path)
    if error is not None:  # the file is left as is: the other rules' findings would describe edits never made
        result.errors.append(error)
        return result
    result.findings = findings
    if code != text:
        problem = _verify(text, code)
        if problem is not None:
            culprit = _find_culprit(text, triggered, options, path)
            result.errors.append(
                MigrateError("rule-output", f"the rewritten code does not parse ({problem}); file left as is", culprit)
            )
            return result
    result.text = code
    result.rules_applied = applied
    return result


def run_rules(
    module: cst.Module,
    code: str,
    rules: Sequence[PythonMigration],
    options: Options,
    path: str | None,
) -> tuple[str, list[str], list[Finding], MigrateError | None]:
    """Every rule in order on one tree; returns (code, ids of rules that changed it, findings, crash or None).

    The same wrapper (and its resolved metadata) serves consecutive rules until one changes the tree; only then is
    the new tree wrapped again, without a copy.
    """
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    applied: list[str] = []
    findings: list[Finding] = []
    for rule in rules:
        ctx = RuleContext(options=options, path=path)
        try:
            new = rule.transform(wrapper, ctx)
        except Exception as exc:
            error = MigrateError("rule-crash", f"{type(exc).__name__}: {exc}; file left as is (a bug in the rule)", rule.id)
            return code, applied, findings, error
        findings.extend(ctx.findings)
        if new is wrapper.module:
            continue
        if not isinstance(new, cst.Module):
            error = MigrateError("rule-crash", f"transform returned {type(new).__name__}, not a libcst Module", rule.id)
            return code, applied, findings, error
        new_code = new.code
        if new_code == code:  # rebuilt but identical: keep the old wrapper, its metadata is still valid
            continue
        code = new_code
        applied.append(rule.id)
        wrapper = cst.MetadataWrapper(new, unsafe_skip_copy=True)
    return code, applied, findings, None


def _verify(original: str, code: str) -> str | None:
    """None when `code` is fit to be written; else why not."""
    try:
        cst.parse_module(code)
    except Exception as exc:
        return f"libcst: {getattr(exc, 'message', exc)}"
    try:
        ast.parse(original)
    except (SyntaxError, ValueError):
        return None  # the interpreter cannot judge this file (newer syntax, notebook await): libcst's word stands
    try:
        ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        return f"python: {exc}"
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
    result.text = text


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
