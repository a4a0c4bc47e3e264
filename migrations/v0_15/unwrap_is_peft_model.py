"""TRL 0.15 took `is_peft_model` off `trl.models.utils.unwrap_model_for_generation` (atlas: 0.9 - 0.14 have
`(model, accelerator, is_peft_model=False[, gather_deepspeed3_params=True])`; 0.15 - 1.16 have no such parameter).

The classic PPOTrainer of 0.9 - 0.14 passed `is_peft_model=self.is_peft_model`, and so does every copy of it a project
vendored or subclassed, which raises TypeError on 0.15+. What the parameter did, in every release that had it (read
from the 0.9.2 - 0.13.0 wheels): `unwrapped_model.pretrained_model.disable_adapter()`, a call of peft's
`disable_adapter`, which is a context manager (`@contextmanager` in every peft release) and so does nothing unless
entered with `with`. The keyword therefore changed nothing in a call that ran, and it is dropped. A value that is not
a plain name or attribute read (a call may do something) is left and marked; a third positional argument is left as
it is (it was `is_peft_model` before 0.15 and is `gather_deepspeed3_params` since: which release the code was written
for is not in the call).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration
from migrations.kinds.cst import drop_kwarg, kwarg, side_effect_free
from migrations.kinds.imports import trl_refs


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        arg = kwarg(updated_node, "is_peft_model")
        if arg is None or not any(r.name == "unwrap_model_for_generation" for r in trl_refs(self, original_node.func)):
            return updated_node
        if not side_effect_free(arg.value):
            self.todo(original_node, "unwrap_model_for_generation() takes no is_peft_model= since TRL 0.15 (it did "
                                     "nothing: peft's disable_adapter() was called outside a `with`): drop it, keeping "
                                     "what evaluating its value does")
            return updated_node
        self.note(original_node, "unwrap_model_for_generation(is_peft_model=) dropped: TRL 0.15 removed it, and it "
                                 "did nothing before (peft's disable_adapter() called outside a `with`)")
        return drop_kwarg(updated_node, "is_peft_model")


class UnwrapIsPeftModel(PythonMigration):
    summary = "unwrap_model_for_generation(..., is_peft_model=...) (removed in TRL 0.15, a no-op before) -> dropped"
    triggers = ("is_peft_model",)
    requires = ("unwrap_model_for_generation",)
    fix_safety = "safe"
    transformer = _Transformer


MIGRATION = UnwrapIsPeftModel()
