"""transformers 4.47 removed `transformers.modeling_utils.shard_checkpoint` (atlas: last in 4.46).

Its successor, `huggingface_hub.split_torch_state_dict_into_shards`, is not a drop-in: it returns a
`StateDictSplit` (`filename_to_tensors`: file -> tensor *names*, `tensor_to_filename`, `is_sharded`, `metadata`)
where `shard_checkpoint` returned `(shards, index)` with `shards` mapping file -> the tensors themselves and `index`
None when unsharded; its filename pattern is `filename_pattern="model{suffix}.safetensors"` where `shard_checkpoint`
took `weights_name="pytorch_model.bin"`; the default `max_shard_size` is "5GB" there, "10GB" in
`shard_checkpoint` (transformers 4.46.3 `modeling_utils.py`). So the code
is left as it is and marked: save with `model.save_pretrained(dir, max_shard_size=...)` (4.56 and 5.x) when a model
object is at hand, else rewrite the loop around `split_torch_state_dict_into_shards`.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, SymbolMigration

MESSAGE = ("shard_checkpoint was removed in transformers 4.47: use model.save_pretrained(dir, max_shard_size=...), "
           "or huggingface_hub.split_torch_state_dict_into_shards (returns file -> tensor names, not (shards, index))")


class RemovedShardCheckpoint(SymbolMigration):
    summary = "transformers.modeling_utils.shard_checkpoint (removed in 4.47): TODO (save_pretrained / huggingface_hub)"
    triggers = ("shard_checkpoint",)
    requires = ("transformers",)
    symbols = {"transformers.modeling_utils.shard_checkpoint": Gone(MESSAGE)}


MIGRATION = RemovedShardCheckpoint()
