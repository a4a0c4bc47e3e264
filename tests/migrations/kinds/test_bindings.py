"""`migrations.kinds.bindings`: names provably bound to a TRL config (a config call or a parser's output)."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from migrations.kinds.bindings import holds_config
from migrations.kinds.imports import imported_names
from migrations.kinds.options import SFT_CONFIGS


class _Reads(cst.CSTVisitor):
    """Records `name -> holds an SFT config` for every `name.field` read."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, bool] = {}

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.attr.value == "field":
            self.found[node.value.value] = holds_config(self, node.value, SFT_CONFIGS,
                                                        lambda n: imported_names(self, n))


def _reads(src: str) -> dict[str, bool]:
    v = _Reads()
    cst.MetadataWrapper(cst.parse_module(textwrap.dedent(src))).visit(v)
    return v.found


def test_config_calls_and_parser_outputs() -> None:
    assert _reads("""\
        from transformers import HfArgumentParser
        from trl import SFTConfig, TrlParser
        a = SFTConfig(output_dir="o")
        parser = HfArgumentParser((Script, SFTConfig))
        s, b = parser.parse_args_into_dataclasses()
        c, d = TrlParser((SFTConfig, Model)).parse_args_and_config()
        print(a.field, s.field, b.field, c.field, d.field)
    """) == {"a": True, "s": False, "b": True, "c": True, "d": False}


def test_rebound_names_and_other_classes_are_not_configs() -> None:
    assert _reads("""\
        from trl import SFTConfig
        from mylib import SFTConfig as Other
        a = SFTConfig(output_dir="o")
        a = make()
        b = Other()
        c, d = parse((SFTConfig, X))
        print(a.field, b.field, c.field)
    """) == {"a": False, "b": False, "c": False}
