"""removed-cli-utils: `trl.commands.cli_utils` (gone in TRL 0.13): `TrlParser`, `init_zero_verbose` -> `trl`;
`SFTScriptArguments` / `DPOScriptArguments` / `RewardScriptArguments` -> `compat.trl`.

TRL 0.8 - 0.12 kept the script helpers in `trl.commands.cli_utils`; 0.13 removed the module (read from the 0.12.2 and
0.13.0 wheels). `TrlParser` and `init_zero_verbose` are exported by `trl` on every target, so imports move there.
The three `*ScriptArguments` dataclasses (0.11 - 0.12; `trl` and `trl.commands` exported SFT/DPO) have no exact
successor in TRL (`trl.ScriptArguments` has other fields and defaults), so they move to `compat.trl`, which keeps the
0.12.2 dataclasses (`compat/_script_args.py`: same fields, defaults and order but `config`, which TRL >= 0.13's
`TrlParser` reserves and reads itself as `--config FILE`; so the same command line). Code written against 0.11 sees
one change: `dataset_name` is required (0.11 gave SFT/reward a default dataset), hence "unsafe".
The rest is marked, each name with what to do instead: TRL 0.8's `SftScriptArguments` / `DpoScriptArguments` where
`old-script-arguments` (which runs first) could not take them over (their training fields are config fields now:
`--packing`, `--beta`, ... would clash with `SFTConfig` / `DPOConfig` in one parser) and `YamlConfigParser`.
`ChatArguments` (`trl chat`, removed in 0.19) moves to `compat.trl` (the 0.12.2 dataclass without `config`, which
0.11 - 0.12's `TrlParser` never filled), except in a file using TRL 0.8's config API (`args.config`,
`update_dataclasses_with_config`), which stays marked.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from migrations.base import RuleContext
from migrations.kinds.symbols import Action, Gone, Moved, SymbolMigration

_MOD = "trl.commands.cli_utils"
_SCRIPT_ARGS = ("SFTScriptArguments", "DPOScriptArguments", "RewardScriptArguments")
_GONE = {
    "SftScriptArguments": "SftScriptArguments gone, its fields split: --dataset_text_field, --packing and --max_length "
                          "(was --max_seq_length) are SFTConfig fields now (a copy would clash with them in one "
                          "parser); keep dataset_name and the splits on a dataclass of your own (trl.ScriptArguments "
                          "has dataset_name, dataset_train_split, dataset_test_split) and read the rest from the "
                          "config",
    "DpoScriptArguments": "DpoScriptArguments gone, its fields split: --beta and --max_length are DPOConfig fields now "
                          "(a copy would clash with them in one parser); keep dataset_name, sanity_check, "
                          "ignore_bias_buffers on a dataclass of your own (or trl.ScriptArguments); "
                          "max_prompt_length, max_target_length and generate_during_eval have no TRL 1.x successor",
    "ChatArguments": "ChatArguments: use TrlParser.parse_args_and_config() (TRL 0.8's config handling is gone: "
                     "TrlParser.update_dataclasses_with_config(), the `config` field, which trl.TrlParser reserves "
                     "for --config FILE): replace the args.config / update_dataclasses_with_config lines with TRL "
                     "0.12's chat.py, `if \"--config\" not in sys.argv: sys.argv += [\"--config\", DEFAULT_YAML]` "
                     "then `args = parser.parse_args_and_config()[0]`, and import ChatArguments from compat.trl "
                     "(the 0.12.2 dataclass without `config`)",
    "YamlConfigParser": "YamlConfigParser gone: trl.TrlParser.parse_args_and_config() reads --config FILE itself",
}
_CHAT = f"{_MOD}.ChatArguments"
_NOTE = "removed from TRL in 0.13; trl-compat keeps the 0.12.2 dataclass (the project now needs trl-compat)"


class RemovedCliUtils(SymbolMigration):
    summary = ("trl.commands.cli_utils (removed in 0.13): TrlParser/init_zero_verbose -> trl; *ScriptArguments -> "
               "compat.trl (the 0.12.2 dataclasses)")
    triggers = ("cli_utils", "ScriptArguments")
    removed_modules = {_MOD: "trl.commands.cli_utils was removed in TRL 0.13: import from trl"}
    symbols = {
        f"{_MOD}.TrlParser": Moved("trl", "TrlParser", "the module was removed in TRL 0.13"),
        f"{_MOD}.init_zero_verbose": Moved("trl", "init_zero_verbose", "the module was removed in TRL 0.13"),
        **{p: Moved("compat.trl", n, _NOTE) for n in _SCRIPT_ARGS
           for p in (f"{_MOD}.{n}", f"trl.{n}", f"trl.commands.{n}")},
        **{f"{_MOD}.{n}": Gone(message) for n, message in _GONE.items() if n != "ChatArguments"},
        _CHAT: Moved("compat.trl", "ChatArguments", "removed from TRL (trl chat, 0.19); trl-compat keeps the 0.12.2 "
                     "dataclass without `config` (the project now needs trl-compat)"),
    }
    conditional = frozenset({_CHAT})

    def convertible(self, qname: str, call: cst.Call | None) -> str | None:
        if call is not None and any(a.keyword is not None and a.keyword.value == "config" for a in call.args):
            return _GONE["ChatArguments"]
        return None

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        # TRL 0.8's chat.py reads `args.config` and calls `parser.update_dataclasses_with_config()`: the copy has
        # neither, so a file reading any `.config` / that method keeps ChatArguments marked
        finder = _OldConfigApi()
        wrapper.module.visit(finder)
        rule = _OLD_CHAT if finder.found else self
        return SymbolMigration.transform(rule, wrapper, ctx)


class _OldConfigApi(cst.CSTVisitor):
    """Finds any `x.config` / `x.update_dataclasses_with_config` (whatever `x` is: conservative)."""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found = self.found or node.attr.value in ("config", "update_dataclasses_with_config")


class _RemovedCliUtilsOldChat(RemovedCliUtils):
    """The same rule for a file using TRL 0.8's config API: ChatArguments stays marked."""

    symbols: ClassVar[dict[str, Action]] = {**RemovedCliUtils.symbols, _CHAT: Gone(_GONE["ChatArguments"])}
    conditional = frozenset()

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        return SymbolMigration.transform(self, wrapper, ctx)


MIGRATION = RemovedCliUtils()
_OLD_CHAT = _RemovedCliUtilsOldChat()
