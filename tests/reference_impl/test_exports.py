"""One export table per layer: `reference_impl.trainers.EXPORTS` (trainers) and each loss module's `__all__` (losses).

`compat.trl` / `compat.losses` name reference_impl objects as fallbacks; every such name must be in those tables,
and every table entry must resolve, so a rename cannot leave a fallback pointing at nothing.
"""

from __future__ import annotations

import importlib

import reference_impl
from reference_impl import losses
from reference_impl.trainers import EXPORTS


def test_reference_impl_exports_exactly_the_trainer_table():
    assert sorted(reference_impl.__all__) == sorted(EXPORTS)
    for name, module in EXPORTS.items():
        assert getattr(importlib.import_module(f"reference_impl.trainers.{module}"), name) is getattr(
            reference_impl, name)


def test_losses_export_the_union_of_their_modules():
    union = sorted(n for m in losses.FAMILIES for n in m.__all__)
    assert losses.__all__ == union and len(set(union)) == len(union)
    assert all(hasattr(losses, n) for n in union)


def test_compat_fallbacks_are_in_the_tables():
    import compat.losses
    import compat.trl

    for table in (compat.trl.TABLE, compat.losses.TABLE):
        for name, candidates in table.candidates.items():
            for module, attribute in candidates:
                if module == "reference_impl":
                    assert attribute in EXPORTS, f"{table.owner}.{name} -> reference_impl.{attribute}"
                elif module == "reference_impl.losses":
                    assert attribute in losses.__all__, f"{table.owner}.{name} -> {module}.{attribute}"
                elif module == "reference_impl.diffusion":
                    from reference_impl import diffusion

                    assert attribute in diffusion.__all__, f"{table.owner}.{name} -> {module}.{attribute}"


def test_diffusion_exports_resolve():
    import pytest

    pytest.importorskip("diffusers")
    from reference_impl import diffusion

    for name, module in diffusion.EXPORTS.items():
        assert getattr(importlib.import_module(f"reference_impl.diffusion.{module}"), name) is getattr(diffusion, name)
