"""ppo-to-grpo, first pass: what a PPO script holds, before anything is rewritten.

`Analysis` (a metadata-resolving visitor) finds the PPO names by qualified name, the config and trainer calls and the
variables bound to them, the API era (classic step loop or Trainer-style), local subclasses, dicts and parsers that
build configs, tokenizing functions passed to `.map`, and the loops. The helpers below it are small static questions
about nodes (`inside`, `all_fors`, `unique_name`, ...). Nothing here changes the tree.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider

from migrations.kinds.cst import dotted, literal_value
from migrations.kinds.imports import TrlRef, trl_refs
from migrations.v1_13.ppo_to_grpo import fields as F

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

#: "no static value" for `literal_value(..., MISSING)`
MISSING = object()


class Trainer:
    """One trainer construction found by the analysis."""

    def __init__(self, call: cst.Call, var: str | None, stmt: cst.CSTNode | None, cls_is_local: bool) -> None:
        self.call = call
        self.var = var
        self.stmt = stmt
        self.local_cls = cls_is_local


class Analysis(cst.CSTVisitor):
    """First pass: find configs, trainers, their variables, subclasses, loops and static values."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.source = ""  # the module's text (`elsewhere` reads the project files it hands its config to)
        self.config_classes: dict[str, frozenset[str]] = {}  # local subclass -> its own declared fields
        self.trainer_classes: dict[str, bool] = {}  # local subclass -> defines __init__
        self.class_methods: dict[str, set[str]] = {}  # local trainer subclass -> the methods it defines
        self.self_attrs: dict[str, set[str]] = {}  # local trainer subclass -> attributes its code assigns on self
        self.config_calls: dict[int, str | None] = {}
        self.trainers: list[Trainer] = []
        self.config_vars: dict[str, cst.Call | None] = {}
        self.trainer_vars: set[str] = set()
        # functions / methods of this module that return a new trainer (`def _init_ppo_trainer(self): ... return
        # PPOTrainer(config, ...)`): what they return is a trainer (`self.ppo_trainer = self._init_ppo_trainer()`)
        self.trainer_factories: set[str] = set()
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
        self.local_classes: set[str] = set()  # every class this module defines
        self.hosts: dict[str, tuple[str, str]] = {}  # parsed config var -> (script-args var, its dataclass)
        self.parser_ids: set[int] = set()

    # -- resolution --
    def refs(self, node: cst.CSTNode) -> list[TrlRef]:
        return trl_refs(self, node)

    def ref(self, node: cst.CSTNode, names: frozenset[str]) -> TrlRef | None:
        for r in self.refs(node):
            if r.name in names:
                return r
        return None

    def is_config_class(self, node: cst.BaseExpression) -> bool:
        return self.ref(node, CONFIG_NAMES) is not None or (
            isinstance(node, cst.Name) and node.value in self.config_classes
        )

    def _factory_call(self, func: cst.BaseExpression) -> bool:
        """`make_trainer` / `self.make_trainer`: a function or method of this module returning a new trainer."""
        if isinstance(func, cst.Name):
            return func.value in self.trainer_factories
        return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
            and func.attr.value in self.trainer_factories

    def is_trainer_class(self, node: cst.BaseExpression) -> bool:
        return self.ref(node, TRAINER_NAMES) is not None or (
            isinstance(node, cst.Name) and node.value in self.trainer_classes
        )

    # -- visiting --
    def visit_Module(self, node: cst.Module) -> None:
        analysis = self

        class _Factories(cst.CSTVisitor):
            def __init__(self) -> None:
                self.functions: list[str] = []

            def visit_FunctionDef(self, fn: cst.FunctionDef) -> None:
                self.functions.append(fn.name.value)

            def leave_FunctionDef(self, fn: cst.FunctionDef) -> None:
                self.functions.pop()

            def visit_Return(self, ret: cst.Return) -> None:
                if self.functions and isinstance(ret.value, cst.Call) and analysis.is_trainer_class(ret.value.func):
                    analysis.trainer_factories.add(self.functions[-1])

        node.visit(_Factories())

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
        self.local_classes.add(node.name.value)
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
                self.class_methods[node.name.value] = {
                    s.name.value for s in node.body.body if isinstance(s, cst.FunctionDef)}
                self.self_attrs[node.name.value] = {
                    t.target.attr.value for t in _self_targets(node)}  # type: ignore[union-attr]

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
            elif var and not value.args and self._factory_call(value.func):
                self.trainer_vars.add(var)  # `self.ppo_trainer = self._init_ppo_trainer()` (JumpyPizza's RL trainer)
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
            self.trainers.append(Trainer(node, var, self._stmt[-1] if self._stmt else None, local))
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


def unique_name(module: cst.Module, base: str) -> str:
    text = module.code
    name = base
    i = 2
    while name in text:
        name = f"{base}_{i}"
        i += 1
    return name


def inside(node: cst.CSTNode, container: cst.CSTNode) -> bool:
    found = False

    class _V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            nonlocal found
            if n is node:
                found = True
            return not found

    container.visit(_V())
    return found


def all_fors(node: cst.CSTNode) -> list[cst.For]:
    out: list[cst.For] = []

    class _V(cst.CSTVisitor):
        def visit_For(self, n: cst.For) -> None:
            out.append(n)

    node.visit(_V())
    return out


def mentions_value_head(module: cst.Module) -> bool:
    return "ValueHead" in module.code or "PreTrainedModelWrapper" in module.code


def _self_targets(node: cst.ClassDef) -> list[cst.AssignTarget]:
    """`self.x = ...` targets anywhere in the class body (the subclass's own attributes)."""
    found: list[cst.AssignTarget] = []

    class _V(cst.CSTVisitor):
        def visit_AssignTarget(self, t: cst.AssignTarget) -> None:
            if isinstance(t.target, cst.Attribute) and dotted(t.target.value) == "self":
                found.append(t)

    node.visit(_V())
    return found
