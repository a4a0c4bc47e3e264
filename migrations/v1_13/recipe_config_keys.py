"""recipe-config-keys: YAML training recipes with keys no config of the target has any more (reports only).

PPO-era scripts read their options from a YAML file: `TrlParser(...).parse_args_and_config()` with `--config
recipe.yaml` (TRL's own scripts and alignment-handbook's layout), `HfArgumentParser.parse_yaml_file`, or
`Config(**yaml.safe_load(f))`. TRL 1.16's `TrlParser` refuses a file holding a key no dataclass of the parser declares
(`ValueError: Unknown arguments from config file: ['--max_prompt_length', ...]`; TRL 0.13 ignored them),
`parse_yaml_file` too, and a config call a `TypeError`: a key of a field the target dropped stops the run before
training (HollyRiver/HFRL's `max_prompt_length` and adapter names in its DPO recipes, `warmup_ratio` everywhere on
transformers 5.15+). No Python rule sees these files.

A YAML file counts as a recipe when at least two of its top-level keys are core `TrainingArguments` options
(`output_dir`, `learning_rate`, `per_device_train_batch_size`, ...) and it is no accelerate config. Each top-level key
that some TRL config (or `TrainingArguments`, through TRL's companion transformers) had in a release of the atlas and
none has on the target (TRL at `--target-trl`, TrainingArguments at the target transformers) is marked above its line
with the field's successor where one is known. Keys of no TRL or transformers release (the project's own script
options) are not TRL's business and are left alone. Nothing is edited: which dataclass a key feeds, and what the
script meant by it, only the project knows.
"""

from __future__ import annotations

import functools
import re

from packaging.version import Version

from migrations.base import (
    Finding,
    ManifestMigration,
    Options,
    RuleContext,
    same_marker,
    todo_text,
)

#: `TrainingArguments` options a training recipe sets (two of them make a YAML file one)
_CORE = frozenset({"output_dir", "learning_rate", "per_device_train_batch_size", "num_train_epochs",
                   "gradient_accumulation_steps", "max_steps", "lr_scheduler_type", "logging_steps", "save_steps",
                   "save_strategy", "gradient_checkpointing", "per_device_eval_batch_size", "weight_decay"})
_TOP_KEY = re.compile(r"^([A-Za-z_]\w*)[ \t]*:")
#: the PPOv2 / RLOO v1 `OnPolicyConfig` fields the trainer filled in (never a user's option; `batch_size` is anyone's)
_FILLED_IN = frozenset({"world_size", "num_total_batches", "micro_batch_size", "local_batch_size", "batch_size",
                        "local_mini_batch_size", "mini_batch_size"})
#: the successor of a removed field, where there is one to name
_HINTS = {
    "max_seq_length": "SFTConfig calls it max_length since TRL 0.20",
    "warmup_ratio": "use warmup_steps: below 1 it is a ratio of the training steps (transformers 5.0+)",
    "evaluation_strategy": "its successor is eval_strategy",
    "logging_dir": "set the environment variable TENSORBOARD_LOGGING_DIR instead (transformers 5.15+)",
    "max_prompt_length": "truncation is on max_length (prompt+completion) now",
    "model_adapter_name": "load the trainable adapter as 'default'; DPOTrainer makes its frozen 'ref' copy itself",
    "ref_adapter_name": "DPOTrainer copies the 'default' adapter into a frozen 'ref' one itself",
    "overwrite_output_dir": "no Trainer read it: drop it",
    "use_mps_device": "the MPS device is used when available",
    "no_cuda": "its successor is use_cpu",
}


@functools.lru_cache(maxsize=8)
def _fields(target_trl: str, target_transformers: str | None) -> tuple[frozenset[str], frozenset[str]]:
    """(every field a TRL config / argument dataclass had in a release of the atlas, the fields of those on the
    target), TrainingArguments' included through TRL's companion transformers (the target's: `target_transformers`)."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")

    def dataclasses(version: str, transformers: str | None) -> set[str]:
        found: set[str] = set()
        for name in atlas.exports(version, "trl"):
            if name == "PPOConfig" and Version(version) < Version("0.12"):
                continue  # the step-loop config (tyro, never a recipe file): its `batch_size`, `steps` are anyone's
            if name.endswith(("Config", "Arguments")):
                found.update(atlas.config_fields(version, f"trl.{name}", transformers=transformers) or ())
        return found

    ever: set[str] = set()
    for version in atlas.releases():
        ever |= dataclasses(version, None)
    return frozenset(ever - _FILLED_IN), frozenset(dataclasses(target_trl, target_transformers))


def _newline(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


class RecipeConfigKeys(ManifestMigration):
    summary = "YAML training recipes: keys of fields no TRL config / TrainingArguments of the target has, marked"
    triggers = tuple(sorted(_CORE))
    requires = ("output_dir", "learning_rate", "per_device_train_batch_size", "num_train_epochs")
    patterns = ("*.yaml", "*.yml")
    order = 61
    fix_safety = "safe"

    def applies(self, options: Options) -> bool:
        """Only in a project that uses TRL."""
        return options.uses_trl and super().applies(options)

    def rewrite(self, text: str, filename: str, ctx: RuleContext) -> str:
        lines = text.splitlines(keepends=True)
        keys = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _TOP_KEY.match(line))]
        names = {k for _, k in keys}
        if len(names & _CORE) < 2 or "distributed_type" in names or "compute_environment" in names:
            return text
        transformers = ctx.options.target("transformers")
        ever, now = _fields(ctx.options.atlas_trl, str(transformers) if transformers else None)
        gone = {i: k for i, k in keys if k in ever and k not in now}
        if not gone:
            return text
        out: list[str] = []
        for i, line in enumerate(lines):
            if i in gone:
                key = gone[i]
                hint = _HINTS.get(key)
                message = (f"{key}: no TRL {ctx.options.atlas_trl} config (or TrainingArguments) has this field: "
                           "a TrlParser --config file / parse_yaml_file / Config(**recipe) holding it fails before "
                           "training (Unknown arguments from config file)" + (f"; {hint}" if hint else ""))
                marker = todo_text(message, self.anchor, self.id)
                if not (out and same_marker(out[-1], marker)):
                    out.append(marker + _newline(line))
                ctx.report(Finding(self.id, message, i + 1, 1, self.anchor, "manual", False))
            out.append(line)
        return "".join(out)


MIGRATION = RecipeConfigKeys()
