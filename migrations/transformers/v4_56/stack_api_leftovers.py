"""stack-api-leftovers: whatever transformers/peft/accelerate use the rules left that the stack rejects is marked.

The library counterpart of `trl-api-leftovers`. It runs after every other rule (`order = RUNS_LAST` in the
transformers folder, the last library folder to run; it lives in 4.56's folder, the transformers floor of every TRL
target 1.13-1.16, so it applies to every run with library targets) and asks `trl-compat check`'s analyzer what is
still wrong with the file as rewritten: an import of a transformers/peft/accelerate name the stack lacks, a keyword a
constructor of theirs rejects, and a keyword a TRL config inherits from `TrainingArguments` (`SFTConfig(warmup_ratio=)`,
which breaks with transformers). Each such problem whose statement carries no `# TODO(trl-compat)` marker yet gets
one (`migrations.kinds.leftovers`), so a file that does not pass the check says where and why.

Which releases: the rewritten code must work on every release the rewritten manifest allows, which is the floor the
manifest rule writes (`migrations.kinds.requirements.floors_for`: transformers >= 4.56.2, with `<5` for a 4.x
transformers target; peft, accelerate), narrowed by the repository's own pin where it admits some of those releases
(`migrations.kinds.pins.requirement_spec`), up to the run's target. The check runs at both ends, the floor's lowest release
in the atlas and the target: a name added after the floor (`transformers.Qwen3VLForConditionalGeneration`, 4.57) fails
at the floor, one removed after it (`transformers.CLIPFeatureExtractor`, 5.0) at the target. A problem only the floor
has is marked "needs transformers>=X": raise the manifest's pin by hand if the project means to (this rule does not:
one example notebook should not raise a whole project's floor silently). Not checked: a name removed and added back
between the two ends.

Markers only, never a rewrite (safe).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst
from packaging.version import Version

from migrations.base import RUNS_LAST, Options, PythonMigration, RuleContext
from migrations.kinds.leftovers import (
    callable_and_keyword,
    checker,
    mark_lines,
    trl_owned,
)

if TYPE_CHECKING:
    from compat.check.analyze import Problem

LIBRARIES = ("transformers", "peft", "accelerate")


def _ends(options: Options, path: str | None) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(floors, targets): the (library, atlas release) pairs at the two ends of what the rewritten manifest allows.

    The lower end is the lowest release both the floor and the repository's own pin of the library admit (a
    repository that already requires `transformers>=4.57` keeps that pin, so 4.56.2 is not its floor); where the pin
    admits none of the floor's releases (`transformers==4.38.2`), the manifest rule replaces it and the floor stands."""
    from migrations.atlas import Atlas, AtlasError
    from migrations.kinds.pins import requirement_spec
    from migrations.kinds.requirements import floors_for

    table = floors_for(options.target_trl, transformers=options.target("transformers"))
    floors: list[tuple[str, str]] = []
    targets: list[tuple[str, str]] = []
    for library in LIBRARIES:
        wanted = options.target(library)
        if wanted is None:
            continue
        try:
            atlas = Atlas.load(library)
            target = atlas.release(wanted)
        except (AtlasError, ValueError):
            continue
        floor = table.get(library)
        admitted = [r for r in atlas.releases() if Version(r) <= Version(target)
                    and (floor is None or floor.specifier.contains(r, prereleases=True))]
        own = requirement_spec(str(Path(path).parent), library) if path else None
        pinned = [r for r in admitted if own is not None and own.contains(r, prereleases=True)]
        admitted = pinned or admitted
        targets.append((library, target))
        floors.append((library, admitted[0] if admitted else target))
    return tuple(floors), tuple(targets)


def _added_after(problem: Problem, floor: str) -> str | None:
    """The release that added what `problem` (found at `floor`) names, when it came after the floor (for a TRL
    config keyword, the release of transformers whose `TrainingArguments` added it: `trackio_space_id`, 4.57)."""
    from migrations.atlas import Atlas

    name, keyword = callable_and_keyword(problem)
    if keyword is not None:
        if name.split(".")[0] == "trl":  # a TRL config's keyword inherited from TrainingArguments: transformers'
            name = "transformers.TrainingArguments"
    elif problem.code not in ("missing-name", "missing-module"):
        return None
    atlas = Atlas.load(name.split(".")[0])
    added = [e.release for e in atlas.history(name, keyword)
             if e.kind in ("added", "renamed") and Version(e.release) > Version(floor)]
    return added[0] if added else None


def _message(problem: Problem) -> str:
    """The check's message with a missing name spelled short (`CLIPFeatureExtractor`, the import below says
    where from), so that the marker's first clause names it within the width."""
    if problem.code != "missing-name":
        return problem.message
    return problem.message.replace(f"`{problem.name}`", f"`{problem.name.rsplit('.', 1)[-1]}`", 1)


class StackApiLeftovers(PythonMigration):
    fix_safety = "safe"  # markers only
    summary = ("what transformers/peft/accelerate (floor and target) still reject after every rule (trl-compat "
               "check) -> marked at its statement")
    order = RUNS_LAST  # after every other rule of the last library folder (transformers), so after every rule
    triggers = (*LIBRARIES, "trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        module = wrapper.module
        options = ctx.options
        floors, targets = _ends(options, ctx.path)
        if not targets:
            return module
        trl = options.atlas_trl
        found: dict[tuple[int, str, str], str] = {}  # (line, code, name) -> message; the target's message wins
        try:
            if floors != targets:
                floor_of = dict(floors)
                for problem in checker(trl, floors).check(module.code):
                    if trl_owned(problem):
                        continue
                    library = problem.name.split(".")[0]
                    library = "transformers" if library == "trl" else library  # an inherited config keyword
                    added = _added_after(problem, floor_of[library]) if library in floor_of else None
                    message = _message(problem)
                    if added is not None:
                        message = f"needs {library}>={added} (raise the manifest's pin): {message}"
                    found[(problem.line, problem.code, problem.name)] = message
            for problem in checker(trl, targets).check(module.code):
                if not trl_owned(problem):
                    found[(problem.line, problem.code, problem.name)] = _message(problem)
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            return module
        lines: dict[int, list[str]] = {}
        for (line, _code, _name), message in sorted(found.items()):
            lines.setdefault(line, []).append(message)
        return mark_lines(self, wrapper, ctx, lines)


MIGRATION = StackApiLeftovers()
