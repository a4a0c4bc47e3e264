"""peft 0.10 removed `prepare_model_for_int8_training` (a deprecated alias since 0.4.0, atlas: its signature is
`(*args, **kwargs)` in 0.4-0.9, forwarding to `prepare_model_for_kbit_training`).

`prepare_model_for_kbit_training(model, use_gradient_checkpointing=True, gradient_checkpointing_kwargs=None)` exists
in every peft from 0.4 to 0.21, so a call that passes only the model (and `use_gradient_checkpointing`) is renamed
exactly. The int8-era keywords `output_embedding_layer_name=` and `layer_norm_names=` went with 0.4's alias (kbit
casts every non-int8 parameter to fp32 on its own): such a call is marked.
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
        if extra or len(positional) > 1 or any(a.star for a in call.args):
            return (f"{_NAME} was removed in peft 0.10: prepare_model_for_kbit_training(model, "
                    "use_gradient_checkpointing=...) takes no output_embedding_layer_name / layer_norm_names "
                    "(it casts non-quantized parameters to fp32 itself); drop them")
        return None


MIGRATION = RemovedInt8Training()
