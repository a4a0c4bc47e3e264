"""Raising version specifiers to the floors of a TRL line: the logic under the `dependency-manifests` rule.

Input: one requirement as the manifest spells it (PEP 508 `name[extras] specifiers ; marker`, or a Poetry constraint)
and the floor of that package for the target TRL line (`compat.floors`). Output: the new specifier text, or None when
the requirement already admits the floor. Policy, per specifier of the user's set:

* an exact pin (`==V`, `===V`, `==V.*`) inside the floor is kept; outside it is *unsatisfiable* and the whole set is
  replaced by the floor's window (`vllm==0.19.0` -> `vllm>=0.22.0,<=0.31.0` for 1.16), reported as a warning; an
  exact `trl` pin moves to the target line (`trl==0.11.4` -> `trl==1.16.0`), and on a hashed requirements line
  (pip's hash mode needs `==`) the pin moves to the floor's lowest version;
* `>=V` / `>V` below the floor is raised to `>=floor`; `~=V` below the floor becomes `>=floor,<its old upper bound`
  (or the window if that range is empty);
* an upper bound (`<V`, `<=V`) that excludes the floor is dropped and reported;
* `!=V` and anything already at or above the floor is kept, in the user's order;
* an unpinned requirement stays unpinned, except `trl`, which always gets `>=` the target line.

Nothing here adds a package or touches a name that has no floor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

import compat.floors as floors


@dataclass(frozen=True)
class PackageFloor:
    """The floor of one package for the target line: the specifier, its lowest admitted version, and why."""

    package: str
    specifier: SpecifierSet
    lowest: Version
    why: str
    always_pin: bool = False  # trl: an unpinned requirement gets the floor too
    upper: str = ""  # an upper bound every rewritten specifier must carry ("<5": the code is migrated for 4.x)
    upper_why: str = ""


@dataclass
class Outcome:
    """A rewritten specifier and what to tell the user."""

    new: str
    messages: list[str] = field(default_factory=list)
    unsatisfiable: bool = False


def target_line(target: Version) -> str:
    """The `compat.floors` line for a target TRL version (clamped to the table)."""
    line = f"{target.major}.{target.minor}"
    if line in floors.PROFILES:
        return line
    newest = Version(floors.NEWEST_LINE)
    return floors.NEWEST_LINE if Version(line) > newest else floors.OLDEST_LINE


def floors_for(target: Version, transformers: Version | None = None) -> dict[str, PackageFloor]:
    """Canonical package name -> floor, for the packages the manifests rule raises (TRL and its stack).

    `transformers`: the run's transformers target; a 4.x target means the code was migrated for 4.x (names 5.0
    removed are kept), so every transformers requirement gets `<5` (an unpinned one too)."""
    profile = floors.PROFILES[target_line(target)]
    out: dict[str, PackageFloor] = {}
    for row in profile.floors:
        if row.package == floors.PYTHON or not row.specifier or row.when_installed or row.trl_versions:
            continue
        name = canonicalize_name(row.package)
        if name == "trl":
            continue
        spec = SpecifierSet(row.specifier)
        out[name] = PackageFloor(name, spec, _lowest(spec), row.why)
    if transformers is not None and transformers.major == 4 and "transformers" in out:
        base = out["transformers"]
        out["transformers"] = PackageFloor(
            "transformers", base.specifier & SpecifierSet("<5"), base.lowest, base.why, always_pin=True, upper="<5",
            upper_why=f"the code is migrated for transformers 4.x (the transformers target is {transformers}): "
                      "names 5.0 removed are kept")
    trl_floor = max(Version(floors.FIRST_SUPPORTED_TRL), Version(target.base_version))
    out["trl"] = PackageFloor("trl", SpecifierSet(f">={trl_floor}"), trl_floor,
                              f"the code is migrated for TRL {target_line(target)}", always_pin=True)
    return out


def python_floor(target: Version) -> PackageFloor | None:
    """The Python floor of the target line (its wheel's `Requires-Python`, `compat.floors`): what a project's own
    `requires-python` / Poetry `python` constraint must admit for the raised `trl` to install (a resolver solves for
    the project's whole declared Python range)."""
    profile = floors.PROFILES[target_line(target)]
    row = next((r for r in profile.floors if r.package == floors.PYTHON and r.specifier), None)
    if row is None:
        return None
    spec = SpecifierSet(row.specifier)
    return PackageFloor("python", spec, _lowest(spec), row.why)


#: The transformers release whose Requires-Dist the manifests rule honours: the oldest one the target's transformers
#: floor admits that the transformers atlas holds (4.56.2 for every line 1.13-1.16).
def _transformers_release(floor: PackageFloor | None) -> str | None:
    from migrations.atlas import Atlas, AtlasError

    try:
        atlas = Atlas.load("transformers")
    except AtlasError:
        return None
    admitted = [r for r in atlas.releases() if floor is None or floor.specifier.contains(r, prereleases=True)]
    return admitted[0] if admitted else None


def _lower_bound_floors(lines: list[str], who: str) -> dict[str, PackageFloor]:
    """The unconditional requirements of a Requires-Dist list as floors: lower bounds only (an upper bound of the
    metadata is the resolver's business; a pin above it is kept), packages without a lower bound skipped."""
    from packaging.requirements import InvalidRequirement, Requirement

    out: dict[str, PackageFloor] = {}
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None:  # extras and platform-specific rows
            continue
        lows = [s for s in req.specifier if s.operator in (">=", "~=", "==") and not s.version.endswith(".*")]
        if not lows:
            continue
        low = max(Version(s.version) for s in lows)
        name = canonicalize_name(req.name)
        out[name] = PackageFloor(name, SpecifierSet(f">={low}"), low, f"{who} requires {req.name}{req.specifier}")
    return out


def metadata_floors(target: Version) -> dict[str, PackageFloor]:
    """Floors for the rest of the stack, from the metadata the atlas recorded (never from memory): what the target
    TRL release's Requires-Dist demands (`huggingface_hub`, `pyarrow`, `numpy`, `pandas`, ...), and what transformers
    demands (`tokenizers`, `huggingface-hub`, `safetensors`) in the oldest release the target's transformers floor
    admits. Where both name a package the higher lower bound wins. `floors_for` rows take precedence over these."""
    from migrations.atlas import Atlas, UnknownReleaseError

    trl = Atlas.load("trl")
    try:
        release = trl.release(target)
    except UnknownReleaseError:
        release = trl.releases()[-1]
    out = _lower_bound_floors(trl.requires(release), f"trl {release}")

    def merge(found: dict[str, PackageFloor]) -> None:
        for name, floor in found.items():
            if name not in out or floor.lowest > out[name].lowest:
                out[name] = floor

    stack = floors_for(target)
    transformers = _transformers_release(stack.get("transformers"))
    if transformers is not None:
        merge(_lower_bound_floors(Atlas.load("transformers").requires(transformers),
                                  f"transformers {transformers} (the oldest the floor admits)"))
    # what the raised packages require at their floor: `datasets>=4.7.0` beside `tqdm==4.66.1` has no solution
    # (datasets 4.7.0 requires tqdm>=4.66.3): accelerate from its atlas, datasets / huggingface-hub / peft from
    # `migrations.atlas.requires` (their wheels' METADATA)
    from migrations.atlas import requires as recorded

    for package in ("accelerate", "datasets", "huggingface-hub", "peft"):
        floor = stack.get(package) or out.get(package)
        if floor is None:
            continue
        lowest = str(floor.lowest)
        if package == "accelerate":
            atlas = Atlas.load("accelerate")
            lines = atlas.requires(lowest) if lowest in atlas.releases() else None
        else:
            lines = recorded.requires(package, lowest)
        if lines:
            merge(_lower_bound_floors(lines, f"{package} {lowest} (the floor)"))
    return out


def _lowest(spec: SpecifierSet) -> Version:
    for s in spec:
        if s.operator in (">=", "==", "~="):
            return Version(s.version)
    raise ValueError(f"floor {spec} has no lower bound")


def _window(floor: PackageFloor) -> str:
    return ",".join(str(s) for s in sorted(floor.specifier, key=lambda s: (s.operator not in (">=", ">"), str(s))))


def _compatible_upper(version: str) -> Version:
    """The exclusive upper bound implied by `~=version` (`~=0.10.2` -> 0.11, `~=0.10` -> 1)."""
    release = Version(version).release
    head = list(release[:-1]) if len(release) > 1 else list(release)
    head[-1] += 1
    return Version(".".join(str(p) for p in head))


def _pins_exactly(specs: list) -> bool:  # noqa: ANN001 - packaging Specifiers
    """The file itself already allowed a single version (`>=V,<=V`)."""
    lows = {s.version for s in specs if s.operator == ">="}
    return any(s.operator == "<=" and s.version in lows for s in specs)


def adjust(spec_text: str, floor: PackageFloor, *, hashed: bool = False) -> Outcome | None:
    """The PEP 440 specifier set `spec_text` raised to `floor`, or None when it already admits it."""
    spec_text = spec_text.strip()
    if not spec_text:
        if floor.always_pin:
            why = floor.upper_why or floor.why
            return Outcome(_window(floor), [f"{floor.package} unpinned -> {_window(floor)} ({why})"])
        return None
    try:
        specs = list(SpecifierSet(spec_text))
        order = [s.strip() for s in spec_text.split(",")]
        specs.sort(key=lambda s: order.index(str(s)) if str(s) in order else len(order))
    except (InvalidSpecifier, InvalidVersion):
        return None
    low = floor.lowest

    def unsatisfiable(why: str) -> Outcome:
        # an exact pin stays an exact pin where a single version is the natural successor (trl: the target line;
        # hashed lines: pip's hash mode needs ==); elsewhere the supported window
        exact = floor.always_pin and not floor.upper and spec_text.startswith("==")  # trl: the target line
        new = f"=={low}" if hashed or exact else _window(floor)
        return Outcome(new, [f"{floor.package}{spec_text} {why}; rewritten to {new} ({floor.why})"], True)

    for s in specs:
        if s.operator in ("==", "===") and not s.version.endswith(".*"):
            try:
                pinned = Version(s.version)
            except InvalidVersion:
                return None
            if floor.specifier.contains(pinned, prereleases=True):
                return None
            return unsatisfiable("is outside the supported range")
        if s.operator == "==" and s.version.endswith(".*"):
            prefix = s.version[:-2]
            if not (Version(prefix) >= low or str(low).startswith(prefix + ".")):
                return unsatisfiable("is below the floor")
            return None
    kept: list[str] = []
    messages: list[str] = []
    has_lower = False
    changed = False
    for s in specs:
        v = Version(s.version)
        if s.operator in (">=", ">"):
            if v < low or (s.operator == ">" and v < low):
                kept.append(f">={low}")
                messages.append(f"{floor.package}{s} raised to >={low} ({floor.why})")
                changed = True
            else:
                kept.append(str(s))
            has_lower = True
        elif s.operator == "~=":
            if v >= low:
                kept.append(str(s))
                has_lower = True
                continue
            upper = _compatible_upper(s.version)
            if low >= upper:
                return unsatisfiable("is below the floor")
            kept += [f">={low}", f"<{upper}"]
            messages.append(f"{floor.package}{s} -> >={low},<{upper} ({floor.why})")
            has_lower = True
            changed = True
        elif s.operator in ("<", "<="):
            if v < low or (s.operator == "<" and v == low):
                messages.append(f"{floor.package}: upper bound {s} excludes the floor {low}; dropped ({floor.why})")
                changed = True
            elif s.operator == "<=" and v == low and not _pins_exactly(specs):
                # raising the lower bound to the floor would leave a single-version range the file never asked
                # for (`>=4.40,<=4.56.2` -> `>=4.56.2,<=4.56.2`): the bound goes, and the report says so
                messages.append(f"{floor.package}: upper bound {s} would pin the floor {low} exactly; dropped "
                                f"({floor.why})")
                changed = True
            else:
                kept.append(str(s))
        else:  # != and anything else
            kept.append(str(s))
    if floor.upper and not any(k.startswith("<") and Version(k.lstrip("<=")) <= Version(floor.upper.lstrip("<="))
                               for k in kept):
        kept = [k for k in kept if not k.startswith("<")] + [floor.upper]
        messages.append(f"{floor.package}: added {floor.upper} ({floor.upper_why})")
        changed = True
    if not has_lower and changed:
        kept.insert(0, f">={low}")
    if not changed:
        return None
    return Outcome(",".join(kept), messages, False)


# -- PEP 508 strings ----------------------------------------------------------------------------------------------

_NAME = re.compile(r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?P<extras>\[[^\]]*\])?\s*")


#: transformers' own floor for torch at run time (`is_torch_available()`, "Disabling PyTorch because PyTorch >= X is
#: required"), read in the wheels (tested): below it transformers imports, but without torch: no model, no Trainer,
#: no TRL. Keys: the oldest and newest transformers releases a rewritten manifest admits.
TORCH_RUNTIME_FLOOR = {"4.56.2": "2.1.0", "5.24.0": "2.6.0"}


#: transformers' own floor for bitsandbytes (`BITSANDBYTES_MIN_VERSION`, checked by its bitsandbytes quantizers before
#: they load anything), read in the wheels (tested): 5.0 - 5.24 refuse anything older; 4.56.2 has none.
BITSANDBYTES_RUNTIME_FLOOR = {"5.24.0": "0.46.1"}


def _admits_transformers_5(transformers_floor: PackageFloor | None) -> bool:
    """The rewritten manifest admits transformers 5 (no `<5` cap: the code was migrated for 5.x)."""
    return not (transformers_floor is not None and transformers_floor.upper == "<5")


def runtime_floors(transformers_floor: PackageFloor | None) -> dict[str, PackageFloor]:
    """Floors transformers enforces at run time rather than in its metadata, for the newest transformers a rewritten
    manifest admits: bitsandbytes (a pin below it installs, and every `BitsAndBytesConfig` load then raises). None
    where the file caps transformers below 5."""
    if not _admits_transformers_5(transformers_floor):
        return {}
    low = Version(BITSANDBYTES_RUNTIME_FLOOR["5.24.0"])
    return {"bitsandbytes": PackageFloor(
        "bitsandbytes", SpecifierSet(f">={low}"), low,
        f"transformers 5.x refuses bitsandbytes below {low} (BITSANDBYTES_MIN_VERSION) when it loads a "
        "quantized model")}


def torch_below_runtime_floor(req: str, transformers_floor: PackageFloor | None) -> str | None:
    """The warning for a `torch` requirement (`torch==2.1.0`, `torch<2.3`) that admits no release at or above what
    the newest transformers the rewritten manifest admits needs at run time; None when it does (or `req` is not
    torch). The manifest rule leaves torch as written (its CUDA build, and torchvision / torchaudio, go with it)."""
    m = _NAME.match(req)
    if m is None or canonicalize_name(m.group("name")) != "torch":
        return None
    spec_text = req[m.end():].split(";", 1)[0].strip().strip("()")
    if not spec_text or spec_text.startswith("@"):
        return None
    try:
        spec = SpecifierSet(spec_text)
    except InvalidSpecifier:
        return None
    capped = not _admits_transformers_5(transformers_floor)
    release = "4.56.2" if capped else "5.24.0"
    floor = Version(TORCH_RUNTIME_FLOOR[release])
    pins = [s.version for s in spec if s.operator in ("==", "===") and not s.version.endswith(".*")]
    try:
        if pins and all(Version(v) >= floor for v in pins):  # `torch==2.7.1+cu126`
            return None
    except InvalidVersion:
        return None
    probes = [floor, *(Version(f"2.{minor}.0") for minor in range(floor.minor + 1, 20)), Version("3.0.0")]
    if not pins and any(spec.contains(v, prereleases=True) for v in probes):
        return None
    newest = "transformers 4.x" if capped else f"transformers {release} (the newest release this file admits)"
    return (f"torch{spec_text} stays as written, but {newest} runs without PyTorch below {floor} (\"Disabling PyTorch "
            f"because PyTorch >= {floor.major}.{floor.minor} is required\"): raise torch (with torchvision / "
            f"torchaudio), or cap transformers")


@dataclass(frozen=True)
class Rewrite:
    """A requirement string with its specifier replaced, and the messages to report."""

    text: str
    outcome: Outcome
    package: str


def rewrite_requirement(req: str, table: dict[str, PackageFloor], *, hashed: bool = False) -> Rewrite | None:
    """`req` (a PEP 508 string) with only its specifier part replaced, or None when it is fine or not ours.

    Everything outside the specifier (name spelling, extras, marker, spacing, comments after it) is kept byte for
    byte. Direct references (`name @ url`) are left alone.
    """
    m = _NAME.match(req)
    if m is None:
        return None
    package = canonicalize_name(m.group("name"))
    floor = table.get(package)
    if floor is None:
        return None
    start = m.end()
    end = len(req)
    semi = req.find(";", start)
    if semi != -1:
        end = semi
    spec_raw = req[start:end]
    if spec_raw.lstrip().startswith("@"):
        return None
    # the specifier may be parenthesised (old style) and is followed by optional spaces before the marker
    stripped = spec_raw.rstrip()
    trail = spec_raw[len(stripped):]
    inner = stripped
    parens = inner.startswith("(") and inner.endswith(")")
    if parens:
        inner = inner[1:-1]
    if inner.strip() and not re.match(r"^\s*(===|==|!=|~=|>=|<=|>|<)", inner):
        return None
    outcome = adjust(inner, floor, hashed=hashed)
    if outcome is None:
        return None
    if not stripped:  # unpinned: the specifier goes right after the name (and extras)
        name_end = len(req[:start].rstrip())
        return Rewrite(req[:name_end] + outcome.new + req[name_end:], outcome, package)
    new_spec = f"({outcome.new})" if parens else outcome.new
    return Rewrite(req[:start] + new_spec + trail + req[end:], outcome, package)


# -- Poetry constraints -------------------------------------------------------------------------------------------

def _poetry_to_pep440(constraint: str) -> str | None:
    """A Poetry version constraint as a PEP 440 specifier set (None when it is not one we understand)."""
    c = constraint.strip()
    if c in ("", "*"):
        return ""
    if "||" in c or "|" in c:
        return None
    parts = []
    for piece in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", c):
        piece = piece.strip()
        if not piece:
            continue
        if piece.startswith("^"):
            v = Version(piece[1:])
            rel = list(v.release) + [0] * (3 - len(v.release))
            idx = next((i for i, p in enumerate(rel) if p != 0), len(rel) - 1)
            upper = rel[: idx + 1]
            upper[-1] += 1
            parts += [f">={piece[1:]}", f"<{'.'.join(map(str, upper))}"]
        elif piece.startswith("~") and not piece.startswith("~="):
            v = Version(piece[1:])
            rel = list(v.release)
            upper = rel[:2] if len(rel) >= 2 else rel[:1]
            upper[-1] += 1
            parts += [f">={piece[1:]}", f"<{'.'.join(map(str, upper))}"]
        elif re.match(r"^\d", piece):
            parts.append(f"=={piece}")
        else:
            parts.append(piece)
    return ",".join(parts)


def rewrite_poetry(constraint: str, floor: PackageFloor) -> Outcome | None:
    """A Poetry constraint raised to `floor`, keeping a caret/tilde operator's style when it only needs raising."""
    c = constraint.strip()
    try:
        pep = _poetry_to_pep440(c)
    except InvalidVersion:
        return None
    if pep is None:
        return None
    outcome = adjust(pep, floor)
    if outcome is None:
        return None
    if c[:1] in ("^", "~") and not c.startswith("~=") and "," not in c and not outcome.unsatisfiable:
        op = c[0]
        new = f"{op}{floor.lowest}"
        return Outcome(new, [f"{floor.package} {c} -> {new} ({floor.why})"])
    return outcome
