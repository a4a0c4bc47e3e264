"""Suite-wide setup that must happen before any test module is imported.

``TRITON_INTERPRET=1``: Triton decides at ``import triton`` whether its language helpers (``tl.zeros``, ``tl.sum``,
...) run compiled or in its interpreter, and other test modules import triton early (``trl.kernels`` does). The
suite runs on CPU tensors only, where triton is otherwise unused, so the interpreter is chosen here, first, for the
kernel tests (``tests/reference_impl/test_triton_fold.py``). An explicit ``TRITON_INTERPRET`` in the environment wins.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
