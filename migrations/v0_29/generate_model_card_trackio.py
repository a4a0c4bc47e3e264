"""TRL 0.29 gave `trl.trainer.utils.generate_model_card` a required parameter `trackio_url`, between `wandb_url` and
`trainer_name` (atlas: 0.12 - 0.28 have no such parameter; 0.29 - 1.16 have it, without a default).

A call written for 0.12 - 0.28 (a vendored or subclassed trainer's `create_model_card`) raises TypeError on 0.29+.
Every model-card template of 1.16 renders the Trackio badge only `{% if trackio_url %}`, so `trackio_url=None` gives
the card the older release gave: the rewrite is exact. By keyword it is added after `wandb_url=`; a call that passes
`trainer_name` by position gets `None` in its place. A call with a `*` / `**` splat, or one that already passes it,
is left alone, as is one with `None` in the seventh place (`trainer_name` before 0.29 is never None).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration
from migrations.kinds.cst import dotted, kwarg, make_kwarg, set_kwarg
from migrations.kinds.imports import trl_refs

_POSITION = 6  # base_model, model_name, hub_model_id, dataset_name, tags, wandb_url, [trackio_url], trainer_name


def _with_trackio_url(call: cst.Call) -> cst.Call:
    """`call` with `trackio_url=None` in its place, the new argument taking the separator of the one it follows."""
    args = list(call.args)
    if sum(a.keyword is None for a in args) > _POSITION:
        # trainer_name (and what follows) by position: None goes where trainer_name was, with the comma after
        # wandb_url, so a one-line or a one-per-line call keeps its layout
        new = cst.Arg(cst.Name("None"), comma=args[_POSITION - 1].comma)
        return call.with_changes(args=[*args[:_POSITION], new, *args[_POSITION:]])
    after = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "wandb_url"), None)
    if after is None or after == len(args) - 1:
        return set_kwarg(call, "trackio_url", cst.Name("None"))
    new = make_kwarg("trackio_url", cst.Name("None")).with_changes(comma=args[after].comma)
    return call.with_changes(args=[*args[: after + 1], new, *args[after + 1:]])


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not any(r.name == "generate_model_card" for r in trl_refs(self, original_node.func)):
            return updated_node
        if any(a.star for a in updated_node.args) or kwarg(updated_node, "trackio_url") is not None:
            return updated_node
        positional = [a for a in updated_node.args if a.keyword is None]
        if len(positional) > _POSITION and dotted(positional[_POSITION].value) == "None":
            return updated_node  # trackio_url=None by position: trainer_name, required before 0.29, is never None
        self.note(original_node, "generate_model_card(trackio_url=None): TRL 0.29 made it a required parameter; None "
                                 "renders the card the older release rendered")
        return _with_trackio_url(updated_node)


class GenerateModelCardTrackio(PythonMigration):
    summary = "generate_model_card(...) without trackio_url (required since TRL 0.29) -> trackio_url=None"
    triggers = ("generate_model_card",)
    requires = ("trl",)
    fix_safety = "safe"
    transformer = _Transformer


MIGRATION = GenerateModelCardTrackio()
