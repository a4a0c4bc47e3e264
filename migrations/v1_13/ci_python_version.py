"""CI workflows that install the project under a Python the target TRL no longer supports: reported, never edited.

The manifests' rule raises `requires-python` (and reports a `.python-version`) to what the target TRL declares
(`Requires-Python >=3.11` for 1.16, `>=3.10` for 1.13). A GitHub Actions workflow that sets up `python-version:
"3.9"` (or a matrix holding 3.8) and then installs the project (`pip install -r requirements.txt`, `pip install -e .`,
`pip install trl`, `poetry install`, `uv sync`) fails there after the migration: pip finds no release of the raised
`trl` for that interpreter. The interpreter is the project's choice (a matrix may test other code too), so each such
version is a warning at its line; a workflow that installs nothing of the project (a linter, pre-commit) is left
alone, as is every workflow of a project that does not use TRL.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from migrations.base import Finding, ManifestMigration, Options, RuleContext
from migrations.kinds.requirements import python_floor

#: a step that installs the project or trl: pip with a requirements file, an editable / local path or trl itself
#: (within the one command, up to `&&`, `;`, `|` or a comment), or a project manager's install
_INSTALLS = re.compile(
    r"\b(?:pip3?|uv[ \t]+pip)[ \t]+install\b[^\n&;|#]*?(?:[ \t](?:-r|--requirement|-e|--editable)[ \t=]|[ \t]\.(?=[ \t\[\n]|$)"
    r"|\btrl\b)|\bpoetry[ \t]+install\b|\buv[ \t]+sync\b|\bpdm[ \t]+install\b|\bconda[ \t]+env[ \t]+(?:create|update)\b",
    re.MULTILINE)
#: `python-version: 3.9`, `python-version: ["3.8", "3.9"]`, or the key alone with a block list under it
_KEY = re.compile(r"^(?P<indent>[ \t]*)(?:-[ \t]+)?python-version[ \t]*:[ \t]*(?P<value>[^#\n]*)", re.MULTILINE)
_ITEM = re.compile(r"^[ \t]*-[ \t]*(?P<value>[^#\n]+)")
_VERSION = re.compile(r"""^["']?(?P<v>\d+\.\d+(?:\.\d+)?)["']?$""")


def _versions(value: str) -> list[str]:
    """The plain versions of a `python-version:` value: a scalar or a flow list (`${{ ... }}`, `3.x`, `pypy3.9` are
    not plain versions)."""
    value = value.strip()
    items = value[1:-1].split(",") if value.startswith("[") and value.endswith("]") else [value]
    out = []
    for item in items:
        m = _VERSION.match(item.strip())
        if m:
            out.append(m.group("v"))
    return out


def python_versions(text: str) -> list[tuple[int, str]]:
    """(1-based line, version) for each plain version a `python-version:` key of the workflow gives."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    for m in _KEY.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        if m.group("value").strip():
            out.extend((line, v) for v in _versions(m.group("value")))
            continue
        for number in range(line, len(lines)):  # a block list: `- "3.8"` lines under the key
            item = _ITEM.match(lines[number])
            if item is None:
                break
            out.extend((number + 1, v) for v in _versions(item.group("value")))
    return out


class CiPythonVersion(ManifestMigration):
    summary = "GitHub Actions workflows installing the project under a Python below the target TRL's: reported"
    triggers = ("python-version",)
    patterns = (".github/workflows/*.yml", ".github/workflows/*.yaml")
    order = 52
    fix_safety = "safe"  # reports only

    def applies(self, options: Options) -> bool:
        """Only in a project that uses TRL."""
        return options.uses_trl and super().applies(options)

    def rewrite(self, text: str, filename: str, ctx: RuleContext) -> str:
        floor = python_floor(ctx.options.target_trl)
        if floor is None or not _INSTALLS.search(text):
            return text
        for line, version in python_versions(text):
            try:
                below = not floor.specifier.contains(Version(version), prereleases=True) and \
                    not floor.specifier.contains(f"{version}.99", prereleases=True)
            except InvalidVersion:
                continue
            if below:
                ctx.report(Finding(self.id, f"this workflow installs the project under Python {version}, below what "
                                            f"TRL {ctx.options.target_trl} requires ({floor.specifier}): pip finds no "
                                            "such trl there; raise it", line, 1, self.anchor, "warning", False))
        return text


MIGRATION = CiPythonVersion()
