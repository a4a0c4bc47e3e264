"""trl-compat's runtime layer: importing it checks the installed stack against the floors of the installed TRL line.

``import compat`` reads installed versions from distribution metadata only (never imports torch, transformers, trl,
peft, deepspeed or vllm) and holds them against :mod:`compat.floors`. A violating environment raises one
:class:`IncompatibleEnvironmentError` (an ``ImportError``) listing every violation and a single ``pip install`` line.

``TRL_COMPAT_CHECK=error|warn|off`` (default ``error``) chooses between raising, warning and not checking.
compat's own command-line tools (``python -m compat``, ``python -m compat.migrate``, ``python -m compat.smoke``,
``python -m compat.demo``, ``python -m compat.check``, the ``trl-compat`` script) are never blocked: users run them
in exactly the environment they are about to fix, so there the error becomes a warning (and the doctor, which prints
the full table, stays silent). They are recognised from ``sys.orig_argv``; processes they start inherit ``TRL_COMPAT_TOOL``.

The migrator is also a library, meant for exactly the environments the check refuses: ``import compat.migrate`` (and
``from compat.migrate import ...``) and the rules of ``migrations`` (which read :mod:`compat.floors` as data) load
``compat`` *without* the check. Python runs this file before any ``compat.*`` submodule, so it asks the import
system which import is loading it: the nearest import in progress in this thread, skipping ``compat`` itself and its
data modules (:data:`_DATA_MODULES`). When that import is inside :data:`_LIBRARY_PACKAGES` the check is deferred;
``import compat``, ``import compat.trl``, ``import compat.losses``, ``from compat import migrate`` and anything else
run it as before. A deferred check runs when a runtime module (``compat.trl``, ``compat.losses``) is imported later in
the same process (:func:`_check_deferred`), so ``import compat.migrate`` first never lets training code skip it.
The frames read are CPython's ``importlib._bootstrap._find_and_load`` (3.11-3.14); should an interpreter not show
them, nothing is recognised as a library import and the check simply runs, as it always did.

Programmatic use: :func:`check_environment` returns a :class:`Report` without raising.

This module must stay cheap (see ``benchmarks/import_cost.py``): it imports no other compat module beyond the
check itself; ``compat.tiny``, ``compat.migrate``, ``compat.smoke`` and friends load only when asked for.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping, MutableMapping, Sequence

from compat._version import __version__
from compat.environment import Finding, Report, check_environment
from compat.errors import ENV_VAR, MODES, IncompatibleEnvironmentError, IncompatibleEnvironmentWarning, format_report

__all__ = [
    "ENV_VAR",
    "Finding",
    "IncompatibleEnvironmentError",
    "IncompatibleEnvironmentWarning",
    "Report",
    "__version__",
    "check_environment",
]

#: ``python -m X`` for these modules (and their submodules, for the last three) is one of compat's own tools.
_TOOL_MODULES = ("compat", "compat.__main__", "compat.cli", "compat.explain")
_TOOL_PACKAGES = ("compat.migrate", "compat.smoke", "compat.demo", "compat.check")
_TOOL_SCRIPTS = ("trl-compat",)
_DOCTORS = ("python -m compat", "python -m compat.__main__", "trl-compat doctor", "trl-compat")
#: Set by a tool run for the processes it starts, which then count as part of that run.
TOOL_ENV_VAR = "TRL_COMPAT_TOOL"
#: Importing these (or modules inside them) loads compat as a library: the check is deferred (see the docstring).
_LIBRARY_PACKAGES = ("compat.migrate", "migrations")
#: compat's data modules: a library importing them is still that library's import.
_DATA_MODULES = ("compat", "compat._version", "compat.errors", "compat.environment", "compat.floors")
_BOOTSTRAP_NAMES = ("importlib._bootstrap", "_frozen_importlib")
#: Interpreter options that take a separate value (``-X importtime``, ``-W ignore``).
_OPTIONS_WITH_VALUE = ("-X", "-W", "--check-hash-based-pycs")


def _check_mode(environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """The ``TRL_COMPAT_CHECK`` mode and, for an unknown value, a complaint (the mode then stays ``error``)."""
    raw = (os.environ if environ is None else environ).get(ENV_VAR, "").strip().lower()
    if not raw:
        return "error", None
    if raw in MODES:
        return raw, None
    return "error", f"{ENV_VAR}={raw!r} is not one of {', '.join(MODES)}; using error"


def _script_name(path: str) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()  # Windows paths too, whatever the OS
    for suffix in (".exe", "-script.py", ".py"):
        name = name.removesuffix(suffix)
    return name


def _tool_invocation(orig_argv: Sequence[str]) -> str | None:
    """Which compat tool this interpreter was started as (``"python -m compat.migrate"``, ``"trl-compat doctor"``).

    None for anything else: ``python -c``, another script, ``python -m pytest``, an interactive session.
    """
    args = list(orig_argv[1:])
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-m" or (arg.startswith("-m") and not arg.startswith("--")):
            module = arg[2:] or (args[i + 1] if i + 1 < len(args) else "")
            if module in _TOOL_MODULES or any(module == p or module.startswith(p + ".") for p in _TOOL_PACKAGES):
                return f"python -m {module}"
            return None
        if arg == "-c" or (arg.startswith("-c") and not arg.startswith("--")):
            return None
        if arg in _OPTIONS_WITH_VALUE:
            i += 2
            continue
        if arg.startswith("-") and arg != "-":
            i += 1
            continue
        if arg == "-":
            return None
        if _script_name(arg) in _TOOL_SCRIPTS:
            rest = [a for a in args[i + 1 :] if not a.startswith("-")]
            return f"trl-compat {rest[0]}" if rest else "trl-compat"
        return None
    return None


def _enforce_at_import(
    orig_argv: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    export: MutableMapping[str, str] | None = None,
) -> None:
    """Run the check the way ``import compat`` does: raise, warn or stay silent according to mode and invocation.

    A tool run exports ``TRL_COMPAT_TOOL`` (into ``export``, by default ``os.environ``) so that the processes it
    starts (spawned ``ProcessPoolExecutor`` workers re-import compat; the smoke runner starts training scripts) are
    treated as part of the same tool run. The arguments exist for tests; ``import compat`` passes none.
    """
    env = os.environ if environ is None else environ
    mode, complaint = _check_mode(env)
    if complaint:
        warnings.warn(complaint, IncompatibleEnvironmentWarning, stacklevel=3)
    if mode == "off":
        return
    argv = sys.orig_argv if orig_argv is None else orig_argv
    tool = _tool_invocation(argv)
    if tool is None and orig_argv is None and _script_name(sys.argv[0] if sys.argv else "") in _TOOL_SCRIPTS:
        tool = "trl-compat"  # launchers that do not show up in sys.orig_argv (e.g. .exe trampolines)
    if tool is not None:
        (os.environ if export is None else export)[TOOL_ENV_VAR] = tool
    else:
        tool = env.get(TOOL_ENV_VAR) or None  # started by one of compat's tools
    if tool in _DOCTORS:
        return  # the doctor prints the whole table itself
    report = check_environment()
    if not report.errors and not report.warnings:
        return
    if tool is None and report.errors and mode == "error":
        raise IncompatibleEnvironmentError(format_report(report, mode=mode), report)
    warnings.warn(format_report(report, mode=mode, tool=tool), IncompatibleEnvironmentWarning, stacklevel=3)


def _importer(frame: object | None = None) -> str | None:
    """The import that is loading ``compat`` now, from the import system's own frames (innermost first, this thread):
    the nearest module being imported that is neither ``compat`` nor one of its data modules; None for none (a bare
    ``import compat``, or the names CPython's ``importlib._bootstrap._find_and_load`` frames do not show)."""
    f = sys._getframe(1) if frame is None else frame
    while f is not None:
        code = f.f_code  # type: ignore[attr-defined]
        # the frozen module is named `_frozen_importlib` until something imports the `importlib` package, which
        # renames it `importlib._bootstrap` (a .pth file or sitecustomize often has)
        if code.co_name == "_find_and_load" and f.f_globals.get("__name__") in _BOOTSTRAP_NAMES:  # type: ignore[attr-defined]
            name = f.f_locals.get("name")  # type: ignore[attr-defined]
            if isinstance(name, str) and name not in _DATA_MODULES:
                return name
        f = f.f_back  # type: ignore[attr-defined]
    return None


def _is_library_import(name: str | None) -> bool:
    return name is not None and any(name == p or name.startswith(p + ".") for p in _LIBRARY_PACKAGES)


#: True while the import-time check was deferred because compat was loaded by the migrator library.
_deferred = False


def _check_deferred() -> None:
    """Run the import-time check now if ``compat`` was loaded as a library (called by compat's runtime modules)."""
    global _deferred
    if _deferred:
        _deferred = False
        _enforce_at_import()


if _is_library_import(_importer()) and _tool_invocation(sys.orig_argv) is None:
    _deferred = True
else:
    _enforce_at_import()
