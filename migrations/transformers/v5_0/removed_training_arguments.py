"""transformers 5.0 removed 26 `TrainingArguments` fields (the atlas: fields of 4.57.6 missing from 5.0.0).

Renamed where 4.56.2 already maps the old field onto the new one (read in its `training_args.py`), so the new
spelling behaves the same on every release a migrated manifest allows:

* `no_cuda=` -> `use_cpu=` (4.56: `self.use_cpu = self.no_cuda`);
* `per_gpu_train_batch_size=` / `per_gpu_eval_batch_size=` -> `per_device_*` (4.56: the batch size is
  `(per_gpu or per_device) * max(1, n_gpu)` either way);
* `push_to_hub_token=` -> `hub_token=` (4.56: `self.hub_token = self.push_to_hub_token`).

Dropped where it changed nothing on the releases a migrated manifest allows (read in 4.56.2 / 4.57.6's
`training_args.py`):

* `use_mps_device=`: 4.56 warns that it is deprecated ("no action from user is required") and raises when the
  device it picked anyway is not MPS; nothing else reads it: MPS is the device whenever it is available, with or
  without it. Dropped when its value has no side effect and reads no attribute (a literal, a name, a comparison such
  as smol-course's `use_mps_device=(True if device == "mps" else False)`); otherwise marked;
* `save_safetensors=True`: the 4.x default; 5.0 always saves safetensors. `False` (PyTorch `.bin` files) is marked;
* `half_precision_backend="auto"` / `fp16_backend="auto"`: the 4.x default (4.56's Trainer turns "auto" into CPU AMP
  on the CPU with bf16 and native AMP otherwise; `fp16_backend` is copied into `half_precision_backend` only when it
  is not "auto"). `"apex"`, `"cpu_amp"` are marked.

Marked where the successor is a decision: `save_safetensors=False` (5.x always saves safetensors), `include_inputs_for_metrics` (`include_for_metrics=["inputs"]`),
`fp16_backend` / `half_precision_backend` other than "auto", `torchdynamo` (`torch_compile_backend=`), `use_mps_device` (not a plain value),
`tpu_num_cores`, `jit_mode_eval`, `include_tokens_per_second` (`include_num_input_tokens_seen=`),
`push_to_hub_model_id` / `push_to_hub_organization` (`hub_model_id="org/name"`), `adafactor` (`optim="adafactor"`),
`fsdp_min_num_params` / `fsdp_transformer_layer_cls_to_wrap` (`fsdp_config={...}`), `use_legacy_prediction_loop`,
`past_index`, `ray_scope`, `mp_parameters`, `tpu_metrics_debug`, `fp16_opt_level`. Applied to `TrainingArguments`,
`Seq2SeqTrainingArguments` and TRL configs. `overwrite_output_dir` has its own rule (`overwrite-output-dir`: no 4.x
Trainer code read it, so it is dropped where nothing else does).
"""

from __future__ import annotations

from migrations.kinds.options import OptionChange, OptionMigration
from migrations.kinds.training_args import RENAMED_FIELDS

TRAINING_ARGUMENTS = frozenset({
    "transformers.TrainingArguments", "transformers.training_args.TrainingArguments",
    "transformers.Seq2SeqTrainingArguments", "transformers.training_args_seq2seq.Seq2SeqTrainingArguments",
})
_TRL = {"callee_prefixes": ("trl.",), "callee_suffixes": ("Config",)}
RENAMED = RENAMED_FIELDS
DROPPED = {  # key: (message, literal values that may be dropped (empty: any plain value), TODO otherwise)
    "use_mps_device": ("4.56 only warned it is deprecated and checked that the device is MPS, which it picks whenever "
                       "available without it; removed in transformers 5.0", (),
                       "MPS is used automatically when available: drop it"),
    "save_safetensors": ("True is the 4.x default; transformers 5.0 removed it and always saves safetensors", (True,),
                         "5.x always saves safetensors (False saved PyTorch .bin files): drop it"),
    "half_precision_backend": ('"auto" is the 4.x default (4.56 picks CPU AMP or native AMP itself); removed in '
                               "transformers 5.0", ("auto",),
                               "apex/amp backends are gone: drop it (native AMP)"),
    "fp16_backend": ('"auto" is the 4.x default (4.56 copies any other value into half_precision_backend); removed '
                     "in transformers 5.0", ("auto",), "apex/amp backends are gone: drop it (native AMP)"),
}
DECIDE = {
    "include_inputs_for_metrics": "use include_for_metrics=[\"inputs\"] (works since 4.46)",
    "torchdynamo": "use torch_compile=True, torch_compile_backend=<backend>",
    "tpu_num_cores": "drop it (set TPU cores through the launcher)",
    "jit_mode_eval": "drop it (TorchScript evaluation is gone)",
    "include_tokens_per_second": "use include_num_input_tokens_seen= for token counts",
    "push_to_hub_model_id": "use hub_model_id=\"<org>/<name>\"",
    "push_to_hub_organization": "use hub_model_id=\"<org>/<name>\"",
    "adafactor": "use optim=\"adafactor\"",
    "fsdp_min_num_params": "move it into fsdp_config={\"min_num_params\": ...}",
    "fsdp_transformer_layer_cls_to_wrap": "move it into fsdp_config={\"transformer_layer_cls_to_wrap\": [...]}",
    "use_legacy_prediction_loop": "drop it (only the evaluation loop remains)",
    "past_index": "drop it (models return their own cache)",
    "ray_scope": "drop it (set the scope in your Ray Tune call)",
    "mp_parameters": "drop it (SageMaker model parallel is gone)",
    "tpu_metrics_debug": "drop it (use debug=\"tpu_metrics_debug\")",
    "fp16_opt_level": "drop it (apex is gone)",
}


class RemovedTrainingArguments(OptionMigration):
    summary = ("TrainingArguments fields removed in transformers 5.0: renamed where 4.56 maps them, dropped where they "
               "did nothing, else TODO")
    triggers = tuple(RENAMED) + tuple(DROPPED) + tuple(DECIDE)
    requires = ("transformers", "trl")
    changes = tuple(
        OptionChange(TRAINING_ARGUMENTS, old, "rename-key", new_key=new,
                     message="removed in transformers 5.0; 4.56 already maps it the same way", **_TRL)
        for old, new in RENAMED.items()
    ) + tuple(
        OptionChange(TRAINING_ARGUMENTS, old, "drop", message=message, drop_literals=literals,
                     todo=f"TrainingArguments({old}=) was removed in transformers 5.0: {what}", **_TRL)
        for old, (message, literals, what) in DROPPED.items()
    ) + tuple(
        OptionChange(TRAINING_ARGUMENTS, old, "todo",
                     message=f"TrainingArguments({old}=) was removed in transformers 5.0: {what}", **_TRL)
        for old, what in DECIDE.items()
    )


MIGRATION = RemovedTrainingArguments()
