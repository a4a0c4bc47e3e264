"""The dependency floors of each supported TRL release line: pure data, no logic, cheap to import.

Every number below was read from the wheel's own METADATA (``Requires-Python`` / ``Requires-Dist``) of
trl 1.13.0, 1.14.0, 1.14.1, 1.14.2, 1.15.0 and 1.16.0 (``pip download --no-deps trl==X``; ``unzip -p X.whl
'*.dist-info/METADATA'``), plus the few places where this project adds its own floor, which say so in ``source``.

A :class:`Floor` is one requirement. ``optional=True`` means "absent is fine, present must satisfy the specifier"
(the packages TRL only declares in extras). ``optional=False`` means "required once TRL is installed" (TRL's core
dependencies, and ``requests``/``urllib3`` for TRL releases that import them without declaring them). When no TRL is
installed every floor is treated as optional: the migrator and the doctor need none of these packages.

``upper_bound_warns=True`` turns a version *above* the upper bound into a warning instead of an error (vLLM's
window: TRL itself only warns there, and users hate upper bounds enforced as errors).
``when_installed`` makes a row apply only when another distribution is present (TRL's ``[deepspeed]`` extra
excludes transformers 5.1.0). ``trl_versions`` restricts a row to installed TRL versions matching that specifier.
"""

from __future__ import annotations

from collections import namedtuple


_FloorFields = namedtuple(
    "Floor",
    "package specifier why source optional upper_bound_warns when_installed trl_versions",
    defaults=(True, False, None, None),
)
_ProfileFields = namedtuple("Profile", "line floors")


class Floor(_FloorFields):
    """One requirement of a TRL release line: a distribution, a PEP 440 specifier and why it exists.

    Fields: ``package`` (str, distribution name or ``"python"``), ``specifier`` (str, ``""`` = any version), ``why``
    (str, shown to users), ``source`` (str, where the number comes from), ``optional`` (bool), ``upper_bound_warns``
    (bool), ``when_installed`` (str | None), ``trl_versions`` (str | None, a specifier). A plain namedtuple rather
    than ``typing.NamedTuple``: importing ``typing`` would cost ``import compat`` ~5 ms.
    """

    __slots__ = ()


class Profile(_ProfileFields):
    """All floors for one TRL release line. Fields: ``line`` (str, "1.13"), ``floors`` (tuple[Floor, ...])."""

    __slots__ = ()


#: Distributions whose version is the Python interpreter's, not a package's.
PYTHON = "python"

#: The PPO era ends here: trl.experimental.ppo exists up to 1.12.0 and is gone from 1.13.0 on.
FIRST_SUPPORTED_TRL = "1.13.0"

MIGRATE_COMMAND = "python -m compat.migrate"

_TRL_ROW = Floor(
    "trl",
    ">=" + FIRST_SUPPORTED_TRL,
    "TRL <= 1.12 is the PPO era (trl.experimental.ppo was removed in 1.13); rewrite PPO code with "
    f"`{MIGRATE_COMMAND}` first, then upgrade",
    "trl-compat (supported lines 1.13-1.16)",
)


def _declared(line: str) -> str:
    return f"trl {line} METADATA Requires-Dist"


def _profile(
    line: str, *, python: str, accelerate: str, vllm: str, accelerate_why: str, extra: tuple[Floor, ...] = ()
) -> Profile:
    src = _declared(line)
    floors = (
        Floor(
            PYTHON,
            python,
            f"TRL {line} declares Requires-Python {python}",
            f"trl {line} METADATA Requires-Python",
            optional=False,
        ),
        _TRL_ROW,
        Floor(
            "transformers",
            ">=4.56.2",
            f"TRL {line} declares it and tests nothing older (TRL's min-versions CI job pins transformers==4.56.2)",
            src,
            optional=False,
        ),
        Floor("accelerate", accelerate, accelerate_why, src, optional=False),
        Floor(
            "datasets",
            ">=4.7.0",
            f"TRL {line} declares it (its min-versions CI job pins datasets==4.7.0)",
            src,
            optional=False,
        ),
        Floor(
            "peft",
            ">=0.13.0",
            "TRL 1.13 raised its [peft] extra from 0.8.0 to 0.13.0; below it peft is outside the range TRL "
            "declares and tests",
            src + " (extra 'peft')",
        ),
        Floor(
            "deepspeed",
            ">=0.18.6",
            "TRL 1.13 raised its [deepspeed] extra from 0.14.4 to 0.18.6; below it DeepSpeed is outside the range "
            "TRL declares and tests",
            src + " (extra 'deepspeed')",
        ),
        Floor(
            "transformers",
            "!=5.1.0",
            "TRL's [deepspeed] extra excludes transformers 5.1.0 when DeepSpeed is installed",
            src + " (extra 'deepspeed')",
            when_installed="deepspeed",
        ),
        Floor(
            "vllm",
            vllm,
            f"TRL {line} supports vLLM {vllm} (trl.import_utils checks this window; TRL moves it release by "
            "release after testing its vLLM client and server); above it TRL only warns, so does trl-compat",
            src + " (extra 'vllm')",
            upper_bound_warns=True,
        ),
        Floor(
            "liger-kernel",
            ">=0.8.2",
            "TRL declares liger-kernel>=0.8.2 ([liger] extra) and trl.import_utils reports Liger unavailable below "
            "LIGER_KERNEL_MIN_VERSION = 0.8.2",
            src + " (extra 'liger')",
        ),
    )
    return Profile(line, floors + extra)


# trl 1.13.0 .. 1.14.1: trl/generation/vllm_client.py does `from requests.adapters import HTTPAdapter` and
# `from urllib3.util.retry import Retry` at module level; vllm_generation.py imports it, and GRPOTrainer,
# RLOOTrainer, DistillationTrainer and experimental OnlineDPOTrainer import that. `requests` is only declared in the
# [vllm] extra, and huggingface_hub >= 1.0 (httpx) no longer brings it. trl 1.14.2 moved the imports under
# `if is_requests_available():` (read from the 1.14.1 and 1.14.2 wheels).
_UNDECLARED_HTTP = tuple(
    Floor(
        name,
        "",
        f"trl 1.13.0-1.14.1 import {name} at module level (trl/generation/vllm_client.py, reached from "
        "GRPOTrainer/RLOOTrainer) without declaring it; fixed in trl 1.14.2",
        "trl 1.13.0-1.14.1 source (undeclared import)",
        optional=False,
        trl_versions=">=1.13.0,<1.14.2",
    )
    for name in ("requests", "urllib3")
)

_ACC_OLD_WHY = "TRL {line} declares accelerate>=1.4.0 (its min-versions CI job pins accelerate==1.4.0)"

PROFILES: dict[str, Profile] = {
    "1.13": _profile(
        "1.13", python=">=3.10", accelerate=">=1.4.0", vllm=">=0.19.1,<=0.28.0",
        accelerate_why=_ACC_OLD_WHY.format(line="1.13"), extra=_UNDECLARED_HTTP,
    ),
    "1.14": _profile(
        "1.14", python=">=3.10", accelerate=">=1.4.0", vllm=">=0.20.0,<=0.30.0",
        accelerate_why=_ACC_OLD_WHY.format(line="1.14"), extra=_UNDECLARED_HTTP,
    ),
    "1.15": _profile(
        "1.15", python=">=3.11", accelerate=">=1.4.0", vllm=">=0.21.0,<=0.31.0",
        accelerate_why=_ACC_OLD_WHY.format(line="1.15"),
    ),
    "1.16": _profile(
        "1.16", python=">=3.11", accelerate=">=1.10.1", vllm=">=0.22.0,<=0.31.0",
        accelerate_why="TRL 1.16 raised it from 1.4.0 and dropped the shim that let transformers<4.57 import "
        "ParallelismConfig from accelerate<1.10.1",
    ),
}

#: The newest line in the table: used when no TRL is installed, or a TRL newer than the table.
NEWEST_LINE = "1.16"
#: The oldest line in the table: used for PPO-era TRL (<= 1.12), where the trl row itself is the violation.
OLDEST_LINE = "1.13"

#: Packages whose absence is always fine (TRL declares them only in extras).
OPTIONAL_PACKAGES = ("peft", "deepspeed", "vllm", "liger-kernel")
