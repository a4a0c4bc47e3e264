"""FSDP2 on a CPU-only machine through `accelerate launch` (gloo), for tests and laptops.

accelerate (checked: 1.4 - 1.15) turns an FSDP launch into FSDP only on accelerator devices: in
`AcceleratorState.__init__` the `distributed_type = FSDP` switch sits under
`elif self.distributed_type in [MULTI_GPU, MULTI_MLU, MULTI_SDAA, MULTI_MUSA, MULTI_NPU, MULTI_XPU, MULTI_HPU,
MULTI_NEURON]`, and a 2-process CPU launch is `MULTI_CPU`. So `accelerate launch --config_file fsdp2_cpu.yaml`
silently trains with plain DDP on a CPU. torch's `fully_shard` itself works over gloo on CPU.

:func:`cpu_fsdp_state` closes that gap for the duration of the Trainer's `Accelerator(...)` construction: when the
launcher asked for FSDP (`ACCELERATE_USE_FSDP=true`, which `accelerate launch` sets from the config file) and the
state came out as `MULTI_CPU`, it applies the same two assignments accelerate applies on a GPU (`distributed_type =
FSDP`, `fsdp_plugin = <the plugin built from the launcher's environment>`, and the copy of the type into the
`PartialState`). Nothing else changes; on a GPU, or
without an FSDP launch, it does nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["cpu_fsdp_state"]


def _fsdp_requested() -> bool:
    return os.environ.get("ACCELERATE_USE_FSDP", "false").lower() == "true"


@contextlib.contextmanager
def cpu_fsdp_state() -> Iterator[None]:
    """While active, an `AcceleratorState` created for an FSDP launch on CPU processes becomes an FSDP state."""
    if not _fsdp_requested():
        yield
        return
    from accelerate.state import AcceleratorState, PartialState
    from accelerate.utils import DistributedType

    original_init = AcceleratorState.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        was_initialized = AcceleratorState._shared_state != {}
        original_init(self, *args, **kwargs)
        plugin = kwargs.get("fsdp_plugin")
        if was_initialized or plugin is None or self.distributed_type != DistributedType.MULTI_CPU:
            return
        self.distributed_type = DistributedType.FSDP
        if self._mixed_precision != "no":
            plugin.set_mixed_precision(self._mixed_precision)
        self.fsdp_plugin = plugin
        # accelerate's own last step: every later `AcceleratorState()` copies the partial state's type back
        PartialState._shared_state["distributed_type"] = self.distributed_type

    AcceleratorState.__init__ = init  # type: ignore[method-assign]
    try:
        yield
    finally:
        AcceleratorState.__init__ = original_init  # type: ignore[method-assign]
