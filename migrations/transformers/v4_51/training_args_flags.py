"""`TrainingArguments` flags on the command lines of shell launchers (and Markdown fences) that the raised transformers
rejects: `deepspeed llava/train/train_mem.py ... --evaluation_strategy "no"` (YiyangZhou/POVID's 14 launchers, LLaVA's
and their copies) stops with "Some specified arguments are not used by the HfArgumentParser" once the manifest installs
transformers >= 4.56.2 (`evaluation_strategy` is gone by 4.51; the Python side is rule `eval-strategy`).

A command is judged when its script's first `HfArgumentParser` / `TrlParser` holds a `TrainingArguments`: transformers'
own, a TRL config, or a project subclass of one (`class TrainingArguments(transformers.TrainingArguments)`), found in
the script or in the project module whose function it runs (`migrations.kinds.cli_commands.training_parser`). A flag
that one of the project's own dataclasses on the way declares is the project's and left alone. Of the others, a flag
that is a `TrainingArguments` field of a 4.x release (transformers 4.30 - 4.57 in the atlas) and not of the run's
transformers target:

* is renamed where the successor behaves the same on every release a migrated manifest allows (the renames of the
  Python rules, read in the wheels): `--evaluation_strategy` -> `--eval_strategy` (4.41), and on a 5.x target
  `--no_cuda` -> `--use_cpu`, `--per_gpu_*_batch_size` -> `--per_device_*`, `--push_to_hub_token` -> `--hub_token`;
* is marked above the command otherwise (`--use_mps_device`, `--overwrite_output_dir`, `--logging_dir`, ...: each
  needs its value read, and the Python rules' choices depend on the code that reads the field).
"""

from __future__ import annotations

import functools
from pathlib import Path

from packaging.version import Version

from migrations.base import RuleContext
from migrations.kinds import grammar
from migrations.kinds.cli_commands import (
    CommandFlagsMigration,
    Verdict,
    script_path,
    training_parser,
)
from migrations.kinds.training_args import RENAMED_FIELDS

#: the renames that hold on every release from 4.56.2 on (the floor of the migrated manifests)
RENAMED = {"evaluation_strategy": "eval_strategy", **RENAMED_FIELDS}
#: the MIGRATION.md section of the Python rule that says what to do with a field (else `removed-training-arguments`)
SECTIONS = {"overwrite_output_dir": "overwrite-output-dir", "logging_dir": "logging-dir", "warmup_ratio": "warmup-ratio",
            "group_by_length": "group-by-length"}


@functools.lru_cache(maxsize=8)
def _fields(release: str) -> frozenset[str]:
    from migrations.atlas import Atlas

    atlas = Atlas.load("transformers")
    resolved = atlas.resolve(release, "transformers.TrainingArguments")
    return frozenset(atlas.config_fields(release, resolved.qualname)) if resolved is not None else frozenset()


@functools.lru_cache(maxsize=8)
def _gone(release: str) -> dict[str, str]:
    """Fields of `TrainingArguments` in a 4.x release of the atlas and not in `release`: field -> the first release
    without it."""
    from migrations.atlas import Atlas

    releases = [r for r in Atlas.load("transformers").releases() if Version(r) <= Version(release)]
    out: dict[str, str] = {}
    seen: set[str] = set()
    for r in releases:
        now = _fields(r)
        for name in seen - now:
            out.setdefault(name, r)
        if Version(r).major == 4:
            seen |= now
    target = _fields(release)
    return {name: since for name, since in out.items() if name not in target}


def _target_release(ctx: RuleContext) -> str | None:
    from migrations.atlas import Atlas

    target = ctx.options.target("transformers")
    if target is None:
        return None
    return next((r for r in reversed(Atlas.load("transformers").releases()) if Version(r) <= target), None)


class TrainingArgsFlags(CommandFlagsMigration):
    summary = ("TrainingArguments flags in shell launchers that the raised transformers rejects: renamed "
               "(--evaluation_strategy -> --eval_strategy, ...) or marked")
    triggers = ("--",)
    requires = (".py",)
    patterns = ("*.sh", "*.md")
    order = 63

    def judge(self, word: str, flags: list[str], here: Path, ctx: RuleContext) -> Verdict | None:
        from migrations.kinds.pins import committed_text

        release = _target_release(ctx)
        if release is None:
            return None
        gone = _gone(release)
        names = [flag.replace("-", "_") for flag in flags]
        if not any(name in gone for name in names):
            return None
        path = script_path(word, here)
        text = committed_text(path) if path is not None else None
        if not text:
            return None
        try:
            tree = grammar.parse(text)
        except (SyntaxError, ValueError):
            return None
        parser = training_parser(tree, path)
        if parser is None or not parser.training:
            return None
        target = _fields(release)
        verdict, rejected = Verdict(), []
        for flag, name in zip(flags, names):
            if name not in gone or name in parser.own_fields:
                continue
            new = RENAMED.get(name)
            if new is not None and new in target and new not in names:
                verdict.renames[flag] = new
                verdict.notes[flag] = (f"--{flag} -> --{new} (TrainingArguments.{name} is gone by transformers "
                                       f"{gone[name]}; {new} works from 4.56.2 on)")
            else:
                rejected.append(flag)
        if rejected:
            listed = ", ".join(f"--{f}" for f in rejected)
            since = ", ".join(sorted({gone[f.replace("-", "_")] for f in rejected}, key=Version))
            sections = ", ".join(dict.fromkeys(
                f"MIGRATION.md#{SECTIONS.get(f.replace('-', '_'), 'removed-training-arguments')}" for f in rejected))
            verdict.marker = (f"{listed} not accepted by {word} on transformers {release} (TrainingArguments lost "
                              f"the field in {since}): drop or replace it as {sections} says for the keyword")
        return verdict if verdict.renames or verdict.marker else None


MIGRATION = TrainingArgsFlags()
