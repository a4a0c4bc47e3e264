"""Write the mechanical tables of the transformers rules from the atlas (run by developers after regenerating it).

    python -m migrations.atlas.stack_tables          # rewrites the three _*.py tables below, prints a summary

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
"""

from __future__ import annotations

import os
import re
import sys

from migrations.atlas import Atlas

FLOOR = "4.56.2"
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
    """Classes and functions of the modules read in full that the newest release no longer has at that path but
    exports elsewhere: old path -> the module to import from. Only where the floor (4.56.2) already has the new path
    and it resolves there to the same definition as the old one (so the new spelling works on both); the top level
    `transformers` is preferred."""
    from migrations.atlas.generate import prefix_filter

    full = prefix_filter(t.coverage()["full"])
    fours = [r for r in t.releases() if r.startswith("4.")]
    last4, newest = fours[-1], t.releases()[-1]
    out = {}
    for module in t.modules(last4):
        if not full(module) or not t.knows_names(last4, module) or any(p.startswith("_") for p in module.split(".")):
            continue
        for name in t.exports(last4, module):
            qual = f"{module}.{name}"
            if name.startswith("_") or t.has(newest, qual):
                continue
            old = t.resolve(FLOOR, qual)
            if old is None or old.kind not in ("class", "def", "unknown"):  # unknown: defined in a module read for existence only
                continue

            def same(q: str) -> bool:
                r = t.resolve(FLOOR, q)
                return t.has(newest, q) and r is not None and r.qualname == old.qualname  # noqa: B023

            top = f"transformers.{name}"
            found = [top] if same(top) else [q for q in t.moved_to(newest, name) if same(q)]
            if found:
                out[qual] = found[0].rsplit(".", 1)[0]
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
    ]
    for rel, doc, name, table in tables:
        _write(os.path.join(ROOT, rel), doc, name, table)
        print(f"{rel}: {len(table)} entries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
