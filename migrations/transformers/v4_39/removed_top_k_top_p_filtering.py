"""transformers 4.39 removed `top_k_top_p_filtering` (deprecated in 4.38; atlas: `transformers.top_k_top_p_filtering`
and its `transformers.generation` / `transformers.generation.utils` paths, gone from 4.39 on).

No successor function exists on 4.56.2 or 5.x. What it did (transformers 4.38.2, `generation/utils.py`): with
`top_k > 0`, `TopKLogitsWarper(top_k=top_k, filter_value=filter_value, min_tokens_to_keep=min_tokens_to_keep)(None,
logits)`; then, with `0 <= top_p <= 1.0` (always, by default), `TopPLogitsWarper(top_p=top_p, ...)(None, logits)`. Both
warpers are exported by `transformers` on 4.56.2 and every 5.x (atlas), so the marker names that two-line
replacement; the code is left as it is (a call site with its keywords spelled out is a person's job).
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, SymbolMigration

_PATHS = ("transformers.top_k_top_p_filtering", "transformers.generation.top_k_top_p_filtering",
          "transformers.generation.utils.top_k_top_p_filtering")
MESSAGE = ("top_k_top_p_filtering was removed in transformers 4.39: use TopKLogitsWarper(top_k=k)(None, logits), "
           "then TopPLogitsWarper(top_p=p)(None, logits) (what it did; both in transformers 4.56 and 5.x)")


class RemovedTopKTopPFiltering(SymbolMigration):
    summary = "transformers.top_k_top_p_filtering (removed in 4.39): TODO naming TopKLogitsWarper + TopPLogitsWarper"
    triggers = ("top_k_top_p_filtering",)
    requires = ("transformers",)
    symbols = {q: Gone(MESSAGE) for q in _PATHS}


MIGRATION = RemovedTopKTopPFiltering()
