"""`pip install` commands of shell scripts and Dockerfiles, raised like the manifests (`dependency-manifests`).

A repository of the PPO era often pins its stack where it builds its environment rather than in a manifest:
`RUN pip install accelerate==0.32.1 && pip install peft==0.11.1 bitsandbytes==0.43.1 && pip install trl==0.8.3`
(adityabhalla-code/genai-cv-image-caption-scicap-data's SageMaker Dockerfiles), `pip install trl==0.7.0
transformers==4.31.0` in a `setup.sh`. Left as they are, they install the old TRL under the migrated code.

In a file that installs `trl` by name with pip (`pip install`, `pip3 install`, `python -m pip install`, `uv pip
install`, after `RUN`, `sudo`, `&&`, `;`, `||`, `|`, `then`, `do`, over backslash continuations), every requirement
of every pip command of the file that the manifests' rule manages is raised as it raises a requirements file's
(`pip_install_line`: quotes, options and the rest of the command kept; a `>=` written in quotes for the shell), and
`trl-compat` joins the `trl` requirement when the migrated code imports `compat`. A file that names trl only through
a VCS / URL / path install gets a manual finding (a fork or a fixed commit, as in the manifests). A file that does
not install trl is left alone (its pins are another project's business), and so are comments, `echo "pip install
..."` strings and other programs' commands. `FROM python:3.8` below TRL's `Requires-Python` is reported (the image is
the project's choice).
"""

from __future__ import annotations

import re

from packaging.version import Version

from migrations.base import (
    Finding,
    ManifestMigration,
    RuleContext,
    same_marker,
    todo_text,
)
from migrations.kinds.requirements import python_floor
from migrations.v1_13.dependency_manifests import (
    COMPAT,
    _fork_message,
    compat_version,
    floor_table,
    pip_install_line,
    trl_reference,
)

#: a pip command: where a shell command may start (line start, `RUN`, `sudo`, an operator, `then` / `do`), the
#: command itself, and its words up to the next operator, comment or line end (over backslash continuations)
_COMMAND = re.compile(
    r"(?P<lead>(?:^|&&|\|\||[;|(`]|\bRUN\b|\bsudo\b|\bthen\b|\bdo\b)[ \t]*(?:\\\r?\n[ \t]*)?)"
    r"(?P<head>(?:uv[ \t]+)?(?:python(?:3(?:\.\d+)?)?[ \t]+-m[ \t]+)?pip3?[ \t]+install\b)"
    r"(?P<rest>(?:[^\n\\&;|#`)]|\\\r?\n)*)", re.MULTILINE)
#: the command as `pip_install_line` reads it (`uv pip install` / `python3.10 -m pip install` are the same command)
_PIP = "pip install"
#: a base image's Python: `FROM python:3.8-slim`, or a tag naming it (`huggingface-pytorch-training:2.1-transformers4.36
#: -gpu-py310-cu121-ubuntu20.04`, the AWS Deep Learning Containers' convention)
_FROM_PYTHON = re.compile(r"^\s*FROM\s+(?:\S+/)?(?:python:(?P<version>\d+\.\d+)|\S*:\S*?\bpy(?P<tag>3\d{1,2})\b)",
                          re.MULTILINE | re.IGNORECASE)


def _in_comment(text: str, at: int) -> bool:
    line_start = text.rfind("\n", 0, at) + 1
    return text[line_start:at].lstrip().startswith("#")


def _in_quotes(text: str, at: int) -> bool:
    """An odd number of double or single quotes before `at` on its line: inside a string (`echo "pip install x"`)."""
    line = text[text.rfind("\n", 0, at) + 1:at]
    return line.count('"') % 2 == 1 or line.count("'") % 2 == 1


def pip_commands(text: str) -> list[re.Match[str]]:
    """The pip install commands of a shell script or Dockerfile, outside comments and quoted strings."""
    return [m for m in _COMMAND.finditer(text)
            if not _in_comment(text, m.start("head")) and not _in_quotes(text, m.start("head"))]


class InstallCommands(ManifestMigration):
    summary = "pip install commands of shell scripts and Dockerfiles that install trl: raised like the manifests"
    triggers = ("trl",)
    requires = ("install",)
    patterns = ("*.sh", "*.bash", "Dockerfile*", "*.dockerfile", "*.Dockerfile", "Containerfile*")
    order = 51

    def rewrite(self, text: str, filename: str, ctx: RuleContext) -> str:
        commands = pip_commands(text)
        if not commands:
            return text
        table = floor_table(ctx.options)
        add = f"{COMPAT}>={compat_version()}" if COMPAT in ctx.options.project_needs and COMPAT not in text \
            else None
        judged = []
        for m in commands:  # trl-compat joins the first command that installs trl
            judged.append((m, pip_install_line(_PIP + m.group("rest"), table, add)))
            add = None if judged[-1][1][2] else add
        if not any(installs_trl for _m, (_line, _messages, installs_trl) in judged):
            return text
        forks = {_logical_start(text, m.start("head")) for m, _judged in judged
                 if trl_reference(re.sub(r"[\"']", " ", m.group("rest")))}
        out: list[str] = []
        pos = 0
        for m, (line, messages, _installs) in judged:
            new_rest = line[len(_PIP):]
            out.append(text[pos:m.start("rest")])
            out.append(new_rest)
            pos = m.end("rest")
            for message in messages:
                ctx.report(Finding(self.id, message, _line_of(text, m.start("head")), 1, self.anchor, "info", True))
        out.append(text[pos:])
        self._python_image(text, ctx)
        return self._mark_forks("".join(out), text, sorted(forks), ctx)

    def _mark_forks(self, new: str, text: str, starts: list[int], ctx: RuleContext) -> str:
        """A marker above each command line installing trl from a VCS / URL / path (the manifests' fork message);
        the rewrites above never add or remove a line, so the original line numbers hold in `new`."""
        lines = new.splitlines(keepends=True)
        marker = todo_text(_fork_message(ctx), self.anchor, self.id)
        for line in reversed(starts):
            ctx.report(Finding(self.id, _fork_message(ctx), line, 1, self.anchor, "manual", False))
            if line > 1 and same_marker(lines[line - 2], marker):
                continue
            indent = re.match(r"[ \t]*", lines[line - 1]).group(0)  # type: ignore[union-attr]
            newline = "\r\n" if lines[line - 1].endswith("\r\n") else "\n"
            lines.insert(line - 1, indent + marker + newline)
        return "".join(lines)

    def _python_image(self, text: str, ctx: RuleContext) -> None:
        floor = python_floor(ctx.options.target_trl)
        if floor is None:
            return
        for m in _FROM_PYTHON.finditer(text):
            version = m.group("version") or f"3.{m.group('tag')[1:]}"
            if Version(version) not in floor.specifier:
                ctx.report(Finding(self.id, f"the image's Python {version} is below what TRL "
                                            f"{ctx.options.target_trl} requires ({floor.specifier}): use a newer "
                                            "base image",
                                   _line_of(text, m.start()), 1, self.anchor, "warning", False))


def _line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _logical_start(text: str, at: int) -> int:
    """The 1-based line where the command line holding offset `at` begins (backslash continuations followed back)."""
    lines = text.splitlines()
    n = _line_of(text, at)
    while n > 1 and lines[n - 2].rstrip().endswith("\\"):
        n -= 1
    return n


MIGRATION = InstallCommands()
