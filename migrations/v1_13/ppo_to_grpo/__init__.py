"""ppo-to-grpo: PPOConfig / PPOTrainer (every era) -> GRPOConfig / GRPOTrainer, or Online DPO with `--to online-dpo`.

TRL 1.13 deleted PPO. This rule migrates the three PPO API eras (classic step loop v0.2-v0.11; Trainer-style
PPOv2/PPO v0.9.3-v0.28; `trl.experimental.ppo` v0.26-1.12):

* imports and every use of `PPOConfig`/`PPOv2Config`/`PPOTrainer`/`PPOv2Trainer`, resolved by qualified name through
  every import form (see `migrations.kinds.symbols`);
* config calls field by field (`fields.map_config`): renames, semantic changes with a TODO, removed fields listed
  with their old values, the old defaults written out, GRPO's batch constraint solved when the sizes are static;
  configs spread from a visible dict literal are mapped in the dict; parser- or YAML-built configs are flagged;
* trainer construction rewritten to `GRPOTrainer(model=, reward_funcs=, args=, train_dataset=, processing_class=, ...)`
  / `OnlineDPOTrainer(...)`; a `prompt` column rebuilt from `input_ids` before it when the dataset is PPO-tokenised;
* the classic step loop: replaced by `trainer.train()` with a `reward_fn` built from its scoring code when the loop has
  the canonical shape (`loop`), otherwise left with a precise TODO;
* trainer attributes (`.config`, `.tokenizer`, `.current_device`, `.save_pretrained`, `.generate_completions`, ...);
* subclasses of PPOTrainer/PPOConfig: the base is migrated, overrides with no counterpart are flagged.

The package: `analysis` (first pass, read-only), `transformer` (second pass) with its mixins `loop`, `config_call`,
`trainer_call`, `attributes`, and `fields` (the PPOConfig field table). This module is the rule itself.
"""

from __future__ import annotations

import libcst as cst

from migrations.base import PythonMigration, RuleContext
from migrations.kinds.imports import imports_trl, star_imports
from migrations.v1_13.ppo_to_grpo.analysis import CONFIG_NAMES, TRAINER_NAMES, Analysis
from migrations.v1_13.ppo_to_grpo.transformer import Transformer


class PPOToGRPO(PythonMigration):
    summary = "PPOConfig/PPOTrainer (all eras) -> GRPOConfig/GRPOTrainer (or Online DPO with --to online-dpo)"
    triggers = ("PPOTrainer", "PPOConfig", "PPOv2Trainer", "PPOv2Config", "trl import *", "experimental.ppo")
    order = 10
    requires = ("from trl", "import trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if not imports_trl(wrapper.module, TRAINER_NAMES | CONFIG_NAMES, ("trl.trainer.ppo_trainer", "trl.trainer.ppo_config", "trl.trainer.ppov2_trainer", "trl.trainer.ppov2_config", "trl.experimental.ppo")):
            return wrapper.module
        an = Analysis()
        wrapper.visit(an)
        t = Transformer(self, ctx, an, wrapper.module)
        module = t.transform_module(wrapper)
        stars = star_imports(module)
        if stars:
            module = _star_todo(module, stars, self, ctx)
        return module


def _star_todo(module: cst.Module, stars: list[str], rule: PythonMigration, ctx: RuleContext) -> cst.Module:
    """`from trl import *`: never guess which names it provides; mark it (same marker as ppo-helpers)."""
    from migrations.v1_13.ppo_helpers import _flag_stars

    return _flag_stars(module, rule, ctx)


MIGRATION = PPOToGRPO()

