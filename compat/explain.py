"""`trl-compat explain RULE`: a rule's id, TRL release, summary and its MIGRATION.md section, from the installed
package (ruff's `rule` command). The guide ships inside the `migrations` package (`migrations/MIGRATION.md`, a link to
the repository's MIGRATION.md), so this works offline, from a wheel, in any environment.

    trl-compat explain ppo-to-grpo
    trl-compat explain --list            # every rule id with its release and summary
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from importlib import resources

from compat._shadow import own_first

_ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
_HEADING = re.compile(r"^(#{1,6})\s")


def guide_text() -> str:
    """The migration guide as shipped with the installed `migrations` package."""
    return resources.files("migrations").joinpath("MIGRATION.md").read_text(encoding="utf-8")


def section(text: str, anchor: str) -> str | None:
    """The guide's section that `<a id="anchor"></a>` opens: its heading and everything up to the next heading of the
    same or a higher level (sub-sections included); None when the guide has no such anchor."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if anchor in _ANCHOR.findall(line)), None)
    if start is None:
        return None
    heading = next((i for i in range(start + 1, len(lines)) if _HEADING.match(lines[i])), None)
    if heading is None:
        return None
    level = len(_HEADING.match(lines[heading]).group(1))
    end = len(lines)
    for i in range(heading + 1, len(lines)):
        match = _HEADING.match(lines[i])
        if match and len(match.group(1)) <= level:
            end = i
            break
    body = lines[heading:end]
    while body and (not body[-1].strip() or _ANCHOR.fullmatch(body[-1].strip())):
        body.pop()  # the next section's anchor and blank lines
    return "\n".join(body)


def explain(rule_id: str) -> str:
    """The text `trl-compat explain RULE` prints; KeyError (naming the known ids) for an unknown rule."""
    own_first("migrations")
    import migrations

    rule = migrations.get(rule_id)
    head = [f"{rule.id}: {rule.summary}", f"  forced by TRL {rule.release}"
            + (f", needed until {rule.until}" if getattr(rule, "until", None) else "")]
    if rule.anchor:
        head.append(f"  guide: MIGRATION.md#{rule.anchor}")
    text = section(guide_text(), rule.anchor) if rule.anchor else None
    return "\n".join(head) + "\n\n" + (text or "(the guide has no section for this rule)") + "\n"


def main(argv: Sequence[str] | None = None, *, prog: str | None = None) -> int:
    """Print a rule's guide section (exit 0), the rule list (--list), or an error for an unknown id (exit 2)."""
    parser = argparse.ArgumentParser(prog=prog or "trl-compat explain",
                                     description="Print a migration rule's summary and its MIGRATION.md section.")
    parser.add_argument("rule", nargs="?", help="a rule id, as `--list` and the TODO(trl-compat) markers name it")
    parser.add_argument("--list", action="store_true", help="list every rule id with its TRL release and summary")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    own_first("migrations")
    import migrations

    if args.list or not args.rule:
        for rule in migrations.all_migrations():
            print(f"{rule.id:<44} TRL {rule.release:<6} {rule.summary}")
        return 0 if args.list else 2
    try:
        print(explain(args.rule), end="")
    except KeyError as exc:
        print(f"trl-compat explain: {exc.args[0]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
