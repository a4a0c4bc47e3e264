"""ppo-to-grpo: what a PPO config field held when the script did not set it, read from the atlas, not typed.

A script reads `config.model_name` (or `config.batch_size`, ...) that it never passed to `PPOConfig(...)`: it got the
PPOConfig default of the TRL it ran on. The defaults changed between releases (classic `model_name` was None up to
0.7.10 and "gpt2" from 0.7.11; `batch_size` 256 then 128; `learning_rate` 1e-5 then 1.41e-5), so the value is known
only when every release the script could have run on agrees. Those releases are the ones

* the repository's own `trl` pin admits (the nearest manifest, as committed: `config_defaults.pinned_releases`), and
* where the PPO config of the script's API era exists with every field the script passes or reads, and
* where every `from trl... import NAME` of the file resolves (the file would not import on the others).

`field_default(...)` answers a value when they agree, else `Unknown` with the reason (shown in the marker).
Everything comes from `migrations.atlas` (the release wheels); nothing here imports TRL.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from packaging.version import Version

from migrations.atlas import Atlas

CLASSIC_LAST = Version("0.11.4")  # the last release with the classic step-loop PPOConfig


@dataclass(frozen=True)
class Unknown:
    """No single default: why (for the marker)."""

    why: str


@functools.lru_cache(maxsize=1)
def _atlas() -> Atlas:
    return Atlas.load("trl")


@functools.cache
def ppo_fields(release: str, era: str, v2: bool) -> dict[str, str] | None:
    """`field -> default source` of the PPO config of `era` in `release` (None where that config does not exist).

    classic: `trl.PPOConfig` up to 0.11.4 (0.4.0/0.4.1 declare it with an `__init__`, read from its signature);
    trainer: `trl.PPOv2Config` when the script names it, else the Trainer-style `trl.PPOConfig` (0.12-0.28);
    experimental: `trl.experimental.ppo.PPOConfig` (0.26-1.12; its learning_rate default fell from 5e-5 to 3e-6 in
    0.29, so the two paths are never mixed)."""
    atlas = _atlas()
    classic_release = Version(release) <= CLASSIC_LAST
    if era == "classic" and not classic_release:
        return None
    if era == "classic":
        names = ("trl.PPOConfig",)
    elif v2:
        names = ("trl.PPOv2Config", "trl.trainer.ppov2_config.PPOv2Config")  # 0.9.3-0.10: not exported from `trl`
    elif era == "experimental":
        names = ("trl.experimental.ppo.PPOConfig",)
    else:
        names = () if classic_release else ("trl.PPOConfig",)
    for name in names:
        if not atlas.has(release, name):
            continue
        resolved = atlas.resolve(release, name)
        if resolved is None:
            continue
        fields = atlas.config_fields(release, resolved.qualname)
        if fields:
            return {k: f.default for k, f in fields.items() if f.default is not None or not f.factory}
        sig = atlas.signature(release, resolved.qualname)
        if sig is not None:
            return {p.name: p.default for p in sig.params if p.name != "self"}
    return None


def admitted_releases(era: str, v2: bool, pinned: tuple[str, ...] | None, fields: set[str],
                      imports: set[str]) -> list[str]:
    """The releases the script could have run on (see the module docstring). A pin no release of which has the
    file's imports and fields (a requirements file shared by scripts of several eras, or a stale pin) says nothing
    about this file: then every release that has them counts."""
    atlas = _atlas()

    def fits(r: str) -> bool:
        have = ppo_fields(r, era, v2)
        return have is not None and fields <= set(have) and all(atlas.has(r, q) for q in imports)

    out = [r for r in (pinned if pinned is not None else atlas.releases()) if fits(r)]
    if not out and pinned is not None:
        out = [r for r in atlas.releases() if fits(r)]
    return out


_NO_VALUE = object()


def _value(source: str | None) -> object:
    if source is None:
        return _NO_VALUE
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError):
        return _NO_VALUE


def field_default(field: str, releases: list[str], era: str, v2: bool) -> object:
    """The default of `field` in every release of `releases` (a literal value), else `Unknown`."""
    if not releases:
        return Unknown("no TRL release matches the pin, the config's fields and the file's imports")
    sources = {r: (ppo_fields(r, era, v2) or {}).get(field) for r in releases}
    values = {r: _value(src) for r, src in sources.items()}
    # `1` in 0.7.2 and `1.0` in 0.11 are one default: where any release spells it as a float, ints count as floats
    floats = any(isinstance(v, float) for v in values.values())
    seen: dict[str, list[str]] = {}
    for r, value in values.items():
        if floats and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        seen.setdefault(repr(value) if value is not _NO_VALUE else f"<{sources[r]}>", []).append(r)
    if len(seen) == 1:
        value = values[releases[0]]
        if value is _NO_VALUE:
            return Unknown(f"its default is not a literal ({next(iter(seen))})")
        return value
    spans = "; ".join(f"{v} in {rs[0]}..{rs[-1]}" if len(rs) > 1 else f"{v} in {rs[0]}" for v, rs in seen.items())
    return Unknown(f"its default differs across the TRL releases this file could run on ({spans}): pin trl")


def trl_imports(module) -> set[str]:  # type: ignore[no-untyped-def]
    """`trl.x.NAME` for every `from trl[.x] import NAME` of a module (libcst), at any depth, except inside a `try`
    statement: there an import may be one of several alternatives (`try: from trl.experimental.ppo import ...
    except ImportError: from trl import ...`), so it says nothing about the releases the file runs on."""
    import libcst as cst

    from migrations.kinds.cst import dotted

    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Try(self, node: cst.Try) -> bool:
            return False

        def visit_TryStar(self, node: cst.TryStar) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            mod = dotted(node.module) if node.module is not None and not node.relative else None
            if mod and (mod == "trl" or mod.startswith("trl.")) and not isinstance(node.names, cst.ImportStar):
                found.update(f"{mod}.{dotted(a.name)}" for a in node.names)

    module.visit(_V())
    return found


@functools.lru_cache(maxsize=256)
def pinned_releases(folder: str) -> tuple[str, ...] | None:
    """The atlas' TRL releases (0.4.0 on) the nearest manifest at or above `folder` admits, read as committed;
    None when no manifest pins TRL (`migrations.kinds.pins`)."""
    from migrations.kinds.pins import pinned

    return pinned(folder, _atlas().releases())
