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

* config fields read far from the config (`config.model_name`): the keyword's value (bound to a variable where the
  config is built when it is not a literal) or the PPOConfig default of the releases the file could run on (the
  atlas, `defaults`); script dataclass fields that clash with the new config's fields merged or marked (`reads`).

* config subclasses imported from the project's other files are configs too; fields the other files still read from
  a config that lost them are marked where it is built (`elsewhere`).

The package: `analysis` (first pass, read-only), `transformer` (second pass) with its mixins `loop`, `config_call`,
`trainer_call`, `reads`, `attributes`, `fields` (the PPOConfig field table), `defaults` (PPOConfig defaults per
release, from the atlas) and `elsewhere` (the project files a config reaches). This module is the rule itself.
"""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import ParentNodeProvider, ScopeProvider

from migrations.base import Finding, PythonMigration, RuleContext
from migrations.kinds import grammar
from migrations.kinds.cst import names_in
from migrations.kinds.imports import imports_trl, module_name, star_imports, with_kept_aliases
from migrations.kinds.symbols import Moved, SymbolMigration, mark_trl_imports
from migrations.kinds.trainer_subclasses import CLASSIC_BASE, imported_subclasses, own_trainer_bases
from migrations.v1_13.ppo_to_grpo.analysis import CONFIG_NAMES, TRAINER_NAMES, Analysis
from migrations.v1_13.ppo_to_grpo.classic_config import CLASSIC_CONFIG_PATHS, write_defaults
from migrations.v1_13.ppo_to_grpo.classic_config import NAME as CLASSIC_NAME
from migrations.v1_13.ppo_to_grpo.defaults import trl_imports
from migrations.v1_13.ppo_to_grpo.fields import CLASSIC_ONLY, PPO_ONLY_FIELDS, TRAINER_ONLY
from migrations.v1_13.ppo_to_grpo.reads import bound_names
from migrations.v1_13.ppo_to_grpo.transformer import Transformer


class PPOToGRPO(PythonMigration):
    summary = "PPOConfig/PPOTrainer (all eras) -> GRPOConfig/GRPOTrainer (or Online DPO with --to online-dpo)"
    triggers = ("PPOTrainer", "PPOConfig", "PPOv2Trainer", "PPOv2Config", "trl import *", "experimental.ppo")
    order = 10
    requires = ("from trl", "import trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        source = ctx.module_code(wrapper)
        imported = _imported_config_classes(source, ctx.path)
        if not imported and not imports_trl(wrapper.module, TRAINER_NAMES | CONFIG_NAMES, ("trl.trainer.ppo_trainer", "trl.trainer.ppo_config", "trl.trainer.ppov2_trainer", "trl.trainer.ppov2_config", "trl.experimental.ppo")):
            return wrapper.module
        rebound = _rebound_trl_names(source)
        if rebound:  # `from trl import PPOTrainer`, then `from ppo_trainer import PPOTrainer`: TRL's is never read
            module = _drop_trl_aliases(wrapper.module, set(rebound))
            if module is not wrapper.module:
                names = ", ".join(sorted(rebound))
                ctx.report(Finding(self.id, f"dropped TRL's {names} (removed in TRL 1.13) from the import: this module "
                                   f"imports {names} again from {', '.join(sorted(set(rebound.values())))} further "
                                   "down, before any use, so TRL's was never read", 1, 1, self.anchor, "info", True))
                wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
                source = module.code
        own_bases = own_trainer_bases(source, ctx.path)
        own = sorted(own_bases)
        unused = _unused_trl_trainers(source) if own else set()
        if own and (unused or not imports_trl(wrapper.module, TRAINER_NAMES, _TRAINER_MODULES)):
            if unused:  # `from trl import PPOConfig, PPOTrainer` beside the project's own trainer, its PPOTrainer unused
                module = drop_imports_left_unused(wrapper.module, unused)
                if module is not wrapper.module:
                    ctx.report(Finding(self.id, f"dropped the unused import of TRL's {', '.join(sorted(unused))} "
                                       "(removed in TRL 1.13): this module's trainer is the project's own "
                                       f"({', '.join(own)})", 1, 1, self.anchor, "info", True))
                    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
            return _mark_configs_of_own_trainers(self, wrapper, ctx, own_bases)
        shadowed = _shadowed_names(source)
        if shadowed:
            message = (f"{{name}} may be this project's own class here ({', '.join(shadowed)} is bound by another "
                       "import or a class of this module as well as by TRL's): not rewritten; TRL 1.13 removed PPO, "
                       "port the code that uses TRL's by hand (GRPOTrainer / GRPOConfig)")
            return mark_trl_imports(self, wrapper, ctx, TRAINER_NAMES | CONFIG_NAMES, message)
        an = Analysis()
        an.source = source
        an.config_classes.update({name: frozenset() for name in imported})
        wrapper.visit(an)
        an.parents = wrapper.resolve(ParentNodeProvider)
        an.scopes = wrapper.resolve(ScopeProvider)
        an.taken_names = bound_names(an.scopes)
        t = Transformer(self, ctx, an, wrapper.module)
        module = t.transform_module(wrapper)
        if t.changed:
            module = drop_imports_left_unused(module, names_in(*t.removed_nodes(), *_replaced_loops(t)))
        stars = star_imports(module)
        if stars:
            module = _star_todo(module, stars, self, ctx)
        return module


def _unused_trl_trainers(code: str) -> set[str]:
    """The PPO trainer names this module imports from TRL at its top level and reads nowhere (nanoRLHF's
    `from trl import ModelConfig, PPOConfig, PPOTrainer` in scripts whose trainer is `from grpo_trainer import
    GRPOTrainer`): a leftover import, not a use of TRL's trainer. Empty when any is read, or `trl` itself is imported
    (`trl.PPOTrainer` may be read through it)."""
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    imported: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and (stmt.module or "").split(".")[0] == "trl":
            imported |= {a.asname or a.name for a in stmt.names if a.name in TRAINER_NAMES}
        elif isinstance(stmt, ast.Import) and any(a.name.split(".")[0] == "trl" for a in stmt.names):
            return set()
    if not imported:
        return set()
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    imports_inside = any(isinstance(n, (ast.Import, ast.ImportFrom)) and n not in tree.body for n in ast.walk(tree)
                         if any((a.asname or a.name) in imported for a in getattr(n, "names", [])))
    if read & imported or imports_inside or "__all__" in code:
        return set()
    return imported


def _rebound_trl_names(code: str) -> dict[str, str]:
    """PPO trainer / config names a module-level `from trl... import` binds that an import from another module
    binds again further down, with only imports between (nanoRLHF's PPO/ppo.py: `from trl import ModelConfig,
    PPOConfig, PPOTrainer`, a dozen imports, `from ppo_trainer import PPOTrainer`): nothing can read TRL's binding.
    Name -> the module that binds it again."""
    if not any(n in code for n in TRAINER_NAMES | CONFIG_NAMES):
        return {}
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return {}

    def from_trl(stmt: ast.stmt) -> bool:
        return isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and (stmt.module or "").split(".")[0] == "trl"

    found: dict[str, str] = {}
    for i, stmt in enumerate(tree.body):
        if not from_trl(stmt):
            continue
        for alias in stmt.names:
            name = alias.asname or alias.name
            if name not in TRAINER_NAMES | CONFIG_NAMES:
                continue
            for later in tree.body[i + 1:]:
                if not isinstance(later, (ast.Import, ast.ImportFrom)):
                    break
                if any((a.asname or a.name.split(".")[0]) == name for a in later.names):
                    if isinstance(later, ast.ImportFrom) and not from_trl(later):
                        found[name] = "." * later.level + (later.module or "")
                    break
    return found


def _drop_trl_aliases(module: cst.Module, names: set[str]) -> cst.Module:
    """`module` without the aliases binding `names` in its module-level `from trl... import` statements (the first
    binding of each, which `_rebound_trl_names` found dead); an import left empty goes."""

    def bound(a: cst.ImportAlias) -> str:
        return a.evaluated_alias or a.evaluated_name

    body = []
    dropped: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
                isinstance(stmt.body[0], cst.ImportFrom) and not stmt.body[0].relative and \
                (module_name(stmt.body[0]) or "").split(".")[0] == "trl" and \
                not isinstance(stmt.body[0].names, cst.ImportStar):
            node = stmt.body[0]
            keep = [a for a in node.names if bound(a) not in names or bound(a) in dropped]
            dropped |= {bound(a) for a in node.names if a not in keep}
            if len(keep) != len(node.names):
                if not keep:
                    continue
                stmt = stmt.with_changes(body=[with_kept_aliases(node, keep)])
        body.append(stmt)
    return module.with_changes(body=body) if dropped else module


def _shadowed_names(code: str) -> list[str]:
    """The PPO trainer / config names this module binds both by a TRL import and by an import from another module
    or a class of its own (Silent-Zebra/twisted-smc-lm's test_ppo.py: `from custom_ppo_trainer import PPOTrainer` in
    one branch, `from trl import PPOTrainer` in the other, one call after both): which class a call builds is decided
    at run time, so no rewrite of it is sound. A fallback assignment (`PPOTrainer = None` after a failed import) does
    not count."""
    if not any(n in code for n in TRAINER_NAMES | CONFIG_NAMES):
        return []
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return []
    trl: set[str] = set()
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            from_trl = node.level == 0 and (node.module or "").split(".")[0] == "trl"
            for alias in node.names:
                name = alias.asname or alias.name
                if name in TRAINER_NAMES | CONFIG_NAMES:
                    (trl if from_trl else other).add(name)
        elif isinstance(node, ast.ClassDef) and node.name in TRAINER_NAMES | CONFIG_NAMES:
            other.add(node.name)
    return sorted(trl & other)


#: Where a project's config subclass may import PPOConfig from (the qualified names its base resolves to).
PPO_CONFIG_BASES = frozenset({
    "trl.PPOConfig", "trl.PPOv2Config", "trl.trainer.PPOConfig", "trl.trainer.PPOv2Config",
    "trl.trainer.ppo_config.PPOConfig", "trl.trainer.ppov2_config.PPOv2Config", "trl.experimental.ppo.PPOConfig",
    "trl.experimental.ppo.ppo_config.PPOConfig",
})
#: ... and GRPOConfig, once this rule migrated the file that defines the subclass (files are written as they are done)
GRPO_CONFIG_BASES = frozenset({"trl.GRPOConfig", "trl.trainer.GRPOConfig", "trl.trainer.grpo_config.GRPOConfig"})


def _imported_config_classes(code: str, path: str | None) -> set[str]:
    """The project's own PPOConfig subclasses this module imports from its other files (`from src.cfg import
    CustomPPOConfig`): their base becomes GRPOConfig there, so their calls here are config calls, mapped field by
    field like a local subclass's (babylm-interactive-learning built `CustomPPOConfig(model_name=, batch_size=,
    log_with=...)` in ppo.py, which the GRPOConfig base then rejected). A subclass whose file was migrated first
    (its base reads GRPOConfig already) counts while this module still calls it with PPO-only fields, so the result
    does not depend on the order the files are done in, and a second run changes nothing."""
    if not path or "import" not in code:
        return set()
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    found = imported_subclasses(tree, path, PPO_CONFIG_BASES | GRPO_CONFIG_BASES, None)
    if not found:
        return set()
    ppo_called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                  and any(k.arg in PPO_ONLY_FIELDS for k in n.keywords)}
    return {name for name, base in found.items() if base in PPO_CONFIG_BASES or name in ppo_called}


_TRAINER_MODULES = ("trl.trainer.ppo_trainer", "trl.trainer.ppov2_trainer", "trl.experimental.ppo.ppo_trainer")
#: every path TRL's PPOv2Config was importable under (0.9.2 - 0.13.0, the atlas; a test holds the two equal)
PPOV2_CONFIG_PATHS = ("trl.PPOv2Config", "trl.trainer.PPOv2Config", "trl.trainer.ppov2_config.PPOv2Config",
                      "trl.trainer.ppov2_trainer.PPOv2Config")


class _KeptPPOv2Config(SymbolMigration):
    """PPOv2Config -> `compat.trl.PPOv2Config`, the fields and defaults of every release that had it, where the
    config feeds the project's own trainer (called from `_mark_configs_of_own_trainers` only: elsewhere the config
    becomes GRPOConfig)."""

    symbols = {p: Moved("compat.trl", "PPOv2Config", "PPOv2Config (removed in TRL 0.13) feeds this project's own "
                        "trainer, which reads its PPO fields: trl-compat keeps the class (the fields of 0.9 - 0.12 "
                        "with their defaults)") for p in PPOV2_CONFIG_PATHS}


#: every path TRL's Trainer-style PPOConfig was importable under (0.12 - 1.12, the atlas)
TRAINER_STYLE_CONFIG_PATHS = (
    "trl.PPOConfig", "trl.trainer.PPOConfig", "trl.trainer.ppo_config.PPOConfig", "trl.trainer.ppo_trainer.PPOConfig",
    "trl.experimental.ppo.PPOConfig", "trl.experimental.ppo.ppo_config.PPOConfig",
    "trl.experimental.ppo.ppo_trainer.PPOConfig",
)


class _KeptClassicPPOConfig(SymbolMigration):
    """PPOConfig -> `compat.trl.ClassicPPOConfig`, TRL 0.4 - 0.11's step-loop config (0.11.4's fields, defaults and
    checks), where it feeds the project's own copy of the step-loop PPOTrainer (on `BaseTrainer`); the old defaults
    are written out after it (`classic_config`)."""

    symbols = {p: Moved("compat.trl", CLASSIC_NAME, "PPOConfig (the step-loop config, which TRL 0.12 gave to another "
                        "class and 1.13 removed) feeds this project's own copy of the step-loop PPOTrainer: trl-compat "
                        "keeps TRL 0.11's class as compat.trl.ClassicPPOConfig")
               for p in CLASSIC_CONFIG_PATHS}


class _KeptTrainerStylePPOConfig(SymbolMigration):
    """PPOConfig -> `compat.trl.PPOConfig`, TRL 0.12 - 1.12's Trainer-style config with the fields and defaults of
    every release that had it, where it feeds the project's own copy of a `transformers.Trainer`-based trainer
    (called from `_mark_configs_of_own_trainers` only)."""

    symbols = {p: Moved("compat.trl", "PPOConfig", "PPOConfig (removed in TRL 1.13) feeds this project's own "
                        "Trainer-based trainer, which reads its PPO fields: trl-compat keeps TRL 0.12 - 1.12's "
                        "Trainer-style class (the fields of every release with their defaults; TrainingArguments "
                        "fields at transformers' defaults: 0.19+ logged every 10 steps, logging_steps=10)")
               for p in TRAINER_STYLE_CONFIG_PATHS}


def _config_fields_set(code: str) -> set[str] | None:
    """The fields the module sets on the PPOConfig it imports from TRL or on a class of its own deriving from it: the
    keywords of its calls (`PPOConfig(model_name=..., ppo_epochs=4)`) and the fields of those classes (`class
    Config(PPOConfig): steps: int = 100`); and the attributes it reads that only one era's config has (`_ERA_READS`).
    None when the module does not parse."""
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    configs = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0
               and (n.module or "").split(".")[0] == "trl" for a in n.names if a.name in CONFIG_NAMES}
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    grown = True
    while grown:  # classes deriving from those, through classes of the module
        grown = False
        for node in classes:
            if node.name not in configs and any(isinstance(b, ast.Name) and b.id in configs for b in node.bases):
                configs.add(node.name)
                grown = True
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in configs:
            found |= {k.arg for k in node.keywords if k.arg}
        if isinstance(node, ast.ClassDef) and node.name in configs:
            found |= {b.target.id for b in node.body if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name)}
        if isinstance(node, ast.Attribute) and node.attr in _ERA_READS:  # `config.total_episodes`, `cfg.ppo_epochs`
            found.add(node.attr)
    return found


#: fields of one PPO config era only, named distinctly enough that reading an attribute of that name anywhere says
#: which config the module works with (`steps`, `target`, `output_dir` are too common to say anything)
_ERA_READS = frozenset({
    "total_episodes", "num_ppo_epochs", "response_length", "num_mini_batches", "local_rollout_forward_batch_size",
    "sft_model_path", "reward_model_path", "missing_eos_penalty", "kl_coef", "num_sample_generations",  # Trainer-style
    "ppo_epochs", "init_kl_coef", "adap_kl_ctrl", "forward_batch_size", "tracker_project_name", "log_with",
    "use_score_scaling", "optimize_cuda_cache", "optimize_device_cache", "backward_batch_size",  # step loop
})


def _mark_configs_of_own_trainers(rule: PythonMigration, wrapper: cst.MetadataWrapper, ctx: RuleContext,
                                  own_bases: dict[str, str]) -> cst.Module:
    """A module whose PPO config feeds the project's own Trainer subclass, not TRL's PPO trainer: that trainer reads
    PPO fields (`total_episodes`, `num_ppo_epochs`, `whiten_rewards`, ...) that GRPOConfig lacks, so GRPOConfig would
    break it without a sign. `PPOv2Config` moves to the `compat.trl` copy (one class for 0.9 - 0.12, its fields did
    not change meaning). `PPOConfig` names two different classes across TRL releases (the step-loop config until
    0.11, PPOv2's successor from 0.12): where every trainer of the project here derives from `transformers.Trainer`
    (a copy of the Trainer-style PPO trainer, which reads `TrainingArguments` fields the step-loop config never had)
    and nothing here sets a step-loop field, it is the Trainer-style one and moves to `compat.trl.PPOConfig`; where
    every one derives from the step-loop trainers' `BaseTrainer` and nothing here sets a Trainer-style field, it is
    the step-loop one and moves to `compat.trl.ClassicPPOConfig` (with the defaults of the releases the code ran on
    written out: `classic_config`); otherwise it stays as written and each import of it is marked."""
    module = _KeptPPOv2Config().transform(wrapper, ctx)
    if module is not wrapper.module:
        wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    fields = _config_fields_set(wrapper.module.code)
    kinds = set(own_bases.values())
    if fields is not None and not kinds & CLASSIC_BASE and not fields & (CLASSIC_ONLY - {"mini_batch_size"}):
        module = _KeptTrainerStylePPOConfig().transform(wrapper, ctx)
        if module is not wrapper.module:
            wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    elif fields is not None and kinds <= CLASSIC_BASE and not fields & TRAINER_ONLY:
        imports = trl_imports(wrapper.module)
        module = _KeptClassicPPOConfig().transform(wrapper, ctx)
        if module is not wrapper.module:
            module = write_defaults(rule, cst.MetadataWrapper(module, unsafe_skip_copy=True), ctx, imports)
            wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    own = sorted(own_bases)
    message = (f"{{name}} feeds this project's own trainer ({', '.join(own)}, a trainer class of its own: a copy "
               "of TRL's PPO trainer?), which reads PPO fields GRPOConfig does not have: not rewritten. TRL 1.13 "
               "removed PPO: keep a copy of this config class from the TRL release the code pinned in the project "
               "(on compat.trl.OnPolicyConfig, its base from 0.10 on), or port the trainer to GRPOTrainer")

    return mark_trl_imports(rule, wrapper, ctx, CONFIG_NAMES, message)


def _replaced_loops(t: Transformer) -> list[cst.CSTNode]:
    return [p.loop for p in t.plans.values() if p.reward_body is not None]


def drop_imports_left_unused(module: cst.Module, candidates: set[str]) -> cst.Module:
    """Imports of `candidates` (names the rule's removed statements used) that nothing uses any more are dropped,
    so the rewrite introduces no unused import (ruff F401); libcst's scope analysis decides what is unused."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import RemoveImportsVisitor

    if not candidates:
        return module
    context = CodemodContext()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) and \
                    not small.relative and small.module is not None:
                for a in small.names:
                    local = a.evaluated_alias or a.evaluated_name
                    if local in candidates:
                        RemoveImportsVisitor.remove_unused_import(
                            context, cst.helpers.get_full_name_for_node(small.module) or "", a.evaluated_name,
                            a.evaluated_alias)
            elif isinstance(small, cst.Import):
                for a in small.names:
                    if (a.evaluated_alias or a.evaluated_name) in candidates and "." not in a.evaluated_name:
                        RemoveImportsVisitor.remove_unused_import(context, a.evaluated_name, None, a.evaluated_alias)
    if not context.scratch:
        return module
    return RemoveImportsVisitor(context).transform_module(module)


def _star_todo(module: cst.Module, stars: list[str], rule: PythonMigration, ctx: RuleContext) -> cst.Module:
    """`from trl import *`: never guess which names it provides; mark it (same marker as ppo-helpers)."""
    from migrations.v1_13.ppo_helpers import _flag_stars

    return _flag_stars(module, rule, ctx)


MIGRATION = PPOToGRPO()

