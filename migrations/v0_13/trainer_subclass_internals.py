"""trainer-subclass-internals: overrides of TRL trainer internals whose contract changed, marked at the `def`.

PPO-era repositories subclass `DPOTrainer`, `RewardTrainer`, `SFTTrainer`, ... and override their internals. Between
TRL 0.8 and 1.16 those internals were rewritten (DPO's in 0.13, the reward and SFT trainers' in 0.19 - 0.20, read from
the wheels): the batch keys (`input_ids_chosen` -> `chosen_ids`, `chosen_input_ids`, ...), the helper methods
(`concatenated_forward`, `tokenize_row`, `get_batch_loss_metrics`, `dpo_loss`, `odds_ratio_loss`, ... have other
signatures or are gone) and `compute_loss`, which transformers >= 4.46 calls with `num_items_in_batch=`. None of
this is a rename a rule can prove, and an override that no longer matches fails at run time (or silently is never
called), so every override of these methods in a class deriving from a TRL trainer is marked.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider, QualifiedNameSource

from migrations.base import MigrationTransformer, PythonMigration

_TRAINERS = {"SFTTrainer": "sft_trainer", "DPOTrainer": "dpo_trainer", "RewardTrainer": "reward_trainer",
             "KTOTrainer": "kto_trainer", "ORPOTrainer": "orpo_trainer", "CPOTrainer": "cpo_trainer",
             "BCOTrainer": "bco_trainer", "OnlineDPOTrainer": "online_dpo_trainer", "GKDTrainer": "gkd_trainer"}
_EXP = {"KTOTrainer": "kto", "ORPOTrainer": "orpo", "CPOTrainer": "cpo", "BCOTrainer": "bco",
        "OnlineDPOTrainer": "online_dpo", "GKDTrainer": "gkd"}
_PATHS: dict[str, str] = {}
for _n, _stem in _TRAINERS.items():
    for _p in (f"trl.{_n}", f"trl.trainer.{_n}", f"trl.trainer.{_stem}.{_n}", f"compat.trl.{_n}"):
        _PATHS[_p] = _n
    if _n in _EXP:
        _PATHS[f"trl.experimental.{_EXP[_n]}.{_n}"] = _PATHS[f"trl.experimental.{_EXP[_n]}.{_stem}.{_n}"] = _n
_INTERNALS = {"compute_loss", "get_batch_loss_metrics", "concatenated_forward", "concatenated_inputs", "dpo_loss",
              "tokenize_row", "build_tokenized_answer", "get_batch_logps", "odds_ratio_loss", "kto_loss", "cpo_loss",
              "get_batch_samples", "_prepare_dataset", "_prepare_non_packed_dataloader",
              "_prepare_packed_dataloader", "compute_reference_log_probs", "prediction_step"}


def _takes_num_items(fn: cst.FunctionDef) -> bool:
    p = fn.params
    return p.star_kwarg is not None or any(x.name.value == "num_items_in_batch" for x in (*p.params, *p.kwonly_params))


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._bases: list[str | None] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        found = None
        for base in node.bases:
            try:
                names = {q.name for q in self.get_metadata(QualifiedNameProvider, base.value, set())
                         if q.source == QualifiedNameSource.IMPORT}
            except KeyError:
                names = set()
            found = found or next((_PATHS[n] for n in sorted(names) if n in _PATHS), None)
        self._bases.append(found)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._bases.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self._bases or self._bases[-1] is None or node.name.value not in _INTERNALS:
            return
        trainer, name = self._bases[-1], node.name.value
        if name == "compute_loss" and not _takes_num_items(node):
            self.todo(node, f"{trainer}.compute_loss gets num_items_in_batch= now and TRL 1.x batch keys differ")
        elif name != "compute_loss":
            self.todo(node, f"overrides {trainer}.{name}, rewritten in TRL 1.x: check it against TRL 1.16")


class TrainerSubclassInternals(PythonMigration):
    summary = "overrides of TRL trainer internals (compute_loss, concatenated_forward, tokenize_row, ...) -> marked"
    triggers = tuple(sorted(_INTERNALS))
    requires = ("trl",)
    transformer = _Transformer


MIGRATION = TrainerSubclassInternals()
