"""model-config-trust-remote-code: `ModelConfig.trust_remote_code` went in TRL 1.7, its option moved to the configs.

TRL 1.7 took `trust_remote_code` off `ModelConfig` and made it a field of the training configs (SFTConfig,
DPOConfig, GRPOConfig, RLOOConfig, RewardConfig, KTOConfig on every release from 1.7 to the newest, from the atlas);
its own scripts read `training_args.trust_remote_code` since. On a name bound to the `ModelConfig` position of a
parser's output (resolved by qualified name, see `migrations.kinds.script_fields`):

* `model_args.trust_remote_code` -> `training_args.trust_remote_code` when exactly one other class of the same
  parser tuple is a TRL class with the field on every release from the target on (the atlas; `GKDConfig` at its
  experimental path too), or a `compat.trl` config that has it on every such release whatever it resolves to
  there (TRL's class where the release has one, with the field in the atlas: `OnlineDPOConfig` at
  `trl.experimental.online_dpo`; else the reference one, declaring it: `BCOConfig`, `XPOConfig`, `NashMDConfig`,
  `PRMConfig` on 1.14+, `kinds.script_fields.REFERENCE_CONFIG_FIELDS`), or a class the module defines once whose
  bases are such a class and whose body does not declare the field (`class CustomPPOConfig(GRPOConfig)`, after
  ppo-to-grpo rewrote its base), or such a subclass in another module of the repository (the run's index of local
  classes; a relative import resolved from the file's path), or a union annotation whose every member is one,
  or a reference config imported from
  `reference_impl` that declares it (`reference_impl.OnlineDPOConfig`, what the Online DPO rules write), and the
  name it is unpacked into means that unpacking where it is read (or is bound again only in later straight-line
  statements of the same block, `kinds.bindings.still_bound`): the same
  `--trust_remote_code` option (default False), parsed into the object that owns it now. The rule runs after the
  other TRL rules, so a tuple they rewrote (`PPOConfig` -> `GRPOConfig`) is the one judged;
* no class of the tuple has the option and every other one provably lacks it on the target (`_known_fields`: the
  atlas, trl-compat's own classes read from their source, the repository's classes with every base resolved): the
  tuple gets `compat.trl.TrustRemoteCodeArguments` (TRL 1.0's field, default False), the unpacking a new name, and
  the reads go there, for a parser bound once, parsed once into a plain unpacking of its tuple (`_apart`);
* otherwise (a class of the tuple the rule cannot see into, or one declaring the field; a parser reused or parsed
  into another shape; a `ModelConfig(...)` built by hand; a write) the read is marked with the fix, and
  `ModelConfig(trust_remote_code=)` is marked and dropped when its value is side-effect free (it is a `TypeError` on
  every target).
"""

from __future__ import annotations

from migrations.base import RUNS_LAST
from migrations.kinds.script_fields import ScriptFieldsMigration


class ModelConfigTrustRemoteCode(ScriptFieldsMigration):
    summary = ("ModelConfig.trust_remote_code (gone in 1.7) -> the training config of the same parser "
               "(training_args.trust_remote_code), else marked")
    order = RUNS_LAST  # after the rules that rewrite the parser's tuple (PPOConfig -> GRPOConfig, TrainingArguments
    # -> SFTConfig), so the config that parses --trust_remote_code now is seen


MIGRATION = ModelConfigTrustRemoteCode()
