"""`dataloader-configuration`: before/after and no-op cases."""

from __future__ import annotations

from migrations.accelerate.v1_0.dataloader_configuration import MIGRATION as RULE
from migrations.accelerate.v1_0.dataloader_configuration import MOVED
from migrations.atlas import Atlas
from tests.migrations._driver import check, noop, run


def test_moved_into_the_configuration():
    check(RULE, "from accelerate import Accelerator\nacc = Accelerator(mixed_precision='bf16', split_batches=True, dispatch_batches=False)\n",
          "from accelerate import Accelerator, DataLoaderConfiguration\n"
          "acc = Accelerator(mixed_precision='bf16', dataloader_config=DataLoaderConfiguration(split_batches=True, dispatch_batches=False))\n")


def test_marked_when_not_provably_the_same():
    out, _ = run(RULE, "import accelerate\nacc = accelerate.Accelerator(even_batches=f(), dataloader_config=c)\n")
    assert out.splitlines()[1].startswith("# TODO(trl-compat): Accelerator(even_batches=) is gone or ignored")


def test_facts():
    atlas = Atlas.load("accelerate")
    for release in ("0.28.0", "1.4.0", "1.15.0"):
        assert set(MOVED) <= set(atlas.config_fields(release, "accelerate.DataLoaderConfiguration"))
    assert atlas.accepts("1.15.0", "accelerate.Accelerator", "dispatch_batches") is None
    assert atlas.accepts("0.34.2", "accelerate.Accelerator", "dispatch_batches") == "parameter"


def test_noop():
    noop(RULE, "from accelerate import Accelerator\nacc = Accelerator(gradient_accumulation_steps=2)\n")
    noop(RULE, "from mylib import Accelerator\nacc = Accelerator(split_batches=True)\n")
