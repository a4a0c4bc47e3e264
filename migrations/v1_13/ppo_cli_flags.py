"""ppo-cli-flags: PPO config flags in shell launch scripts of a PPO script whose parser now holds GRPOConfig.

`python ppo.py --log_with wandb --ppo_epochs 2` (or `accelerate launch ... ppo.py ...`) in a `*.sh` or a fenced block
of a Markdown file, next to a script that parses `PPOConfig` with `HfArgumentParser` / `TrlParser`: after
`ppo-to-grpo` that parser holds `GRPOConfig` (or `OnlineDPOConfig`), and a flag it does not accept stops the run
("Some specified arguments are not used by the HfArgumentParser"). For each command line calling such a script
(resolved next to the shell file or at the repository root, read as committed):

* the flags the migrated parser accepts are computed: the script is migrated in memory by `ppo-to-grpo` and the
  fields of every class its parser is given are read (the script's own dataclasses from the migrated text, TRL's
  classes such as `ScriptArguments` / `ModelConfig` / `GRPOConfig` from the atlas of the target release);
* a flag the parser accepts is left alone (the script's own `--batch_size`, a PPO field moved to its dataclass);
* a flag it rejects whose GRPO successor carries the same setting is renamed: `--exp_name` -> `--run_name`,
  `--log_with` -> `--report_to`, `--ppo_epochs` / `--num_ppo_epochs` -> `--num_iterations`, `--cliprange` ->
  `--epsilon`, `--response_length` -> `--max_completion_length` (Online DPO: `--max_new_tokens`);
* any other rejected flag (`--total_episodes`, `--missing_eos_penalty`, `--kl_coef`: GRPO's beta is a different
  penalty, ...) is marked above the command, never guessed.
"""

from __future__ import annotations

import re
from pathlib import Path

from migrations.base import Options, RuleContext
from migrations.kinds import grammar
from migrations.kinds.cli_commands import CommandFlagsMigration, Verdict, parser_fields, script_path

# PPO flag -> GRPO flag, where the GRPO field carries the same setting (the field table of `ppo_to_grpo.fields`)
SAME_SETTING_GRPO = {"exp_name": "run_name", "log_with": "report_to", "ppo_epochs": "num_iterations",
                     "num_ppo_epochs": "num_iterations", "cliprange": "epsilon",
                     "response_length": "max_completion_length"}
SAME_SETTING_ODPO = {"exp_name": "run_name", "log_with": "report_to", "response_length": "max_new_tokens"}
_PARSED_PPO = re.compile(r"(?:HfArgumentParser|TrlParser)\s*\(\s*[\[(]?[^)]*\bPPO(?:v2)?Config\b")


class PPOCliFlags(CommandFlagsMigration):
    summary = "PPO config flags in shell launch scripts of a migrated PPO script: renamed when GRPO has the same " \
              "setting, else marked"
    triggers = ("--",)
    requires = (".py",)
    patterns = ("*.sh", "*.md")  # shell launchers, and the fenced commands of a README
    order = 62

    def judge(self, word: str, flags: list[str], here: Path, ctx: RuleContext) -> Verdict | None:
        accepted = _accepted_flags(word, here, ctx.options)
        if accepted is None:
            return None
        grpo = ctx.options.to == "grpo"
        table = SAME_SETTING_GRPO if grpo else SAME_SETTING_ODPO
        verdict = Verdict()
        rejected: list[str] = []
        for flag in flags:
            name = flag.replace("-", "_")
            if name in accepted:
                continue
            new = table.get(name)
            if new is not None and new in accepted:
                verdict.renames[flag] = new
                verdict.notes[flag] = (f"--{flag} -> --{new} ({word} now parses "
                                       f"{'GRPOConfig' if grpo else 'OnlineDPOConfig'})")
            else:
                rejected.append(f"--{flag}")
        if rejected:
            verdict.marker = (f"{', '.join(dict.fromkeys(rejected))}: not accepted by {word} after the PPO "
                              "migration (no field with the same setting): drop or replace")
            verdict.manual = (f"{', '.join(rejected)} are not accepted by {word}'s parser after the PPO migration")
        return verdict


def _accepted_flags(word: str, here: Path, options: Options) -> set[str] | None:
    """The fields the migrated script's parser accepts; None when the script does not parse a PPO config."""
    from migrations.kinds.pins import committed_text

    path = script_path(word, here)
    if path is None:
        return None
    text = committed_text(path)
    if not text or not _PARSED_PPO.search(text):
        return None
    from compat.migrate.engine import migrate_source
    from migrations.v1_13.ppo_to_grpo import MIGRATION as ppo_to_grpo  # same release folder: not the registry

    result = migrate_source(text, options=options, rules=[ppo_to_grpo], path=str(path))
    if not result.ok:
        return None
    try:
        tree = grammar.parse(result.text)
    except SyntaxError:
        return None
    fields = parser_fields(tree, options.atlas_trl)
    if fields is not None and "TrlParser" in text and "parse_args_and_config" in text:
        # TrlParser.parse_args_and_config reads `--config recipe.yaml` itself (its keys are recipe-config-keys')
        fields = {*fields, "config"}
    return fields


MIGRATION = PPOCliFlags()
