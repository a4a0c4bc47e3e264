"""trl-api-leftovers: whatever TRL API use the rules left that the target rejects gets a marker at its statement.

Every rule before this one rewrites or marks the breaks it knows. This one runs after all of them (`order =
RUNS_LAST`: after every TRL rule of every release folder; it lives in 1.13's folder, so it applies to every supported
target 1.13-1.16) and asks `trl-compat check`'s
analyzer (`compat.check.analyze.Checker`, the API atlas of the target TRL and libraries) what is still wrong with the
file as rewritten: an import the target lacks, a keyword it rejects, a positional past its signature, a required
argument not passed. Each such TRL problem whose statement carries no `# TODO(trl-compat)` marker yet (on the
statement or in the comment block right above it) gets one, with the check's own message, so a file that does not
pass the check always says where and why (issue "whole repository": "every file that does not carries a marker at
the offending line"). Markers only, never a rewrite (safe).

Left to the library rules that run after the TRL rules (`stack-api-leftovers` marks what they leave): problems of
transformers/peft/accelerate names, and config keywords a TRL config inherits from `TrainingArguments`
(`SFTConfig(warmup_ratio=)`), whose breaks are transformers'. The marking is `migrations.kinds.leftovers`.
A notebook is checked as the engine hands it to the rules, its code cells joined into one module (they share one
namespace, as the check of a notebook reads them), and each marker lands in the cell of its statement.
"""

from __future__ import annotations

import libcst as cst

from migrations.base import RUNS_LAST, PythonMigration, RuleContext
from migrations.kinds.leftovers import checker, mark_lines, trl_owned


class TrlApiLeftovers(PythonMigration):
    fix_safety = "safe"  # markers only
    summary = "what the TRL target still rejects after every rule (trl-compat check) -> marked at its statement"
    order = RUNS_LAST  # after every other TRL rule, of every release folder
    triggers = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        module = wrapper.module
        options = ctx.options
        libraries = tuple((name, str(version)) for name, version in options.targets if name != "trl")
        try:
            problems = checker(options.atlas_trl, libraries).check(module.code)
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            return module
        lines: dict[int, list[str]] = {}
        for problem in problems:
            if trl_owned(problem):
                lines.setdefault(problem.line, []).append(problem.message)
        return mark_lines(self, wrapper, ctx, lines)


MIGRATION = TrlApiLeftovers()
