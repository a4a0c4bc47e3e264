"""Ctrl-C and SIGTERM for the migrator: stop at once, never tear a file, say what was written.

`handle_signals()` (the CLI wraps a run in it) installs one handler for SIGINT and SIGTERM:

* the first signal raises `Interrupted` in the main thread at once, unless a file is being replaced (`critical()`):
  then it is held until that write has finished (or rolled back), so the report is exact about what was written;
* a second signal exits immediately (`os._exit`, 128 + the signal number), after removing the temporary file of a
  write in flight and killing the worker processes: no waiting for anything.

Worker processes ignore SIGINT (the terminal sends it to the whole process group; the parent decides) and are tied to
the parent's life (`tie_to_parent`): on Linux the kernel kills them when the parent dies (PR_SET_PDEATHSIG), elsewhere
a watchdog thread notices the parent is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal (`signum`); `report` holds what was done until then, when known."""

    def __init__(self, signum: int = signal.SIGINT, report: object = None) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.report = report

    @property
    def exit_code(self) -> int:
        """The shell convention: 128 + the signal number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum


class _State:
    def __init__(self) -> None:
        self.depth = 0  # > 0 while a file is being replaced
        self.pending: int | None = None
        self.signals = 0
        self.temp_files: set[str] = set()  # temporary files of writes in flight
        self.children: set[int] = set()  # worker pids


STATE = _State()


def _handler(signum: int, _frame: object) -> None:
    STATE.signals += 1
    if STATE.signals > 1:  # the second one: leave now
        for tmp in list(STATE.temp_files):
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for pid in list(STATE.children):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            sys.stderr.write(f"\n{signal.Signals(signum).name} again: exiting now\n")
            sys.stderr.flush()
        os._exit(128 + signum)
    if STATE.depth > 0:
        STATE.pending = signum
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def handle_signals() -> Iterator[None]:
    """SIGINT and SIGTERM as described in the module docstring, for the duration of the block (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    STATE.signals, STATE.pending = 0, None
    for s in previous:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        if STATE.signals == 0:  # after an interrupt the handler stays: a second signal while exiting exits at once
            for s, h in previous.items():
                signal.signal(s, h)


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """A write that must finish (or roll back) before an interrupt is acted on."""
    STATE.depth += 1
    try:
        yield
    finally:
        STATE.depth -= 1
    if STATE.depth == 0 and STATE.pending is not None:
        signum, STATE.pending = STATE.pending, None
        raise Interrupted(signum)


def tie_to_parent(parent_pid: int) -> None:
    """In a worker process: die with the parent, and leave Ctrl-C to it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            armed = libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent_pid:  # the parent died before the tie was made
        os._exit(1)
    if not armed:
        def watch() -> None:
            while os.getppid() == parent_pid:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, name="trl-compat-parent-watchdog", daemon=True).start()
