"""The API atlas: what every release of TRL (and a few transformers releases) exports, read from the wheels.

``Atlas.load("trl")`` reads the committed, range-encoded data that ``python -m migrations.atlas.generate`` wrote from
the release wheels (see that module and :mod:`migrations.atlas.extract` for what is recorded). It imports neither
torch nor trl, and the parsed data is cached per process (about 0.1 s for the first load).

Queries take a release (``"1.16.0"``, ``"1.16"`` or a :class:`~packaging.version.Version`) and qualified names
(``"trl.PPOTrainer"``, ``"trl.trainer.utils.SIMPLE_CHAT_TEMPLATE"``)::

    atlas = Atlas.load("trl")
    atlas.has("0.28.0", "trl.PPOTrainer")              # True
    atlas.resolve("0.28.0", "trl.PPOTrainer").qualname   # 'trl.trainer.ppo_trainer.PPOTrainer'
    atlas.signature("1.16", "trl.SFTTrainer").names()    # ['model', 'args', 'data_collator', ...]
    atlas.config_fields("1.16", "trl.SFTConfig")         # own, TRL-inherited and transformers' TrainingArguments fields
    atlas.history("trl.PPOTrainer")                      # [Event('added', '0.4.0'), Event('moved', '0.29.0', to=...)]

What "exists" means: a module exists when the wheel holds it; a name exists in a module when the module binds it at
top level in any branch (``if TYPE_CHECKING:``, optional-dependency blocks, lazy ``_import_structure`` entries), so
``has`` answers "can this import succeed on some install of that release". ``resolve`` follows re-exports and lazy
entries to the definition and returns None where the chain breaks.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

__all__ = ["Atlas", "AtlasError", "Event", "Field", "Param", "Resolved", "Signature", "UnknownReleaseError"]

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


class AtlasError(LookupError):
    """The atlas has no data for what was asked (no data file for the package)."""


class UnknownReleaseError(AtlasError):
    """A release the atlas does not hold."""


@dataclass(frozen=True)
class Resolved:
    qualname: str  # where the name is defined ("trl.trainer.ppo_trainer.PPOTrainer"), or the external name
    kind: str  # module | class | def | var | listed (in __all__, not read) | unknown (opaque module) | external | attribute


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # po | pk | va | ko | vk (positional-only, positional-or-keyword, *args, keyword-only, **kwargs)
    default: str | None  # source text; None = required (or *args/**kwargs)
    annotation: str | None

    @property
    def required(self) -> bool:
        return self.default is None and self.kind in ("po", "pk", "ko")


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    origin: str  # the class or function whose definition this is
    kwargs_keys: tuple[str, ...] = ()  # keys the body reads out of **kwargs
    kwargs_forward: tuple[str, ...] = ()  # calls **kwargs is passed on to
    renamed: tuple[tuple[str, str], ...] = ()  # (old, new) accepted through @deprecate_kwarg
    external_base: str | None = None  # the first base outside the package, when the chain reached one

    def names(self) -> list[str]:
        return [p.name for p in self.params if p.kind not in ("va", "vk")]

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name and p.kind not in ("va", "vk")), None)

    @property
    def var_keyword(self) -> Param | None:
        return next((p for p in self.params if p.kind == "vk"), None)

    @property
    def var_positional(self) -> Param | None:
        return next((p for p in self.params if p.kind == "va"), None)

    def max_positional(self) -> int | None:
        """How many positional arguments a call may pass (None: unlimited, there is a *args)."""
        if self.var_positional is not None:
            return None
        return sum(1 for p in self.params if p.kind in ("po", "pk"))


@dataclass(frozen=True)
class Field:
    name: str
    annotation: str
    default: str | None  # source text (the factory's text when factory is True); None = required
    factory: bool
    init: bool
    origin: str  # the class that declares it ("trl.trainer.sft_config.SFTConfig", "transformers....TrainingArguments")


@dataclass(frozen=True)
class Event:
    kind: str  # added | removed | moved | renamed | changed
    release: str  # the first release where the change is visible
    to: tuple[str, ...] = ()  # moved: where the same name is exported in that release; renamed: the new name
    detail: str = ""

    def __str__(self) -> str:
        where = f" -> {', '.join(self.to)}" if self.to else ""
        return f"{self.kind} at {self.release}{where}{f' ({self.detail})' if self.detail else ''}"


#: Bases that add neither constructor parameters nor fields.
_TRIVIAL_BASES = frozenset({"object", "ABC", "abc.ABC", "Generic", "typing.Generic", "Protocol", "typing.Protocol"})


def _at(runs: list[list[int]] | None, i: int) -> int | None:
    """The value a range list holds at release index i (1 for value-less ranges), else None."""
    for run in runs or ():
        if run[0] <= i <= run[1]:
            return run[2] if len(run) > 2 else 1
        if run[0] > i:
            return None
    return None


class Atlas:
    """One package's API over its releases. Use :meth:`load`; instances are immutable and shared."""

    def __init__(self, data: dict) -> None:
        self.package: str = data["package"]
        self._data = data
        self._releases: list[str] = data["releases"]
        self._versions = [Version(v) for v in self._releases]
        self._modules: dict[str, list[list[int]]] = data["modules"]
        self._names: dict[str, list[list[int]]] = data["names"]
        self._values: list[list] = data["values"]
        self._functions: dict[str, list[list[int]]] = data["functions"]
        self._classes: dict[str, list[list[int]]] = data["classes"]
        self._class_table: list[list] = data["class_table"]
        self._signatures: list[list] = data["signatures"]
        self._by_module: dict[str, list[str]] = {}
        self._by_name: dict[str, list[str]] = {}
        for key in self._names:
            module, _, name = key.partition(":")
            self._by_module.setdefault(module, []).append(name)
            self._by_name.setdefault(name, []).append(module)

    # ------------------------------------------------------------------ loading and releases
    @classmethod
    def load(cls, package: str = "trl") -> Atlas:
        """The atlas of `package` from ``migrations/atlas/data/PACKAGE.json.gz`` (cached)."""
        return _load(package)

    @staticmethod
    def available() -> list[str]:
        """Packages with committed atlas data."""
        return sorted(n[: -len(".json.gz")] for n in os.listdir(DATA_DIR) if n.endswith(".json.gz"))

    def releases(self) -> list[str]:
        return list(self._releases)

    def release(self, version: str | Version) -> str:
        """The atlas's spelling of a release (`"1.16"` -> `"1.16.0"`); UnknownReleaseError if it holds none."""
        return self._releases[self._index(version)]

    def _index(self, version: str | Version) -> int:
        try:
            v = version if isinstance(version, Version) else Version(str(version))
        except InvalidVersion:
            raise UnknownReleaseError(f"{version!r} is not a version (e.g. 1.16 or 0.8.6)") from None
        for i, known in enumerate(self._versions):
            if known == v:
                return i
        raise UnknownReleaseError(
            f"{self.package} {version} is not in the atlas (it holds {self._releases[0]} .. {self._releases[-1]}, "
            f"{len(self._releases)} releases; pre-releases are not included): pick one of those, or regenerate the "
            "atlas with `python -m migrations.atlas.generate`"
        )

    def source(self, version: str | Version) -> tuple[str, str, str]:
        """(kind "wheel"/"sdist", archive file name, build date) the release was read from."""
        return tuple(self._data["sources"][self.release(version)])  # type: ignore[return-value]

    def requires(self, version: str | Version) -> list[str]:
        """The release's Requires-Dist lines."""
        value = _at(self._data["requires"], self._index(version))
        return list(self._data["requires_table"][value]) if value is not None else []

    # ------------------------------------------------------------------ modules and names
    def modules(self, version: str | Version) -> list[str]:
        i = self._index(version)
        return sorted(m for m, runs in self._modules.items() if _at(runs, i))

    def is_module(self, qualname: str) -> bool:
        """Whether `qualname` is a module in any release."""
        return qualname in self._modules

    def has_module(self, version: str | Version, module: str) -> bool:
        return _at(self._modules.get(module), self._index(version)) is not None

    def exports(self, version: str | Version, module: str, *,
                private: bool = False) -> dict[str, tuple[str, str | None]]:
        """name -> (kind, target) of every public name `module` binds in that release ({} if no such module);
        `private` adds the module's private classes and functions."""
        i = self._index(version)
        out = {}
        for name in self._by_module.get(module, ()):
            if not private and name.startswith("_") and not name.endswith("__"):
                continue
            value = _at(self._names[f"{module}:{name}"], i)
            if value is not None:
                kind, target = self._values[value]
                out[name] = (kind, target)
        return dict(sorted(out.items()))

    def _binding(self, i: int, module: str, name: str) -> tuple[str, str | None] | None:
        value = _at(self._names.get(f"{module}:{name}"), i)
        return None if value is None else tuple(self._values[value])  # type: ignore[return-value]

    def _split(self, i: int, qualname: str) -> tuple[str, list[str]] | None:
        """(longest existing module prefix, the remaining attribute parts) of a qualified name."""
        parts = qualname.split(".")
        for k in range(len(parts), 0, -1):
            module = ".".join(parts[:k])
            if _at(self._modules.get(module), i):
                return module, parts[k:]
        return None

    def has(self, version: str | Version, qualname: str) -> bool:
        """Whether `import qualname` / `from MODULE import NAME` can succeed on that release (see module docs)."""
        i = self._index(version)
        split = self._split(i, qualname)
        if split is None:
            return False
        module, rest = split
        if not rest:
            return True
        if self._opaque(i, module):
            return True  # the module exists; what it binds was not read (see knows_names)
        if len(rest) == 1:
            return self._binding(i, module, rest[0]) is not None or self._fast_fallback(i, module, rest[0])
        return self.resolve(version, qualname) is not None

    def _fast_fallback(self, i: int, module: str, name: str) -> bool:
        """transformers 5's lazy modules (`transformers`, `transformers.models.<family>`) answer a `*TokenizerFast` /
        `*ImageProcessorFast` name they no longer bind with the class of the name without `Fast` (read in the 5.0.0
        and 5.24.0 wheels, `utils/import_utils.py` `_LazyModule.__getattr__`: "V5: If trying to import a
        *TokenizerFast symbol, transparently fall back to the non-Fast symbol"): `from transformers import
        GPT2TokenizerFast` works and gives `GPT2Tokenizer` there."""
        if self.package != "transformers" or self._versions[i] < Version("5.0.0") \
                or not name.endswith(("TokenizerFast", "ImageProcessorFast")) \
                or not (module == "transformers" or re.fullmatch(r"transformers\.models\.\w+", module)):
            return False
        return self._binding(i, module, name[:-4]) is not None

    def _opaque(self, i: int, module: str) -> bool:
        return _at(self._data.get("opaque", {}).get(module), i) is not None

    def knows_names(self, version: str | Version, module: str) -> bool:
        """Whether the atlas read what `module` binds in that release (False: a module recorded as existing only,
        or read for a literal ``__all__`` it lacks; ``has`` then answers True for any name in it)."""
        i = self._index(version)
        return _at(self._modules.get(module), i) is not None and not self._opaque(i, module)

    def coverage(self) -> dict:
        """How deep the generator read (its ``--include`` / ``--names`` patterns, and whether every other module
        of the wheel is listed as existing)."""
        return dict(self._data.get("coverage", {"full": ["*"], "names": [], "listed": False}))

    def resolve(self, version: str | Version, qualname: str) -> Resolved | None:
        """Where a name is defined, following re-exports and lazy entries; external names end the chain."""
        return self._resolve(self._index(version), qualname, 0)

    def _resolve(self, i: int, qualname: str, depth: int) -> Resolved | None:
        if depth > 25:
            return None
        if qualname.split(".")[0] != self.package:
            return Resolved(qualname, "external")
        split = self._split(i, qualname)
        if split is None:
            return None
        module, rest = split
        if not rest:
            return Resolved(module, "module")
        binding = self._binding(i, module, rest[0])
        if binding is None and self._opaque(i, module):
            return Resolved(qualname, "unknown")
        if binding is None:
            return None
        kind, target = binding
        if kind in ("import", "lazy") and target:
            return self._resolve(i, ".".join([target, *rest[1:]]), depth + 1)
        defined = f"{module}.{rest[0]}"
        if len(rest) == 1:
            return Resolved(defined, kind)
        if kind == "class" and len(rest) == 2:
            info = self._class(i, defined)
            if info is not None and (rest[1] in info[4] or rest[1] in {f[0] for f in info[3] or ()}):
                return Resolved(".".join([defined, rest[1]]), "attribute")
        return None

    def moved_to(self, version: str | Version, name: str, exclude: str = "") -> list[str]:
        """Every public module path that exports `name` in that release (shortest first), but `exclude`."""
        i = self._index(version)
        out = []
        for module in self._by_name.get(name, ()):
            if module == exclude or any(p.startswith("_") for p in module.split(".")):
                continue
            binding = self._binding(i, module, name)
            if binding is None:
                continue
            # where it is defined, and the packages that re-export it (not every module that happens to import it)
            if binding[0] in ("import", "lazy") and not self._is_package(i, module):
                continue
            r = self._resolve(i, f"{module}.{name}", 0)
            if r is not None and r.kind in ("class", "def", "var", "listed"):
                out.append(f"{module}.{name}")
        return sorted(out, key=lambda q: (q.count("."), q))

    def _is_package(self, i: int, module: str) -> bool:
        return _at(self._data["packages"].get(module), i) is not None

    def gone(self, old: str | Version, new: str | Version, *, modules: str | None = None,
             incidental: bool = False) -> dict[str, Event]:
        """Every public ``module.name`` (and public module) that `old` has and `new` lacks, with the last event
        :meth:`history` records for it up to `new` (removed / moved, and where). `modules` keeps only qualified
        names under that prefix (``"trl.trainer"``). Names a plain module only imports (``trl.x.y.torch``) are left
        out unless `incidental`; re-exports from packages (``trl.PPOTrainer``) are kept."""
        i, j = self._index(old), self._index(new)
        out: dict[str, Event] = {}
        prefix = modules or self.package
        for module, runs in self._modules.items():
            if not (module == prefix or module.startswith(prefix + ".")) or not _at(runs, i):
                continue
            if any(part.startswith("_") for part in module.split(".")):
                continue
            candidates = [module] if not _at(runs, j) else []
            package = self._is_package(i, module)
            for name in self._by_module.get(module, ()) if _at(runs, j) else ():
                binding = self._binding(i, module, name)
                if name.startswith("_") or binding is None or self._binding(j, module, name) is not None:
                    continue
                if binding[0] == "import" and not package and not incidental:
                    continue
                candidates.append(f"{module}.{name}")
            for qual in candidates:
                events = [e for e in self.history(qual) if self._index(e.release) <= j]
                if events and events[-1].kind in ("removed", "moved"):
                    out[qual] = events[-1]
        return dict(sorted(out.items()))

    # ------------------------------------------------------------------ signatures and fields
    def _class(self, i: int, qualname: str) -> list | None:
        value = _at(self._classes.get(qualname), i)
        return None if value is None else self._class_table[value]

    def class_info(self, version: str | Version, qualname: str) -> dict | None:
        """bases, dataclass, methods of a class (after resolving the name); None if it is not a class there."""
        i = self._index(version)
        r = self._resolve(i, qualname, 0)
        info = self._class(i, r.qualname) if r and r.kind == "class" else None
        if info is None:
            return None
        return {"qualname": r.qualname, "bases": list(info[0]), "dataclass": bool(info[1]), "methods": list(info[4])}

    def _sig(self, sig_id: int, origin: str, external: str | None = None) -> Signature:
        params, keys, forward, renamed = self._signatures[sig_id]
        return Signature(tuple(Param(*p) for p in params), origin, tuple(keys), tuple(forward),
                         tuple(tuple(r) for r in renamed), external)  # type: ignore[misc]

    def signature(self, version: str | Version, qualname: str, *, transformers: str | None = None) -> Signature | None:
        """How the function or class (its constructor) can be called in that release.

        A class without its own ``__init__``, or whose ``__init__`` only takes ``(*args, **kwargs)`` (TRL's deprecation
        shims), gets its first base's: a TRL base from this atlas, an external one (``transformers.Trainer``) from
        that package's atlas when there is one (release chosen by :meth:`companion_release`, or `transformers`). A
        dataclass without ``__init__`` gets its fields as keyword parameters.
        """
        i = self._index(version)
        r = self._resolve(i, qualname, 0)
        if r is None:
            return None
        if r.kind == "def":
            value = _at(self._functions.get(r.qualname), i)
            return None if value is None else self._sig(value, r.qualname)
        if r.kind != "class":
            return None
        return self._init(i, r.qualname, transformers, set())

    def _init(self, i: int, qualname: str, companion: str | None, seen: set[str]) -> Signature | None:
        if qualname in seen:
            return None
        seen.add(qualname)
        info = self._class(i, qualname)
        if info is None:
            return None
        bases, dc, init = info[0], info[1], info[2]
        own = self._sig(init, qualname) if init is not None else None
        if own is not None and [p.kind for p in own.params] not in (["va", "vk"], ["vk"], ["va"]):
            return own
        if dc and own is None:
            unknown = self._unknown_base(i, qualname, companion, set())
            if unknown is not None:  # inherited fields the atlas cannot list: accept any keyword
                return Signature((Param("args", "va", None, None), Param("kwargs", "vk", None, None)), qualname,
                                 external_base=unknown)
            fields = self._fields(i, qualname, companion, set())
            if fields is not None:
                params = tuple(Param(f.name, "pk", f.default if not f.factory else f"{f.default}()", f.annotation)
                               for f in fields.values() if f.init)
                return Signature(params, qualname)
        for base in bases:
            if base.split(".")[0] == self.package:
                r = self._resolve(i, base, 0)
                if r is not None and r.kind == "class":
                    found = self._init(i, r.qualname, companion, seen)
                    if found is not None:
                        return found
            elif base not in _TRIVIAL_BASES:
                other = self._external(base, i, companion)
                if other is not None:
                    atlas, release = other
                    found = atlas.signature(release, base)
                    if found is not None:
                        return Signature(found.params, found.origin, found.kwargs_keys, found.kwargs_forward,
                                         found.renamed, base)
                return own if own is not None else Signature((Param("args", "va", None, None),
                                                              Param("kwargs", "vk", None, None)), qualname,
                                                             external_base=base)
        return own

    def accepts(self, version: str | Version, qualname: str, keyword: str, *,
                transformers: str | None = None) -> str | None:
        """Whether calling `qualname` (a function, or a class's constructor) with ``keyword=`` works in that release,
        and why: ``"parameter"``, ``"alias"`` (an old name ``@deprecate_kwarg`` still maps), or, through ``**kwargs``:
        ``"kwargs-key"`` (the body reads that key), ``"forwarded"`` (``**kwargs`` goes to ``super().__init__`` and the
        next class in the chain accepts it), ``"opaque"`` (``**kwargs`` goes somewhere the atlas cannot follow, e.g.
        ``model.generate(**kwargs)``, so the keyword may be fine), ``"ignored"`` (``**kwargs`` is taken and never
        used). None: the call raises ``TypeError`` - including a trainer whose ``**kwargs`` only goes on to
        ``transformers.Trainer.__init__``, which takes no such name. None also when the name or its signature is
        unknown (ask :meth:`signature` first)."""
        i = self._index(version)
        sig = self.signature(version, qualname, transformers=transformers)
        return None if sig is None else self._accepts(i, sig, keyword, transformers, 0)

    def _accepts(self, i: int, sig: Signature, keyword: str, companion: str | None, depth: int) -> str | None:
        p = sig.param(keyword)
        if p is not None and p.kind != "po":
            return "parameter"
        if any(old == keyword for old, _ in sig.renamed):
            return "alias"
        if sig.var_keyword is None:
            return None
        if keyword in sig.kwargs_keys:
            return "kwargs-key"
        supers = [f for f in sig.kwargs_forward if f.startswith("super(") and f.endswith(").__init__")]
        others = [f for f in sig.kwargs_forward if f not in supers]
        if others:
            return "opaque"
        if not supers:
            return "ignored" if sig.external_base is None else "opaque"
        base = self._next_init(i, sig.origin, companion)
        if base is None or depth > 10:
            return "opaque"
        atlas, release_index, base_sig = base
        verdict = atlas._accepts(release_index, base_sig, keyword, companion, depth + 1)
        return "forwarded" if verdict is not None else None

    def _next_init(self, i: int, origin: str, companion: str | None) -> tuple[Atlas, int, Signature] | None:
        """The constructor ``super().__init__`` reaches from class `origin` (its first base's)."""
        info = self._class(i, origin)
        if info is None or not info[0]:
            return None
        base = info[0][0]
        if base.split(".")[0] == self.package:
            r = self._resolve(i, base, 0)
            found = self._init(i, r.qualname, companion, set()) if r is not None and r.kind == "class" else None
            return None if found is None else (self, i, found)
        other = self._external(base, i, companion)
        if other is None:
            return None
        found = other[0].signature(other[1], base)
        return None if found is None else (other[0], other[0]._index(other[1]), found)

    def _unknown_base(self, i: int, qualname: str, companion: str | None, seen: set[str]) -> str | None:
        """The first base up the chain of a class that no atlas describes (None: every base is known)."""
        if qualname in seen:
            return None
        seen.add(qualname)
        info = self._class(i, qualname)
        for base in info[0] if info else ():
            if base.split(".")[0] == self.package:
                r = self._resolve(i, base, 0)
                if r is None or r.kind != "class":
                    return base
                found = self._unknown_base(i, r.qualname, companion, seen)
            elif base in _TRIVIAL_BASES:
                continue
            else:
                other = self._external(base, i, companion)
                if other is None:
                    return base
                r = other[0].resolve(other[1], base)
                if r is None or r.kind != "class":
                    return base
                found = other[0]._unknown_base(other[0]._index(other[1]), r.qualname, companion, set())
            if found is not None:
                return found
        return None

    def config_fields(self, version: str | Version, qualname: str, *,
                      transformers: str | None = None) -> dict[str, Field] | None:
        """Every dataclass field of a config class, inherited ones included (base fields first, as dataclasses
        order them), with defaults as source text. An external base (``transformers.TrainingArguments``) is read
        from that package's atlas at :meth:`companion_release` (or `transformers`). None if not a dataclass."""
        i = self._index(version)
        r = self._resolve(i, qualname, 0)
        if r is None or r.kind != "class":
            return None
        return self._fields(i, r.qualname, transformers, set())

    def _fields(self, i: int, qualname: str, companion: str | None, seen: set[str]) -> dict[str, Field] | None:
        if qualname in seen:
            return {}
        seen.add(qualname)
        info = self._class(i, qualname)
        if info is None:
            return None
        out: dict[str, Field] = {}
        for base in info[0]:
            inherited: dict[str, Field] | None = None
            if base.split(".")[0] == self.package:
                r = self._resolve(i, base, 0)
                if r is not None and r.kind == "class":
                    inherited = self._fields(i, r.qualname, companion, seen)
            else:
                other = self._external(base, i, companion)
                if other is not None:
                    inherited = other[0].config_fields(other[1], base)
            for name, f in (inherited or {}).items():
                out.setdefault(name, f)
        if not info[1] and not out:
            return None
        for name, ann, default, factory, init in info[3] or ():
            out[name] = Field(name, ann, default, bool(factory), bool(init), qualname)
        return out

    # ------------------------------------------------------------------ companion packages
    def companion_release(self, version: str | Version, package: str = "transformers") -> str | None:
        """The release of `package` (from its atlas) that goes with this release: the newest one built before it
        that its Requires-Dist allows, else the oldest one allowed, else the newest."""
        try:
            other = Atlas.load(package)
        except AtlasError:
            return None
        i = self._index(version)
        return self._companion(i, other)

    def _companion(self, i: int, other: Atlas) -> str:
        spec = SpecifierSet()
        for line in self.requires(self._releases[i]):
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if canonicalize_name(req.name) == canonicalize_name(other.package) and req.marker is None:
                spec &= req.specifier
        date = self._data["sources"][self._releases[i]][2]
        allowed = [r for r in other.releases() if spec.contains(r, prereleases=True)] or other.releases()
        before = [r for r in allowed if other._data["sources"][r][2] <= date]
        return before[-1] if before else allowed[0]

    def _external(self, base: str, i: int, companion: str | None) -> tuple[Atlas, str] | None:
        package = base.split(".")[0]
        if package not in Atlas.available():
            return None
        other = Atlas.load(package)
        release = companion if companion and package == "transformers" else self._companion(i, other)
        try:
            return other, other.release(release)
        except UnknownReleaseError:
            return other, self._companion(i, other)

    # ------------------------------------------------------------------ history
    def history(self, qualname: str, keyword: str | None = None) -> list[Event]:
        """What happened to a module, a name, or (with `keyword`) a parameter of a callable, release by release.

        ``added`` / ``removed`` at the first release with / without it; ``moved`` instead of ``removed`` when the
        same name is exported by another module in that release (``to``: those paths, shortest first); ``changed``
        when a keyword's default changes. For a keyword: ``renamed`` when the release accepts it only through
        ``@deprecate_kwarg`` (``to``: the new name), or, marked ``heuristic`` in ``detail``, when it is the only
        parameter that release removed and exactly one was added with the same kind and default; ``moved`` when a
        ``XTrainer`` keyword disappears and ``XConfig`` has a field of that name in that release (``to``:
        ``trl.XConfig.keyword``).
        """
        events: list[Event] = []
        previous: object = None
        for i, release in enumerate(self._releases):
            state = self._state(i, qualname, keyword)
            if state == previous:
                continue
            if state is None:
                gone = qualname.rsplit(".", 1)[-1] if keyword is None else keyword
                if keyword is None:
                    to = self.moved_to(release, gone, exclude=qualname.rsplit(".", 1)[0])
                    events.append(Event("moved", release, tuple(to)) if to else Event("removed", release))
                else:
                    events.append(self._keyword_gone(i, qualname, keyword))
            elif previous is None:
                events.append(Event("added", release) if not (isinstance(state, tuple) and state[0] == "renamed")
                              else Event("renamed", release, (state[1],)))
            elif isinstance(state, tuple) and state[0] == "renamed":
                events.append(Event("renamed", release, (state[1],), "still accepted, deprecated"))
            else:
                events.append(Event("changed", release, detail=f"{previous} -> {state}"))
            previous = state
        return events

    def _keyword_gone(self, i: int, qualname: str, keyword: str) -> Event:
        release = self._releases[i]
        if not self.has(release, qualname):
            return Event("removed", release, detail=f"{qualname} itself is gone")
        now = self.signature(release, qualname)
        before = self.signature(self._releases[i - 1], qualname) if i else None
        if now is not None and before is not None:
            removed = set(before.names()) - set(now.names())
            added = [p for p in now.params if p.kind not in ("va", "vk") and before.param(p.name) is None]
            old = before.param(keyword)
            if removed == {keyword} and len(added) == 1 and old is not None \
                    and (added[0].kind, added[0].default) == (old.kind, old.default):
                return Event("renamed", release, (added[0].name,),
                             "heuristic: the only parameter removed and the only one added, same kind and default")
        if qualname.endswith("Trainer"):
            config = qualname[: -len("Trainer")] + "Config"
            if self.has(release, config) and keyword in (self.config_fields(release, config) or {}):
                return Event("moved", release, (f"{config}.{keyword}",), f"a field of {config.rsplit('.', 1)[-1]}")
        return Event("removed", release)

    def _state(self, i: int, qualname: str, keyword: str | None) -> object:
        release = self._releases[i]
        if keyword is None:
            return True if self.has(release, qualname) else None
        if not self.has(release, qualname):
            return None
        sig = self.signature(release, qualname)
        if sig is None:
            return None
        p = sig.param(keyword)
        if p is not None:
            return f"default {p.default}" if p.default is not None else "required"
        for old, new in sig.renamed:
            if old == keyword:
                return ("renamed", new)
        return None


@lru_cache(maxsize=None)
def _load(package: str) -> Atlas:
    path = os.path.join(DATA_DIR, f"{package}.json.gz")
    if not os.path.exists(path):
        raise AtlasError(f"no atlas data for {package!r} at {path}; generate it with "
                         f"`python -m migrations.atlas.generate {package}` (available: {', '.join(Atlas.available())})")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return Atlas(json.load(fh))
