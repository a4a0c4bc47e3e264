"""local-config-base: a repository's TrainingArguments subclass fed to one TRL trainer derives from its TRL config.

Scripts of the TRL 0.7-0.12 era (alignment-handbook's `src/alignment/configs.py` and its many copies) declared their
trainer options on their own dataclass, `class SFTConfig(transformers.TrainingArguments)` with `max_seq_length`,
`dataset_kwargs`, ..., parsed it from the command line and passed the trainer keywords (`packing=`,
`model_init_kwargs=`, `beta=`) beside it. On TRL 1.13-1.16 such an object is no trainer config: SFTTrainer rebuilds it
as `SFTConfig(**args.to_dict())` (its own fields are a TypeError there, attributes set on it are lost), DPOTrainer and
RewardTrainer read DPOConfig / RewardConfig fields from it. The keywords the trainers dropped have nowhere to go.

This rule, in the class's own module, bases that class on the trainer's TRL config instead
(`class SFTConfig(trl.SFTConfig)`) when the run's index of local classes (`migrations.kinds.local_classes`) proves it
is safe (`trainer_kwargs_to_config.config_base`): a `@dataclass` deriving from `transformers.TrainingArguments`
directly, with no `__init__` / `__post_init__` on its lineage and no local subclass, whose every instance the index
sees passed to a trainer goes as `args` to one of DPOTrainer / SFTTrainer / RewardTrainer. Its own fields stay as
they are (they override the config's), and the TrainingArguments defaults the TRL configs change (`learning_rate`,
`logging_steps`, `gradient_checkpointing`, `bf16`) are written out as fields of the class unless it declares them, so
every object it builds gets the values it got; what it gains is the config's own fields, with their defaults. A class
parsed beside a dataclass declaring an option the TRL config adds is left alone (one parser cannot take the same
option twice), but for `_INERT_FIELDS` (`trust_remote_code`), which the class redeclares with the TRL default and
`init=False`, off the command line.
`trainer-kwargs-to-config` then moves the trainer keywords onto the parsed object in the scripts.

A class the index does not prove (used by two trainers, by a plain `transformers.Trainer`, subclassed, with its own
`__init__`) is left alone; `trainer-kwargs-to-config` marks the trainer call. No index (a single source): nothing.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import GlobalScope, QualifiedNameProvider, QualifiedNameSource, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import parse_expr
from migrations.kinds.imports import ensure_imports

from .trainer_kwargs_to_config import TA_DEFAULT_TYPES, ConfigBase, config_base, training_arguments_defaults

_TRAINING_ARGS = {"transformers.TrainingArguments", "transformers.training_args.TrainingArguments"}


class _Rebase(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext, targets: dict[str, ConfigBase],
                 trl_free: bool) -> None:
        super().__init__(rule, ctx)
        self.targets = targets  # class name -> the TRL config and the fields kept off the command line
        self.trl_free = trl_free  # `trl` names the module trl here, or nothing yet
        self.depth = 0
        self.needs_import = False
        self.needs_dataclasses = False

    def qnames(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())
                if q.source == QualifiedNameSource.IMPORT}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.depth += 1

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self.depth -= 1
        found = self.targets.get(original_node.name.value) if self.depth == 0 else None
        if found is None:
            return updated_node
        config = found.config
        at = [i for i, b in enumerate(original_node.bases)
              if b.keyword is None and self.qnames(b.value) & _TRAINING_ARGS]
        if len(at) != 1:
            return updated_node
        if not self.trl_free:
            self.todo(original_node, f"base {original_node.name.value} on trl.{config} (`trl` is another name "
                                     "here): trainer keywords have nowhere else to go on TRL 1.x")
            return updated_node
        bases = list(updated_node.bases)
        bases[at[0]] = bases[at[0]].with_changes(value=parse_expr(f"trl.{config}"))
        declared = {s.body[0].target.value for s in updated_node.body.body
                    if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                    and isinstance(s.body[0], cst.AnnAssign) and isinstance(s.body[0].target, cst.Name)}
        written = [(k, v) for k, v in training_arguments_defaults().items() if k not in declared]
        body = list(updated_node.body.body)
        if written:
            lines = [cst.parse_statement(f"{k}: {TA_DEFAULT_TYPES[k]} = {v}\n") for k, v in written]
            lines[0] = lines[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), cst.EmptyLine(
                comment=cst.Comment(f"# TrainingArguments' defaults, which trl.{config} changes (trl-compat)"))])
            body = [s for s in body if not _is_pass(s)] + lines
        if found.hidden:
            lines = [cst.parse_statement(f"{n}: {a} = dataclasses.field(default={d}, init=False)\n")
                     for n, a, d in found.hidden]
            lines[0] = lines[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), cst.EmptyLine(
                comment=cst.Comment(f"# declared by a class parsed beside this one; trl.{config}'s default, as "
                                    "TRL 0.x had it (trl-compat)"))])
            body = [s for s in body if not _is_pass(s)] + lines
            self.needs_dataclasses = True
        self.needs_import = True
        self.note(original_node, f"{original_node.name.value}: transformers.TrainingArguments -> trl.{config} (the "
                                 f"only trainer it feeds); TrainingArguments defaults written out: "
                                 f"{', '.join(f'{k}={v}' for k, v in written) or 'none'}"
                                 + "".join(f"; {n} kept off the command line (another class parses it)"
                                           for n, _, _ in found.hidden))
        return updated_node.with_changes(bases=bases, body=updated_node.body.with_changes(body=body))


def _is_pass(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in stmt.body)


class LocalConfigBase(PythonMigration):
    summary = "a repository's TrainingArguments subclass fed to one DPO/SFT/Reward trainer -> derives from its config"
    # the class's module need not name TRL (alignment-handbook's configs.py does not)
    triggers = ("TrainingArguments",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        local = ctx.options.local_classes
        if local is None or ctx.path is None:
            return wrapper.module
        targets = {}
        for cls in local.classes:
            if cls.path == ctx.path:
                found = config_base(local, cls.qname, ctx.options.target_trl)
                if found is not None:
                    targets[cls.qname.rsplit(".", 1)[-1]] = found
        if not targets:
            return wrapper.module
        scopes = wrapper.resolve(ScopeProvider)
        module_scope = next((s for s in scopes.values() if isinstance(s, GlobalScope)), None)
        bound = [] if module_scope is None else list(module_scope["trl"])
        trl_free = all(isinstance(a.node, cst.Import) and any(
            n.asname is None and n.name.value == "trl" for n in a.node.names if isinstance(n.name, cst.Name))
            for a in bound if hasattr(a, "node"))
        t = _Rebase(self, ctx, targets, trl_free)
        module = wrapper.visit(t)
        if t.needs_import:
            module = ensure_imports(module, [("trl", "")] + ([("dataclasses", "")] if t.needs_dataclasses else []))
        return module if t.changed else wrapper.module


MIGRATION = LocalConfigBase()
