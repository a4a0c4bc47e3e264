"""ppo-to-grpo: trainer attributes and methods, config fields read later, and subclasses.

`trainer.config` -> `.args`, `.tokenizer` -> `.processing_class`, `.current_device` -> `.accelerator.device`,
`.save_pretrained` -> `.save_model`, methods with no successor flagged; `config.<PPO-only field>` replaced by its
value, its old default or a field of the script's own argument dataclass; models that only fed the PPO trainer
removed; subclasses of PPOTrainer / PPOConfig: overrides without a counterpart flagged."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from migrations.kinds.cst import code, dotted, literal_value
from migrations.kinds.pins import committed_text as _committed_text
from migrations.v1_13.ppo_to_grpo import fields as F
from migrations.v1_13.ppo_to_grpo.analysis import MISSING, TRAINER_NAMES
from migrations.v1_13.ppo_to_grpo.defaults import (
    Unknown,
    admitted_releases,
    field_default,
    pinned_releases,
    trl_imports,
)
from migrations.v1_13.ppo_to_grpo.reads import READ_BY_VALUE

GONE_ATTRIBUTES = ("dataloader", "kl_ctl", "value_model", "policy", "ref_policy", "reward_model", "current_step",
                   "current_device", "config")
GONE_METHODS = ("step", "generate", "log_stats", "batched_forward_pass", "compute_rewards", "gather_stats",
                "prepare_dataloader", "generate_completions", "record_step_stats", "_step_safety_checker")

MUTATORS = ("update", "append", "extend", "insert", "setdefault", "pop", "popitem", "clear", "remove", "add",
            "discard", "__setitem__")


class Attributes:
    """Mixed into `ppo_to_grpo.transformer.Transformer`, whose state (`self.an`, `self.era`, `self.grpo`, ...) it
    uses; see that class for the order in which the mixins run."""

    def leave_SimpleStatementLine(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        if id(original_node) in self.dropped_fields:
            self.changed = True
            self.note(original_node, f"dropped `{code(original_node.body[0].target)}`: the same field of "
                      f"{self.ConfigName} (same type and default) is parsed from the same flag")
            return cst.RemovalSentinel.REMOVE
        if id(original_node) in self.clash_todos:
            self.todo(original_node, self.clash_todos[id(original_node)], "ppo-config-sources")
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
                # no successor: a placeholder `pass`, which the enclosing block drops unless it is all the block
                # holds; its marker and comments then move to the next statement (`_drop_placeholders`)
                self.changed = True
                placeholder = cst.Pass()
                self._placeholders.add(id(placeholder))
                return updated_node.with_changes(body=[placeholder])
        return result

    def _is_placeholder(self, stmt: cst.CSTNode) -> bool:
        return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and id(stmt.body[0]) in getattr(self, "_placeholders", ()))

    def _drop_placeholders(self, body: list, footer: list, keep_one: bool) -> tuple[list, list]:
        """`body` without the placeholder `pass` lines (`keep_one`: an indented block that would be left empty keeps
        its last one); the comment lines above each (its marker) go to the next statement, or to `footer` after
        the last one."""
        if not any(self._is_placeholder(stmt) for stmt in body):
            return body, footer
        if keep_one and all(self._is_placeholder(stmt) for stmt in body):
            return body, footer
        out: list = []
        carried: list[cst.EmptyLine] = []
        for stmt in body:
            if self._is_placeholder(stmt):
                carried.extend(stmt.leading_lines)  # the marker (and the user's comments) stay where the call was
                continue
            if carried:
                stmt = stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
                carried = []
            out.append(stmt)
        if carried:
            footer = [*(line.with_changes(indent=True) for line in carried if line.comment is not None), *footer]
        return out, footer

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        body, footer = self._drop_placeholders(list(updated_node.body), list(updated_node.footer), keep_one=True)
        if body == list(updated_node.body):
            return updated_node
        return updated_node.with_changes(body=body, footer=footer)

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
                          f"; the call `{code(original)}` was dropped (`pass` where a block would be left empty): "
                          "set log_completions=True in the config to see samples"
                          if meth == "generate_completions" else ""), "ppo-trainer-attributes")
        return updated

    def _self_method(self, original: cst.Call) -> None:
        """`self.step(...)` / `self.log_stats(...)` in a PPO trainer subclass: marked, the subclass's code stays."""
        meth = original.func.attr.value  # type: ignore[union-attr]
        if meth in GONE_METHODS and meth not in self._own_methods():
            self.todo(original, f"self.{meth}() does not exist on {self.TrainerName} (the base class now)",
                      "ppo-subclasses")

    def _own_methods(self) -> set[str]:
        return self.an.class_methods.get(self._class_stack[-1][0], set()) if self._class_stack else set()

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        result = super().leave_Attribute(original_node, updated_node)
        if result is not updated_node:
            return result
        planned = self._planned_read(original_node, updated_node)
        if planned is not None:
            return planned
        parent = self.parent(original_node)
        called = isinstance(parent, cst.Call) and parent.func is original_node  # `PPOTrainer.__init__(self, ...)`
        if not called and original_node.attr.value not in ("__name__", "__qualname__", "__doc__") and \
                self.trl_ref(original_node.value, TRAINER_NAMES) is not None:
            # `importlib.import_module(PPOTrainer.__module__).get_reward = my_reward` (marcellobullo/sharedrep-rlhf):
            # renamed with the class, it patches the GRPO trainer's module, which never calls it
            self.todo(original_node, f"{code(original_node)}: an attribute of TRL's PPO trainer class, now "
                      f"{self.TrainerName}'s (another module, other methods: a patch of the PPO trainer's module or "
                      "methods does nothing to it)", "ppo-to-grpo")
        recv = dotted(original_node.value)
        attr = original_node.attr.value
        if self.is_self_trainer(recv) and attr == "tokenizer" and not self._assigned_on_self(attr):
            # the subclass's own tokenizer reads: the base class keeps the tokenizer it was given as processing_class
            # (transformers 5's Trainer has no `.tokenizer`), as a trainer variable's `.tokenizer` below
            self.changed = True
            return updated_node.with_changes(attr=cst.Name("processing_class"))
        if self.is_self_trainer(recv) and attr in GONE_ATTRIBUTES and not self._assigned_on_self(attr):
            parent = self.parent(original_node)
            if not (isinstance(parent, cst.Call) and parent.func is original_node):
                self.todo(original_node, f"self.{attr} does not exist on {self.TrainerName} (the base class now)",
                          "ppo-subclasses")
        elif self._is_config(recv) and attr == "total_ppo_epochs" and not self._in_replaced_loop(original_node):
            self.todo(original_node, f"{recv}.total_ppo_epochs (classic: ceil(steps / batch_size)) does not exist on "
                      f"{self.ConfigName}; max_steps is the training length", "ppo-config-fields")
        elif self.is_trainer(recv) and recv not in self.trainer_vars and attr in GONE_ATTRIBUTES:
            self.todo(original_node, f"{recv}.{attr} does not exist on {self.TrainerName}", "ppo-trainer-attributes")
        if recv is not None and recv.endswith(".model") and recv[: -len(".model")] in self.trainer_vars \
                and attr in ("policy", "value_model"):
            # PPOv2's `trainer.model` was a PolicyAndValueWrapper (HollyRiver/HFRL prints
            # `trainer.model.policy.print_trainable_parameters()`); GRPO's is the policy itself, with no value model
            self.todo(original_node, f"{recv}.{attr}: the PPO trainer's model wrapped the policy and the value model; "
                      f"{self.TrainerName}'s model is the policy itself (use {recv}) and there is no value model",
                      "ppo-trainer-attributes")
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
            if self.era == "classic" and attr in READ_BY_VALUE and self._config_call_of(recv) is not None:
                new = None  # `report_to` is not the PPO value (a list, "none" for None): read the value itself
            if new is not None and new != attr:
                self.changed = True
                return updated_node.with_changes(attr=cst.Name(new))
            if new is None and self._written(original_node):
                # a config parsed into the script's dataclasses: the field moves to the script's own dataclass,
                # reads and writes alike, so a write is seen by the reads as before
                moved = self._move_to_host(original_node, recv, attr)
                if moved is not None:
                    return moved
                # `config.accelerator_kwargs[...] = ...`, `config.x = ...`, `config.x.update(...)`: never an
                # assignment into (or a call on) a literal; the field is gone, so the line is the user's to decide
                self.todo(original_node, f"{recv}.{attr} is written here; {self.ConfigName} has no `{attr}` field",
                          "ppo-config-fields")
                return result
            if new is None:
                call = self._config_call_of(recv)
                if call is not None and not self._reads_the_config(original_node, recv):
                    call = None  # a parameter or local of the same name: not this config
                val = None
                if call is not None:
                    for a in call.args:
                        if a.keyword is not None and a.keyword.value == attr:
                            val = a.value
                written = self._field_written(attr)
                if written:
                    val = None  # the config's value may not be the keyword's any more
                if val is not None and (literal_value(val, MISSING) is not MISSING or isinstance(val, cst.Name)) \
                        and not isinstance(val, (cst.Dict, cst.List, cst.Set)):
                    self.changed = True
                    self.note(original_node, f"{recv}.{attr} (no {self.ConfigName} field) replaced by its value")
                    return val.deep_clone()
                default = self._old_default(attr)
                if val is None and not written and call is not None and not any(a.star for a in call.args) and \
                        not isinstance(default, (Unknown, dict, list, set)):
                    self.changed = True
                    self.note(original_node, f"{recv}.{attr} (no {self.ConfigName} field) replaced by its old default")
                    return F.py_literal(default)
                if call is None:
                    moved = self._move_to_host(original_node, recv, attr)
                    if moved is not None:
                        return moved
                host = self.an.hosts.get(recv)  # type: ignore[arg-type]
                why = f": {default.why}" if isinstance(default, Unknown) and val is None and not written and (
                    call is None and host is not None or call is not None and not any(a.star for a in call.args)) \
                    else ""
                self.todo(original_node, f"{recv}.{attr}: {self.ConfigName} has no `{attr}` field{why}",
                          "ppo-config-fields")
        return result

    def _move_to_host(self, node: cst.Attribute, recv: str, attr: str) -> cst.BaseExpression | None:
        """`training_args.reward_model_path` of a config parsed by `HfArgumentParser((ScriptArguments, PPOConfig))`
        -> `script_args.reward_model_path`, the field added to ScriptArguments with the PPOConfig default (so the
        command-line flag still parses); None when there is no such host or the default is not a plain value."""
        host = self.an.hosts.get(recv)  # type: ignore[arg-type]
        if host is None or self._config_call_of(recv) is not None:
            return None
        default = self._old_default(attr)
        if isinstance(default, (Unknown, dict, list, set)):
            return None
        self.host_fields.setdefault(host[1], {})[attr] = default
        self.changed = True
        self.note(node, f"{recv}.{attr} moved to {host[0]}.{attr} ({host[1]} field)")
        return cst.parse_expression(f"{host[0]}.{attr}")

    def _old_default(self, attr: str) -> object:
        """The PPOConfig default of `attr` in every TRL release this file could have run on (the atlas), else
        `Unknown` (see `defaults`)."""
        if not hasattr(self, "_admitted"):
            pinned = pinned_releases(str(Path(self.ctx.path).parent)) if self.ctx.path else None
            own = set().union(*self.an.config_classes.values())  # fields the project's config subclasses add
            fields = {a.keyword.value for c in self.an.config_vars.values() if c is not None
                      for a in c.args if a.keyword is not None} - own
            # PPO fields the code reads on a config: the config of every admitted release has them
            fields |= {node.attr.value for node, recv, _, _ in self._reads
                       if node.attr.value in F.PPO_ONLY_FIELDS and self._is_config(recv)}
            self._v2 = "PPOv2Config" in self.src.code
            # the file's TRL imports as committed (earlier rules of this run may have moved some already)
            committed = _committed_text(Path(self.ctx.path)) if self.ctx.path else None
            try:
                original = cst.parse_module(committed) if committed else self.src
            except cst.ParserSyntaxError:
                original = self.src
            self._defaults_era = "experimental" if self.an.experimental else self.era
            self._admitted = admitted_releases(self._defaults_era, self._v2, pinned, fields,
                                               trl_imports(original))
        return field_default(attr, self._admitted, self._defaults_era, self._v2)

    def _written(self, node: cst.Attribute) -> bool:
        """Whether `node` (or an item of it) is assigned, deleted or mutated (`.update(...)`, ...), not only read."""
        child: cst.CSTNode = node
        parent = self.parent(child)
        while isinstance(parent, cst.Subscript) and parent.value is child:
            child, parent = parent, self.parent(parent)
        if isinstance(parent, (cst.AssignTarget, cst.Del)) or (
                isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is child):
            return True
        if isinstance(parent, (cst.Tuple, cst.List, cst.Element)):  # `a, cfg.x = ...`
            return self._written_element(parent)
        return isinstance(parent, cst.Attribute) and parent.value is child and parent.attr.value in MUTATORS \
            and isinstance(self.parent(parent), cst.Call)

    def _written_element(self, node: cst.CSTNode) -> bool:
        parent = self.parent(node)
        while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            parent = self.parent(parent)
        return isinstance(parent, (cst.AssignTarget, cst.For))

    @staticmethod
    def _optional_imported(module: cst.Module) -> bool:
        """`from typing import Optional` at module level: the file's own style for a None default."""
        for stmt in module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.ImportFrom) and dotted(small.module) == "typing" and \
                            not isinstance(small.names, cst.ImportStar) and \
                            any(a.asname is None and code(a.name) == "Optional" for a in small.names):
                        return True
        return False

    def _assigned_on_self(self, attr: str) -> bool:
        return attr in self.an.self_attrs.get(self._class_stack[-1][0], set()) if self._class_stack else False

    def _in_replaced_loop(self, node: cst.CSTNode) -> bool:
        """Inside a step loop the rule replaces by `trainer.train()` (its reads go with it)."""
        parent = self.parent(node)
        while parent is not None:
            if id(parent) in self.plans and self.plans[id(parent)].reward_body is not None:
                return True
            parent = self.parent(parent)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        name = node.name.value
        kind = "trainer" if name in self.an.trainer_classes else "config" if name in self.an.config_classes else ""
        self._class_stack.append((name, kind))
        if kind == "trainer" and len(node.bases) > 1:
            # the classic PPOTrainer derived from BaseTrainer, not transformers.Trainer; GRPOTrainer is a Trainer, so
            # beside another Trainer-based base (KMnO4-zx/huanhuan-chat's `PPOTrainerForChatGLM(PPOTrainer,
            # PeftTrainer)`) its super().__init__ now runs the other base's __init__ (the method resolution order)
            others = ", ".join(c for c in (code(b.value) for b in node.bases)
                               if not c.endswith(("PPOTrainer", "PPOv2Trainer", self.TrainerName)))
            self.todo(node, f"{name} now derives from {self.TrainerName} (a transformers Trainer) and {others}: if "
                      f"{others} is a Trainer too, {self.TrainerName}.__init__ calls its __init__ through super() "
                      "(the method resolution order); check the constructor chain", "ppo-subclasses")
        if kind == "config":
            ppo_fields = sorted(f for f in self.an.config_classes[name] if f in F.PPO_ONLY_FIELDS)
            if ppo_fields:
                self.todo(node, f"{name} redeclares PPO-only fields {ppo_fields}: {self.ConfigName} has no such "
                          "fields (see the field table for successors)", "ppo-subclasses")

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._class_stack.pop()
        return updated_node

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        """Drop the placeholder `pass` lines at module level (`_drop_placeholders`); give the script's own argument
        dataclass the PPO fields the code still reads (`--sft_model_path` ...)."""
        body, footer = self._drop_placeholders(list(updated_node.body), list(updated_node.footer), keep_one=False)
        if body != list(updated_node.body):
            updated_node = updated_node.with_changes(body=body, footer=footer)
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
                    typ = type(default).__name__ if default is not None else F.NONE_DEFAULT_TYPES.get(name, "str")
                    if default is None:
                        ann = f"Optional[{typ}]" if self._optional_imported(updated_node) else f"{typ} | None"
                    else:
                        ann = typ
                    line = cst.parse_statement(f"{name}: {ann} = {code(F.py_literal(default))}\n")
                    new_lines.append(line)
                if new_lines:
                    new_lines[0] = new_lines[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(
                        "# trl-compat: PPOConfig fields the script still reads (no GRPO/Online DPO field)"))])
                    body[i] = stmt.with_changes(body=stmt.body.with_changes(body=[*stmt.body.body, *new_lines]))
        return updated_node.with_changes(body=body)

