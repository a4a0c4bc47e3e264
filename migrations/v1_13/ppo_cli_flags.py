"""ppo-cli-flags: PPO config flags in shell launch scripts of a PPO script whose parser now holds GRPOConfig.

`python ppo.py --log_with wandb --ppo_epochs 2` (or `accelerate launch ... ppo.py ...`) in a `*.sh` next to a script
that parses `PPOConfig` with `HfArgumentParser` / `TrlParser`: after `ppo-to-grpo` that parser holds `GRPOConfig`
(or `OnlineDPOConfig`), and a flag it does not accept stops the run ("Some specified arguments are not used by the
HfArgumentParser"). For each command line calling such a script (resolved next to the shell file or at the repository
root, read as committed):

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

import ast
import re
import shlex
from pathlib import Path

from migrations.base import Finding, ManifestMigration, Options, RuleContext, same_marker, todo_text

# PPO flag -> GRPO flag, where the GRPO field carries the same setting (the field table of `ppo_to_grpo.fields`)
SAME_SETTING_GRPO = {"exp_name": "run_name", "log_with": "report_to", "ppo_epochs": "num_iterations",
                     "num_ppo_epochs": "num_iterations", "cliprange": "epsilon",
                     "response_length": "max_completion_length"}
SAME_SETTING_ODPO = {"exp_name": "run_name", "log_with": "report_to", "response_length": "max_new_tokens"}
_PARSED_PPO = re.compile(r"(?:HfArgumentParser|TrlParser)\s*\(\s*[\[(]?[^)]*\bPPO(?:v2)?Config\b")
_FLAG = re.compile(r"^--([A-Za-z][\w-]*)(=.*)?$")


class PPOCliFlags(ManifestMigration):
    summary = "PPO config flags in shell launch scripts of a migrated PPO script: renamed when GRPO has the same " \
              "setting, else marked"
    triggers = ("--",)
    requires = (".py",)
    patterns = ("*.sh",)
    order = 62

    def applies(self, options: Options) -> bool:
        return options.uses_trl and super().applies(options)

    def rewrite(self, text: str, filename: str, ctx: RuleContext) -> str:
        if ctx.path is None:
            return text
        here = Path(ctx.path).resolve().parent
        lines = text.splitlines(keepends=True)
        out: list[str] = []
        i = 0
        while i < len(lines):
            start = i
            while i < len(lines) - 1 and lines[i].rstrip("\r\n").endswith("\\"):
                i += 1
            block = lines[start:i + 1]
            i += 1
            out.extend(self._command(block, start, here, ctx, out))
        return "".join(out)

    def _command(self, block: list[str], start: int, here: Path, ctx: RuleContext, out: list[str]) -> list[str]:
        joined = " ".join(b.rstrip("\r\n").rstrip("\\") for b in block)
        if joined.lstrip().startswith("#"):
            return block
        try:
            words = shlex.split(joined, comments=True)
        except ValueError:
            return block
        at = next((k for k, w in enumerate(words) if w.endswith(".py")), None)
        if at is None:
            return block
        accepted = _accepted_flags(words[at], here, ctx.options)
        if accepted is None:
            return block
        table = SAME_SETTING_GRPO if ctx.options.to == "grpo" else SAME_SETTING_ODPO
        renames: dict[str, str] = {}
        rejected: list[str] = []
        for w in words[at + 1:]:
            m = _FLAG.match(w)
            if not m:
                continue
            name = m.group(1).replace("-", "_")
            if name in accepted:
                continue
            new = table.get(name)
            if new is not None and new in accepted:
                renames[m.group(1)] = new
            else:
                rejected.append(f"--{m.group(1)}")
        new_block = list(block)
        for old, new in renames.items():
            pattern = re.compile(rf"(?<![\w-])--{re.escape(old)}(?=[\s=\\]|$)")
            new_block = [pattern.sub(f"--{new}", b) for b in new_block]
            ctx.report(Finding(self.id, f"--{old} -> --{new} ({words[at]} now parses "
                               f"{'GRPOConfig' if ctx.options.to == 'grpo' else 'OnlineDPOConfig'})",
                               start + 1, 1, self.anchor, "info", True))
        if rejected:
            marker = todo_text(f"{', '.join(dict.fromkeys(rejected))}: not accepted by {words[at]} after the PPO "
                               "migration (no field with the same setting): drop or replace", self.anchor)
            indent = re.match(r"[ \t]*", block[0]).group(0)  # type: ignore[union-attr]
            newline = "\r\n" if block[0].endswith("\r\n") else "\n"
            if not (out and same_marker(out[-1], marker)):
                new_block.insert(0, indent + marker + newline)
            ctx.report(Finding(self.id, f"{', '.join(rejected)} are not accepted by {words[at]}'s parser after "
                               "the PPO migration", start + 1, 1, self.anchor, "manual", False))
        return new_block


def _script(word: str, here: Path) -> Path | None:
    if "$" in word:
        return None
    for base in (here, *here.parents):
        candidate = (base / word).resolve()
        if candidate.is_file():
            return candidate
        if (base / ".git").exists():
            break
    return None


def _accepted_flags(word: str, here: Path, options: Options) -> set[str] | None:
    """The fields the migrated script's parser accepts; None when the script does not parse a PPO config."""
    from migrations.kinds.pins import committed_text

    path = _script(word, here)
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
        tree = ast.parse(result.text)
    except SyntaxError:
        return None
    return _parser_fields(tree, options)


def _parser_fields(tree: ast.Module, options: Options) -> set[str] | None:
    from migrations.atlas import Atlas

    local: dict[str, set[str]] = {}
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            local[node.name] = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)
                                and isinstance(s.target, ast.Name)}
        elif isinstance(node, ast.ImportFrom) and node.module and (node.module == "trl" or
                                                                  node.module.startswith("trl.")):
            for a in node.names:
                imported[a.asname or a.name] = f"{node.module}.{a.name}"
    atlas = Atlas.load("trl")
    release = options.target_trl.base_version
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in
                ("HfArgumentParser", "TrlParser") and node.args):
            continue
        first = node.args[0]
        classes = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
        fields: set[str] = set()
        for c in classes:
            if not isinstance(c, ast.Name):
                return None
            if c.id in local:
                if _has_bases(tree, c.id):
                    return None  # a local subclass (of a TRL config, say) inherits fields: not followed, not judged
                fields |= local[c.id]
            elif c.id in imported and release in atlas.releases():
                resolved = atlas.resolve(release, imported[c.id])
                if resolved is None:
                    return None
                fields |= set(atlas.config_fields(release, resolved.qualname))
            else:
                return None
        return fields
    return None


def _has_bases(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, ast.ClassDef) and n.name == name and n.bases for n in ast.walk(tree))


MIGRATION = PPOCliFlags()
