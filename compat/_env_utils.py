"""TRL 0.9.6 - 0.12.2's `trl/env_utils.py`, which 0.13 deleted (rule `removed-env-utils`): no dependency, so it
imports without torch or numpy."""

from __future__ import annotations


def strtobool(val: str) -> bool:
    """TRL 0.9.6 - 0.12.2 `trl.env_utils.strtobool` (the module went in 0.13): `distutils.util.strtobool` (removed
    with distutils in Python 3.12) returning a bool. True for 'y', 'yes', 't', 'true', 'on', '1'; False for 'n',
    'no', 'f', 'false', 'off', '0' (any case); ValueError for anything else."""
    val = val.lower()
    if val in ("y", "yes", "t", "true", "on", "1"):
        return True
    if val in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError(f"Invalid truth value, it should be a string but {val} was provided instead.")
