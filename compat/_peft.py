"""`prepare_model_for_int8_training` as peft 0.2 had it (removed in peft 0.10; in 0.3 - 0.9 an alias of
`prepare_model_for_kbit_training` that raises TypeError on the 0.2 keywords).

Code written against peft 0.2 passes `output_embedding_layer_name=` / `layer_norm_names=`, and relies on what 0.2 did
(read from the 0.2.0 wheel, `peft/utils/other.py`), which `prepare_model_for_kbit_training` does not do:

* every parameter is frozen; on a model loaded in 8-bit, only the 1-d parameters whose name contains one of
  `layer_norm_names` are cast to fp32 (kbit casts every fp16/bf16 parameter);
* on a model loaded in 8-bit with `use_gradient_checkpointing`, the inputs require grads and gradient checkpointing
  is enabled (the same in kbit);
* the output layer (`model.<output_embedding_layer_name>`) is wrapped in a module that feeds it its own dtype and
  returns fp32 (kbit has no such wrapper).

The body below is 0.2.0's, with the wrapper class at module level so it pickles. The migration
`removed-int8-training` points calls that use the 0.2 keywords here.
"""

from __future__ import annotations

from typing import Any

import torch


class CastOutputToFloat(torch.nn.Sequential):
    """The output layer, fed its own weight's dtype, its output cast to fp32 (peft 0.2's local class)."""

    def __init__(self, layer: torch.nn.Module, input_dtype: torch.dtype) -> None:
        super().__init__(layer)
        self.input_dtype = input_dtype

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return super().forward(x.to(self.input_dtype)).to(torch.float32)


def prepare_model_for_int8_training(model: Any, output_embedding_layer_name: str = "lm_head",
                                    use_gradient_checkpointing: bool = True,
                                    layer_norm_names: list[str] | tuple[str, ...] = ("layer_norm",)) -> Any:
    loaded_in_8bit = getattr(model, "is_loaded_in_8bit", False)

    for name, param in model.named_parameters():
        param.requires_grad = False  # freeze the base model's layers
        if loaded_in_8bit and param.ndim == 1 and any(ln in name for ln in layer_norm_names):
            param.data = param.data.to(torch.float32)  # layer norms in fp32 for stability of 8-bit models

    if loaded_in_8bit and use_gradient_checkpointing:
        if hasattr(model, "enable_input_require_grads"):
            model.enable_input_require_grads()
        else:
            def make_inputs_require_grad(module: Any, input: Any, output: torch.Tensor) -> None:
                output.requires_grad_(True)

            model.get_input_embeddings().register_forward_hook(make_inputs_require_grad)
        model.gradient_checkpointing_enable()

    if hasattr(model, output_embedding_layer_name):
        output_embedding_layer = getattr(model, output_embedding_layer_name)
        setattr(model, output_embedding_layer_name,
                CastOutputToFloat(output_embedding_layer, output_embedding_layer.weight.dtype))
    return model
