"""peft 0.10 removed `prepare_model_for_int8_training` (a deprecated alias since 0.4.0, atlas: its signature is
`(*args, **kwargs)` in 0.4-0.9, forwarding to `prepare_model_for_kbit_training`; in 0.3 it had that function's
parameters and body).

`prepare_model_for_kbit_training(model, use_gradient_checkpointing=True, gradient_checkpointing_kwargs=None)` exists
in every peft from 0.4 to 0.21, so a call that passes the model and these keywords is renamed exactly. The keywords
`output_embedding_layer_name=` and `layer_norm_names=` are peft 0.2's (read from the 0.2.0 wheel); 0.3 - 0.9 raise
TypeError on them, so code that passes them ran on peft 0.2 and relies on what 0.2 did (only the parameters named like
`layer_norm` cast to fp32, the output layer wrapped in an fp32 cast), which kbit does not do. Such a file points at
`compat.trl.prepare_model_for_int8_training`, peft 0.2's function kept in trl-compat (`compat._peft`), every use of
the name in it. A second positional argument is marked: it was `output_embedding_layer_name` on 0.2 and
`use_gradient_checkpointing` on 0.4 - 0.9, and which peft the code ran on is not in the call.
"""

from __future__ import annotations

import libcst as cst

from migrations.kinds.symbols import Moved, SymbolMigration

_NAME = "prepare_model_for_int8_training"
_PATHS = ("peft", "peft.utils", "peft.utils.other")
_KBIT = {"use_gradient_checkpointing", "gradient_checkpointing_kwargs"}
_PEFT_0_2 = {"output_embedding_layer_name", "use_gradient_checkpointing", "layer_norm_names"}
_COPY = Moved("compat.trl", _NAME, "peft 0.2's function (layer norms in fp32, output layer cast to fp32), kept in "
                                   "trl-compat: the call passes 0.2's keywords")


class RemovedInt8Training(SymbolMigration):
    summary = ("peft prepare_model_for_int8_training (removed in 0.10) -> prepare_model_for_kbit_training, or "
               "peft 0.2's function kept in compat.trl where the call uses 0.2's keywords")
    triggers = (_NAME,)
    requires = ("peft",)
    symbols = {f"{m}.{_NAME}": Moved(m, "prepare_model_for_kbit_training") for m in _PATHS}
    conditional = frozenset(symbols)

    def convertible(self, qname: str, call: cst.Call | None) -> str | Moved | None:
        if call is None:
            return None  # an import or a reference: the renamed function takes the same first arguments
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        positional = [a for a in call.args if a.keyword is None]
        if len(positional) > 1 or any(a.star for a in call.args):
            return ("use prepare_model_for_kbit_training(model, use_gradient_checkpointing=...) by keyword "
                    f"({_NAME} was removed in peft 0.10; peft 0.2's second parameter was "
                    "output_embedding_layer_name, 0.4 - 0.9's use_gradient_checkpointing)")
        if keywords <= _KBIT:
            return None
        if keywords <= _PEFT_0_2:
            return _COPY
        unknown = sorted(keywords - _KBIT - _PEFT_0_2) or sorted(keywords - _PEFT_0_2)
        return (f"use prepare_model_for_kbit_training(model) (no {_NAME} took {'=, '.join(sorted(keywords))}= "
                f"together: {'=, '.join(unknown)}= is not peft 0.2's; the function was removed in peft 0.10)")


MIGRATION = RemovedInt8Training()
