"""Launcher configs of the PPO era that the stack TRL 1.13 forces no longer accepts: accelerate YAML and DeepSpeed JSON.

TRL 1.13 raised the floors to accelerate >= 1.4 and deepspeed >= 0.18.6, and a fresh install resolves the newest of
each (accelerate 1.15, deepspeed 0.19). A repository launched with `accelerate launch --config_file zero3.yaml train.py`
keeps its launcher after migration only if these files still load. Read from the wheels (accelerate 0.20.3 .. 1.15,
deepspeed 0.14.4 / 0.18.6 / 0.19.8) and run against the installed ones:

accelerate YAML (a file with `distributed_type:` and `compute_environment:`):
* `fsdp_config.fsdp_backward_prefetch_policy` (0.2x's name) is silently dropped from accelerate 1.4 on, so backward
  prefetch falls from BACKWARD_PRE to none: renamed to `fsdp_backward_prefetch` (same values). Safe.
* top-level `ipex_config` (written by `accelerate config` 0.2x on CPU setups) makes accelerate 1.15 refuse the file
  (`ValueError: ... unknown keys`): removed when every flag in it is false (it did nothing), marked when one is true.

DeepSpeed JSON (a `.json` file named like one, `*ds*`, `*deepspeed*`, `*zero*`, holding an object with
`zero_optimization`, `train_batch_size` or `train_micro_batch_size_per_gpu`),
which cannot hold a marker, so what is not rewritten is a manual finding at its line:
* `seq_parallel_comm_data_type` (0.14's name) is silently ignored from 0.18.6 on: renamed to
  `seq_parallel_communication_data_type`. Safe.
* keys deepspeed 0.19 rejects (`DeepSpeedConfigError`) and 0.18.6 still accepts: top-level `amp`, `sparse_attention`,
  `sparse_gradients`, `progressive_layer_drop`, `curriculum_learning`, `elasticity`, `eigenvalue`, `quantize_training`,
  `compression_training`, `nebula`, `graph_harvesting`; `zero_optimization.mics_shard_size`,
  `mics_hierarchical_params_gather`, `zeropp_loco_param`. Removed when switched off (`false`, `{"enabled": false}`,
  `mics_shard_size: -1`): a no-op on 0.18.6, required on 0.19. Switched on, they are a manual finding (the feature is
  gone: `amp` -> `bf16`/`fp16`, top-level `curriculum_learning` -> `data_efficiency.data_sampling`).

Every file is byte-identical outside the edited keys; a JSON edit is verified by re-parsing (the result must equal the
original object minus or with exactly the edited keys), else the file is left as it was and the step is reported.
"""

from __future__ import annotations

import json
import re
from typing import Any

from migrations.base import Finding, ManifestMigration, Options, RuleContext, same_marker, todo_text

ACCELERATE_RENAMES = {"fsdp_backward_prefetch_policy": "fsdp_backward_prefetch"}
DEEPSPEED_RENAMES = {("seq_parallel_comm_data_type",): "seq_parallel_communication_data_type"}
DEEPSPEED_REJECTED = (
    ("amp",), ("sparse_attention",), ("sparse_gradients",), ("progressive_layer_drop",), ("curriculum_learning",),
    ("elasticity",), ("eigenvalue",), ("quantize_training",), ("compression_training",), ("nebula",),
    ("graph_harvesting",), ("zero_optimization", "mics_shard_size"),
    ("zero_optimization", "mics_hierarchical_params_gather"), ("zero_optimization", "zeropp_loco_param"),
)
_DEEPSPEED_MARKS = ("zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:")


class LauncherConfigs(ManifestMigration):
    summary = "accelerate YAML / DeepSpeed JSON launcher configs: keys the floors' accelerate and deepspeed dropped"
    # JSON keys with their quotes (a bare `amp` is in every other data file); a second gate on what makes a file a
    # launcher config at all, so large data files are never parsed
    triggers = ("fsdp_backward_prefetch_policy", "ipex_config", '"seq_parallel_comm_data_type"',
                *sorted({f'"{k[-1]}"' for k in DEEPSPEED_REJECTED}))
    requires = ("distributed_type", *_DEEPSPEED_MARKS)
    # accelerate configs are named freely (`default_config.yaml`, `fsdp.yaml`); DeepSpeed JSON by convention names
    # DeepSpeed or ZeRO (`ds_config.json`, `deepspeed_zero3.json`, `zero2.json`): other JSON is data, never read
    patterns = ("*.yaml", "*.yml", "*ds*.json", "*deepspeed*.json", "*zero*.json", "*DS*.json", "*Zero*.json")
    order = 60

    def applies(self, options: Options) -> bool:
        """Only in a project that uses TRL: the configs of a tree that never imports it are none of its business."""
        return options.uses_trl and super().applies(options)

    def rewrite(self, text: str, filename: str, ctx: RuleContext) -> str:
        if filename.endswith(".json"):
            return self._deepspeed(text, ctx)
        if re.search(r"^distributed_type\s*:", text, re.M) and re.search(r"^compute_environment\s*:", text, re.M):
            return self._accelerate(text, ctx)
        return text

    # -- accelerate YAML, edited line by line -----------------------------------------------------------------------
    def _accelerate(self, text: str, ctx: RuleContext) -> str:
        lines = text.splitlines(keepends=True)
        out: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            for old, new in ACCELERATE_RENAMES.items():
                match = re.match(rf"^(\s+){old}(\s*:)", line)
                if match:
                    line = f"{match.group(1)}{new}{line[match.end(1) + len(old):]}"
                    ctx.report(Finding(self.id, f"{old} -> {new} (accelerate >= 1.4 drops the old name silently)",
                                       i + 1, 1, self.anchor, "info", True))
            top = _TOP_KEY.match(line)
            if top and top.group(1) == "ipex_config":
                end = i + 1
                while end < len(lines) and (not lines[end].strip() or lines[end][:1] in " \t#"):
                    end += 1
                block = lines[i:end]
                if any(re.search(r":\s*true\b", b, re.I) for b in block):
                    marker = todo_text("ipex_config: accelerate 1.15 rejects this key; enable IPEX another way "
                                       "or drop it", self.anchor, self.id)
                    if not (out and same_marker(out[-1], marker)):
                        out.append(marker + _newline(line))
                    ctx.report(Finding(self.id, "ipex_config enables IPEX, which accelerate 1.15 no longer "
                                                "configures: decide, then remove the key", i + 1, 1, self.anchor,
                                       "manual", False))
                    out.extend(block)
                else:
                    ctx.report(Finding(self.id, "ipex_config removed (every flag false; accelerate 1.15 rejects "
                                                "the key)", i + 1, 1, self.anchor, "info", True))
                i = end
                continue
            out.append(line)
            i += 1
        return "".join(out)

    # -- DeepSpeed JSON, edited in place by member spans ----------------------------------------------------------
    def _deepspeed(self, text: str, ctx: RuleContext) -> str:
        try:
            data = json.loads(text)
        except ValueError:
            return text
        if not isinstance(data, dict) or not any(k in data for k in _DEEPSPEED_MARKS):
            return text
        new = text
        live: list[tuple[str, ...]] = []
        for path, renamed in DEEPSPEED_RENAMES.items():
            span = _member_span(new, path)
            if span is not None:
                key_start = span[0]
                new = new[:key_start] + json.dumps(renamed) + new[key_start + len(json.dumps(path[-1])):]
                ctx.report(Finding(self.id, f"{'.'.join(path)} -> {renamed} (deepspeed >= 0.18.6 ignores the old "
                                            "name)", _line(text, key_start), 1, self.anchor, "info", True))
        for path in DEEPSPEED_REJECTED:
            value = _get(data, path)
            if value is _MISSING:
                continue
            span = _member_span(new, path)
            if span is None:
                continue
            name = ".".join(path)
            if _switched_off(path, value):
                ctx.report(Finding(self.id, f"{name} removed (switched off; deepspeed 0.19 rejects the key)",
                                   _line(new, span[0]), 1, self.anchor, "info", True))
                new = _remove_member(new, span)
            else:
                live.append(path)
        for path in live:  # at their lines in the file as written
            span = _member_span(new, path)
            ctx.report(Finding(self.id, f"{'.'.join(path)}: deepspeed 0.19 rejects this key and 0.18.6 still runs "
                                        "it; the feature is gone (see the guide)", _line(new, span[0]) if span else 1,
                               1, self.anchor, "manual", False))
        if new != text and not _same_but_edited(data, new):
            ctx.report(Finding(self.id, "the DeepSpeed config could not be edited safely; apply the steps above by "
                                        "hand", 1, 1, self.anchor, "manual", False))
            return text
        return new


_MISSING = object()


def _newline(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _get(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return _MISSING
        data = data[key]
    return data


def _switched_off(path: tuple[str, ...], value: Any) -> bool:
    if value is False or value is None:
        return True
    if path[-1] == "mics_shard_size":
        return value == -1
    return isinstance(value, dict) and value.get("enabled") is False


def _expected(data: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(data))
    for path, renamed in DEEPSPEED_RENAMES.items():
        parent = _get(out, path[:-1]) if len(path) > 1 else out
        if isinstance(parent, dict) and path[-1] in parent:
            parent[renamed] = parent.pop(path[-1])
    for path in DEEPSPEED_REJECTED:
        parent = _get(out, path[:-1]) if len(path) > 1 else out
        if isinstance(parent, dict) and path[-1] in parent and _switched_off(path, parent[path[-1]]):
            del parent[path[-1]]
    return out


def _same_but_edited(original: dict[str, Any], new_text: str) -> bool:
    try:
        return json.loads(new_text) == _expected(original)
    except ValueError:
        return False


def _member_span(text: str, path: tuple[str, ...]) -> tuple[int, int] | None:
    """(start of the key's string, end of its value) of the object member at `path` (keys from the root object, no
    arrays on the way), found by scanning the JSON text; None when there is no such member."""
    decoder = json.JSONDecoder()

    def skip_space(j: int) -> int:
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        return j

    stack: list[tuple[str, str | None]] = []  # open containers: ("obj" | "arr", the key whose value it is)
    last_key: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            value, end = decoder.raw_decode(text, i)
            colon = skip_space(end)
            if colon < len(text) and text[colon] == ":" and stack and stack[-1][0] == "obj":
                keys = tuple(key for _, key in stack[1:])
                if all(kind == "obj" for kind, _ in stack) and (*keys, value) == path:
                    _, value_end = decoder.raw_decode(text, skip_space(colon + 1))
                    return i, value_end
                last_key = value
                i = colon + 1
                continue
            i = end
            continue
        if ch in "{[":
            stack.append(("obj" if ch == "{" else "arr", last_key))
            last_key = None
        elif ch in "}]":
            stack.pop()
        elif ch == ",":
            last_key = None
        i += 1
    return None


def _remove_member(text: str, span: tuple[int, int]) -> str:
    """`text` without the member at `span`, and the comma that separated it from a neighbour."""
    start, end = span
    after = end
    while after < len(text) and text[after] in " \t\r\n":
        after += 1
    if after < len(text) and text[after] == ",":  # not the last member: drop it, its comma and the space before the next
        after += 1
        while after < len(text) and text[after] in " \t\r\n":
            after += 1
        line_start = text.rfind("\n", 0, start) + 1
        if text[line_start:start].strip() == "":  # the member starts its line: keep the next member's indentation
            next_line = text.rfind("\n", 0, after) + 1
            return text[:line_start] + text[next_line:]
        return text[:start] + text[after:]
    before = start  # the last member: drop the comma before it
    while before > 0 and text[before - 1] in " \t\r\n":
        before -= 1
    if before > 0 and text[before - 1] == ",":
        before -= 1
    return text[:before] + text[end:]


MIGRATION = LauncherConfigs()
