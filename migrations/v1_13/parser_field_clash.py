"""parser-field-clash: a project dataclass parsed beside a TRL config that now declares one of its fields.

`HfArgumentParser` / `TrlParser` add one `--<field>` option per field of every dataclass in their tuple, with
argparse's default conflict handling: two classes declaring the same field make the parser's constructor raise
(`argparse.ArgumentError: argument --trust_remote_code/--trust-remote-code: conflicting option strings`). TRL configs
and `TrainingArguments` gained fields over the releases (every TRL config has `trust_remote_code` since 1.7, from
`_BaseConfig`; read from the atlas), so a project class that declared one of them itself, parsed together with the
config, worked on its old TRL and stops at the parser on the target (miyako6105/llm-train's
`ModelArgs.trust_remote_code` beside `SFTConfig`).

For each parser call whose class tuple is written out, the fields of the project's own classes in it (the run's
index, `kinds.local_classes`: the fields their bodies annotate, through their project bases) are held against the
fields of the library classes beside them on the target (TRL configs at the target TRL, `TrainingArguments` at the
target transformers, from the atlas). A clash is marked at the call with what to do: drop the project's field and
read the library's (`training_args.trust_remote_code`), or rename it. Nothing is rewritten: which of the two values a
script meant is the user's call. A project class deriving from the library class it clashes with is an override,
not a clash.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider, ScopeProvider
from packaging.version import Version

from migrations.base import MigrationTransformer, Options, PythonMigration
from migrations.kinds.bindings import module_class
from migrations.kinds.imports import imported_names
from migrations.kinds.local_classes import LocalClass
from migrations.kinds.options import ARGUMENT_PARSERS
from migrations.kinds.training_args import TRAINING_ARGUMENTS


def _library_fields(qnames: set[str], options: Options) -> tuple[str, set[str]] | None:
    """(the class's short name, its fields on the target) for a TRL config or transformers' TrainingArguments."""
    from migrations.atlas import Atlas

    transformers = options.target("transformers")
    for q in sorted(qnames):
        if q.startswith("trl.") and q.endswith(("Config", "Arguments")):
            fields = Atlas.load("trl").config_fields(options.atlas_trl, q,
                                                     transformers=str(transformers) if transformers else None)
        elif q in TRAINING_ARGUMENTS and transformers is not None:
            atlas = Atlas.load("transformers")
            release = next((r for r in reversed(atlas.releases()) if Version(r) <= transformers), None)
            fields = atlas.config_fields(release, q) if release else None
        else:
            continue
        if fields:
            return q.rsplit(".", 1)[-1], set(fields)
    return None


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider)

    def _project_class(self, element: cst.BaseExpression) -> LocalClass | None:
        """The project's class `element` names (imported from a module of the project, or defined here)."""
        local = self.ctx.options.local_classes
        if local is None:
            return None
        for q in sorted(imported_names(self, element)):
            found = local.find_in(self.ctx.path, q)
            if found is not None:
                return found
        if isinstance(element, cst.Name) and module_class(self, element) is not None:
            return local.defined_in(self.ctx.path, element.value)
        return None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not imported_names(self, original_node.func) & ARGUMENT_PARSERS:
            return updated_node
        arg = next((a for a in original_node.args if a.keyword is None or a.keyword.value == "dataclass_types"), None)
        if arg is None or not isinstance(arg.value, (cst.Tuple, cst.List)):
            return updated_node
        local = self.ctx.options.local_classes
        own, library = [], []
        for element in arg.value.elements:
            cls = self._project_class(element.value)
            if cls is not None and local is not None:
                classes, _outside = local.lineage(cls.qname)
                own.append((cls, {f for c in classes for f in c.fields}))
                continue
            found = _library_fields(set(imported_names(self, element.value)), self.ctx.options)
            if found is not None:
                library.append(found)
        for cls, fields in own:
            for name, lib_fields in library:
                clash = sorted(fields & lib_fields)
                if not clash or any(b.rsplit(".", 1)[-1] == name for b in local.lineage(cls.qname)[1]):
                    continue
                short = cls.qname.rsplit(".", 1)[-1]
                options = ", ".join(f"--{f}" for f in clash)
                self.todo(original_node, f"{short} declares {', '.join(clash)}, which {name} has too on the target: "
                          f"the parser adds {options} twice and argparse refuses it (conflicting option strings). "
                          f"Drop the field from {short} and read the {name} one, or rename it")
        return updated_node


class ParserFieldClash(PythonMigration):
    summary = "a project dataclass parsed beside a TRL config / TrainingArguments that now has one of its fields: marked"
    triggers = ("Parser",)
    requires = ("trl", "transformers")
    transformer = _Transformer


MIGRATION = ParserFieldClash()
