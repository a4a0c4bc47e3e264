"""ppo-to-grpo: PPO config fields read far from the config, and script fields that clash with the new config.

Planned before the rewrite (the bindings go above statements the transformer reaches before the reads):

* **Hoisted values.** `config = PPOConfig(model_name=script_args.model_name, ...)` then, later, `config.model_name`:
  GRPOConfig has no such field. The keyword's value is bound to a variable right above the config statement
  (`model_name = script_args.model_name`) and every read becomes that variable. Provably the same value: the config
  stored the value it was given (the read returns what the keyword expression gave when the config was built), the
  binding evaluates the same expression at the same point (only before the other keywords, so only side-effect-free
  expressions qualify: names, attributes, subscripts by literals), the config variable is bound once and the field
  is never written, and the variable name is bound nowhere else (libcst scopes). Reads out of the binding's scope
  keep their marker.
* **Clashing script fields.** `HfArgumentParser((ScriptArguments, PPOConfig))` became `(ScriptArguments,
  GRPOConfig)`; a `ScriptArguments` field GRPOConfig also has (`trust_remote_code`, `seed`, ... from the atlas'
  fields of the target release) makes argparse fail ("conflicting option string"). When the annotation and default
  agree and the dataclass is used only through that one parse, the field is dropped and its reads go to the config
  (the same flag, parsed once, gives the same value); otherwise the field is marked.
"""

from __future__ import annotations

import ast
import builtins

import libcst as cst
from libcst.metadata import ClassScope

from migrations.kinds.cst import code, dotted, literal_value
from migrations.v1_13.ppo_to_grpo import fields as F
from migrations.v1_13.ppo_to_grpo.analysis import MISSING

# classic fields renamed for the new config whose reads still must give the PPO value: `report_to` is normalised to
# a list by TrainingArguments (and None became "none"), so `config.log_with` is read by value, never renamed
READ_BY_VALUE = frozenset({"log_with"})
_MUTATORS = ("update", "append", "extend", "insert", "setdefault", "pop", "popitem", "clear", "remove", "add",
             "discard", "__setitem__")


def side_effect_free(node: cst.BaseExpression) -> bool:
    """Names, attribute chains, subscripts by literals and literals: evaluating it earlier gives the same value."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return side_effect_free(node.value)
    if isinstance(node, cst.Subscript):
        return side_effect_free(node.value) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            and literal_value(node.slice[0].slice.value, MISSING) is not MISSING
    return literal_value(node, MISSING) is not MISSING


def bound_names(scopes: dict) -> set[str]:
    """Every name assigned or read in a module, function, lambda or comprehension scope (class bodies excluded:
    their names are not visible from functions or the module)."""
    out: set[str] = set()
    for scope in {s for s in scopes.values() if s is not None}:
        if isinstance(scope, ClassScope):
            continue
        out.update(a.name for a in scope.assignments)
        out.update(a.node.value for a in scope.accesses if isinstance(a.node, cst.Name))
    return out


class Reads:
    """Mixed into `ppo_to_grpo.transformer.Transformer` (uses `self.an`, `self.era`, `self.insert_before`, ...)."""

    def _plan_reads(self, parents: dict, names_taken: set[str]) -> None:
        self.hoisted: dict[int, str] = {}  # id(read Attribute) -> the variable it becomes
        self.moved_reads: dict[int, str] = {}  # id(read Attribute) -> the config variable it reads instead
        self.dropped_fields: set[int] = set()  # id(AnnAssign statement) of clashing dataclass fields dropped
        self.clash_todos: dict[int, str] = {}  # id(AnnAssign statement) -> marker message
        self._parents = parents
        taken = set(names_taken) | set(dir(builtins))
        reads = self._reads = self._attribute_reads()
        self._plan_hoists(reads, taken)
        self._plan_clashes(reads)

    # ---- the reads of `<var>.<field>` in the module, with whether each is a write ----
    def _attribute_reads(self) -> list[tuple[cst.Attribute, str, bool, tuple[int, ...]]]:
        out: list[tuple[cst.Attribute, str, bool, tuple[int, ...]]] = []
        parents = self._parents
        fn_stack: list[int] = []

        def written(node: cst.Attribute) -> bool:
            child: cst.CSTNode = node
            parent = parents.get(child)
            while isinstance(parent, cst.Subscript) and parent.value is child:
                child, parent = parent, parents.get(parent)
            if isinstance(parent, (cst.AssignTarget, cst.Del)) or (
                    isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is child):
                return True
            if isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
                while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
                    parent = parents.get(parent)
                return isinstance(parent, (cst.AssignTarget, cst.For))
            if isinstance(parent, cst.Call) and dotted(parent.func) in ("setattr", "delattr"):
                return True
            return isinstance(parent, cst.Attribute) and parent.value is child and parent.attr.value in _MUTATORS

        class _V(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                fn_stack.append(id(node))

            def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
                fn_stack.pop()

            def visit_Attribute(self, node: cst.Attribute) -> None:
                recv = dotted(node.value)
                if recv:
                    out.append((node, recv, written(node), tuple(fn_stack)))

        self.src.visit(_V())
        return out

    def _enclosing_function(self, node: cst.CSTNode) -> int | None:
        """id() of the function whose body holds `node`; None at module level, -1 in a class body."""
        parent = self._parents.get(node)
        while parent is not None:
            if isinstance(parent, cst.FunctionDef):
                return id(parent)
            if isinstance(parent, cst.ClassDef):
                return -1
            parent = self._parents.get(parent)
        return None

    # ---- hoisted values ----
    def _plan_hoists(self, reads, taken: set[str]) -> None:  # type: ignore[no-untyped-def]
        for var, call in self.an.config_vars.items():
            if call is None or len(self.an.assignments.get(var, [])) != 1 or any(a.star for a in call.args):
                continue
            stmt = self.an.assign_stmts.get(var)
            if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                    and isinstance(stmt.body[0], cst.Assign) and stmt.body[0].value is call):
                continue
            home = self._enclosing_function(stmt)
            if home == -1:
                continue  # a class attribute: a binding there is not visible to the reads
            # `trainer.config` / `trainer.args` of the trainer built with this config (never assigned themselves)
            aliases = {v for v, c in self.an.config_vars.items() if c is call and v != var
                       and not self.an.assignments.get(v)}
            for arg in call.args:
                if arg.keyword is None:
                    continue
                field = arg.keyword.value
                if not self._read_by_value(field) or not side_effect_free(arg.value) or \
                        self._substitutable(arg.value):
                    continue
                target = stmt.body[0].targets[0].target
                sites = [(node, w, fns) for node, recv, w, fns in reads if node.attr.value == field and (
                    ((recv == var or recv in aliases) and self._same_binding(node, target))
                    or any(self.config_params.get(f, {}).get(recv, None) is call and self._called_once(f)
                           for f in fns))
                    and not self._in_removed_loop(node)]
                if not sites or any(w for _, w, _ in sites):
                    continue  # unread, or written somewhere: the existing markers say what to do
                name = next((n for n in (field, f"{var.replace('.', '_')}_{field}") if n not in taken), None)
                if name is None:
                    continue
                in_scope = [node for node, _, fns in sites if home is None or home in fns]
                if not in_scope:
                    continue
                taken.add(name)
                for node in in_scope:
                    self.hoisted[id(node)] = name
                binding = cst.parse_statement(f"{name} = {code(arg.value)}\n")
                if id(stmt) not in self.insert_before:
                    binding = binding.with_changes(leading_lines=[cst.EmptyLine(indent=True, comment=cst.Comment(
                        f"# trl-compat: PPO config values read below ({self.ConfigName} has no such fields)"))])
                self.insert_before.setdefault(id(stmt), []).append(binding)

    def _same_binding(self, read: cst.Attribute, target: cst.BaseExpression) -> bool:
        """The leftmost name of `read`'s receiver resolves (libcst scopes) to the scope that binds the config
        variable `target`, so a parameter or local of the same name is never taken for the config."""
        scopes = getattr(self.an, "scopes", {})
        base: cst.BaseExpression = read.value
        while isinstance(base, cst.Attribute):
            base = base.value
        top: cst.BaseExpression = target
        while isinstance(top, cst.Attribute):
            top = top.value
        if not isinstance(base, cst.Name) or not isinstance(top, cst.Name):
            return False
        scope, home = scopes.get(base), scopes.get(top)
        if scope is None or home is None:
            return False
        assignments = scope[base.value]
        return bool(assignments) and all(a.scope is home for a in assignments)

    def _reads_the_config(self, read: cst.Attribute, recv: str) -> bool:
        """`recv` at `read` is the module's config variable of that name (not a parameter or local that shadows
        it), or a parameter bound to a config (`config_params`); names with no single assignment are not judged."""
        if any(recv in self.config_params.get(f, {}) for f in getattr(self, "_fn_stack", ())):
            return True
        stmt = self.an.assign_stmts.get(recv)
        if len(self.an.assignments.get(recv, [])) != 1 or not (
                isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign)):
            return True
        return self._same_binding(read, stmt.body[0].targets[0].target)

    def _called_once(self, fn_id: int) -> bool:
        name = next((n for n, defs in self.an.functions.items() if any(id(d) == fn_id for d in defs)), None)
        calls = [c for c in self.an.local_calls if isinstance(c.func, cst.Name) and c.func.value == name]
        return name is not None and len(calls) == 1 and self.an.name_counts.get(name, 0) == 2

    def _field_written(self, field: str) -> bool:
        """`<a config>.<field>` is assigned, deleted or mutated somewhere in the module."""
        params = {p for ps in self.config_params.values() for p in ps}
        return any(w and node.attr.value == field and (recv in self.an.config_vars or recv in params)
                   for node, recv, w, _ in self._reads)

    def _in_removed_loop(self, node: cst.CSTNode) -> bool:
        """Inside a step loop the rule replaces by `trainer.train()` (its reads go with it)."""
        parent = self._parents.get(node)
        while parent is not None:
            plan = self.plans.get(id(parent))
            if plan is not None and plan.reward_body is not None:
                return True
            parent = self._parents.get(parent)
        return False

    def _read_by_value(self, field: str) -> bool:
        """A field whose reads need the PPO value (no successor field carries it unchanged)."""
        if self.era == "classic" and field in READ_BY_VALUE:
            return True
        return field in F.PPO_ONLY_FIELDS and F.renamed_field(field, self.era, self.target) is None

    @staticmethod
    def _substitutable(value: cst.BaseExpression) -> bool:
        """What `leave_Attribute` already puts in place of the read: a non-container literal."""
        return literal_value(value, MISSING) is not MISSING and not isinstance(value, (cst.Dict, cst.List, cst.Set))

    # ---- script dataclass fields that clash with the new config's fields ----
    def _plan_clashes(self, reads) -> None:  # type: ignore[no-untyped-def]
        target_fields = self._target_config_fields()
        if not target_fields:
            return
        for cfg_var, (script_var, cls_name) in self.an.hosts.items():
            cls = next((s for s in self.src.body if isinstance(s, cst.ClassDef) and s.name.value == cls_name), None)
            if cls is None:
                continue
            only_here = self.an.name_counts.get(cls_name, 0) == 2 and len(self.an.assignments.get(script_var, [])) <= 1
            for stmt in cls.body.body:
                if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                        and isinstance(stmt.body[0], cst.AnnAssign) and isinstance(stmt.body[0].target, cst.Name)):
                    continue
                ann = stmt.body[0]
                name = ann.target.value  # type: ignore[union-attr]
                theirs = target_fields.get(name)
                if theirs is None:
                    continue
                sites = [(node, w) for node, recv, w, _ in reads if node.attr.value == name and recv == script_var]
                same = _same_field(ann, theirs)
                if same and only_here and not any(w for _, w in sites):
                    self.dropped_fields.add(id(stmt))
                    for node, _ in sites:
                        self.moved_reads[id(node)] = cfg_var
                    continue
                why = "its type or default differs" if not same else "the dataclass is used elsewhere or the field written"
                self.clash_todos[id(stmt)] = (
                    f"{cls_name}.{name} clashes with {self.ConfigName}.{name} (one parser: argparse conflict); "
                    f"not merged ({why}): drop it and read {cfg_var}.{name}, or rename the flag")

    def _target_config_fields(self) -> dict:
        from migrations.atlas import Atlas

        atlas = Atlas.load("trl")
        release = self.ctx.options.atlas_trl
        name = "trl.GRPOConfig" if self.grpo else "trl.experimental.online_dpo.OnlineDPOConfig"
        if release not in atlas.releases() or not atlas.has(release, name):
            return {}
        resolved = atlas.resolve(release, name)
        return atlas.config_fields(release, resolved.qualname) if resolved is not None else {}

    # ---- applying the plan (called from the transformer's leave_ methods) ----
    def _planned_read(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression | None:
        name = self.hoisted.get(id(original))
        if name is not None:
            self.changed = True
            self.note(original, f"{code(original)} (no {self.ConfigName} field) reads `{name}`, bound where the "
                      "config is built")
            return cst.Name(name)
        cfg = self.moved_reads.get(id(original))
        if cfg is not None:
            self.changed = True
            self.note(original, f"{code(original)} now reads {cfg}.{original.attr.value} (the field moved there)")
            return cst.parse_expression(f"{cfg}.{original.attr.value}")
        return None


def _same_field(ann: cst.AnnAssign, theirs) -> bool:  # type: ignore[no-untyped-def]
    """The script's field `name: T = field(default=D, ...)` declares the same type and default as the config's."""
    value = ann.value
    if isinstance(value, cst.Call) and dotted(value.func) in ("field", "dataclasses.field"):
        kws = {a.keyword.value: a.value for a in value.args if a.keyword is not None}
        if set(kws) - {"default", "metadata"} or "default" not in kws:
            return False
        value = kws["default"]
    if value is None or theirs.default is None or theirs.factory:
        return False
    mine = literal_value(value, MISSING)
    try:
        other = ast.literal_eval(theirs.default)
    except (ValueError, SyntaxError):
        return False
    if mine is MISSING or type(mine) is not type(other) or mine != other:
        return False
    return _norm(code(ann.annotation.annotation)) == _norm(theirs.annotation or "")


def _norm(annotation: str) -> str:
    return annotation.replace(" ", "").replace("typing.", "")
