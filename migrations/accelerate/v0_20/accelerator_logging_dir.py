"""accelerate 0.20 removed `Accelerator(logging_dir=)` (deprecated since 0.17 for `project_dir=`; the atlas: no
release from 0.20.3 to 1.15.0 takes it), so on the stack TRL's floors force (accelerate >= 1.4) it raises `TypeError`.

What it did, read in the 0.19.0 wheel (`Accelerator.__init__`): after building `self.project_configuration`
(`project_config=` if given, else `ProjectConfiguration(project_dir=project_dir)`), `logging_dir=X` set
`self.project_configuration.logging_dir = X` and nothing else: `project_dir` stayed as it was (None unless given).
`project_dir=X`, the successor the deprecation names, is not the same: it also sets the project folder, where
`save_state()` puts its automatically named checkpoints. The same state on every allowed release (1.4.0 and 1.15.0
read: `ProjectConfiguration(project_dir=None, logging_dir=X)` keeps `logging_dir=X`, `project_dir` stays None, and a
`project_dir=` given beside it is applied by `set_directories`, which keeps a set `logging_dir`) is
`project_config=ProjectConfiguration(logging_dir=X)`, the field every release 0.20.3-1.15.0 has
(`accelerate.utils.ProjectConfiguration`).

Rewritten in place (same argument position, so evaluation order is kept; a call grown past 100 columns is put one
argument per line) when the call passes no `project_config=`,
no `*args`/`**kwargs` splat and no positional argument, and `ProjectConfiguration` is free or already accelerate's
in the module; marked otherwise (with `project_config=` the old code mutated the caller's configuration object).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import kwarg, replace_args
from migrations.kinds.imports import ensure_imports, imported_names, top_level_imports

ACCELERATORS = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
CONFIG = ("accelerate.utils", "ProjectConfiguration")
_TODO = ("Accelerator(logging_dir=) was removed in accelerate 0.20: pass project_config=ProjectConfiguration("
         "logging_dir=...) (from accelerate.utils), or set logging_dir on the project_config you pass")


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: PythonMigration, ctx: RuleContext, name_free: bool) -> None:
        super().__init__(rule, ctx)
        self.name_free = name_free
        self.needs_import = False

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not imported_names(self, original_node.func) & ACCELERATORS:
            return updated_node
        arg = kwarg(updated_node, "logging_dir")
        if arg is None:
            return updated_node
        plain = all(a.keyword is not None and not a.star for a in updated_node.args)
        if not plain or kwarg(updated_node, "project_config") is not None or not self.name_free:
            self.todo(original_node, _TODO)
            return updated_node
        config = cst.Call(func=cst.Name(CONFIG[1]), args=[arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        new = arg.with_changes(keyword=cst.Name("project_config"), value=config)
        self.needs_import = True
        self.note(original_node, "Accelerator(logging_dir=X) -> project_config=ProjectConfiguration(logging_dir=X) "
                                 "(accelerate 0.20 removed logging_dir=)")
        return replace_args(updated_node, [new if a is arg else a for a in updated_node.args])


class AcceleratorLoggingDir(PythonMigration):
    fix_safety = "safe"  # the same configuration state as the removed keyword set (see the module docstring)
    summary = "Accelerator(logging_dir=) (removed in accelerate 0.20) -> project_config=ProjectConfiguration(logging_dir=)"
    triggers = ("logging_dir",)
    requires = ("accelerate",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        module = wrapper.module
        name_free = CONFIG[1] not in module.code or CONFIG in top_level_imports(module)
        t = _Transformer(self, ctx, name_free)
        new = wrapper.visit(t)
        if not t.changed:
            return module
        return ensure_imports(new, [CONFIG]) if t.needs_import else new


MIGRATION = AcceleratorLoggingDir()
