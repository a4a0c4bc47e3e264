"""peft 0.10 removed `prepare_model_for_int8_training` (a deprecated alias since 0.4.0, atlas: its signature is
`(*args, **kwargs)` in 0.4-0.9, forwarding to `prepare_model_for_kbit_training`; in 0.3 it had that function's
parameters and body).

`prepare_model_for_kbit_training(model, use_gradient_checkpointing=True, gradient_checkpointing_kwargs=None)` exists
in every peft from 0.4 to 0.21, so a call that passes only the model (and `use_gradient_checkpointing`) is renamed
exactly. The keywords `output_embedding_layer_name=` and `layer_norm_names=` are peft 0.2's (read from the 0.2.0
wheel: only the parameters named like `layer_norm` cast to fp32, the output layer wrapped in an fp32 cast); 0.3 - 0.9
raise TypeError on them, so no rewrite is equivalent: such a call is marked with the kbit call and how it differs.
"""

from __future__ import annotations

import libcst as cst

from migrations.kinds.symbols import Moved, SymbolMigration

_NAME = "prepare_model_for_int8_training"
_PATHS = ("peft", "peft.utils", "peft.utils.other")
_OK = {"use_gradient_checkpointing"}


class RemovedInt8Training(SymbolMigration):
    summary = "peft prepare_model_for_int8_training (removed in 0.10) -> prepare_model_for_kbit_training"
    triggers = (_NAME,)
    requires = ("peft",)
    symbols = {f"{m}.{_NAME}": Moved(m, "prepare_model_for_kbit_training") for m in _PATHS}
    conditional = frozenset(symbols)

    def convertible(self, qname: str, call: cst.Call | None) -> str | None:
        if call is None:
            return None  # an import or a reference: the renamed function takes the same first arguments
        extra = [a.keyword.value for a in call.args if a.keyword is not None and a.keyword.value not in _OK]
        positional = [a for a in call.args if a.keyword is None]
        if extra:
            return (f"use prepare_model_for_kbit_training(model) ({_NAME}'s {'=, '.join(extra)}= only ran on peft "
                    "0.2; 0.3 - 0.9 raise TypeError, 0.10 removed the function): it casts every fp16/bf16 parameter "
                    "to fp32, not only the layer norms, and no longer wraps the output layer in an fp32 cast")
        if len(positional) > 1 or any(a.star for a in call.args):
            return ("use prepare_model_for_kbit_training(model, use_gradient_checkpointing=...) by keyword "
                    f"({_NAME} was removed in peft 0.10; peft 0.2's second parameter was "
                    "output_embedding_layer_name)")
        return None


MIGRATION = RemovedInt8Training()
