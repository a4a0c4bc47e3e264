"""warmup-ratio: `TrainingArguments(warmup_ratio=r)` (and a TRL config's) after transformers 5.15 removed the field.

The facts (read from the wheels): transformers 4.56.2 has `warmup_ratio: float` and an int `warmup_steps` (its
`__post_init__` rejects a float), and warms up over `warmup_steps` when it is above 0, else over
`ceil(steps * warmup_ratio)`. 5.0 made `warmup_steps: float` (below 1: a ratio of the training steps) and deprecated
`warmup_ratio`, turning it into `warmup_steps = warmup_ratio` whenever it is not None; 5.15 removed the field (a
`TypeError`). TRL never declared it: every TRL config inherits it from `TrainingArguments`, so the atlas's "left
SFTConfig in TRL 1.11" is the transformers release of that TRL's era, not a TRL change. TRL 1.13-1.16 require
`transformers>=4.56.2`, so the rewritten manifest allows 4.56.2 .. 5.24 unless the repository pins transformers 5.

No single keyword is valid on both ends, so the rule writes, in a call whose callee resolves to
`transformers.TrainingArguments` (or `Seq2SeqTrainingArguments`) or to a TRL config:

* where the repository's own transformers pin admits no 4.x release (the manifest keeps it): `warmup_steps=r` for a
  literal `0 < r < 1` and no `warmup_steps=` beside it: the same schedule on every 5.x;
* otherwise `**warmup(r)` (or `**warmup(r, steps=s)` when `warmup_steps=s` is passed too, that keyword removed),
  `warmup` from `compat.trl` (`compat.trl._warmup`): it returns the keywords exactly as written where the installed
  `TrainingArguments` still has the field (4.56.2 .. 5.14: the call is the original one), and `warmup_steps=` on
  5.15+, chosen as 4.x chose (the steps when above 0, else the ratio; a ratio >= 1 raises, it has no 5.x spelling).
  The `**` splat sits where `warmup_ratio=` was; a `warmup_steps=` moved there must be, like every argument it moves
  past, free of side effects (names, attributes, literals), so the evaluation order does not matter;
* a literal `warmup_ratio=0` / `0.0` with no `warmup_steps=` is dropped: it is the default on 4.x, and on 5.0-5.14 it
  set `warmup_steps` to 0.0, the default's schedule.

Marked instead (the exact fix in the marker): a call with a `*`/`**` splat that may carry either keyword (not
`**length_grouping(...)`, rule `group-by-length`'s), or whose
moved `warmup_steps=` or the arguments between are not side-effect free, or a module that binds `warmup` itself.
A local class named like a config (`class SFTConfig`) is not resolved to TRL and is left alone. A 4.x transformers
target (`--target-transformers 4`, manifest `<5`) never runs the rule: `warmup_ratio=` is valid there.
"""

from __future__ import annotations

import libcst as cst

from migrations.kinds.cst import (
    kwarg,
    literal_value,
    make_kwarg,
    replace_args,
    side_effect_free,
)
from migrations.kinds.training_args import (
    COMPAT_SPLATS,
    HelperSplatMigration,
    HelperSplatTransformer,
    config_call,
    foreign_splat,
)

_MISSING = object()
_MARK = ("warmup_ratio= is gone in transformers 5.15, pass **warmup(ratio) from compat.trl instead; not rewritten: "
         "{why}; or warmup_steps=<ratio> once the manifest requires transformers>=5")


class _Transformer(HelperSplatTransformer):
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        ratio = kwarg(updated_node, "warmup_ratio")
        if ratio is None or not config_call(self, original_node.func, ("warmup_ratio", "warmup_steps")):
            return updated_node
        args = list(updated_node.args)
        steps = kwarg(updated_node, "warmup_steps")
        if foreign_splat(self, original_node, COMPAT_SPLATS["compat.trl.warmup"]):
            self.todo(original_node, _MARK.format(why="this call has a * or ** splat (it may pass warmup_steps)"))
            return updated_node
        value = literal_value(ratio.value, _MISSING)
        if steps is None and isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
            self.note(original_node, "warmup_ratio=0 dropped: the default (4.x), the default schedule (5.0-5.14)")
            return replace_args(updated_node, [a for a in args if a is not ratio])
        if self.plain and steps is None and isinstance(value, float) and 0 < value < 1:
            self.note(original_node, "warmup_ratio= -> warmup_steps= (the manifest requires transformers 5: a "
                                     "warmup_steps below 1 is a ratio there)")
            return replace_args(updated_node, [a.with_changes(keyword=cst.Name("warmup_steps")) if a is ratio else a
                                               for a in args])
        if not self.helper_ok:
            self.todo(original_node, _MARK.format(why="this module binds a name `warmup` of its own"))
            return updated_node
        call_args = [cst.Arg(ratio.value)]
        if steps is not None:
            at, to = sorted((args.index(steps), args.index(ratio)))
            if not all(side_effect_free(a.value) for a in args[at:to + 1]):
                self.todo(original_node, _MARK.format(why="warmup_steps= is passed too and moving it past the "
                                                          "arguments between could change what runs"))
                return updated_node
            call_args.append(make_kwarg("steps", steps.value))
        helper = cst.Call(cst.Name("warmup"), call_args)
        splat = ratio.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, star="**", value=helper)
        self.needed = True
        self.note(original_node, "warmup_ratio= -> **warmup(...) (compat.trl: warmup_ratio= where the installed "
                                 "transformers has it, warmup_steps= on 5.15+)")
        return replace_args(updated_node, [splat if a is ratio else a for a in args if a is not steps])


class WarmupRatio(HelperSplatMigration):
    summary = ("TrainingArguments / TRL config warmup_ratio= (removed in transformers 5.15) -> **warmup(r) from "
               "compat.trl, or warmup_steps=r under a transformers>=5 pin")
    triggers = ("warmup_ratio",)
    requires = ("transformers", "trl")
    helper, plain_from, transformer = "warmup", "5.0.0", _Transformer


MIGRATION = WarmupRatio()
