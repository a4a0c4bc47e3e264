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


def test_parameters_of_a_function_the_file_calls_with_configs() -> None:
    # TRL's scripts since 0.13: main(script_args, training_args, model_args) after a make_parser() factory
    assert _reads("""\
        from trl import SFTConfig, TrlParser

        def main(s, t, m):
            print(s.field, t.field, m.field)

        def helper(t, *, again):
            print(t.field, again.field)

        def make_parser(subparsers=None):
            types = (Script, SFTConfig, Model)
            if subparsers is not None:
                return subparsers.add_parser("sft", dataclass_types=types)
            return TrlParser(types)

        if __name__ == "__main__":
            a, b, c, rest = make_parser().parse_args_and_config(return_remaining_strings=True)
            main(a, b, c)
            main(a, t=b, m=c)
            helper(b, again=b)
    """) == {"s": False, "t": True, "m": False, "again": True}


def test_parameters_not_provably_configs() -> None:
    assert _reads("""\
        from trl import SFTConfig, TrlParser

        def called_with_two_kinds(t):
            print(t.field)

        def passed_on(u):
            print(u.field)

        def rebound(v):
            v = v.copy()
            print(v.field)

        def star_called(w):
            print(w.field)

        def never_called(x):
            print(x.field)

        class Holder:
            def method(self, y):
                print(y.field)

        a, b = TrlParser((Script, SFTConfig)).parse_args_and_config()
        called_with_two_kinds(b)
        called_with_two_kinds(a)
        passed_on(b)
        callbacks = [passed_on]
        rebound(b)
        star_called(*[b])
        Holder().method(b)
    """) == {"t": False, "u": False, "v": False, "w": False, "x": False, "y": False}


def test_a_factory_building_different_tuples_is_not_followed() -> None:
    assert _reads("""\
        from transformers import HfArgumentParser
        from trl import SFTConfig

        def make_parser(flag):
            if flag:
                return HfArgumentParser((Script, SFTConfig))
            return HfArgumentParser((SFTConfig, Script))

        a, b = make_parser(True).parse_args_into_dataclasses()
        print(a.field, b.field)
    """) == {"a": False, "b": False}
