"""`moved-names`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_0.moved_names import BRIDGED, DEFINED_ELSEWHERE, MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_moved():
    check(RULE, "from transformers.tokenization_utils import PreTrainedTokenizer\n",
          "from transformers import PreTrainedTokenizer\n")
    check(RULE, "from transformers.trainer import nested_concat, Trainer\n",
          "from transformers.trainer import Trainer\nfrom transformers.trainer_pt_utils import nested_concat\n")


def test_every_successor_is_the_same_definition_on_the_floor_and_exists_on_the_newest():
    atlas = Atlas.load("transformers")
    for qual, action in RULE.symbols.items():
        if qual in BRIDGED or qual in DEFINED_ELSEWHERE:
            continue  # no shared path (test_a_name_with_no_shared_path_goes_to_compat); read in the wheels below
        new = f"{action.module}.{action.name}"
        assert not atlas.has("5.24.0", qual) and atlas.has("5.24.0", new), qual
        # the old path as the last release that had it resolved it (4.57.6, or earlier for a re-export a module
        # dropped before the floor: `trainer.ShardSampler`) is what the new path names on the floor
        last = [r for r in atlas.releases() if atlas.has(r, qual)][-1]
        assert atlas.resolve(last, qual).qualname == atlas.resolve("4.56.2", new).qualname, qual


def test_noop():
    noop(RULE, "from transformers import PreTrainedTokenizer\n")
    noop(RULE, "from transformers.tokenization_utils import PreTrainedTokenizer\n", stack={"transformers": "4.57.6"})


def test_a_name_with_no_shared_path_goes_to_compat():
    """dylanjoo/retrisound's trainer copies: `from transformers.modeling_utils import load_sharded_checkpoint`, in
    `trainer_utils` from 5.0 only (4.56.2 has only the old path): `compat.trl` imports it from the installed one."""
    check(RULE, "from transformers.modeling_utils import PreTrainedModel, load_sharded_checkpoint\n",
          "from transformers.modeling_utils import PreTrainedModel\nfrom compat.trl import load_sharded_checkpoint\n")
    from transformers import modeling_utils, trainer_utils

    from compat.trl import load_sharded_checkpoint

    # the installed transformers' own: trainer_utils' on 5.x, modeling_utils' on 4.x (the floor env)
    assert load_sharded_checkpoint is getattr(trainer_utils, "load_sharded_checkpoint", None) or \
        load_sharded_checkpoint is modeling_utils.load_sharded_checkpoint


def test_every_bridged_name_moved_in_5_0_with_no_shared_path():
    atlas = Atlas.load("transformers")
    for qual in BRIDGED:
        name = qual.rsplit(".", 1)[1]
        assert atlas.has("4.57.6", qual) and not atlas.has("5.0.0", qual), qual
        assert not any(atlas.has("4.56.2", q) for q in atlas.moved_to("5.24.0", name)), qual


def test_a_re_export_of_a_module_read_for_existence_only_is_checked_in_the_wheels():
    """povid-llava-dpo-subclass (LLaVA's llava_trainer.py): `from transformers.trainer import ..., ALL_LAYERNORM_LAYERS`
    -> `transformers.pytorch_utils`, which defines the list on the floor's wheel and on the installed 5.x."""
    import inspect
    import zipfile
    from pathlib import Path

    import pytest

    check(RULE, "from transformers.trainer import get_parameter_names, ALL_LAYERNORM_LAYERS\n",
          "from transformers.trainer import get_parameter_names\nfrom transformers.pytorch_utils import "
          "ALL_LAYERNORM_LAYERS\n")
    wheel = Path(__file__).resolve().parents[4] / ".cache" / "wheels" / "transformers-4.56.2-py3-none-any.whl"
    if not wheel.exists():
        pytest.skip("the transformers 4.56.2 wheel is not cached (make .cache/wheels/.downloaded)")
    atlas = Atlas.load("transformers")
    for qual, module in DEFINED_ELSEWHERE.items():
        name = qual.rsplit(".", 1)[1]
        last = [r for r in atlas.releases() if atlas.has(r, qual)][-1]
        assert atlas.resolve(last, qual).qualname == f"{module}.{name}"  # what the old path named
        floor_src = zipfile.ZipFile(wheel).read(module.replace(".", "/") + ".py").decode()
        installed = inspect.getsource(__import__(module, fromlist=[name]))
        for src in (floor_src, installed):
            assert f"\n{name} = [nn.LayerNorm]\n" in src
