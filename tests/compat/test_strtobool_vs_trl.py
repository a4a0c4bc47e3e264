"""`compat.trl.strtobool` against `trl.env_utils.strtobool` executed from the TRL 0.9.6 and 0.12.2 wheels (the first
and last releases with the module; tests/wheels.txt): the same result or the same error on the same inputs."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

import compat.trl

_WHEELS = Path(os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels"))
_INPUTS = ["y", "Yes", "t", "TRUE", "on", "1", "n", "NO", "f", "False", "off", "0", "", "2", "maybe", " yes", "oui"]


def _outcome(fn, value):
    try:
        return "value", fn(value)
    except ValueError as e:
        return "ValueError", str(e)


@pytest.mark.parametrize("version", ["0.9.6", "0.12.2"])
def test_same_results_and_errors_as_trl(version):
    wheel = _WHEELS / f"trl-{version}-py3-none-any.whl"
    if not wheel.is_file():
        pytest.skip(f"no trl {version} wheel (make test downloads it)")
    namespace: dict = {}
    source = zipfile.ZipFile(wheel).read("trl/env_utils.py").decode()
    exec(compile(source, f"trl-{version}/trl/env_utils.py", "exec"), namespace)  # noqa: S102 - TRL's code, the oracle
    theirs = namespace["strtobool"]
    for value in _INPUTS:
        assert _outcome(compat.trl.strtobool, value) == _outcome(theirs, value), value
    assert compat.trl.strtobool("Yes") is True and compat.trl.strtobool("off") is False
