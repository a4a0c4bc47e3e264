"""`removed-top-k-top-p-filtering`: marked at the import and each use; the named replacement exists and is what the
removed function did (held against a float64 oracle written out here)."""

from __future__ import annotations

import torch

from migrations.atlas import Atlas
from migrations.transformers.v4_39.removed_top_k_top_p_filtering import (
    MIGRATION as RULE,
)
from tests.migrations._driver import noop, run

PREFIX = "# TODO(trl-compat): top_k_top_p_filtering was removed"  # the marker is cut to 100 columns; the finding has it all
MESSAGE = "top_k_top_p_filtering was removed in transformers 4.39"


def test_import_and_use_are_marked():
    for src in ("from transformers import top_k_top_p_filtering\n\nx = top_k_top_p_filtering(logits, top_k=0, top_p=0.9)\n",
                "from transformers.generation.utils import top_k_top_p_filtering\n\nx = top_k_top_p_filtering(l)\n"):
        out, findings = run(RULE, src)
        lines = out.splitlines()
        assert lines[0].startswith(PREFIX) and lines[1] == src.splitlines()[0]
        assert lines[3].startswith(PREFIX) and lines[4] == src.splitlines()[2]
        assert len(findings) == 2 and not any(f.changed for f in findings)
        assert all(f.message.startswith(MESSAGE) for f in findings)


def test_noop():
    noop(RULE, "from transformers import TopKLogitsWarper\n")
    noop(RULE, "def top_k_top_p_filtering(logits):\n    return logits\n\nx = top_k_top_p_filtering(l)\n")  # own copy
    noop(RULE, "from .sampling import top_k_top_p_filtering\n")


def test_the_named_replacement_exists_and_matches_the_removed_function():
    atlas = Atlas.load("transformers")
    for release in ("4.56.2", "5.24.0"):
        assert not atlas.has(release, "transformers.top_k_top_p_filtering")
        assert atlas.has(release, "transformers.TopKLogitsWarper") and atlas.has(release, "transformers.TopPLogitsWarper")
    from transformers import TopKLogitsWarper, TopPLogitsWarper

    torch.manual_seed(0)
    logits = torch.randn(3, 50, dtype=torch.float64)
    k, p = 7, 0.6
    got = TopPLogitsWarper(top_p=p)(None, TopKLogitsWarper(top_k=k)(None, logits.clone()))
    # oracle: keep the k largest; of those, the smallest set (by descending prob) whose mass reaches p
    want = torch.full_like(logits, float("-inf"))
    for row in range(logits.shape[0]):
        top = torch.topk(logits[row], k)
        probs = torch.softmax(top.values, dim=-1)
        keep, mass = [], 0.0
        for idx, pr in zip(top.indices.tolist(), probs.tolist()):
            keep.append(idx)
            mass += pr
            if mass >= p:
                break
        want[row, keep] = logits[row, keep]
    assert torch.equal(torch.isinf(got), torch.isinf(want)) and torch.equal(got[~torch.isinf(got)], want[~torch.isinf(want)])
