"""experimental-trainer-imports: ORPO, CPO, GKD, Online DPO, XPO, Nash-MD, BCO, PRM left `trl` for `trl.experimental`.

TRL 0.26 moved these trainers and their configs to `trl.experimental.<name>` and left `FutureWarning` shims at the old
paths (`trl.X`, `trl.trainer.X`, `trl.trainer.<name>_trainer.X`, `trl.trainer.<name>_config.X`); TRL 0.29 deleted the
shims (read from the 0.28.0 and 0.29.1 wheels), so `from trl import ORPOTrainer` is an `ImportError` on every target.
The judges (`PairRMJudge`, `OpenAIPairwiseJudge`, ..., `WinRateCallback`) moved to `trl.experimental.judges` in 0.26 and
that package was removed in 1.1 with `OnlineDPOTrainer(judge=)`. No trainer of 1.13 - 1.16 takes a judge, but code
calls judges on its own (`judge.judge(prompts, completions)` in evaluation scripts): the eight judge classes move to
`compat.trl`, which keeps the TRL 1.0.0 classes (`compat/_judges.py`, backends imported on construction).
`WinRateCallback` (it needs a trainer that generates with a judge) stays marked; `OnlineDPOTrainer(judge=)` gets
the reference trainer, which still takes one (`online-dpo-arguments`).

Where each trainer lives on the targets (wheels 1.13.0 ... 1.16.0): `trl.experimental.{orpo,cpo,gkd,online_dpo}` on
every line; `trl.experimental.{bco,xpo,nash_md,prm}` on 1.13 only. The imports are pointed at `trl.experimental.*`
(the names the target has, no `compat` needed); on a 1.14+ target the four removed packages get what the 1.14 rules
give them: BCO / XPO / Nash-MD / PRM -> `compat.trl` (the reference trainers, `removed-bco` / `removed-xpo` /
`removed-nash-md` / `removed-prm`).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from packaging.version import Version

from migrations.base import RuleContext
from migrations.kinds.symbols import Action, Gone, Moved, SymbolMigration

ANCHOR = "experimental-trainer-imports"

# experimental package -> (file stem in trl/trainer, trainer name, config name)
_MOVED = {
    "orpo": ("orpo", "ORPOTrainer", "ORPOConfig"),
    "cpo": ("cpo", "CPOTrainer", "CPOConfig"),
    "gkd": ("gkd", "GKDTrainer", "GKDConfig"),
    "online_dpo": ("online_dpo", "OnlineDPOTrainer", "OnlineDPOConfig"),
    "xpo": ("xpo", "XPOTrainer", "XPOConfig"),
    "nash_md": ("nash_md", "NashMDTrainer", "NashMDConfig"),
    "bco": ("bco", "BCOTrainer", "BCOConfig"),
    "prm": ("prm", "PRMTrainer", "PRMConfig"),
}
_JUDGES = ("AllTrueJudge", "BaseBinaryJudge", "BaseJudge", "BasePairwiseJudge", "BaseRankJudge", "HfPairwiseJudge",
           "OpenAIPairwiseJudge", "PairRMJudge", "WinRateCallback")
# packages TRL 1.14 removed: on a 1.14+ target, where the code must go instead (the engine picks rules by the file's
# original text, so the 1.14 rules would not see an import this rule just wrote; the answers are theirs)
# package -> its reference trainer in compat.trl
_KEPT_BY_COMPAT = {"bco": "BCO", "xpo": "XPO", "nash_md": "Nash-MD", "prm": "PRM"}
_REMOVED_IN_1_14: dict[str, Moved | Gone] = {
    pkg: Moved("compat.trl", "", f"trl.experimental.{pkg} was removed in TRL 1.14: the reference {method} "
               "trainer (the project now needs trl-compat)") for pkg, method in _KEPT_BY_COMPAT.items()
}
_JUDGE_MSG = "TRL judges were removed in 1.1: score with reward_funcs / your own function"
_JUDGE_NOTE = "removed from TRL in 1.1; trl-compat keeps the 1.0.0 class (the project now needs trl-compat)"


def _table() -> dict[str, Moved | Gone]:
    table: dict[str, Moved | Gone] = {}
    for pkg, (stem, trainer, config) in _MOVED.items():
        target = f"trl.experimental.{pkg}"
        for name, file in ((trainer, f"{stem}_trainer"), (config, f"{stem}_config")):
            for path in (f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.{file}.{name}"):
                table[path] = Moved(target, name, "moved to trl.experimental in TRL 0.26, old path gone in 0.29")
    for name in _JUDGES:
        for path in (f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.judges.{name}",
                     f"trl.trainer.callbacks.{name}", f"trl.experimental.judges.{name}"):
            table[path] = Gone(_JUDGE_MSG) if name == "WinRateCallback" else Moved("compat.trl", name, _JUDGE_NOTE)
    return table


class ExperimentalTrainerImports(SymbolMigration):
    summary = ("from trl import ORPOTrainer/CPOTrainer/GKDTrainer/OnlineDPOTrainer/... -> trl.experimental.*; judges -> "
               "compat.trl")
    triggers = ("ORPO", "CPO", "GKD", "OnlineDPO", "XPO", "NashMD", "BCO", "PRM", "Judge", "WinRateCallback")
    symbols = _table()
    removed_modules = {"trl.trainer.judges": _JUDGE_MSG, "trl.experimental.judges": _JUDGE_MSG}
    _target: Version = Version("1.16.0")

    def action_for(self, qname: str) -> Action | None:
        action = super().action_for(qname)
        if isinstance(action, Moved) and self._target >= Version("1.14") and action.module.startswith("trl.experimental."):
            late = _REMOVED_IN_1_14.get(action.module.rsplit(".", 1)[-1])
            if isinstance(late, Moved):
                return Moved(late.module, action.name, late.note)
            if late is not None:
                return late
        return action

    def may_act(self, imports: Sequence[cst.Import | cst.ImportFrom], code: str) -> bool:
        """The table's gate: `action_for` only changes what the table answers for (never answers beyond it)."""
        return self.tabled_name_reachable(imports, code)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        self._target = Version(ctx.options.target_trl.base_version)
        return super().transform(wrapper, ctx)


MIGRATION = ExperimentalTrainerImports()
