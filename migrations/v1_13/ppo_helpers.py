"""ppo-helpers: the PPO-era helper functions TRL removed (`set_seed`, `trl.core.*`, `respond_to_batch`).

* `trl.set_seed` / `trl.core.set_seed` (gone in v0.14) -> `transformers.set_seed` (same function);
* `trl.core.LengthSampler` (gone in v0.25), `respond_to_batch` (v0.14) and the small tensor helpers
  (`masked_mean`, `masked_var`, `masked_whiten`, `whiten`, `clip_by_value`, `logprobs_from_logits`,
  `entropy_from_logits`, `flatten_dict`, the constant `WANDB_PADDING`) have no public successor: their last TRL implementation is inserted into
  the module as a local definition (after the imports) and the import is removed, so the code keeps its behaviour;
* `stack_dicts`, `stats_to_np`, `convert_to_scalar` (gone in v0.14) and `PPODecorators` (v0.24) -> `compat.trl`
  (trl-compat's copies of their last TRL bodies, `compat._trainer_utils`, PPODecorators with the members TRL 0.7.4
  renamed too; the project then needs trl-compat);
* the other `trl.core` helpers (`top_k_top_p_filtering`, `randn_tensor`, ...) are flagged;
* `from trl import *` / `from trl.core import *` are flagged, never guessed;
* the same helpers imported through `trl.trainer.ppo_trainer` (which imported them from `trl.core` wherever it had
  them, `PPO_TRAINER_CORE`) are handled as `trl.core`'s.
`create_reference_model` still exists in TRL 1.13-1.16 and is left alone.
"""

from __future__ import annotations

import libcst as cst

from migrations.base import Finding, PythonMigration, RuleContext, add_todo_lines, dedupe_header_todos, todo_text
from migrations.kinds.cst import dotted, parse_stmts
from migrations.kinds.imports import TrlRef, ensure_imports, imports_trl, insert_after_imports, star_imports
from migrations.kinds.symbols import Replacement, SymbolTransformer

ANCHOR = "ppo-core-helpers"

# name -> (source of the local definition, imports it needs)
LOCAL_DEFS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "LengthSampler": (
        '''class LengthSampler:
    """trl.core.LengthSampler (removed in TRL 0.25), kept by trl-compat: a random length in [min_value, max_value)."""

    def __init__(self, min_value, max_value):
        self.values = list(range(min_value, max_value))

    def __call__(self):
        return numpy.random.choice(self.values)
''',
        (("numpy", ""),),
    ),
    "respond_to_batch": (
        '''def respond_to_batch(model, queries, txt_len=20, top_k=0, top_p=1.0):
    """trl.core.respond_to_batch (removed in TRL 0.14), kept by trl-compat: sample exactly txt_len new tokens."""
    output = model.generate(
        queries, max_new_tokens=txt_len, min_new_tokens=txt_len, do_sample=True, top_k=top_k, top_p=top_p
    )
    return output[:, queries.shape[-1] :]
''',
        (),
    ),
    "masked_mean": (
        '''def masked_mean(values, mask, axis=None):
    """trl.core.masked_mean (removed from TRL), kept by trl-compat."""
    if axis is not None:
        return (values * mask).sum(axis=axis) / mask.sum(axis=axis)
    return (values * mask).sum() / mask.sum()
''',
        (),
    ),
    "masked_var": (
        '''def masked_var(values, mask, unbiased=True):
    """trl.core.masked_var (removed from TRL), kept by trl-compat."""
    mean = (values * mask).sum() / mask.sum()
    variance = (((values - mean) ** 2) * mask).sum() / mask.sum()
    if unbiased:
        mask_sum = mask.sum()
        if mask_sum == 0:
            raise ValueError("The sum of the mask is zero")
        variance = variance * (mask_sum / (mask_sum - 1))
    return variance
''',
        (),
    ),
    "masked_whiten": (
        '''def masked_whiten(values, mask, shift_mean=True):
    """trl.core.masked_whiten (removed from TRL), kept by trl-compat."""
    mean = (values * mask).sum() / mask.sum()
    mask_sum = mask.sum()
    var = (((values - mean) ** 2) * mask).sum() / mask_sum * (mask_sum / (mask_sum - 1))
    whitened = (values - mean) * torch.rsqrt(var + 1e-8)
    if not shift_mean:
        whitened += mean
    return whitened
''',
        (("torch", ""),),
    ),
    "whiten": (
        '''def whiten(values, shift_mean=True):
    """trl.core.whiten (removed in TRL 0.14), kept by trl-compat."""
    mean, var = torch.mean(values), torch.var(values)
    whitened = (values - mean) * torch.rsqrt(var + 1e-8)
    if not shift_mean:
        whitened += mean
    return whitened
''',
        (("torch", ""),),
    ),
    "clip_by_value": (
        '''def clip_by_value(x, tensor_min, tensor_max):
    """trl.core.clip_by_value (removed in TRL 0.14), kept by trl-compat."""
    return torch.max(torch.min(x, tensor_max), tensor_min)
''',
        (("torch", ""),),
    ),
    "logprobs_from_logits": (
        '''def logprobs_from_logits(logits, labels, gather=True):
    """trl.core.logprobs_from_logits (removed in TRL 0.14), kept by trl-compat."""
    logp = torch.nn.functional.log_softmax(logits, dim=2)
    if not gather:
        return logp
    return torch.gather(logp, 2, labels.unsqueeze(2)).squeeze(-1)
''',
        (("torch", ""),),
    ),
    "entropy_from_logits": (
        '''def entropy_from_logits(logits):
    """trl.core.entropy_from_logits (removed in TRL 0.14), kept by trl-compat."""
    pd = torch.nn.functional.softmax(logits, dim=-1)
    return torch.logsumexp(logits, axis=-1) - torch.sum(pd * logits, axis=-1)
''',
        (("torch", ""),),
    ),
    "WANDB_PADDING": (
        "WANDB_PADDING = -1  # trl.core.WANDB_PADDING (removed in TRL 0.14), kept by trl-compat: stats padding value\n",
        (),
    ),
    "flatten_dict": (
        '''def flatten_dict(nested, sep="/"):
    """trl.core.flatten_dict (removed in TRL 0.24), kept by trl-compat."""
    flat = {}

    def rec(value, prefix):
        for k, v in value.items():
            if isinstance(v, dict):
                rec(v, f"{prefix}{k}{sep}")
            else:
                flat[f"{prefix}{k}"] = v

    rec(nested, "")
    return flat
''',
        (),
    ),
}
#: the bigger helpers trl-compat keeps in `compat.trl` (`compat._trainer_utils`, faithful to TRL's last body and
#: tested against it): the import moves there
COMPAT_COPIES = frozenset({"stack_dicts", "stats_to_np", "convert_to_scalar", "PPODecorators"})
FLAGGED = frozenset(
    {
        "top_k_top_p_filtering", "randn_tensor", "add_suffix", "average_torch_dicts", "pad_to_size",
        "build_bert_batch_from_txt", "listify_batch",
    }
)
CORE_MODULES = ("trl.core", "trl.gpt2")
#: names `trl.trainer.ppo_trainer` (gone in 0.29) imported from `..core` in every release where it had them (0.4 - 0.24;
#: atlas, held by the test): importing them from there is importing `trl.core`'s. Not `masked_mean` / `masked_var` /
#: `masked_whiten`: 0.25's module defines its own
PPO_TRAINER_CORE = frozenset({
    "PPODecorators", "WANDB_PADDING", "clip_by_value", "convert_to_scalar", "entropy_from_logits", "flatten_dict",
    "logprobs_from_logits", "set_seed", "stack_dicts", "stats_to_np",
})
_PPO_TRAINER = "trl.trainer.ppo_trainer"


def _core_module(ref: TrlRef) -> str | None:
    """The `trl.core`-like module `ref` names a helper of (`trl.trainer.ppo_trainer`'s re-exports count as
    `trl.core`), else None."""
    if ref.module in CORE_MODULES:
        return ref.module
    return "trl.core" if ref.module == _PPO_TRAINER and ref.name in PPO_TRAINER_CORE else None


class _Transformer(SymbolTransformer):
    def __init__(self, rule: PythonMigration, ctx: RuleContext, defined: set[str], flagged: frozenset[str]) -> None:
        super().__init__(rule, ctx)
        self.used_local: list[str] = []
        self.defined = defined
        self.flagged = flagged  # FLAGGED, plus what this file cannot take from compat.trl

    def replacement(self, ref: TrlRef) -> Replacement | None:
        core = _core_module(ref)
        if ref.name == "set_seed" and (ref.module == "trl" or core == "trl.core"):
            return Replacement("transformers", "set_seed")
        if core is not None and ref.name in LOCAL_DEFS:
            return Replacement(None, ref.name)
        if core is not None and ref.name in COMPAT_COPIES and ref.name not in self.flagged:
            return Replacement("compat.trl", ref.name)
        if ref.name == "respond_to_batch" and ref.module in ("trl", "trl.gpt2", "trl.core"):
            return Replacement(None, ref.name)
        if core is not None and ref.name in self.flagged:
            return Replacement(None, ref.name)  # import dropped so the module imports; each use is flagged
        return None

    def owns_module(self, module: str) -> bool:
        return module in CORE_MODULES

    def leave_SimpleStatementLine(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        for s in original_node.body:
            if isinstance(s, cst.ImportFrom) and not s.relative and s.module is not None and not isinstance(
                s.names, cst.ImportStar
            ):
                mod = dotted(s.module)
                for a in s.names:
                    name = dotted(a.name) or ""
                    rep = self.replacement(TrlRef(mod or "", name))
                    if rep is not None and rep.module is None and name in LOCAL_DEFS and name not in self.used_local:
                        self.used_local.append(name)
                        if a.asname is not None:
                            self.todo(original_node, f"{name} is now defined locally by trl-compat under its own "
                                      f"name; rename uses of the alias `{a.asname.name.value}`", ANCHOR)  # type: ignore[union-attr]
                    if _core_module(TrlRef(mod or "", name)) is not None and name in self.flagged:
                        self.todo(original_node, f"trl.core.{name} was removed from TRL with no public successor "
                                  "and its import was dropped: copy the helper you need into your code", ANCHOR)
        return super().leave_SimpleStatementLine(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        found = self.replaced_ref(original_node)
        if found is not None and found[1].module is None and found[0].name in LOCAL_DEFS and found[0].name not in self.used_local:
            self.used_local.append(found[0].name)
        ref = self.trl_ref(original_node, self.flagged)
        if ref is not None and _core_module(ref) is not None:
            self.todo(original_node, f"trl.core.{ref.name} was removed from TRL with no public successor", ANCHOR)
        return super().leave_Attribute(original_node, updated_node)


    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if id(original_node) not in self._skip_names:
            ref = self.trl_ref(original_node, self.flagged)
            if ref is not None and _core_module(ref) is not None:
                self.todo(original_node, f"{ref.name} (trl.core, removed from TRL) is not defined any more", ANCHOR)
        return super().leave_Name(original_node, updated_node)


def _module_level_names(module: cst.Module) -> set[str]:
    """Functions, classes and plainly assigned names of the module's top level (a local definition is never added
    twice)."""
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
                    [small.target] if isinstance(small, cst.AnnAssign) else [])
                names.update(t.value for t in targets if isinstance(t, cst.Name))
    return names


class PPOHelpers(PythonMigration):
    fix_safety = "safe"
    summary = "trl.set_seed -> transformers.set_seed; trl.core helpers (LengthSampler, respond_to_batch, ...) kept locally"
    anchor = ANCHOR
    triggers = ("set_seed", "trl.core", "respond_to_batch", "trl.gpt2", "import *", "trl import core", "ppo_trainer")
    order = 30
    requires = ("from trl", "import trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if not imports_trl(wrapper.module, set(LOCAL_DEFS) | FLAGGED | COMPAT_COPIES | {"set_seed"}, (*CORE_MODULES, _PPO_TRAINER)):
            return wrapper.module
        defined = _module_level_names(wrapper.module)
        t = _Transformer(self, ctx, defined, FLAGGED)
        module = t.transform_module(wrapper)
        new_defs: list[cst.BaseStatement] = []
        imports: list[tuple[str, str]] = []
        for name in t.used_local:
            if name in defined:
                continue
            src, needs = LOCAL_DEFS[name]
            new_defs.extend(parse_stmts(src))
            imports.extend(needs)
        if new_defs:
            module = ensure_imports(module, imports)
            spaced = [d.with_changes(leading_lines=[cst.EmptyLine(indent=False), cst.EmptyLine(indent=False)]) for d in new_defs]
            module = insert_after_imports(module, spaced)
            for name in t.used_local:
                ctx.report(Finding(self.id, f"trl.core.{name} is now defined locally", 0, 0, ANCHOR, "info", True))
        stars = star_imports(module)
        if stars:
            module = _flag_stars(module, self, ctx)
        return module


STAR_MSG = (
    "star import from TRL: names such as PPOTrainer, PPOConfig, AutoModelForCausalLMWithValueHead and set_seed no "
    "longer exist in TRL >= 1.13; import the names you use explicitly so trl-compat can migrate them"
)


def _flag_stars(module: cst.Module, rule: PythonMigration, ctx: RuleContext) -> cst.Module:
    # both ppo-helpers and ppo-to-grpo call this: one marker text (tagged with the rule that owns it) for both
    text = todo_text(STAR_MSG, "ppo-star-import", "ppo-helpers")

    class _T(cst.CSTTransformer):
        def leave_SimpleStatementLine(self, original_node, updated_node):  # type: ignore[no-untyped-def]
            for s in updated_node.body:
                if isinstance(s, cst.ImportFrom) and isinstance(s.names, cst.ImportStar) and not s.relative:
                    mod = dotted(s.module) if s.module is not None else None
                    if mod and (mod == "trl" or mod.startswith("trl.")):
                        ctx.report(Finding(rule.id, STAR_MSG, 0, 0, "ppo-star-import", "manual", False))
                        return add_todo_lines(updated_node, [text])
            return updated_node

    return dedupe_header_todos(module.visit(_T()))


MIGRATION = PPOHelpers()
