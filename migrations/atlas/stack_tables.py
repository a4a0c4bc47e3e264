"""Write the mechanical tables of the transformers rules from the atlas (run by developers after regenerating it).

    python -m migrations.atlas.stack_tables          # rewrites the _*.py tables below, prints a summary

Each table is a committed Python module in the release folder of the rule that uses it (a rule imports only its own
folder, `migrations.base` and `migrations.kinds`), so loading a rule never loads the atlas:

* ``migrations/transformers/v4_46/_deepspeed_moves.py``: every public name of the module ``transformers.deepspeed``
  (gone by 4.46) -> the module that exports it on *both* the floor (4.56.2) and the newest release: the shortest
  such path (``transformers.integrations``).
* ``migrations/transformers/v4_48/_attention_classes.py``: ``<Family>FlashAttention2`` / ``<Family>SdpaAttention``
  / ``<Family>FlashAttention`` classes of the modeling modules the atlas reads in full, with the first release that
  lacks them (attention is chosen by ``attn_implementation=`` since 4.48's refactor).
* ``migrations/transformers/v5_0/_moved_names.py``: classes and functions of the modules read in full that moved
  in 5.x (``transformers.tokenization_utils.PreTrainedTokenizer`` -> ``transformers``): old path -> the module that
  exports the same definition on the floor and on the newest release.
* ``migrations/transformers/v5_0/_tokenizer_classes.py``: every ``*TokenizerFast`` that some 4.x release exports
  (top level, family package, ``tokenization_*_fast`` module) and the newest release lacks, with the first release
  that lacks it.
* ``migrations/transformers/v5_0/_feature_extractors.py``: every ``<Model>FeatureExtractor`` path the floor exports
  and the newest release lacks, of the classes that the floor's wheel (``WHEELS``, read with ``ast``: class bodies are
  not in the atlas) defines as a deprecated subclass of their ``<Model>ImageProcessor`` adding only the warning ->
  that successor, exported at the top level by the floor and the newest release.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import zipfile

from migrations.atlas import Atlas

FLOOR = "4.56.2"
#: Where the floor's wheel is read from (`migrations.atlas.generate` downloads into it).
WHEELS = os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ATTENTION = re.compile(r"^\w+(FlashAttention2|SdpaAttention|FlashAttention)$")


def _first_gone(atlas: Atlas, qual: str, after: str) -> str | None:
    """The first release after `after` (inclusive) that lacks `qual`, when none after it has it again."""
    releases = atlas.releases()
    start = releases.index(after) if after in releases else 0
    gone = None
    for r in releases[start:]:
        if atlas.has(r, qual):
            gone = None
        elif gone is None:
            gone = r
    return gone


def deepspeed_moves(t: Atlas) -> dict[str, str]:
    last = [r for r in t.releases() if t.has_module(r, "transformers.deepspeed")][-1]
    newest = t.releases()[-1]
    out = {}
    for name in t.exports(last, "transformers.deepspeed"):
        if name.startswith("_"):
            continue
        both = [q for q in t.moved_to(FLOOR, name) if t.has(newest, q)]
        if both:
            out[name] = both[0].rsplit(".", 1)[0]
    return out


def attention_classes(t: Atlas) -> dict[str, str]:
    out = {}
    for module in sorted({m for r in t.releases() for m in t.modules(r) if re.match(r"transformers\.models\.\w+\.modeling_\w+$", m)}):
        names = {n for r in t.releases() if t.knows_names(r, module) for n in t.exports(r, module) if _ATTENTION.match(n)}
        for n in sorted(names):
            gone = _first_gone(t, f"{module}.{n}", t.releases()[0])
            if gone is not None:
                out[f"{module}.{n}"] = gone
    return out


def tokenizer_classes(t: Atlas) -> dict[str, str]:
    newest = t.releases()[-1]
    fours = [r for r in t.releases() if r.startswith("4.")]
    out = {}
    names = {n for r in fours for n in t.exports(r, "transformers") if n.endswith("TokenizerFast")}
    for n in sorted(names):
        if t.has(newest, f"transformers.{n}"):
            continue
        gone = _first_gone(t, f"transformers.{n}", fours[0])
        if gone is None:
            continue
        out[f"transformers.{n}"] = gone
        r = next(r for r in reversed(fours) if t.has(r, f"transformers.{n}"))
        _kind, target = t.exports(r, "transformers")[n]
        if target:  # the family paths it was importable from
            module = target.rsplit(".", 1)[0]
            for q in (f"{module}.{n}", f"{'.'.join(module.split('.')[:3])}.{n}"):
                if q.startswith("transformers.models.") and q not in out and not t.has(newest, q):
                    out[q] = _first_gone(t, q, fours[0]) or gone
    return out


def moved_names(t: Atlas) -> dict[str, str]:
    """Classes, functions and module-level values of the modules read in full that the newest release no longer has
    at a path some 4.x release exported them at, but exports elsewhere: old path -> the module to import from. Only
    where the floor (4.56.2) already has the new path and it resolves there to the same definition the old path
    resolved to in the last release that had it (so the new spelling works on every release the manifest allows, and
    names what the old one named), and both modules are ones whose names the atlas knows; the top level
    `transformers` is preferred. This covers moves of 5.x (`tokenization_utils.PreTrainedTokenizer`) and re-exports
    a module dropped before the floor (`trainer.ShardSampler`, an import `trainer.py` stopped making)."""
    from migrations.atlas.generate import prefix_filter

    full = prefix_filter(t.coverage()["full"])
    fours = [r for r in t.releases() if r.startswith("4.")]
    newest = t.releases()[-1]
    last_seen: dict[str, str] = {}  # old path -> the last 4.x release that exported it
    for release in fours:
        for module in t.modules(release):
            if not full(module) or not t.knows_names(release, module) or module == "transformers.deepspeed" \
                    or any(p.startswith("_") for p in module.split(".")):  # transformers.deepspeed: its own table
                continue
            for name in t.exports(release, module):
                if not name.startswith("_"):
                    last_seen[f"{module}.{name}"] = release
    out = {}
    for qual, release in sorted(last_seen.items()):
        if t.has(newest, qual):
            continue
        name = qual.rsplit(".", 1)[1]
        old = t.resolve(release, qual)
        if old is None or old.kind not in ("class", "def", "unknown"):  # unknown: defined in a module read for existence only
            continue

        def same(q: str) -> bool:
            module = q.rsplit(".", 1)[0]
            if not (t.knows_names(FLOOR, module) and t.knows_names(newest, module)):
                return False  # a module the atlas reads for existence only: it cannot tell what it exports
            r = t.resolve(FLOOR, q)
            return t.has(newest, q) and r is not None and r.qualname == old.qualname  # noqa: B023

        top = f"transformers.{name}"
        found = [top] if same(top) else [q for q in t.moved_to(newest, name) if same(q)]
        if found:
            out[qual] = found[0].rsplit(".", 1)[0]
    return out


def _deprecated_alias_of(cls: ast.ClassDef) -> str | None:
    """The base of a class whose whole body is `__init__(self, *args, **kwargs)`: one warning, then
    `super().__init__(*args, **kwargs)` (the shape of 4.x's `<Model>FeatureExtractor` vision aliases); else None."""
    if len(cls.bases) != 1 or not isinstance(cls.bases[0], ast.Name) or cls.keywords or cls.decorator_list[1:]:
        return None
    body = [s for s in cls.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.FunctionDef) or body[0].name != "__init__":
        return None
    init = body[0]
    a = init.args
    if [p.arg for p in a.args] != ["self"] or a.posonlyargs or a.kwonlyargs or not a.vararg or not a.kwarg:
        return None
    if len(init.body) != 2:
        return None
    warn, call = init.body
    warns = (isinstance(warn, ast.Expr) and isinstance(warn.value, ast.Call)
             and ast.unparse(warn.value.func) in ("warnings.warn", "logger.warning", "logger.warning_once"))
    forwards = ast.unparse(call) == f"super().__init__(*{a.vararg.arg}, **{a.kwarg.arg})"
    return cls.bases[0].id if warns and forwards else None


def feature_extractor_aliases(t: Atlas, wheel: str) -> dict[str, str]:
    """`<Model>FeatureExtractor` classes that are, in the floor's wheel (`wheel`, read with `ast`), a deprecated
    subclass of `<Model>ImageProcessor` adding nothing but the warning, at every path the floor exports them and the
    newest release lacks -> the successor's top-level name, when the top level exports it on the floor and the
    newest release."""
    newest = t.releases()[-1]
    out: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as archive:
        for member in sorted(archive.namelist()):
            if not re.match(r"^transformers/models/\w+/feature_extraction_\w+\.py$", member):
                continue
            tree = ast.parse(archive.read(member))
            family = member.split("/")[2]
            module = member[:-3].replace("/", ".")
            for cls in tree.body:
                if not isinstance(cls, ast.ClassDef) or not cls.name.endswith("FeatureExtractor"):
                    continue
                base = _deprecated_alias_of(cls)
                if base is None or not all(t.has(r, f"transformers.{base}") for r in (FLOOR, newest)):
                    continue
                for qual in (f"transformers.{cls.name}", f"transformers.models.{family}.{cls.name}",
                             f"{module}.{cls.name}"):
                    if t.has(FLOOR, qual) and not t.has(newest, qual):
                        out[qual] = base
    return out


def _write(path: str, doc: str, name: str, table: dict[str, str]) -> None:
    lines = [f'"""{doc} Generated by `python -m migrations.atlas.stack_tables` from the atlas; do not edit."""', "",
             f"{name}: dict[str, str] = {{"]
    lines += [f"    {k!r}: {v!r}," for k, v in sorted(table.items())]
    lines += ["}", ""]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))


def main() -> int:
    t = Atlas.load("transformers")
    tables = [
        ("transformers/v4_46/_deepspeed_moves.py", ("transformers.deepspeed name -> the module exporting it on "
         "4.56.2 and the newest release."), "MOVES", deepspeed_moves(t)),
        ("transformers/v4_48/_attention_classes.py", ("Per-implementation attention classes -> the first release "
         "(in the atlas) without them."), "GONE", attention_classes(t)),
        ("transformers/v5_0/_moved_names.py", ("Names the newest release no longer has at the old path -> the "
         "module that exports the same definition on 4.56.2 and the newest release."), "MOVES", moved_names(t)),
        ("transformers/v5_0/_tokenizer_classes.py", ("*TokenizerFast classes the newest release lacks -> the first "
         "release (in the atlas) without them."), "GONE", tokenizer_classes(t)),
        ("transformers/v5_0/_feature_extractors.py", ("Vision *FeatureExtractor paths the newest release lacks -> "
         f"the *ImageProcessor the {FLOOR} wheel subclasses them from (adding only a deprecation warning)."),
         "ALIASES", feature_extractor_aliases(t, os.path.join(WHEELS, f"transformers-{FLOOR}-py3-none-any.whl"))),
    ]
    for rel, doc, name, table in tables:
        _write(os.path.join(ROOT, rel), doc, name, table)
        print(f"{rel}: {len(table)} entries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
