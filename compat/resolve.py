"""Stable names at run time: the installed TRL's object where that version keeps it, reference_impl's otherwise.

TRL moves and removes things between releases (`trl.losses` existed in 1.13 only, BCO left `trl.experimental` in
1.14, Online DPO lives under `trl.experimental.online_dpo`, ...). A `NameTable` maps a stable name to an ordered list
of `(module, attribute)` candidates: the places TRL has kept it across the supported lines, then the
`reference_impl` implementation. The first candidate that exists in the installed environment wins.

`compat.trl` and `compat.losses` are thin modules whose `__getattr__` is a `NameTable`: importing them costs nothing
(no torch, no trl); the first use of a name imports what that name needs, caches it in the module's namespace (so a
second lookup never reaches `__getattr__`), and says once which implementation was chosen: an INFO record on the
`compat.resolve` logger, and a `CompatFallbackWarning` when the reference implementation stands in for TRL.

A candidate counts as *missing* only when its own module (or a parent of it) does not exist, or the module lacks the
attribute. Any other import error (a broken TRL install, an undeclared dependency such as `requests` on TRL <= 1.14.1)
propagates: falling back would hide a real environment problem behind a different implementation.
"""

from __future__ import annotations

import importlib
import logging
import threading
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

__all__ = ["CompatFallbackWarning", "NameTable", "Resolution", "UnresolvableNameError"]

logger = logging.getLogger("compat.resolve")


class CompatFallbackWarning(UserWarning):
    """The installed TRL lacks a name, so trl-compat's reference implementation is used instead."""


class UnresolvableNameError(ImportError):
    """No candidate of a stable name exists in this environment."""


@dataclass(frozen=True)
class Resolution:
    """Which implementation a stable name resolved to."""

    name: str
    module: str
    attribute: str
    is_reference: bool  # True when reference_impl (or another non-TRL fallback) stands in for TRL

    @property
    def origin(self) -> str:
        return f"{self.module}.{self.attribute}"


def _is_missing_module(exc: ModuleNotFoundError, module: str) -> bool:
    """True when `exc` says that `module` itself (or one of its parents) does not exist."""
    missing = exc.name or ""
    return bool(missing) and (module == missing or module.startswith(missing + "."))


@dataclass
class NameTable:
    """Ordered candidates per stable name, resolved lazily and cached.

    `candidates[name]` is a sequence of `(module, attribute)`; `reference_modules` lists the module prefixes whose
    objects count as fallbacks (they trigger the `CompatFallbackWarning`, unless every candidate of the name is one:
    then trl-compat's copy is the only implementation, and it is only logged).
    """

    owner: str
    candidates: dict[str, tuple[tuple[str, str], ...]]
    reference_modules: tuple[str, ...] = ("reference_impl", "compat")
    _resolved: dict[str, Resolution] = field(default_factory=dict, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def names(self) -> list[str]:
        return sorted(self.candidates)

    def resolution(self, name: str) -> Resolution:
        """Resolve `name` (once) and return where it came from."""
        self.lookup(name)
        return self._resolved[name]

    def resolved(self) -> dict[str, Resolution]:
        """The names resolved so far, and where each came from."""
        return dict(self._resolved)

    def lookup(self, name: str) -> Any:
        """The object behind `name`: the first existing candidate. Raises AttributeError for unknown names."""
        if name not in self.candidates:
            raise AttributeError(f"module {self.owner!r} has no attribute {name!r}")
        with self._lock:
            tried: list[str] = []
            for module_name, attribute in self.candidates[name]:
                try:
                    module = importlib.import_module(module_name)
                except ModuleNotFoundError as exc:
                    if not _is_missing_module(exc, module_name):
                        raise
                    tried.append(f"{module_name}.{attribute} (no module {exc.name!r})")
                    continue
                obj = _get(module, attribute)
                if obj is _MISSING:
                    tried.append(f"{module_name}.{attribute} (no attribute)")
                    continue
                if name not in self._resolved:
                    self._announce(name, module_name, attribute)
                return obj
        raise UnresolvableNameError(
            f"{self.owner}.{name}: no implementation found in this environment; tried " + "; ".join(tried)
            + ". Install a TRL release that provides it, or trl-compat[reference] for the reference implementation."
        )

    def _announce(self, name: str, module: str, attribute: str) -> None:
        is_reference = any(module == p or module.startswith(p + ".") for p in self.reference_modules)
        res = Resolution(name, module, attribute, is_reference)
        self._resolved[name] = res
        version = _trl_version()
        if is_reference and self._only_reference(name):
            # trl-compat's own copy by design (a helper no supported TRL line has, or not TRL's at all): nothing
            # stands in for anything, so no warning
            logger.info("%s.%s: trl-compat's copy %s.", self.owner, name, res.origin)
        elif is_reference:
            message = (
                f"{self.owner}.{name}: the installed TRL ({version}) has no {name}; using the reference "
                f"implementation {res.origin}."
            )
            logger.info(message)
            warnings.warn(message, CompatFallbackWarning, stacklevel=4)
        elif module == "trl" or module.startswith("trl."):
            logger.info("%s.%s: using %s from TRL %s.", self.owner, name, res.origin, version)
        else:  # not TRL's (transformers' own class for a name transformers later removed)
            logger.info("%s.%s: using %s.", self.owner, name, res.origin)

    def _only_reference(self, name: str) -> bool:
        return all(any(m == p or m.startswith(p + ".") for p in self.reference_modules) for m, _ in self.candidates[name])

    def install(self, module_globals: dict[str, Any]) -> None:
        """Give a module lazy attributes: `__getattr__` resolves and caches into `module_globals`, `__dir__` lists."""

        def __getattr__(name: str) -> Any:  # noqa: N807 - module protocol
            if name.startswith("__"):
                raise AttributeError(name)
            obj = self.lookup(name)
            module_globals[name] = obj
            return obj

        def __dir__() -> list[str]:  # noqa: N807 - module protocol
            return sorted(set(module_globals) | set(self.candidates))

        module_globals["__getattr__"] = __getattr__
        module_globals["__dir__"] = __dir__
        module_globals["__all__"] = self.names()


_MISSING = object()


def _get(module: ModuleType, attribute: str) -> Any:
    """`getattr` that tells a missing attribute from a lazy submodule that fails to import for a real reason."""
    try:
        return getattr(module, attribute)
    except AttributeError:
        return _MISSING
    except ModuleNotFoundError as exc:
        # TRL's `_LazyModule` imports a submodule on attribute access; a missing *optional* module is not ours to hide
        if _is_missing_module(exc, f"{module.__name__}.{attribute}"):
            return _MISSING
        raise


def _trl_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("trl")
    except PackageNotFoundError:
        return "not installed"
