"""transformers 4.56 renamed `from_pretrained(torch_dtype=)` to `dtype=`.

`PreTrainedModel.from_pretrained` reads `dtype` since 4.56 and still maps `torch_dtype` (with a deprecation warning)
on every 5.x release the atlas holds (read in the wheels' `modeling_utils.py`: `kwargs.pop("dtype", ...)` appears
in 4.56.0, `kwargs.pop("torch_dtype", None)  # kept for BC` in 4.56-5.24). TRL's floor is 4.56.2, so `dtype=` works
on every release a migrated manifest allows: the rename is exact. Applied to `<X>.from_pretrained(...)` of every
transformers class (and peft's `AutoPeftModel*`, which forward their keywords), except configurations, tokenizers
and processors (whose `from_pretrained` keywords set attributes, not the weights' dtype).
"""

from __future__ import annotations

from migrations.kinds.options import OptionChange, OptionMigration


class FromPretrainedDtype(OptionMigration):
    summary = "from_pretrained(torch_dtype=) -> dtype= (transformers >= 4.56, still accepted on 5.x)"
    triggers = ("torch_dtype",)
    requires = ("transformers", "peft")
    changes = (
        OptionChange(frozenset(), "torch_dtype", "rename-key", new_key="dtype",
                     message="transformers 4.56 renamed it; both 4.56.2 and 5.x read dtype=",
                     callee_prefixes=("transformers.", "peft."), callee_suffixes=(".from_pretrained",),
                     callee_excludes=("Config.", "Tokenizer", "Processor.", "FeatureExtractor.")),
    )


MIGRATION = FromPretrainedDtype()
