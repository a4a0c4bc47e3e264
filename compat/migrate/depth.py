"""The interpreter's recursion limit, shared by every thread of a run: raised for deep files, lowered for the `ast`
pre-check, and never restored under a thread that still needs it.

`sys.setrecursionlimit` is process-wide. A file past its time budget leaves its thread running (work inside libcst's
native parser cannot be interrupted), so two threads can be in a file at once; a plain save/restore in each would let
the first to finish put the limit back under the other one's feet (a `RecursionError` in healthy deep code).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_deep_threads = 0
_saved_limit: int | None = None


@contextlib.contextmanager
def raised(limit: int) -> Iterator[None]:
    """At least `limit` while any thread is inside; the limit from before the first one is restored after the last."""
    global _deep_threads, _saved_limit
    with _lock:
        if _deep_threads == 0:
            _saved_limit = sys.getrecursionlimit()
        _deep_threads += 1
        sys.setrecursionlimit(max(sys.getrecursionlimit(), limit))
    try:
        yield
    finally:
        with _lock:
            _deep_threads -= 1
            if _deep_threads == 0 and _saved_limit is not None:
                sys.setrecursionlimit(_saved_limit)
                _saved_limit = None


@contextlib.contextmanager
def lowered(limit: int) -> Iterator[None]:
    """`limit` for the duration, unless another thread is in a deep file (then the limit is left as it is)."""
    with _lock:
        alone = _deep_threads <= 1
        before = sys.getrecursionlimit()
        if alone:
            with contextlib.suppress(RecursionError, ValueError):
                sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        if alone:  # `before` is the raised limit of this thread's own file: what any thread that came in since needs
            with _lock:
                sys.setrecursionlimit(before)
