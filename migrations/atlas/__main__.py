"""`python -m migrations.atlas`: ask the atlas from the command line (for developers writing rules).

    python -m migrations.atlas history trl.PPOTrainer
    python -m migrations.atlas history trl.SFTTrainer --keyword tokenizer
    python -m migrations.atlas gone 0.8.6 1.16.0 [--modules trl.trainer]
    python -m migrations.atlas signature 1.16.0 trl.SFTTrainer
    python -m migrations.atlas fields 1.16.0 trl.SFTConfig
"""

from __future__ import annotations

import argparse
import sys

from . import Atlas, AtlasError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m migrations.atlas", description=__doc__.split("\n")[0])
    parser.add_argument("--package", default="trl")
    sub = parser.add_subparsers(dest="command", required=True)
    h = sub.add_parser("history", help="added / moved / renamed / removed, release by release")
    h.add_argument("qualname")
    h.add_argument("--keyword")
    g = sub.add_parser("gone", help="what OLD has and NEW lacks")
    g.add_argument("old")
    g.add_argument("new")
    g.add_argument("--modules")
    for name in ("signature", "fields"):
        p = sub.add_parser(name)
        p.add_argument("release")
        p.add_argument("qualname")
    args = parser.parse_args(argv)
    try:
        atlas = Atlas.load(args.package)
        if args.command == "history":
            for event in atlas.history(args.qualname, args.keyword):
                print(event)
        elif args.command == "gone":
            for qual, event in atlas.gone(args.old, args.new, modules=args.modules).items():
                print(f"{qual}: {event}")
        elif args.command == "signature":
            sig = atlas.signature(args.release, args.qualname)
            if sig is None:
                print(f"{args.qualname}: no signature in {args.package} {args.release}", file=sys.stderr)
                return 1
            print(f"{sig.origin}(")
            for p in sig.params:
                star = {"va": "*", "vk": "**"}.get(p.kind, "")
                default = f" = {p.default}" if p.default is not None else ""
                print(f"    {star}{p.name}{': ' + p.annotation if p.annotation else ''}{default},  # {p.kind}")
            print(")")
        else:
            fields = atlas.config_fields(args.release, args.qualname)
            if fields is None:
                print(f"{args.qualname}: not a dataclass in {args.package} {args.release}", file=sys.stderr)
                return 1
            for f in fields.values():
                print(f"{f.name}: {f.annotation} = {f.default}{' (factory)' if f.factory else ''}  # {f.origin}")
    except AtlasError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `... | head`
        sys.stderr.close()
        sys.exit(0)
