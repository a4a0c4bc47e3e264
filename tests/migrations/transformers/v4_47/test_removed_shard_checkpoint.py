"""`removed-shard-checkpoint`: marked at the import and each use, never rewritten; the atlas facts it states."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v4_47.removed_shard_checkpoint import MIGRATION as RULE
from tests.migrations._driver import noop, run

PREFIX = "# TODO(trl-compat): shard_checkpoint was removed in transformers 4.47"


def test_import_and_use_are_marked():
    src = ("from transformers.modeling_utils import shard_checkpoint\n\n"
           "shards, index = shard_checkpoint(state_dict, max_shard_size='2GB', weights_name='model.bin')\n")
    out, findings = run(RULE, src)
    lines = out.splitlines()
    assert lines[0].startswith(PREFIX) and lines[1] == src.splitlines()[0]
    assert lines[3].startswith(PREFIX) and lines[4] == src.splitlines()[2]
    assert len(findings) == 2 and not any(f.changed for f in findings)
    # the other names of the same import stay importable and unmarked
    out, _ = run(RULE, "from transformers.modeling_utils import PreTrainedModel, shard_checkpoint\n\nshard_checkpoint(sd)\n")
    assert out.splitlines()[0].startswith(PREFIX)
    # an import nothing in the module uses is dropped instead (ruff's F401 fix), the other names kept
    out, findings = run(RULE, "from transformers.modeling_utils import PreTrainedModel, shard_checkpoint\n")
    assert out == "from transformers.modeling_utils import PreTrainedModel\n"
    assert any("never uses" in f.message for f in findings)


def test_noop():
    noop(RULE, "from huggingface_hub import split_torch_state_dict_into_shards\n")
    noop(RULE, "from .utils import shard_checkpoint\n\nshard_checkpoint(sd)\n")


def test_gone_on_every_release_the_manifest_allows():
    atlas = Atlas.load("transformers")
    assert atlas.has("4.46.3", "transformers.modeling_utils.shard_checkpoint")
    for release in ("4.47.1", "4.56.2", "5.24.0"):
        assert not atlas.has(release, "transformers.modeling_utils.shard_checkpoint"), release
