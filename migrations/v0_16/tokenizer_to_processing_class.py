"""tokenizer-to-processing-class: `tokenizer=` -> `processing_class=` on every TRL trainer that renamed it.

TRL 0.12 renamed the trainers' `tokenizer` parameter to `processing_class` and kept `tokenizer=` as a deprecated alias
(`@deprecate_kwarg`); each trainer dropped the alias on its own schedule, read from the wheels (0.11.4 -> 0.16.0):
BCO, GKD, IterativeSFT, Nash-MD, XPO in 0.13; CPO, KTO, Online DPO, RLOO in 0.14; ORPO, Reward in 0.15; DPO and SFT
in 0.16 - the release from which no trainer accepts `tokenizer=`, hence this folder. On TRL 1.13-1.16 every one of them
takes `processing_class` and raises `TypeError` on `tokenizer=`.

What is rewritten (the rename is documented by TRL as the same parameter):

* a call of a TRL trainer (resolved by qualified name through every import form: `trl.X`, `trl.trainer.X`,
  `trl.trainer.x_trainer.X`, `trl.experimental.x.X`, `compat.trl.X`) with `tokenizer=`;
* `super().__init__(..., tokenizer=...)` / `Base.__init__(self, ..., tokenizer=...)` inside a class deriving from one;
* a call of the project's own subclass of a TRL trainer that takes no `tokenizer` parameter itself, defined in the
  same module or in a project module file it imports (`from utils import MarginRewardTrainer`: `kinds.trainer_subclasses`),
  at module level or inside the function that calls it (`def main(): from trainer import Trainer`). A file that
  names no `trl` but `Trainer` is read too (it may call such a subclass).

`self.tokenizer` inside such a subclass (unless the class assigns it itself) and `trainer.tokenizer` on a name bound
once to a TRL trainer call become `.processing_class`: transformers 5's `Trainer` has no `tokenizer` attribute.

Positional uses need nothing: the parameter kept its position in every trainer except DPOTrainer, whose 0.x positional
layout is rewritten by `trainer-kwargs-to-config` (it runs first). Marked, not rewritten: both `tokenizer=` and
`processing_class=` passed; `**kwargs` holding a `"tokenizer"` key is invisible to a static rule and left alone.
The old RLOO API (`RLOOTrainer(config=, tokenizer=, policy=, ref_policy=, reward_model=)`, replaced in 0.22, its
aliases removed in 0.25) is left to `rloo-v1-to-rloo`, which rewrites the whole call. PPO and GRPO trainers belong to the PPO rules.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import (
    ParentNodeProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds import grammar
from migrations.kinds.trainer_subclasses import (
    SelfAttributeAssigned,
    bound_at_module_level,
    function_imported_subclass,
    imported_subclasses,
    subclasses_in,
)

ANCHOR = "tokenizer-to-processing-class"

# trainer -> (its module file stem, its trl.experimental package or "" when it is stable)
_TRAINERS: dict[str, tuple[str, str]] = {
    "SFTTrainer": ("sft_trainer", ""),
    "DPOTrainer": ("dpo_trainer", ""),
    "KTOTrainer": ("kto_trainer", "kto"),
    "RewardTrainer": ("reward_trainer", ""),
    "RLOOTrainer": ("rloo_trainer", ""),
    "ORPOTrainer": ("orpo_trainer", "orpo"),
    "CPOTrainer": ("cpo_trainer", "cpo"),
    "BCOTrainer": ("bco_trainer", "bco"),
    "GKDTrainer": ("gkd_trainer", "gkd"),
    "OnlineDPOTrainer": ("online_dpo_trainer", "online_dpo"),
    "XPOTrainer": ("xpo_trainer", "xpo"),
    "NashMDTrainer": ("nash_md_trainer", "nash_md"),
    "PRMTrainer": ("prm_trainer", "prm"),
    "IterativeSFTTrainer": ("iterative_sft_trainer", "iterative_sft"),
}


def _paths(name: str, stem: str, exp: str) -> set[str]:
    out = {f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.{stem}.{name}", f"compat.trl.{name}"}
    if exp:
        out |= {f"trl.experimental.{exp}.{name}", f"trl.experimental.{exp}.{stem}.{name}"}
    return out


TRAINER_PATHS: dict[str, str] = {p: n for n, (s, e) in _TRAINERS.items() for p in _paths(n, s, e)}
_RLOO_V1 = ("config", "policy", "ref_policy", "reward_model")


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self._class_bases: list[str | None] = []  # the TRL trainer each enclosing class derives from (None: none)
        self._own_tokenizer: list[bool] = []  # whether that class assigns self.tokenizer itself
        self._local: dict[str, str] = {}  # user classes deriving from a TRL trainer: local name -> the TRL trainer

    def visit_Module(self, node: cst.Module) -> None:
        try:
            tree = grammar.parse(node.code)
        except (SyntaxError, ValueError):
            return
        # user classes deriving from a TRL trainer, here and in the project's module files this one imports
        bases = frozenset(TRAINER_PATHS)
        imported = imported_subclasses(tree, self.ctx.path, bases, "tokenizer")
        local = {**imported, **subclasses_in(tree, bases, "tokenizer", imported)}
        self._local = {name: TRAINER_PATHS[base] for name, base in local.items()}

    def _trainer(self, node: cst.CSTNode) -> str | None:
        try:
            names = self.get_metadata(QualifiedNameProvider, node, set())
        except KeyError:
            return None
        for q in sorted(names, key=lambda q: q.name):
            if q.source == QualifiedNameSource.IMPORT and q.name in TRAINER_PATHS:
                return TRAINER_PATHS[q.name]
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        base = next((t for t in (self._trainer(b.value) for b in node.bases) if t), None)
        self._class_bases.append(base)
        own = SelfAttributeAssigned("tokenizer")
        if base is not None:
            node.body.visit(own)
        self._own_tokenizer.append(own.found)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._class_bases.pop()
        self._own_tokenizer.pop()
        return updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        """`self.tokenizer` in a TRL trainer subclass / `trainer.tokenizer` on a TRL trainer: transformers 5's Trainer
        has no `tokenizer` attribute any more; the trainer keeps it as `processing_class`."""
        if original_node.attr.value != "tokenizer":
            return updated_node
        value = original_node.value
        trainer: str | None = None
        if isinstance(value, cst.Name) and value.value == "self":
            if self._class_bases and self._class_bases[-1] and not self._own_tokenizer[-1]:
                trainer = self._class_bases[-1]
        elif isinstance(value, cst.Name):
            trainer = self._bound_trainer(value)
        if trainer is None:
            return updated_node
        self.note(original_node, f"{trainer}.tokenizer -> .processing_class (transformers 5 Trainer has no .tokenizer)")
        return updated_node.with_changes(attr=cst.Name("processing_class"))

    def _bound_trainer(self, name: cst.Name) -> str | None:
        """The TRL trainer `name` is bound to by its only assignment in scope (`trainer = DPOTrainer(...)`)."""
        scope = self.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        assignments = [a for a in scope[name.value] if hasattr(a, "node")]
        if len(assignments) != 1:
            return None
        parent = self.get_metadata(ParentNodeProvider, assignments[0].node, None)
        if isinstance(parent, cst.AssignTarget):
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        if isinstance(parent, cst.Assign) and isinstance(parent.value, cst.Call):
            return self._trainer(parent.value.func)
        return None

    def _callee(self, call: cst.Call) -> str | None:
        trainer = self._trainer(call.func)
        if trainer is not None:
            return trainer
        func = call.func
        if isinstance(func, cst.Name) and func.value in self._local and bound_at_module_level(self, func):
            return self._local[func.value]
        if isinstance(func, cst.Name):
            base = function_imported_subclass(self, func, self.ctx.path, frozenset(TRAINER_PATHS), "tokenizer")
            if base is not None:
                return TRAINER_PATHS[base]
        # super().__init__(...) / Base.__init__(self, ...) inside a subclass of a TRL trainer
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and self._class_bases:
            base = self._class_bases[-1]
            if base is None:
                return None
            if isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) \
                    and func.value.func.value == "super":
                return base
            if self._trainer(func.value) is not None:
                return base
        return None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        trainer = self._callee(original_node)
        if trainer is None:
            return updated_node
        keywords = {a.keyword.value for a in updated_node.args if a.keyword is not None}
        if trainer == "RLOOTrainer" and keywords & set(_RLOO_V1):
            return updated_node  # the v1 RLOO call belongs to rloo-v1-to-rloo
        if "tokenizer" not in keywords:
            return updated_node
        if "processing_class" in keywords:
            self.todo(original_node, f"{trainer}: both tokenizer= and processing_class= given; keep one")
            return updated_node
        args = [a.with_changes(keyword=cst.Name("processing_class"))
                if a.keyword is not None and a.keyword.value == "tokenizer" else a for a in updated_node.args]
        self.note(original_node, f"{trainer}(tokenizer=) -> processing_class= (renamed in TRL 0.12)")
        return updated_node.with_changes(args=args)


class TokenizerToProcessingClass(PythonMigration):
    summary = "TRL trainers' tokenizer= -> processing_class= (renamed in 0.12, alias gone by 0.16)"
    triggers = ("tokenizer",)
    requires = ("trl", "Trainer")
    transformer = _Transformer


MIGRATION = TokenizerToProcessingClass()
