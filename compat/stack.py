"""What the doctor shows beyond the floors: the platform, torch and its accelerator, and what the installed TRL and the
libraries it pulls in declare in their own metadata, held against what is installed (`trl env`, plus a verdict).

The floors (compat/floors.py) are trl-compat's own requirements per TRL line. A migration that raises `trl` and
`transformers` also drags `huggingface_hub`, `tokenizers`, `pyarrow`, `torch` ... along: their requirements come from
the installed wheels' `Requires-Dist` (evaluated for this interpreter, extras left out), so the doctor shows a pin a
project kept that the new stack no longer accepts. Doctor-only: `import compat` never reads this (it stays cheap).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from compat.environment import InstalledVersions, contains, normalize_name

# Whose declared requirements the doctor holds against the environment: TRL and its core dependencies.
ROOTS = ("trl", "transformers", "accelerate", "datasets", "peft")
# Shown in the text table even when fine (the packages a raised pin pulls in); others only when they fail.
SHOWN = ("torch", "huggingface_hub", "tokenizers", "safetensors", "pyarrow", "numpy")  # normalize_name form


@dataclass(frozen=True)
class Declared:
    """One requirement an installed distribution declares (`by`), and how the environment meets it."""

    package: str
    installed: str | None
    required: str
    by: str
    status: str  # "ok" | "error" (installed, outside the specifier) | "missing" (declared, not installed)

    def as_dict(self) -> dict[str, str | None]:
        return asdict(self)


def _requires(name: str, path: Sequence[str] | None) -> list[str]:
    from importlib.metadata import distributions

    found = distributions(name=name) if path is None else distributions(name=name, path=list(path))
    for dist in found:  # the first on the path, as Python imports it
        try:
            return list(dist.requires or [])
        except (OSError, UnicodeDecodeError, ValueError):  # unreadable METADATA: nothing declared we can check
            return []
    return []


def declared_requirements(path: Sequence[str] | None = None, roots: Iterable[str] = ROOTS) -> list[Declared]:
    """Every unconditional requirement (markers evaluated here, no extras) of the installed `roots`."""
    from packaging.requirements import InvalidRequirement, Requirement

    installed = InstalledVersions(path)
    out: list[Declared] = []
    for root in roots:
        root_version = installed.get(root)
        if root_version is None:
            continue
        for line in _requires(root, path):
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            have = installed.get(req.name)
            spec = str(req.specifier)
            if have is None:
                status = "missing"
            elif spec and not contains(spec, have):
                status = "error"
            else:
                status = "ok"
            out.append(Declared(normalize_name(req.name), have, spec or "any", f"{root} {root_version}", status))
    return out


_PROBE = ("import json, torch; c = torch.cuda.is_available(); "
          "print(json.dumps({'cuda_available': c, 'cuda_version': torch.version.cuda, "
          "'devices': [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if c else []}))")


def platform_facts(path: Sequence[str] | None = None, probe_torch: bool = True, timeout: float = 60) -> dict[str, object]:
    """The platform, the interpreter, torch's version and (probed in a child process, so a broken torch cannot take
    the doctor down) whether CUDA is available."""
    facts: dict[str, object] = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "torch": InstalledVersions(path).get("torch"),
    }
    if facts["torch"] is None or not probe_torch:
        facts["cuda"] = "not checked" if facts["torch"] else "no torch"
        return facts
    env = {**os.environ, "TRL_COMPAT_CHECK": "off"}
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=timeout,
                              env=env, check=False)
        probed = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (subprocess.TimeoutExpired, OSError, ValueError, IndexError):
        probed = None
    facts["cuda"] = probed if probed is not None else "import torch failed"
    return facts


def fix_command(declared: Iterable[Declared], torch: str | None) -> str | None:
    """One `pip install` line for every declared requirement that fails (torch kept pinned as installed)."""
    parts: list[str] = []
    for d in declared:
        if d.status != "ok":
            part = f'"{d.package}{d.required if d.required != "any" else ""}"'
            if part not in parts:
                parts.append(part)
    if not parts:
        return None
    if torch and not any(p.startswith('"torch') for p in parts):
        parts.append(f'"torch=={torch}"')
    return "pip install " + " ".join(parts)
