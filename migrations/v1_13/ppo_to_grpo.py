"""ppo-to-grpo: PPOConfig / PPOTrainer (every era) -> GRPOConfig / GRPOTrainer, or Online DPO with `--to online-dpo`.

TRL 1.13 deleted PPO. This rule migrates the three PPO API eras (classic step loop v0.2-v0.11; Trainer-style
PPOv2/PPO v0.9.3-v0.28; `trl.experimental.ppo` v0.26-1.12):

* imports and every use of `PPOConfig`/`PPOv2Config`/`PPOTrainer`/`PPOv2Trainer`, resolved by qualified name through
  every import form (see `migrations.kinds.symbols`);
* config calls field by field (`_ppo_fields.map_config`): renames, semantic changes with a TODO, removed fields listed
  with their old values, the old defaults written out, GRPO's batch constraint solved when the sizes are static;
  configs spread from a visible dict literal are mapped in the dict; parser- or YAML-built configs are flagged;
* trainer construction rewritten to `GRPOTrainer(model=, reward_funcs=, args=, train_dataset=, processing_class=, ...)`
  / `OnlineDPOTrainer(...)`; a `prompt` column rebuilt from `input_ids` before it when the dataset is PPO-tokenised;
* the classic step loop: replaced by `trainer.train()` with a `reward_fn` built from its scoring code when the loop has
  the canonical shape (`_ppo_loop`), otherwise left with a precise TODO;
* trainer attributes (`.config`, `.tokenizer`, `.current_device`, `.save_pretrained`, `.generate_completions`, ...);
* subclasses of PPOTrainer/PPOConfig: the base is migrated, overrides with no counterpart are flagged.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, QualifiedNameSource

from migrations.base import TODO_PREFIX, PythonMigration, RuleContext
from migrations.kinds.cst import arg_value, code, dotted, literal_value, make_kwarg, replace_args
from migrations.kinds.imports import TrlRef, imports_trl, split_qualified, star_imports
from migrations.kinds.symbols import Replacement, SymbolTransformer
from migrations.v1_13 import _ppo_fields as F
from migrations.v1_13._ppo_loop import LoopPlan, analyse_loop, build_reward_fn

TRAINER_NAMES = frozenset({"PPOTrainer", "PPOv2Trainer"})
CONFIG_NAMES = frozenset({"PPOConfig", "PPOv2Config"})

# methods of the old PPO trainers (classic and Trainer-style) that a subclass may override
CLASSIC_METHODS = frozenset(
    {
        "step", "_step_safety_checker", "generate", "_generate_batched", "log_stats", "batched_forward_pass",
        "compute_rewards", "compute_advantages", "loss", "train_minibatch", "record_step_stats", "gather_stats",
        "prepare_dataloader", "prepare_model_inputs", "_early_stop", "_kl_penalty", "_filter_kwargs",
        "_show_tokens", "_prepare_deepspeed", "_save_pretrained", "_remove_unused_columns", "create_model_card",
        "_set_signature_columns_if_needed", "optimizer_step", "_prepare_model_inputs",
    }
)
TRAINER_STYLE_METHODS = frozenset(
    {"get_train_dataloader", "get_eval_dataloader", "null_ref_context", "save_model", "train", "generate_completions",
     "_save_checkpoint"}
)
# methods GRPOTrainer / OnlineDPOTrainer have (TRL 1.16 incl. transformers.Trainer), for "has a counterpart"
TARGET_METHODS = frozenset(
    """_calculate_rewards _compute_loss _generate _generate_and_score_completions _generate_single_turn
    _get_per_token_logps_and_entropies _get_train_sampler _get_eval_sampler _prepare_inputs _remove_unused_columns
    _save _save_checkpoint _set_signature_columns_if_needed _tokenize_prompts add_callback compute_loss
    create_model_card create_optimizer create_optimizer_and_scheduler create_scheduler evaluate
    get_eval_dataloader get_test_dataloader get_train_dataloader log predict prediction_step push_to_hub
    save_model save_state train training_step _forward _generate_vllm tokenize_row""".split()
)

TODO_STEP_LOOP = "ppo-step-loop"


class _Trainer:
    """One trainer construction found by the analysis."""

    def __init__(self, call: cst.Call, var: str | None, stmt: cst.CSTNode | None, cls_is_local: bool) -> None:
        self.call = call
        self.var = var
        self.stmt = stmt
        self.local_cls = cls_is_local


class _Analysis(cst.CSTVisitor):
    """First pass: find configs, trainers, their variables, subclasses, loops and static values."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.config_classes: dict[str, frozenset[str]] = {}  # local subclass -> its own declared fields
        self.trainer_classes: dict[str, bool] = {}  # local subclass -> defines __init__
        self.config_calls: dict[int, str | None] = {}
        self.trainers: list[_Trainer] = []
        self.config_vars: dict[str, cst.Call | None] = {}
        self.trainer_vars: set[str] = set()
        self.assignments: dict[str, list[cst.BaseExpression]] = {}
        self.subscript_sets: dict[str, dict[str, cst.BaseExpression]] = {}
        self.votes = {"classic": 0, "trainer": 0}
        self.experimental = False
        self.top_level = False
        self.parser_refs: list[cst.CSTNode] = []
        self.config_dicts: dict[int, tuple[cst.Call, str]] = {}  # id(dict node) -> (config call, var)
        self.fors: list[cst.For] = []
        self._stmt: list[cst.CSTNode] = []
        self.uses_step = False
        self.tokenize_fns: dict[str, tuple[cst.FunctionDef, cst.BaseExpression, cst.Call | None]] = {}
        self.name_counts: dict[str, int] = {}
        self.config_holders: dict[str, cst.Call] = {}  # dataclass field name -> the config its default builds
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        self.local_calls: list[cst.Call] = []  # calls of plain names (maybe module functions taking a config)
        self.assign_stmts: dict[str, cst.CSTNode] = {}
        self._attr_names: set[int] = set()
        self.input_ids_strings: list[cst.SimpleString] = []
        self.mapped_fns: set[str] = set()  # names passed as the function of a `.map(...)`
        self._parser_classes: dict[str, list[bool]] = {}
        self._parser_names: dict[str, list[str]] = {}
        self.dataclasses: set[str] = set()  # local @dataclass classes
        self.hosts: dict[str, tuple[str, str]] = {}  # parsed config var -> (script-args var, its dataclass)
        self.parser_ids: set[int] = set()

    # -- resolution --
    def refs(self, node: cst.CSTNode) -> list[TrlRef]:
        names = self.get_metadata(QualifiedNameProvider, node, set())
        out = []
        for q in sorted(names, key=lambda q: q.name):
            if q.source == QualifiedNameSource.IMPORT:
                r = split_qualified(q.name)
                if r is not None:
                    out.append(r)
        return out

    def ref(self, node: cst.CSTNode, names: frozenset[str]) -> TrlRef | None:
        for r in self.refs(node):
            if r.name in names:
                return r
        return None

    def is_config_class(self, node: cst.BaseExpression) -> bool:
        return self.ref(node, CONFIG_NAMES) is not None or (
            isinstance(node, cst.Name) and node.value in self.config_classes
        )

    def is_trainer_class(self, node: cst.BaseExpression) -> bool:
        return self.ref(node, TRAINER_NAMES) is not None or (
            isinstance(node, cst.Name) and node.value in self.trainer_classes
        )

    # -- visiting --
    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._stmt.append(node)
        if isinstance(node, (cst.Name, cst.Attribute)):
            for r in self.refs(node):
                if r.name in TRAINER_NAMES | CONFIG_NAMES:
                    if r.module.startswith("trl.experimental.ppo"):
                        self.experimental = True
                        self.votes["trainer"] += 3
                    if r.name.startswith("PPOv2") or "ppov2" in r.module:
                        self.votes["trainer"] += 3
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._stmt.pop()
        super().on_leave(original_node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if any(dotted(d.decorator if not isinstance(d.decorator, cst.Call) else d.decorator.func) in
               ("dataclass", "dataclasses.dataclass") for d in node.decorators):
            self.dataclasses.add(node.name.value)
        for base in node.bases:
            if self.is_config_class(base.value):
                own = set()
                for s in node.body.body:
                    if isinstance(s, cst.SimpleStatementLine):
                        for small in s.body:
                            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                                own.add(small.target.value)
                self.config_classes[node.name.value] = frozenset(own)
            elif self.is_trainer_class(base.value):
                has_init = any(
                    isinstance(s, cst.FunctionDef) and s.name.value == "__init__" for s in node.body.body
                )
                self.trainer_classes[node.name.value] = has_init

    def visit_For(self, node: cst.For) -> None:
        self.fors.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.setdefault(node.name.value, []).append(node)
        found = _tokenized_text(node)
        if found is not None:
            self.tokenize_fns[node.name.value] = (node, *found)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if literal_value(node, None) == "input_ids":
            self.input_ids_strings.append(node)

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._attr_names:
            self.name_counts[node.value] = self.name_counts.get(node.value, 0) + 1

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            name = dotted(t.target)
            if name:
                self.assignments.setdefault(name, []).append(node.value)
                if self._stmt:
                    self.assign_stmts[name] = self._stmt[-1]
            if isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name):
                sl = t.target.slice
                if len(sl) == 1 and isinstance(sl[0].slice, cst.Index):
                    key = literal_value(sl[0].slice.value, None)
                    if isinstance(key, str):
                        self.subscript_sets.setdefault(t.target.value.value, {})[key] = node.value
        value = node.value
        held = dotted(value)
        if held and "." in held and held.rsplit(".", 1)[1] in self.config_holders and len(node.targets) == 1:
            target = dotted(node.targets[0].target)
            if target:
                self.config_vars[target] = self.config_holders[held.rsplit(".", 1)[1]]  # `config = args.ppo_config`
        if isinstance(value, cst.Call):
            var = dotted(node.targets[0].target) if len(node.targets) == 1 else None
            if self.is_config_class(value.func):
                self.config_vars[var] = value if var else None  # type: ignore[index]
            elif self.is_trainer_class(value.func) and var:
                self.trainer_vars.add(var)
            # `a, cfg, c = parser.parse_args_into_dataclasses()`
            f = value.func
            if isinstance(f, cst.Attribute) and f.attr.value in (
                "parse_args_into_dataclasses", "parse_yaml_file", "parse_json_file", "parse_dict", "parse_args_and_config"
            ):
                parser_var = dotted(f.value)
                classes = self._parser_classes.get(parser_var or "", [])
                tgt = node.targets[0].target
                names = self._parser_names.get(parser_var or "", [])
                if isinstance(tgt, (cst.Tuple, cst.List)):
                    host = None
                    for i, el in enumerate(tgt.elements):
                        if i < len(names) and names[i] in self.dataclasses and dotted(el.value):
                            host = (dotted(el.value), names[i])
                            break
                    for i, el in enumerate(tgt.elements):
                        if i < len(classes) and classes[i] and dotted(el.value):
                            self.config_vars[dotted(el.value)] = None  # type: ignore[index]
                            if host is not None:
                                self.hosts[dotted(el.value)] = host  # type: ignore[index]

    def visit_Call(self, node: cst.Call) -> None:
        if self.is_config_class(node.func):
            var = None
            parent = self.get_metadata(ParentNodeProvider, node, None)
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                var = dotted(parent.targets[0].target)
            else:
                # `ppo_config: PPOConfig = field(default_factory=lambda: PPOConfig(...))` in an arguments dataclass:
                # `<anything>.ppo_config` is this config
                up: cst.CSTNode | None = parent
                for _ in range(5):
                    if up is None or isinstance(up, (cst.BaseStatement, cst.AnnAssign)):
                        break
                    up = self.get_metadata(ParentNodeProvider, up, None)
                if isinstance(up, cst.AnnAssign) and isinstance(up.target, cst.Name):
                    self.config_holders[up.target.value] = node
            self.config_calls[id(node)] = var
            kws = {a.keyword.value for a in node.args if a.keyword is not None}
            self.votes["classic"] += 2 * len(kws & F.CLASSIC_ONLY)
            self.votes["trainer"] += 2 * len(kws & F.TRAINER_ONLY)
            for a in node.args:
                if a.star == "**" and isinstance(a.value, cst.Name):
                    vals = self.assignments.get(a.value.value, [])
                    if len(vals) == 1 and (
                        isinstance(vals[0], cst.Dict)
                        or (isinstance(vals[0], cst.Call) and dotted(vals[0].func) == "dict")
                    ):
                        self.config_dicts[id(vals[0])] = (node, a.value.value)
                        kd = _dict_keys(vals[0])
                        self.votes["classic"] += 2 * len(kd & F.CLASSIC_ONLY)
                        self.votes["trainer"] += 2 * len(kd & F.TRAINER_ONLY)
        elif self.is_trainer_class(node.func):
            parent = self.get_metadata(ParentNodeProvider, node, None)
            var = None
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                var = dotted(parent.targets[0].target)
            local = isinstance(node.func, cst.Name) and node.func.value in self.trainer_classes
            self.trainers.append(_Trainer(node, var, self._stmt[-1] if self._stmt else None, local))
            kws = {a.keyword.value for a in node.args if a.keyword is not None}
            if kws & {"dataset", "num_shared_layers", "lr_scheduler", "optimizer"}:
                self.votes["classic"] += 3
            if kws & {"reward_model", "value_model", "train_dataset", "processing_class", "args", "policy",
                      "ref_policy", "peft_config", "eval_dataset", "callbacks", "optimizers"}:
                self.votes["trainer"] += 3
        else:
            f = node.func
            if isinstance(f, cst.Name):
                self.local_calls.append(node)
            if isinstance(f, cst.Attribute) and f.attr.value in ("step", "log_stats") and dotted(f.value):
                self.uses_step = True
            if isinstance(f, cst.Attribute) and f.attr.value == "map" and node.args:
                first = node.args[0].value
                if isinstance(first, cst.Name):
                    self.mapped_fns.add(first.value)
            # HfArgumentParser((ScriptArgs, PPOConfig)) / TrlParser(...)
            if self._is_parser(f) and node.args:
                first = node.args[0].value
                elems = first.elements if isinstance(first, (cst.Tuple, cst.List)) else [cst.Element(first)]
                flags = [self.is_config_class(e.value) for e in elems]
                if any(flags):
                    self.parser_refs.append(node)
                    self.parser_ids.add(id(node))
                    parent = self.get_metadata(ParentNodeProvider, node, None)
                    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                        pv = dotted(parent.targets[0].target)
                        if pv:
                            self._parser_classes[pv] = flags
                            self._parser_names[pv] = [dotted(e.value) or "" for e in elems]

    def _is_parser(self, f: cst.BaseExpression) -> bool:
        names = {q.name for q in self.get_metadata(QualifiedNameProvider, f, set())}
        return bool(names & {"transformers.HfArgumentParser", "trl.TrlParser", "transformers.hf_argparser.HfArgumentParser"})

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attr_names.add(id(node.attr))
        if node.attr.value == "dataloader" and dotted(node.value):
            self.votes["classic"] += 1

    def era(self) -> F.Era:
        if self.votes["classic"] > self.votes["trainer"]:
            return "classic"
        if self.votes["trainer"] > self.votes["classic"]:
            return "trainer"
        return "classic" if self.uses_step else "trainer"


_TOKENIZER_METHODS = ("apply_chat_template", "encode", "__call__")


def _tokenizer_call_text(call: cst.BaseExpression) -> cst.BaseExpression | None:
    """`tokenizer(E, ...)`, `tokenizer.apply_chat_template(E, ...)`, `tokenizer.encode(E, ...)` -> E."""
    if not isinstance(call, cst.Call) or not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    f = call.func
    name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
    if isinstance(f, cst.Attribute) and name not in _TOKENIZER_METHODS:
        return None
    if isinstance(f, cst.Name) and "token" not in name.lower():
        return None
    if isinstance(f, cst.Attribute) and "token" not in (dotted(f.value) or "").lower():
        return None
    return call.args[0].value


def _tokenized_text(fn: cst.FunctionDef) -> tuple[cst.BaseExpression, cst.Call | None] | None:
    """The text expression a PPO-style tokenizing function turns into `input_ids`, if it has that exact shape:
    `return {"input_ids": <tokenizer call on E>[, "lengths"/"attention_mask": ...]}` (directly, through
    `outputs = tokenizer(E); outputs["input_ids"]`, or through `input_ids = tokenizer.apply_chat_template(E, ...)`),
    with the `apply_chat_template` call when that is what tokenizes."""
    body = list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []
    if not body or not fn.params.params:
        return None
    last = body[-1]
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return)):
        return None
    ret = last.body[0].value
    if not isinstance(ret, cst.Dict):
        return None
    assigned: dict[str, cst.BaseExpression] = {}
    for stmt in body[:-1]:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
            a = stmt.body[0]
            if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name):
                assigned[a.targets[0].target.value] = a.value
                continue
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(x, cst.Expr) and isinstance(x.value, (cst.SimpleString, cst.ConcatenatedString))
            for x in stmt.body
        ):
            continue  # docstring
        return None
    text = None
    chat: cst.Call | None = None
    for el in ret.elements:
        if not isinstance(el, cst.DictElement):
            return None
        key = literal_value(el.key, None)
        if key == "input_ids":
            v = el.value
            if isinstance(v, cst.Name) and v.value in assigned:
                v = assigned[v.value]
            if isinstance(v, cst.Subscript) and isinstance(v.value, cst.Name) and v.value.value in assigned:
                v = assigned[v.value.value]
            text = _tokenizer_call_text(v)
            if text is None:
                return None
            if isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "apply_chat_template":
                chat = v
        elif key not in ("lengths", "length", "attention_mask"):
            return None
    return None if text is None else (text, chat)


def _dict_keys(node: cst.BaseExpression) -> set[str]:
    if isinstance(node, cst.Dict):
        out = set()
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                k = literal_value(el.key, None)
                if isinstance(k, str):
                    out.add(k)
        return out
    if isinstance(node, cst.Call):
        return {a.keyword.value for a in node.args if a.keyword is not None}
    return set()


class _Transformer(SymbolTransformer):
    def __init__(self, rule: "PPOToGRPO", ctx: RuleContext, an: _Analysis, src: cst.Module) -> None:
        super().__init__(rule, ctx)
        self.an = an
        self.grpo = ctx.options.to == "grpo"
        self.target: F.Target = "grpo" if self.grpo else "online-dpo"
        self.era = an.era()
        self.TrainerName = "GRPOTrainer" if self.grpo else "OnlineDPOTrainer"
        self.ConfigName = "GRPOConfig" if self.grpo else "OnlineDPOConfig"
        self.target_module = "trl" if self.grpo else "trl.experimental.online_dpo"
        self.src = src
        self.reward_name = _unique_name(src, "reward_fn")
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
        self._fn_stack: list[int] = []
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
            outside = [s for s in an.input_ids_strings if not _inside(s, fn)]
            if not outside:
                self.tokenize_rewrites[id(fn)] = text
            elif chat is not None and kwarg_value(chat, "return_dict") is None:
                # the token ids stay: keep them a list (transformers 5 returns a BatchEncoding by default)
                self.chat_template_calls.add(id(chat))

    def _is_config(self, recv: str | None) -> bool:
        if recv is None:
            return False
        if any(recv in self.config_params.get(f, {}) for f in getattr(self, "_fn_stack", ())):
            return True
        return recv in self.an.config_vars or ("." in recv and recv.rsplit(".", 1)[1] in self.an.config_holders)

    def _config_call_of(self, recv: str | None) -> cst.Call | None:
        if recv is None:
            return None
        for f in reversed(getattr(self, "_fn_stack", ())):
            if recv in self.config_params.get(f, {}):
                return self.config_params[f][recv]
        if recv in self.an.config_vars:
            return self.an.config_vars[recv]
        if "." in recv:
            return self.an.config_holders.get(recv.rsplit(".", 1)[1])
        return None

    def _only_feeds_trainer(self, name: str) -> bool:
        """`name = <model factory>(...)` once, as a plain statement, and read only by the trainer call."""
        vals = self.an.assignments.get(name, [])
        stmt = self.an.assign_stmts.get(name)
        if len(vals) != 1 or self.an.name_counts.get(name, 0) != 2 or not isinstance(stmt, cst.SimpleStatementLine):
            return False
        if len(stmt.body) != 1 or any(ln.comment is not None for ln in stmt.leading_lines):
            return False
        f = vals[0].func if isinstance(vals[0], cst.Call) else None
        last = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
        return last in ("from_pretrained", "create_reference_model", "deepcopy")

    # ---- symbols this rule replaces ----
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
        ) or (module == "trl.experimental.ppo" and not _mentions_value_head(self.src))

    # ---- loop planning (before the config is rewritten: the loop's generation kwargs go into the config) ----
    def _plan_loops(self) -> None:
        if self.era != "classic":
            return
        seen: set[int] = set()
        for loop in self.an.fors:
            if id(loop) in seen:
                continue
            for tv in self.trainer_vars:
                plan = analyse_loop(loop, tv, set())
                if plan is None:
                    continue
                self.plans[id(loop)] = plan
                for inner in _all_fors(loop):
                    seen.add(id(inner))
                if plan.reward_body is not None:
                    self._loop_config(plan)
                break

    def _loop_config(self, plan: LoopPlan) -> None:
        self._loop_config_raw(plan)
        # the values are copies of nodes that stay elsewhere in the tree (a node must appear only once)
        for k, v in list(self.loop_extra.items()):
            self.loop_extra[k] = v.deep_clone()

    def _loop_config_raw(self, plan: LoopPlan) -> None:
        extra = self.loop_extra
        if plan.epochs is None:
            extra["num_train_epochs"] = cst.Integer("1")
        else:
            epochs = self._static(plan.epochs)
            total = self._total_ppo_epochs(plan.epochs)
            if total is not None:
                extra["num_train_epochs"] = cst.Integer(str(total))
            elif literal_value(epochs, _MISSING) is not _MISSING:
                extra["num_train_epochs"] = epochs
            else:  # e.g. range(config.ppo_epochs): not known where the config is built
                plan.removed.append(f"(epoch count {code(plan.epochs)}: set num_train_epochs)")
        call = plan.generate_call
        if call is None:
            return
        kwargs: dict[str, cst.BaseExpression] = {}
        for a in call.args:
            if a.keyword is not None:
                kwargs[a.keyword.value] = a.value
            elif a.star == "**" and isinstance(a.value, cst.Name):
                vals = self.an.assignments.get(a.value.value, [])
                if len(vals) == 1 and isinstance(vals[0], cst.Dict):
                    for el in vals[0].elements:
                        if isinstance(el, cst.DictElement):
                            k = literal_value(el.key, None)
                            if isinstance(k, str):
                                kwargs[k] = el.value
                for k, v in self.an.subscript_sets.get(a.value.value, {}).items():
                    kwargs[k] = v
        gen_extra: dict[str, cst.BaseExpression] = {}
        for k, v in kwargs.items():
            static = self._static(v)
            if k == "max_new_tokens" and literal_value(static, _MISSING) is _MISSING:
                upper = self._sampler_upper(v)  # `gen_len = output_length_sampler()` inside the loop
                if upper is not None:
                    extra["max_completion_length"] = upper
                continue
            if k != "length_sampler" and literal_value(static, _MISSING) is _MISSING:
                continue  # computed in the loop (e.g. a sampled length): not a config value
            if k == "max_new_tokens":
                extra["max_completion_length"] = static
            elif k == "length_sampler":
                upper = self._sampler_upper(v)
                if upper is not None:
                    extra.setdefault("max_completion_length", upper)
            elif k == "top_k":
                val = literal_value(static, None)
                extra["top_k"] = cst.Integer(str(int(val))) if isinstance(val, (int, float)) else static
            elif k in ("top_p", "temperature", "repetition_penalty", "min_p"):
                extra[k] = static
            elif k in ("do_sample", "min_length", "pad_token_id", "eos_token_id", "return_prompt", "batch_size",
                       "generate_ref_response"):
                continue
            else:
                gen_extra[k] = static
        if gen_extra:
            extra["generation_kwargs"] = cst.Dict(
                [cst.DictElement(F.py_literal(k), v) for k, v in gen_extra.items()]
            )

    def _total_ppo_epochs(self, expr: cst.BaseExpression) -> int | None:
        """Classic `config.total_ppo_epochs` = ceil(steps / batch_size), when the config's values are literals."""
        if not (isinstance(expr, cst.Attribute) and expr.attr.value == "total_ppo_epochs"):
            return None
        call = self._config_call_of(dotted(expr.value))
        if call is None or any(a.star for a in call.args):
            return None
        given_steps, given_batch = kwarg_value(call, "steps"), kwarg_value(call, "batch_size")
        steps = literal_value(given_steps, None) if given_steps is not None else 20000
        batch = literal_value(given_batch, None) if given_batch is not None else 128
        if not isinstance(steps, int) or not isinstance(batch, int) or batch <= 0:
            return None
        return -(-steps // batch)

    def _static(self, v: cst.BaseExpression) -> cst.BaseExpression:
        """A Name bound once to a literal -> the literal (module config lines come before those names)."""
        if isinstance(v, cst.Name):
            vals = self.an.assignments.get(v.value, [])
            if len(vals) == 1 and literal_value(vals[0], _MISSING) is not _MISSING:
                return vals[0]
        return v

    def _sampler_upper(self, v: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression | None:
        """The largest length a `LengthSampler(lo, hi)` (or a value drawn from one) can give: hi - 1."""
        if depth > 3:
            return None
        if isinstance(v, cst.Name):
            vals = self.an.assignments.get(v.value, [])
            if len(vals) == 1:
                v = vals[0]
        if isinstance(v, cst.Call) and not v.args and isinstance(v.func, cst.Name):
            return self._sampler_upper(v.func, depth + 1)  # `sampler()`
        if isinstance(v, cst.Call) and len(v.args) >= 2 and dotted(v.func) and dotted(v.func).endswith("LengthSampler"):
            upper = literal_value(self._static(v.args[1].value), None)
            if isinstance(upper, int):
                return cst.Integer(str(max(1, upper - 1)))
        return None

    # ---- statements ----
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

    def visit_For(self, node: cst.For) -> bool:
        plan = self.plans.get(id(node))
        return not (plan is not None and plan.reward_body is not None)

    def leave_For(self, original_node: cst.For, updated_node: cst.For):  # type: ignore[no-untyped-def]
        plan = self.plans.get(id(original_node))
        if plan is None:
            return updated_node
        if plan.reward_body is None:
            self.todo(
                original_node,
                f"this PPO step loop was not converted ({plan.reason}): {self.TrainerName} has no generate/step/"
                f"log_stats; move the scoring into `{self.reward_name}(prompts, completions, **kwargs)` and replace "
                f"the loop with `{plan.trainer}.train()`",
                TODO_STEP_LOOP,
            )
            return updated_node
        self.changed = True
        removed = "; ".join(dict.fromkeys(plan.removed))
        self.todo(
            original_node,
            f"the PPO step loop was replaced by {plan.trainer}.train(): generation settings moved to the config, the "
            f"scoring code moved to `{self.reward_name}`; removed: {removed}",
            TODO_STEP_LOOP,
        )
        stmt = cst.parse_statement(f"{plan.trainer}.train()\n")
        return stmt.with_changes(leading_lines=original_node.leading_lines)

    # ---- calls ----
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
        f = original_node.func
        if isinstance(f, cst.Attribute) and dotted(f.value) in self.trainer_vars:
            return self._trainer_method(original_node, updated_node)
        if isinstance(f, cst.Attribute) and f.attr.value == "__init__" and self._class_stack:
            cls, kind = self._class_stack[-1]
            if kind == "trainer" and isinstance(f.value, cst.Call) and dotted(f.value.func) == "super":
                self.todo(
                    original_node,
                    f"{cls}.__init__ calls the PPO trainer's constructor: {self.TrainerName}.__init__ takes (model, "
                    "reward_funcs, args, train_dataset, eval_dataset, processing_class, ..., peft_config); no "
                    "ref_model/value_model/reward_model/tokenizer/dataset",
                    "ppo-subclasses",
                )
        return updated_node

    def _config_call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        cls_local = isinstance(original.func, cst.Name) and original.func.value in self.an.config_classes
        own = self.an.config_classes.get(original.func.value, frozenset()) if cls_local else frozenset()  # type: ignore[union-attr]
        star = [a for a in updated.args if a.star]
        entries = [(a.keyword.value, a.value) for a in updated.args if a.keyword is not None and not a.star]
        positional = [a for a in updated.args if a.keyword is None and not a.star]
        if positional:
            self.todo(original, "PPOConfig called with positional arguments: pass them by keyword", "ppo-config-fields")
        visible_dict = bool(star) and all(
            self._dict_for(a) is not None and id(self._dict_for(a)) in self.an.config_dicts for a in star
        )
        if visible_dict and not entries:
            return updated  # the spread dict literal is mapped where it is written (leave_Dict)
        static = not star
        mapped = F.map_config(
            entries,
            era=self.era,
            target=self.target,
            experimental=self.an.experimental,
            static=static,
            extra={k: v.deep_clone() for k, v in self.loop_extra.items()} if static else None,
            own_fields=own,
        )
        for msg, anchor in mapped.todos:
            self.todo(original, msg, anchor)
        if star and not visible_dict:
            self.todo(
                original,
                f"this config is built from {', '.join(code(a.value) for a in star)} (not visible statically): rename "
                f"its keys for {self.ConfigName} as in the field table (kl_coef/init_kl_coef->beta, cliprange->epsilon, "
                "num_ppo_epochs/ppo_epochs->num_iterations, response_length->max_completion_length, "
                "exp_name->run_name, log_with->report_to) and drop the PPO-only keys",
                "ppo-config-sources",
            )
        args = [make_kwarg(k, v) for k, v in mapped.entries]
        args = [*positional, *args, *star]
        self.changed = True
        return replace_args(updated, args)

    def _dict_for(self, a: cst.Arg) -> cst.BaseExpression | None:
        if isinstance(a.value, cst.Name):
            vals = self.an.assignments.get(a.value.value, [])
            if len(vals) == 1:
                return vals[0]
        return None

    # dict literals spread into a config: map their keys in place
    def leave_Dict(self, original_node: cst.Dict, updated_node: cst.Dict) -> cst.BaseExpression:
        if id(original_node) not in self.an.config_dicts:
            return updated_node
        entries = []
        rest = []
        for el in updated_node.elements:
            k = literal_value(el.key, None) if isinstance(el, cst.DictElement) else None
            if isinstance(k, str):
                entries.append((k, el.value))
            else:
                rest.append(el)
        mapped = F.map_config(entries, era=self.era, target=self.target, experimental=self.an.experimental,
                              static=True, extra={k: v.deep_clone() for k, v in self.loop_extra.items()})
        for msg, anchor in mapped.todos:
            self.todo(original_node, msg, anchor)
        els = [cst.DictElement(F.py_literal(k), v) for k, v in mapped.entries] + rest
        self.changed = True
        return _relayout_dict(updated_node, els)

    def _parser_todo(self, node: cst.Call) -> None:
        self.todo(
            node,
            f"the config is parsed from the command line / a file as {self.ConfigName}: PPO flags are renamed ("
            + ("--kl_coef -> --beta, --cliprange -> --epsilon, --num_ppo_epochs -> --num_iterations, "
               "--response_length -> --max_completion_length, " if self.grpo else "--response_length -> --max_new_tokens, ")
            + "--exp_name -> --run_name) or gone (--vf_coef, --gamma, --lam, --cliprange_value, --whiten_rewards, "
            "--total_episodes, ...; PPO fields the script reads moved to its own argument dataclass)"
            + ("; GRPO needs --num_generations >= 2 dividing the generation batch" if self.grpo else ""),
            "ppo-config-sources",
        )

    # ---- trainer construction ----
    def _trainer_call(self, t: _Trainer, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if t.local_cls and self.an.trainer_classes.get(original.func.value, False):  # type: ignore[union-attr]
            self.todo(original, "this PPO trainer subclass defines its own __init__: check the arguments passed "
                      f"here against {self.TrainerName}", "ppo-subclasses")
            return updated
        if any(a.star for a in updated.args):
            self.todo(original, f"the trainer is built from *args/**kwargs: pass {self.TrainerName}'s arguments "
                      "(model, reward_funcs, args, train_dataset, processing_class, peft_config)", "ppo-trainer")
            return updated
        if self.era == "classic":
            names = ["config", "model", "ref_model", "tokenizer", "dataset", "optimizer", "data_collator",
                     "num_shared_layers", "lr_scheduler", "training_data_collator"]
        else:
            names = ["args", "processing_class", "model", "ref_model", "reward_model", "train_dataset",
                     "value_model", "data_collator", "eval_dataset", "optimizers", "callbacks", "peft_config"]
        alias = {"config": "args", "tokenizer": "processing_class", "policy": "model", "ref_policy": "ref_model",
                 "dataset": "train_dataset"}
        got: dict[str, cst.BaseExpression] = {}
        i = 0
        for a in updated.args:
            if a.keyword is None:
                if i < len(names):
                    got[alias.get(names[i], names[i])] = a.value
                i += 1
            else:
                got[alias.get(a.keyword.value, a.keyword.value)] = a.value
        out: dict[str, cst.BaseExpression] = {}
        out["model"] = got.pop("model", None) or cst.Name("model")
        if "model" not in [alias.get(k, k) for k in names[: i]] and not any(
            a.keyword is not None and alias.get(a.keyword.value, a.keyword.value) == "model" for a in updated.args
        ):
            self.todo(original, "no policy model was passed to the PPO trainer: pass `model=`", "ppo-trainer")
        ref = got.pop("ref_model", None)
        if not self.grpo and ref is not None and code(ref) != "None":
            out["ref_model"] = ref
        elif ref is not None and code(ref) != "None":
            self.todo(
                original,
                f"{self.TrainerName} takes no ref_model (dropped `{code(ref)}`"
                + (", and its construction" if isinstance(ref, cst.Name) and ref.value in self.remove_stmts.values()
                   else "")
                + "): with beta != 0 and no PEFT it reloads "
                "the reference from model.config._name_or_path, so the policy must be loadable from that path; "
                "with beta=0.0 there is no reference model at all",
                "ppo-ref-model",
            )
        reward = got.pop("reward_model", None)
        tok = got.pop("processing_class", None)
        if reward is not None:
            out["reward_funcs"] = reward
        elif self.era == "classic":
            out["reward_funcs"] = cst.Name(self.reward_name)
            if not self._has_reward_plan(t):
                self.insert_before.setdefault(id(t.stmt), []).append(self._reward_stub())
                self.todo(
                    original,
                    f"write the reward: `{self.reward_name}(prompts, completions, **kwargs)` must return one float per "
                    "completion (it replaces the scores passed to ppo_trainer.step)",
                    "ppo-reward-function",
                )
        else:
            out["reward_funcs"] = cst.Name(self.reward_name)
            self.insert_before.setdefault(id(t.stmt), []).append(self._reward_stub())
            self.todo(original, f"no reward model was passed: write `{self.reward_name}`", "ppo-reward-function")
        out["args"] = got.pop("args", None) or cst.Name("None")
        if code(out["args"]) == "None":
            self.todo(original, f"no config was passed: build a {self.ConfigName}", "ppo-config-fields")
        ds = got.pop("train_dataset", None)
        if ds is not None and code(ds) != "None":
            out["train_dataset"] = ds
            self._prompt_column(t, ds, tok, original)
        else:
            self.todo(original, f"{self.TrainerName} needs a train_dataset with a `prompt` column", "ppo-dataset-prompt")
        if "eval_dataset" in got:
            out["eval_dataset"] = got.pop("eval_dataset")
            if code(out["eval_dataset"]) != "None" and tok is not None:
                self._prompt_column(t, out["eval_dataset"], tok, original)
        if tok is not None:
            out["processing_class"] = tok
            if reward is not None:
                out["reward_processing_classes"] = tok.deep_clone()  # PPO scored with the policy tokenizer
        value = got.pop("value_model", None)
        if isinstance(value, cst.Name) and value.value in self.remove_stmts.values():
            self.note(original, f"value model `{value.value}` dropped with its construction")
        elif value is not None:
            self.todo(
                original,
                f"the value model `{code(value)}` is no longer used ({'GRPO estimates advantages from groups of completions' if self.grpo else 'Online DPO has no critic'}); "
                "remove its construction",
                "ppo-value-model",
            )
        collator = got.pop("data_collator", None) or got.pop("training_data_collator", None)
        if collator is not None:
            self.todo(original, f"the PPO data_collator `{code(collator)}` was dropped: {self.TrainerName} batches "
                      "prompts itself", "ppo-trainer")
        opt = got.pop("optimizer", None)
        sched = got.pop("lr_scheduler", None)
        if "optimizers" in got:
            out["optimizers"] = got.pop("optimizers")
        elif opt is not None or sched is not None:
            out["optimizers"] = cst.parse_expression(
                f"({code(opt) if opt is not None else 'None'}, {code(sched) if sched is not None else 'None'})"
            )
        if "callbacks" in got:
            out["callbacks"] = got.pop("callbacks")
        if "peft_config" in got:
            out["peft_config"] = got.pop("peft_config")
        nsl = got.pop("num_shared_layers", None)
        if nsl is not None:
            self.todo(original, f"num_shared_layers={code(nsl)} has no successor (the reference shares no layers)",
                      "ppo-ref-model")
        for k, v in got.items():
            self.todo(original, f"PPO trainer argument {k}={code(v)} has no {self.TrainerName} counterpart and was "
                      "dropped", "ppo-trainer")
        self.changed = True
        return replace_args(updated, [make_kwarg(k, v) for k, v in out.items()])

    def _has_reward_plan(self, t: _Trainer) -> bool:
        for plan in self.plans.values():
            if plan.trainer == t.var and plan.reward_body is not None:
                fn = build_reward_fn(self.reward_name, plan)
                self.insert_before.setdefault(id(t.stmt), []).append(fn)
                return True
        return False

    def _reward_stub(self) -> cst.BaseStatement:
        return cst.parse_statement(
            f"def {self.reward_name}(prompts, completions, **kwargs):\n"
            '    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""\n'
            '    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")\n'
        )

    def _prompt_column(self, t: _Trainer, ds: cst.BaseExpression, tok: cst.BaseExpression | None,
                       original: cst.Call) -> None:
        """PPO datasets carry `input_ids`; GRPO/Online DPO read a `prompt` column: rebuild it before the trainer."""
        if self.tokenize_rewrites:
            return  # the visible tokenizing map now yields `prompt`
        name = dotted(ds)
        if name is None or t.stmt is None or tok is None or not isinstance(t.stmt, cst.SimpleStatementLine):
            self.todo(original, f"{self.TrainerName} reads a `prompt` column (text or chat messages); PPO datasets "
                      "held `input_ids`: make sure this dataset has `prompt`", "ppo-dataset-prompt")
            return
        decode = cst.parse_statement(
            f'if "prompt" not in {name}.column_names:\n'
            f"    {name} = {name}.with_format(None).map(\n"
            f'        lambda example: {{"prompt": {code(tok)}.decode(example["input_ids"], skip_special_tokens=True)}},\n'
            f'        remove_columns=[c for c in ("input_ids", "attention_mask") if c in {name}.column_names],\n'
            "    )\n"
        )
        decode = decode.with_changes(
            leading_lines=[cst.EmptyLine(comment=cst.Comment(
                "# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids"
            ))]
        )
        self.insert_before.setdefault(id(t.stmt), []).append(decode)

    # ---- trainer methods / attributes ----
    def leave_SimpleStatementLine(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        name = self.remove_stmts.get(id(original_node))
        if name is not None:
            self.changed = True
            self.note(original_node, f"removed `{name} = ...`: it only fed the PPO trainer's value/reference model")
            parent = self.parent(original_node)
            if isinstance(parent, cst.IndentedBlock) and len(parent.body) == 1:
                return updated_node.with_changes(body=[cst.Pass()])
            return cst.RemovalSentinel.REMOVE
        result = super().leave_SimpleStatementLine(original_node, updated_node)
        if result is updated_node and len(updated_node.body) == 1 and isinstance(updated_node.body[0], cst.Expr):
            call = original_node.body[0].value
            if (
                isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "generate_completions"
                and dotted(call.func.value) in self.trainer_vars
            ):
                # no successor: keep the line visible as a comment-marked `pass`
                self.changed = True
                return updated_node.with_changes(body=[cst.Pass()])
        return result

    def _trainer_method(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        f = updated.func
        assert isinstance(f, cst.Attribute)
        meth = original.func.attr.value  # type: ignore[union-attr]
        recv = code(original.func.value)  # type: ignore[union-attr]
        if meth == "save_pretrained":
            self.changed = True
            return updated.with_changes(func=f.with_changes(attr=cst.Name("save_model")))
        if meth == "push_to_hub" and self.era == "classic":
            self.todo(original, f"{recv}.push_to_hub: Trainer.push_to_hub(commit_message=...) pushes to "
                      "args.hub_model_id; set hub_model_id/push_to_hub in the config", "ppo-trainer-attributes")
        elif meth in ("step", "generate", "log_stats", "batched_forward_pass", "compute_rewards", "gather_stats",
                      "prepare_dataloader", "generate_completions", "record_step_stats"):
            self.todo(original, f"{recv}.{meth}() does not exist on {self.TrainerName}: training, generation and "
                      "logging happen inside trainer.train()" + (
                          f"; the call `{code(original)}` was replaced by `pass`: set log_completions=True in the "
                          "config to see samples" if meth == "generate_completions" else ""), "ppo-trainer-attributes")
        return updated

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        result = super().leave_Attribute(original_node, updated_node)
        if result is not updated_node:
            return result
        recv = dotted(original_node.value)
        attr = original_node.attr.value
        if recv in self.trainer_vars:
            if attr == "config":
                self.changed = True
                return updated_node.with_changes(attr=cst.Name("args"))
            if attr == "tokenizer":
                self.changed = True
                return updated_node.with_changes(attr=cst.Name("processing_class"))
            if attr == "current_device":
                self.changed = True
                return cst.parse_expression(f"{code(updated_node.value)}.accelerator.device")
            if attr in ("dataloader", "kl_ctl", "value_model", "policy", "ref_policy", "reward_model"):
                self.todo(original_node, f"{recv}.{attr} does not exist on {self.TrainerName}",
                          "ppo-trainer-attributes")
        elif self._is_config(recv) and attr in F.PPO_ONLY_FIELDS:
            new = F.renamed_field(attr, self.era, self.target)
            if new is not None and new != attr:
                self.changed = True
                return updated_node.with_changes(attr=cst.Name(new))
            if new is None:
                call = self._config_call_of(recv)
                val = None
                if call is not None:
                    for a in call.args:
                        if a.keyword is not None and a.keyword.value == attr:
                            val = a.value
                if val is not None and (literal_value(val, _MISSING) is not _MISSING or isinstance(val, cst.Name)):
                    self.changed = True
                    self.note(original_node, f"{recv}.{attr} (no {self.ConfigName} field) replaced by its value")
                    return val.deep_clone()
                if val is None and call is not None and not any(a.star for a in call.args) and attr in F.OLD_DEFAULTS:
                    self.changed = True
                    self.note(original_node, f"{recv}.{attr} (no {self.ConfigName} field) replaced by its old default")
                    return cst.parse_expression(repr(F.OLD_DEFAULTS[attr]))
                host = self.an.hosts.get(recv)  # type: ignore[arg-type]
                default = F.OLD_DEFAULTS.get(attr, _MISSING)
                if call is None and host is not None and default is not _MISSING and not isinstance(default, dict):
                    self.host_fields.setdefault(host[1], {})[attr] = default
                    self.changed = True
                    self.note(original_node, f"{recv}.{attr} moved to {host[0]}.{attr} ({host[1]} field)")
                    return cst.parse_expression(f"{host[0]}.{attr}")
                self.todo(original_node, f"{recv}.{attr}: {self.ConfigName} has no `{attr}` field",
                          "ppo-config-fields")
        return result

    # ---- subclasses ----
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        name = node.name.value
        kind = "trainer" if name in self.an.trainer_classes else "config" if name in self.an.config_classes else ""
        self._class_stack.append((name, kind))
        if kind == "config":
            ppo_fields = sorted(f for f in self.an.config_classes[name] if f in F.PPO_ONLY_FIELDS)
            if ppo_fields:
                self.todo(node, f"{name} redeclares PPO-only fields {ppo_fields}: {self.ConfigName} has no such "
                          "fields (see the field table for successors)", "ppo-subclasses")

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._class_stack.pop()
        return updated_node

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        """Give the script's own argument dataclass the PPO fields the code still reads (`--sft_model_path` ...)."""
        if not self.host_fields:
            return updated_node
        body = list(updated_node.body)
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.ClassDef) and stmt.name.value in self.host_fields:
                have = {
                    small.target.value
                    for s in stmt.body.body if isinstance(s, cst.SimpleStatementLine)
                    for small in s.body if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)
                }
                new_lines = []
                for name, default in self.host_fields[stmt.name.value].items():
                    if name in have:
                        continue
                    typ = type(default).__name__ if default is not None else "str"
                    ann = f"{typ} | None" if default is None else typ
                    line = cst.parse_statement(f"{name}: {ann} = {code(F.py_literal(default))}\n")
                    new_lines.append(line)
                if new_lines:
                    new_lines[0] = new_lines[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(
                        "# trl-compat: PPOConfig fields the script still reads (no GRPO/Online DPO field)"))])
                    body[i] = stmt.with_changes(body=stmt.body.with_changes(body=[*stmt.body.body, *new_lines]))
        return updated_node.with_changes(body=body)

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



_MISSING = object()


def kwarg_value(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


def _unique_name(module: cst.Module, base: str) -> str:
    text = module.code
    name = base
    i = 2
    while name in text:
        name = f"{base}_{i}"
        i += 1
    return name


def _inside(node: cst.CSTNode, container: cst.CSTNode) -> bool:
    found = False

    class _V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            nonlocal found
            if n is node:
                found = True
            return not found

    container.visit(_V())
    return found


def _all_fors(node: cst.CSTNode) -> list[cst.For]:
    out: list[cst.For] = []

    class _V(cst.CSTVisitor):
        def visit_For(self, n: cst.For) -> None:
            out.append(n)

    node.visit(_V())
    return out


def _mentions_value_head(module: cst.Module) -> bool:
    return "ValueHead" in module.code or "PreTrainedModelWrapper" in module.code


def _relayout_dict(node: cst.Dict, els: list[cst.BaseDictElement]) -> cst.Dict:
    multiline = any(
        isinstance(e.comma, cst.Comma) and isinstance(e.comma.whitespace_after, cst.ParenthesizedWhitespace)
        for e in node.elements
    )
    if multiline and node.elements:
        sep = next(
            e.comma for e in node.elements
            if isinstance(e.comma, cst.Comma) and isinstance(e.comma.whitespace_after, cst.ParenthesizedWhitespace)
        )
        last = node.elements[-1].comma
        new = [e.with_changes(comma=sep) for e in els[:-1]] + ([els[-1].with_changes(comma=last)] if els else [])
        return node.with_changes(elements=new)
    new = [e.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for e in els[:-1]]
    if els:
        new.append(els[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT))
    return node.with_changes(elements=new)


class PPOToGRPO(PythonMigration):
    summary = "PPOConfig/PPOTrainer (all eras) -> GRPOConfig/GRPOTrainer (or Online DPO with --to online-dpo)"
    triggers = ("PPOTrainer", "PPOConfig", "PPOv2Trainer", "PPOv2Config", "trl import *", "experimental.ppo")
    order = 10
    requires = ("from trl", "import trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if not imports_trl(wrapper.module, TRAINER_NAMES | CONFIG_NAMES, ("trl.trainer.ppo_trainer", "trl.trainer.ppo_config", "trl.trainer.ppov2_trainer", "trl.trainer.ppov2_config", "trl.experimental.ppo")):
            return wrapper.module
        an = _Analysis()
        wrapper.visit(an)
        t = _Transformer(self, ctx, an, wrapper.module)
        module = t.transform_module(wrapper)
        stars = star_imports(module)
        if stars:
            module = _star_todo(module, stars, self, ctx)
        return module


def _star_todo(module: cst.Module, stars: list[str], rule: PythonMigration, ctx: RuleContext) -> cst.Module:
    """`from trl import *`: never guess which names it provides; mark it (same marker as ppo-helpers)."""
    from migrations.v1_13.ppo_helpers import _flag_stars

    return _flag_stars(module, rule, ctx)


MIGRATION = PPOToGRPO()
