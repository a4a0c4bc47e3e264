"""transformers 5.0 stopped reading `report_to=None` as "all": `TrainingArguments(report_to=None)` -> `"all"`.

transformers 4.x turned `report_to=None` into `"all"` in `TrainingArguments.__post_init__` (read in the 4.56.2 wheel:
"The default value for the training argument `--report_to` will change in v5 (from all installed integrations to
none). In v5, you will need to use `--report_to all` to get the same behavior as now"), so the run reported to every
installed integration. 5.0 made `"none"` the default and keeps an explicit None as `[None]`, which the Trainer's
`get_reporting_integration_callbacks` refuses (`ValueError: None is not supported`, run on 5.24.0 by a test).
`"all"` means every installed integration on 4.56.2 and on every 5.x: the rewrite is exact. Written so by 0.x-era
scripts that meant "no tracker" (gpt4vision/R1-SGG's tests, minwukim/VRL's GRPO demo): they logged to whatever was
installed then too, and still do; pass "none" to turn reporting off.

Only a literal None in a `TrainingArguments` / `Seq2SeqTrainingArguments` / TRL config call is rewritten; a value
that may be None (`cfg.get("report_to")`) is left as it is.
"""

from __future__ import annotations

import libcst as cst

from migrations.base import PythonMigration, RuleContext
from migrations.kinds.training_args import FieldTransformer

_FIELD = "report_to"


class _Transformer(FieldTransformer):
    field = _FIELD

    def keyword(self, original: cst.Call, updated: cst.Call, arg: cst.Arg) -> cst.BaseExpression:
        if not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
            return updated
        self.note(original, 'report_to=None -> "all" (transformers 4.x read None as every installed integration; '
                            '5.x refuses it)')
        return updated.with_changes(args=[a.with_changes(value=cst.SimpleString('"all"')) if a is arg else a
                                          for a in updated.args])

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return updated_node  # reads and writes of `.report_to` keep their meaning


class ReportToNone(PythonMigration):
    summary = 'TrainingArguments / TRL config report_to=None -> "all" (4.x read None as "all"; 5.x raises on it)'
    triggers = (_FIELD,)
    requires = ("transformers", "trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = _Transformer(self, ctx)
        module = wrapper.visit(t)
        return module if t.changed else wrapper.module


MIGRATION = ReportToNone()
