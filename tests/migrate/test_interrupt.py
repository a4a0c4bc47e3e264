"""An interrupt at any moment leaves every file either fully old or fully new (atomic replace), and a run that is
stopped with Ctrl-C cleans up its temporary file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from ._util import NEW_SFT, OLD_SFT, REPO

pytestmark = pytest.mark.slow

PADDING = "".join(f"value_{i} = {i}  # some ordinary code to make the file longer\n" for i in range(400))


@pytest.mark.parametrize("sig, delay", [(signal.SIGINT, 1.2), (signal.SIGKILL, 1.5)])
def test_interrupted_run_leaves_each_file_old_or_new(tmp_path, sig, delay):
    old, new = (OLD_SFT + PADDING).encode(), (NEW_SFT + PADDING).encode()
    for i in range(120):
        (tmp_path / f"m{i:03d}.py").write_bytes(old)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "compat.migrate", "-q", "--allow-no-vcs", "-j", "1", "--only",
                             "sft-chunked-nll-loss-type", str(tmp_path)], env=env, stderr=subprocess.PIPE)
    time.sleep(delay)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    contents = [p.read_bytes() for p in sorted(tmp_path.glob("*.py"))]
    assert len(contents) == 120
    assert all(c in (old, new) for c in contents)  # never a torn or empty file
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".trl-compat.tmp")]
    if sig == signal.SIGINT:
        assert leftovers == []
    else:  # SIGKILL cannot be cleaned up after: at most the one temp file being written, the original intact
        assert len(leftovers) <= 1
