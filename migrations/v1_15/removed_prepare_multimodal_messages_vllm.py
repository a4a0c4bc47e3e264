"""TRL 1.15 removed `prepare_multimodal_messages_vllm` (from `trl` and `trl.data_utils`).

It turned `{"type": "image", "image": PIL}` blocks into vLLM's `image_pil` blocks. TRL 1.15's vLLM client accepts
both block types itself, so with TRL's own generation the call can simply go; code that hands messages to vLLM
directly still needs the conversion. To keep behaviour on every TRL line the rule points the name at
`compat.trl.prepare_multimodal_messages_vllm` (TRL's function where it exists, a faithful copy otherwise).
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_NAME = "prepare_multimodal_messages_vllm"
_TO = Moved("compat.trl", _NAME, "TRL >= 1.15's vLLM client takes image blocks as they are; the call may be dropped")


class PrepareMultimodalMessagesVLLM(SymbolMigration):
    fix_safety = "safe"
    summary = "trl.prepare_multimodal_messages_vllm (removed in 1.15) -> compat.trl.prepare_multimodal_messages_vllm"
    triggers = (_NAME,)
    symbols = {f"trl.{_NAME}": _TO, f"trl.data_utils.{_NAME}": _TO}


MIGRATION = PrepareMultimodalMessagesVLLM()
