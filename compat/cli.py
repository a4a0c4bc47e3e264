"""The ``trl-compat`` console script: ``trl-compat doctor``, ``trl-compat migrate ...``, ``trl-compat check ...``,
``trl-compat smoke ...``, ``trl-compat explain RULE``.

Each subcommand forwards the rest of the command line to the module that implements it, imported only when chosen
(``compat.__main__:main`` for the doctor, ``compat.migrate.cli:main`` and ``compat.smoke.cli:main``), so
``trl-compat doctor`` never pays for libcst and ``trl-compat migrate`` behaves exactly like ``python -m compat.migrate``
(a ``main`` that accepts ``prog=`` is told its name, ``trl-compat migrate``, for its usage line).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Sequence

from compat import __version__

#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "doctor": ("compat.__main__", "check the installed stack against the floors (table, --json; exit 0/1)"),
    "migrate": ("compat.migrate.cli", "rewrite PPO-era / pre-1.16 TRL code (same as `python -m compat.migrate`)"),
    "check": ("compat.check.cli", "check code against the target TRL's API and list markers left (exit 0/1/2)"),
    "smoke": ("compat.smoke.cli", "run a short smoke training (same as `python -m compat.smoke`)"),
    "explain": ("compat.explain", "print a migration rule's summary and its MIGRATION.md section"),
}


def _usage() -> str:
    lines = [f"usage: trl-compat {{{','.join(SUBCOMMANDS)}}} [args ...]", "", "subcommands:"]
    lines.extend(f"  {name:<8} {help_}" for name, (_, help_) in SUBCOMMANDS.items())
    lines.append("\n`trl-compat SUBCOMMAND --help` shows each subcommand's options.")
    return "\n".join(lines)


def _load(module: str) -> Callable[[list[str]], int | None] | None:
    try:
        return importlib.import_module(module).main
    except ModuleNotFoundError as exc:
        if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
            return None  # the subcommand's module is not part of this installation
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a subcommand; returns its exit status (2 for a usage error)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    if args[0] == "--version":
        print(f"trl-compat {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"trl-compat: unknown subcommand {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    entry = _load(SUBCOMMANDS[name][0])
    if entry is None:
        print(f"trl-compat: the {name!r} subcommand is not available in this installation", file=sys.stderr)
        return 2
    kwargs = {"prog": f"trl-compat {name}"} if "prog" in inspect.signature(entry).parameters else {}
    try:
        result = entry(rest, **kwargs)
    except SystemExit as exc:  # a subcommand that exits (argparse --help) instead of returning its status
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        raise
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
