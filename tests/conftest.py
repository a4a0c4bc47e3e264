"""Suite-wide setup that must happen before any test module is imported.

``TRITON_INTERPRET=1``: Triton decides at ``import triton`` whether its language helpers (``tl.zeros``, ``tl.sum``,
...) run compiled or in its interpreter, and other test modules import triton early (``trl.kernels`` does). The
suite runs on CPU tensors only, where triton is otherwise unused, so the interpreter is chosen here, first, for the
kernel tests (``tests/reference_impl/test_triton_fold.py``). An explicit ``TRITON_INTERPRET`` in the environment wins.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")


import pytest  # noqa: E402

# transformers 4.x's `TrainingArguments.__post_init__` writes the Accelerate switches into the process environment
# (4.56.2: `ACCELERATE_MIXED_PRECISION` from `bf16`/`fp16`, the `ACCELERATE_USE_*` flags, `FSDP_*`), and every later
# `Accelerator` -- so every later Trainer -- reads them, whatever its own arguments say. One test's SFTConfig (bf16
# by default) put every later test of its worker under bf16 autocast: the judged XPO / Nash-MD losses drifted 1e-3
# from their float64 oracle in the tox `floor` env. 5.x no longer writes ACCELERATE_MIXED_PRECISION. Each test gets
# the environment's Accelerate and FSDP switches back as they were before it.
_LEAKED_PREFIXES = ("ACCELERATE_", "FSDP_")


@pytest.fixture(autouse=True)
def _restore_accelerate_environment():
    before = {k: v for k, v in os.environ.items() if k.startswith(_LEAKED_PREFIXES)}
    yield
    for key in [k for k in os.environ if k.startswith(_LEAKED_PREFIXES) and k not in before]:
        del os.environ[key]
    os.environ.update(before)
