"""ppo-to-grpo, second pass: the transformer, assembled from one mixin per concern.

`Transformer` is a `migrations.kinds.symbols.SymbolTransformer` (PPO names -> GRPO / Online DPO names through every
import form) plus the mixins, in this order: `Loop` (classic step loops, planned first: their generation settings go
into the config), `ConfigCall`, `TrainerCall`, `Attributes`. This module holds the state they share, the dispatch of
calls, and what spans several of them (statements inserted before the trainer, the function stack).
"""

from __future__ import annotations

import libcst as cst

from migrations.base import TODO_PREFIX, PythonMigration, RuleContext
from migrations.kinds.cst import arg_value, code, dotted, kwarg_value, literal_value, make_kwarg, replace_args
from migrations.kinds.imports import TrlRef
from migrations.kinds.symbols import Replacement, SymbolTransformer
from migrations.v1_13.ppo_to_grpo import fields as F
from migrations.v1_13.ppo_to_grpo.analysis import (
    CLASSIC_METHODS,
    CONFIG_NAMES,
    TARGET_METHODS,
    TRAINER_NAMES,
    TRAINER_STYLE_METHODS,
    Analysis,
    inside,
    mentions_value_head,
    unique_name,
)
from migrations.v1_13.ppo_to_grpo.attributes import Attributes
from migrations.v1_13.ppo_to_grpo.config_call import ConfigCall
from migrations.v1_13.ppo_to_grpo.loop import Loop, LoopPlan
from migrations.v1_13.ppo_to_grpo.reads import Reads
from migrations.v1_13.ppo_to_grpo.trainer_call import TrainerCall


class Transformer(Loop, ConfigCall, TrainerCall, Reads, Attributes, SymbolTransformer):
    """The PPO -> GRPO / Online DPO rewrite of one module (see the package docstring for what it covers)."""

    def __init__(self, rule: PythonMigration, ctx: RuleContext, an: Analysis, src: cst.Module) -> None:
        super().__init__(rule, ctx)
        self.an = an
        self.grpo = ctx.options.to == "grpo"
        self.target: F.Target = "grpo" if self.grpo else "online-dpo"
        self.era = an.era()
        self.TrainerName = "GRPOTrainer" if self.grpo else "OnlineDPOTrainer"
        self.ConfigName = "GRPOConfig" if self.grpo else "OnlineDPOConfig"
        self.target_module = "trl" if self.grpo else "trl.experimental.online_dpo"
        self.src = src
        self.reward_name = unique_name(src, "reward_fn")
        self.plans: dict[int, LoopPlan] = {}
        self.loop_extra: dict[str, cst.BaseExpression] = {}
        self.insert_before: dict[int, list[cst.BaseStatement]] = {}
        self.trainer_by_call = {id(t.call): t for t in an.trainers}
        self.trainer_vars = set(an.trainer_vars)
        # `trainer.config` / `trainer.args` read the config passed to the trainer
        for t in an.trainers:
            if t.var is None:
                continue
            cfg = arg_value(t.call, 0, "config") or kwarg_value(t.call, "args")
            name = dotted(cfg) if cfg is not None else None
            if self._is_config(name):
                an.config_vars[f"{t.var}.config"] = self._config_call_of(name)
                an.config_vars[f"{t.var}.args"] = self._config_call_of(name)
        self.tokenizers: set[str] = set()
        self._class_stack: list[tuple[str, str]] = []  # (class name, kind)
        self.host_fields: dict[str, dict[str, object]] = {}  # script-args dataclass -> PPO fields it now holds
        self._placeholders: set[int] = set()  # ids of the `pass` nodes standing for dropped calls (Attributes)
        self._plan_loops()
        # `def build_dataset(config): ... config.model_name` called as `build_dataset(ppo_config)`: inside that
        # function the parameter is the config too
        self.config_params: dict[int, dict[str, cst.Call | None]] = {}
        for call in an.local_calls:
            defs = an.functions.get(call.func.value, [])  # type: ignore[union-attr]
            if len(defs) != 1:
                continue
            params = [p.name.value for p in defs[0].params.params]
            for i, a in enumerate(call.args):
                name = dotted(a.value)
                if a.star or not self._is_config(name):
                    continue
                pname = a.keyword.value if a.keyword is not None else (params[i] if i < len(params) else None)
                if pname in params:
                    self.config_params.setdefault(id(defs[0]), {})[pname] = self._config_call_of(name)
        # `def evaluate(t): t.step(...)` called as `evaluate(trainer)`: inside that function the parameter is the
        # trainer (function-scoped, unlike `trainer_vars`)
        self.trainer_params: dict[int, set[str]] = {}
        for call in an.local_calls:
            defs = an.functions.get(call.func.value, [])  # type: ignore[union-attr]
            if len(defs) != 1:
                continue
            params = [p.name.value for p in defs[0].params.params]
            for i, a in enumerate(call.args):
                if a.star or dotted(a.value) not in self.trainer_vars:
                    continue
                pname = a.keyword.value if a.keyword is not None else (params[i] if i < len(params) else None)
                if pname in params:
                    self.trainer_params.setdefault(id(defs[0]), set()).add(pname)
        self._fn_stack: list[int] = []
        # config fields read far from the config, script fields clashing with the new config (`reads`)
        self._plan_reads(getattr(an, "parents", {}), getattr(an, "taken_names", set()))
        self._fallbacks: list[tuple[cst.Try, dict[str, str]]] = []  # enclosing try statements and their PPO imports
        self._handler_renames: list[dict[str, str]] = []
        self._noted_fallback: set[int] = set()
        # models only built to be passed to the PPO trainer as value/reference model: their construction goes
        self.remove_stmts: dict[int, str] = {}
        for t in an.trainers:
            if t.local_cls or any(a.star for a in t.call.args):
                continue
            if self.era == "classic":
                dropped = [arg_value(t.call, 2, "ref_model")] if self.grpo else []
            else:
                dropped = [arg_value(t.call, 6, "value_model")]
                if self.grpo:
                    dropped.append(arg_value(t.call, 3, "ref_model") or kwarg_value(t.call, "ref_policy"))
            for d in dropped:
                if isinstance(d, cst.Name) and self._only_feeds_trainer(d.value):
                    self.remove_stmts[id(an.assign_stmts[d.value])] = d.value
        # tokenizing functions passed to `.map` whose `input_ids` nobody else reads: return the text as `prompt`
        self.tokenize_rewrites: dict[int, cst.BaseExpression] = {}
        self.chat_template_calls: set[int] = set()
        for name, (fn, text, chat) in an.tokenize_fns.items():
            if name not in an.mapped_fns or not an.trainers:
                continue
            outside = [s for s in an.input_ids_strings if not inside(s, fn)]
            if not outside:
                self.tokenize_rewrites[id(fn)] = text
            elif chat is not None and kwarg_value(chat, "return_dict") is None:
                # the token ids stay: keep them a list (transformers 5 returns a BatchEncoding by default)
                self.chat_template_calls.add(id(chat))

    def replacement(self, ref: TrlRef) -> Replacement | None:
        if ref.name in TRAINER_NAMES:
            return Replacement(self.target_module, self.TrainerName)
        if ref.name in CONFIG_NAMES:
            return Replacement(self.target_module, self.ConfigName)
        return None

    def owns_module(self, module: str) -> bool:
        return module in (
            "trl.trainer.ppo_trainer", "trl.trainer.ppo_config", "trl.trainer.ppov2_trainer",
            "trl.trainer.ppov2_config", "trl.experimental.ppo.ppo_trainer", "trl.experimental.ppo.ppo_config",
        ) or (module == "trl.experimental.ppo" and not mentions_value_head(self.src))

    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        result = super().on_leave(original_node, updated_node)
        before = self.insert_before.pop(id(original_node), None)
        if before and isinstance(result, cst.CSTNode):
            lead = list(getattr(result, "leading_lines", ()))
            todos = [ln for ln in lead if ln.comment is not None and ln.comment.value.startswith(TODO_PREFIX)]
            rest = [ln for ln in lead if ln not in todos]
            blank = [cst.EmptyLine(indent=False) for _ in range(2 if len(self._stmt_stack) == 0 else 1)]
            stmts = []
            prev_compound = False
            for i, b in enumerate(before):
                lines = list(rest) if i == 0 else []
                if isinstance(b, cst.FunctionDef):
                    lines = [ln for ln in lines if ln.comment is not None] + blank
                elif prev_compound:
                    lines = blank + lines
                stmts.append(b.with_changes(leading_lines=[*lines, *b.leading_lines]))
                prev_compound = isinstance(b, cst.BaseCompoundStatement)
            after = blank if isinstance(before[-1], cst.FunctionDef) else [cst.EmptyLine(indent=False)] if prev_compound else []
            result = cst.FlattenSentinel([*stmts, result.with_changes(leading_lines=[*after, *todos])])
        return result

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if id(original_node) in self.chat_template_calls:
            self.changed = True
            self.note(original_node, "apply_chat_template(..., return_dict=False): token ids stay a list on transformers 5")
            return replace_args(updated_node, [*updated_node.args, make_kwarg("return_dict", cst.Name("False"))])
        if id(original_node) in self.an.config_calls:
            return self._config_call(original_node, updated_node)
        t = self.trainer_by_call.get(id(original_node))
        if t is not None:
            return self._trainer_call(t, original_node, updated_node)
        if id(original_node) in self.an.parser_ids:
            self._parser_todo(original_node)
            return updated_node
        self._dynamic_or_version_check(original_node)
        f = original_node.func
        if isinstance(f, cst.Attribute) and self.is_trainer(dotted(f.value)):
            return self._trainer_method(original_node, updated_node)
        if isinstance(f, cst.Attribute) and self.is_self_trainer(dotted(f.value)):
            self._self_method(original_node)
            return updated_node
        if isinstance(f, cst.Attribute) and f.attr.value == "__init__" and self._class_stack:
            cls, kind = self._class_stack[-1]
            explicit = self.trl_ref(f.value, TRAINER_NAMES) is not None  # `PPOTrainer.__init__(self, config=...)`
            if kind == "trainer" and (explicit or isinstance(f.value, cst.Call) and dotted(f.value.func) == "super"):
                self.todo(original_node, self._subclass_init_message(cls, original_node, explicit), "ppo-subclasses")
        return updated_node

    #: PPO constructor keyword -> GRPOTrainer's (the mapping the direct-call rewrite applies, `trainer_call.py`)
    _GRPO_RENAMES = {"config": "args", "args": "args", "tokenizer": "processing_class",
                     "processing_class": "processing_class", "dataset": "train_dataset",
                     "train_dataset": "train_dataset", "policy": "model", "reward_model": "reward_funcs"}
    #: PPO constructor keywords GRPOTrainer takes no counterpart of
    _GRPO_DROPS = ("ref_model", "ref_policy", "value_model", "num_shared_layers", "data_collator")

    def _subclass_init_message(self, cls: str, call: cst.Call, explicit: bool) -> str:
        """The marker of a PPO subclass's call of the PPO constructor: for the keywords and positional arguments this
        call passes, what GRPOTrainer takes instead (which the subclass's author must apply: the subclass drives PPO's
        own machinery, so no rewrite of the call alone is equivalent)."""
        if self.TrainerName != "GRPOTrainer":
            return (f"{cls}.__init__ calls the PPO trainer's constructor: {self.TrainerName}.__init__ takes (model, "
                    "reward_funcs, args, train_dataset, eval_dataset, processing_class, ..., peft_config); no "
                    "ref_model/value_model/reward_model/tokenizer/dataset")
        args = call.args[1:] if explicit else call.args  # `PPOTrainer.__init__(self, ...)`: `self` is no argument
        keywords = [a.keyword.value for a in args if a.keyword is not None]
        positional = sum(1 for a in args if a.keyword is None and not a.star)
        renames = [f"{self._GRPO_RENAMES[k]}= not {k}=" for k in keywords
                   if k in self._GRPO_RENAMES and self._GRPO_RENAMES[k] != k]
        if "optimizer" in keywords or "lr_scheduler" in keywords:
            renames.append("optimizers=(optimizer, lr_scheduler) not optimizer=/lr_scheduler=")
        drops = [f"{k}=" for k in keywords if k in self._GRPO_DROPS]
        parts = []  # the first part is what the marker line shows (cut to its width): the call's own problem first
        if positional:
            parts.append(f"GRPOTrainer.__init__ takes (model, reward_funcs, args, train_dataset, ...) but {cls} passes "
                         f"{positional} positional argument(s) in PPO's order (config, model, ref_model, tokenizer, "
                         "dataset, ...): pass them by keyword")
        if renames:
            parts.append(("GRPOTrainer.__init__ takes " if not parts else "it takes ") + ", ".join(renames))
        if drops:
            parts.append("drop " + ", ".join(drops) + " (GRPOTrainer builds the reference from the model when "
                         "beta != 0, and has no value model or collator)")
        if any(a.star for a in args):
            parts.append(f"{cls} forwards *args/**kwargs: its callers must pass GRPOTrainer's arguments")
        if "reward_model" not in keywords and "reward_funcs" not in keywords:
            parts.append("pass reward_funcs= (GRPOTrainer requires it)")
        return "; ".join(parts) + f"; {cls} was written against PPO's constructor: port the call by hand"

    # ---- fallbacks, dynamic names, the repository's own version checks ----
    def visit_Try(self, node: cst.Try) -> None:
        """`try: from trl import PPOTrainer` / `except ImportError: PPOTrainer = object`: the uses now read
        GRPOTrainer, so the fallback must define GRPOTrainer (else NameError where the import fails)."""
        renamed: dict[str, str] = {}
        for stmt in node.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    mod = dotted(small.module) if small.module is not None and not small.relative else ""
                    if not (mod == "trl" or (mod or "").startswith("trl.")):
                        continue
                    for a in small.names:
                        name = dotted(a.name) or ""
                        if a.asname is None and name in TRAINER_NAMES | CONFIG_NAMES:
                            renamed[name] = self.TrainerName if name in TRAINER_NAMES else self.ConfigName
        self._fallbacks.append((node, renamed))

    def leave_Try(self, original_node: cst.Try, updated_node: cst.Try) -> cst.BaseStatement:
        self._fallbacks.pop()
        return updated_node

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        renamed = self._fallbacks[-1][1] if self._fallbacks else {}
        self._handler_renames.append(renamed)

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler,
                            updated_node: cst.ExceptHandler) -> cst.ExceptHandler:
        self._handler_renames.pop()
        return updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        result = super().leave_Name(original_node, updated_node)
        renamed = self._handler_renames[-1] if self._handler_renames else {}
        if result is updated_node and original_node.value in renamed and not self.trl_refs(original_node):
            self.changed = True
            if id(original_node) not in self._noted_fallback:
                self._noted_fallback.add(id(original_node))
                self.note(original_node, f"fallback for the PPO import now defines {renamed[original_node.value]}")
            return updated_node.with_changes(value=renamed[original_node.value])
        return result

    def _dynamic_or_version_check(self, node: cst.Call) -> None:
        f = dotted(node.func) or ""
        first = node.args[0].value if node.args else None
        if f.rsplit(".", 1)[-1] == "require_version" and isinstance(first, (cst.SimpleString, cst.FormattedString)) \
                and code(first).strip("\"'fr").startswith("trl"):
            self.todo(node, f"{code(first)}: the repository's own TRL version check; the migrated code needs trl "
                      f">={self.ctx.options.target_trl.base_version}", "ppo-to-grpo")
        elif f in ("getattr", "eval") and node.args:
            text = code(node.args[1].value if f == "getattr" and len(node.args) > 1 else first)
            target = code(first) if f == "getattr" else ""
            if ("PPO" in text or "Trainer" in text or "Config" in text) and (
                    f == "eval" or "trl" in self.qualified_names(first) or target == "trl"):
                self.todo(node, f"`{code(node)}` builds a TRL name at run time: PPO names are gone in TRL 1.13",
                          "ppo-to-grpo")

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if "trl.__version__" in code(node) or "version(\"trl\")" in code(node):
            self.todo(node, "a comparison against the installed TRL version: PPO code paths are gone in TRL 1.13; "
                      "update or drop the check", "ppo-to-grpo")

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = node.key
        if isinstance(key, cst.SimpleString) and "ppo" in key.value.lower() and self.trl_ref(
                node.value, TRAINER_NAMES | CONFIG_NAMES) is not None:
            self.todo(node, f"registry key {key.value} now maps to trl's GRPO class: rename the key or the entry",
                      "ppo-to-grpo")

    def visit_Assign(self, node: cst.Assign) -> None:
        """`__all__ = ["PPOTrainer", ...]` re-exporting a PPO name: star-importers would get nothing by that name."""
        if len(node.targets) != 1 or dotted(node.targets[0].target) != "__all__" or not isinstance(
                node.value, (cst.List, cst.Tuple)):
            return
        names = [literal_value(e.value, None) for e in node.value.elements]
        gone = [n for n in names if isinstance(n, str) and n in TRAINER_NAMES | CONFIG_NAMES]
        if gone:
            self.todo(node, f"__all__ re-exports {', '.join(gone)}: the module now binds "
                      f"{self.TrainerName}/{self.ConfigName}; export those (star-importers too)", "ppo-to-grpo")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        """`from trl import PPOConfig as HfPPOConfig`: the alias would name a GRPO class `...PPO...`: marked."""
        mod = dotted(node.module) if node.module is not None and not node.relative else None
        if mod is not None and (mod == "trl" or mod.startswith("trl.")) and not isinstance(node.names, cst.ImportStar):
            for a in node.names:
                name = dotted(a.name) or ""
                local = a.asname.name.value if a.asname is not None and isinstance(a.asname.name, cst.Name) else None
                if local and "ppo" in local.lower() and (name in TRAINER_NAMES | CONFIG_NAMES or name in (
                        "GRPOTrainer", "GRPOConfig")):
                    new = self.TrainerName if "Trainer" in name else self.ConfigName
                    self.todo(node, f"`{local}` names trl's {new} now: rename it (misleading PPO alias)",
                              "ppo-to-grpo")
        return super().visit_ImportFrom(node)

    def removed_nodes(self) -> list[cst.CSTNode]:
        """Statements this rule removed (models that only fed the PPO trainer)."""
        ids = set(self.remove_stmts)
        return [s for s in self.an.assign_stmts.values() if id(s) in ids]

    def is_trainer(self, name: str | None) -> bool:
        """`name` is the PPO trainer object: a trainer variable, or a parameter of a function it is passed to."""
        if name is None:
            return False
        return name in self.trainer_vars or any(name in self.trainer_params.get(f, ()) for f in self._fn_stack)

    def is_self_trainer(self, name: str | None) -> bool:
        """`self` inside a method of a PPO trainer subclass."""
        return name == "self" and bool(self._class_stack) and self._class_stack[-1][1] == "trainer" and \
            bool(self._fn_stack)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if self._fn_stack and self._fn_stack[-1] == id(original_node):
            self._fn_stack.pop()
        text = self.tokenize_rewrites.get(id(original_node))
        if text is None:
            return updated_node
        self.changed = True
        self.note(original_node, f"{original_node.name.value} now returns the text as `prompt` instead of input_ids")
        body = list(updated_node.body.body)
        doc = [b for b in body[:1] if isinstance(b, cst.SimpleStatementLine) and isinstance(b.body[0], cst.Expr)]
        ret = cst.parse_statement(f'return {{"prompt": {code(text)}}}\n')
        ret = ret.with_changes(leading_lines=[cst.EmptyLine(indent=True, comment=cst.Comment(
            "# trl-compat: GRPO/Online DPO tokenize prompts themselves: keep the text (was input_ids)"))])
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*doc, ret]))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._fn_stack.append(id(node))
        if not self._class_stack or self._class_stack[-1][1] != "trainer":
            return
        meth = node.name.value
        cls = self._class_stack[-1][0]
        if meth in CLASSIC_METHODS | TRAINER_STYLE_METHODS and meth not in TARGET_METHODS:
            self.todo(node, f"{cls}.{meth} overrides a PPO trainer method that {self.TrainerName} does not have: "
                      "it is never called now; port its logic (reward shaping -> reward function, loss -> "
                      "compute_loss, generation -> generation_kwargs)", "ppo-subclasses")
        elif meth in TRAINER_STYLE_METHODS | CLASSIC_METHODS:
            self.todo(node, f"{cls}.{meth} now overrides {self.TrainerName}.{meth}, whose internals differ from "
                      "PPO's: check it", "ppo-subclasses")

