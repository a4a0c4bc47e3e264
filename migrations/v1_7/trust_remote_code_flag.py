"""trust-remote-code-flag: `--trust_remote_code` on command lines of a `ModelConfig` script whose parser has no
training config to take it (TRL 1.7).

The command-line side of `model-config-trust-remote-code`: since TRL 1.7 `--trust_remote_code` is parsed by the
training config (SFTConfig, DPOConfig, GRPOConfig, RLOOConfig, RewardConfig, KTOConfig). A command running a script
whose parser holds such a config is left alone (the flag is still accepted); one whose parser does not (TRL 0.x
`PRMConfig`, your own TrainingArguments) is marked above the command: the parser rejects the flag.
"""

from __future__ import annotations

from migrations.kinds.script_fields import ScriptFieldFlags


class TrustRemoteCodeFlag(ScriptFieldFlags):
    summary = "--trust_remote_code in shell/README commands of a ModelConfig script whose parser no longer takes it: " \
              "marked"
    order = 62


MIGRATION = TrustRemoteCodeFlag()
