"""Recognise the classic PPO step loop and build a GRPO reward function from its scoring code.

The canonical loop (TRL v0.2-v0.11 examples and most user scripts):

    for epoch, batch in tqdm(enumerate(ppo_trainer.dataloader)):
        query_tensors = batch["input_ids"]
        response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
        batch["response"] = tokenizer.batch_decode(response_tensors)
        texts = [q + r for q, r in zip(batch["query"], batch["response"])]
        pipe_outputs = sentiment_pipe(texts, **sent_kwargs)
        rewards = [torch.tensor(output[1]["score"]) for output in pipe_outputs]
        stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
        ppo_trainer.log_stats(stats, batch, rewards)

becomes `reward_fn(prompts, completions, **kwargs)` holding the scoring statements (the decoded query text -> `prompts`,
the decoded response text -> `completions`), and the loop becomes `ppo_trainer.train()`. Anything the scoring code
needs from the loop other than those two texts makes the loop "too custom": it is then left in place with a TODO.

`Loop` (at the end) is the transformer's part: plan every loop before anything is rewritten (the loop's generation
settings and epoch count go into the config), then replace or mark each loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
import libcst.matchers as m

from migrations.kinds.cst import code, dotted, kwarg_value, literal_value
from migrations.v1_13.ppo_to_grpo import fields as F
from migrations.v1_13.ppo_to_grpo.analysis import MISSING, TODO_STEP_LOOP, all_fors

__all__ = ["Loop", "LoopPlan", "analyse_loop", "build_reward_fn"]


@dataclass
class LoopPlan:
    """What the loop analysis found. `reward_body` is None when the loop is too custom (see `reason`)."""

    loop: cst.For
    trainer: str
    epochs: cst.BaseExpression | None = None  # the outer `for epoch in range(N)` count, if any
    reward_body: list[cst.BaseStatement] | None = None
    rewards_expr: cst.BaseExpression | None = None
    generate_call: cst.Call | None = None
    removed: list[str] = field(default_factory=list)
    reason: str = ""
    stops_early: list[str] = field(default_factory=list)  # first lines of the statements that `break` out early


def _calls_method(node: cst.CSTNode, receiver: str, method: str) -> bool:
    found = False

    class _V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal found
            f = call.func
            if isinstance(f, cst.Attribute) and f.attr.value == method and dotted(f.value) == receiver:
                found = True

    node.visit(_V())
    return found


def _find_call(node: cst.CSTNode, receiver: str | None, method: str) -> cst.Call | None:
    hit: list[cst.Call] = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            f = call.func
            if isinstance(f, cst.Attribute) and f.attr.value == method:
                if receiver is None or dotted(f.value) == receiver:
                    hit.append(call)
            elif isinstance(f, cst.Name) and receiver is None and f.value == method:
                hit.append(call)

    node.visit(_V())
    return hit[0] if hit else None


def _appended_names(node: cst.CSTNode) -> set[str]:
    """Names X with `X.append(...)` / `X.extend(...)` calls inside `node`."""
    names: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            f = call.func
            if isinstance(f, cst.Attribute) and f.attr.value in ("append", "extend") and isinstance(f.value, cst.Name):
                names.add(f.value.value)

    node.visit(_V())
    return names


def _names_used(node: cst.CSTNode) -> set[str]:
    names: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            names.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

    node.visit(_V())
    return names


def _assigned(stmt: cst.BaseStatement) -> list[cst.BaseExpression]:
    targets: list[cst.BaseExpression] = []
    if isinstance(stmt, cst.SimpleStatementLine):
        for s in stmt.body:
            if isinstance(s, cst.Assign):
                for t in s.targets:
                    targets.append(t.target)
            elif isinstance(s, (cst.AnnAssign, cst.AugAssign)):
                targets.append(s.target)
    return targets


def _target_names(t: cst.BaseExpression) -> set[str]:
    if isinstance(t, cst.Name):
        return {t.value}
    if isinstance(t, (cst.Tuple, cst.List)):
        out: set[str] = set()
        for e in t.elements:
            out |= _target_names(e.value)
        return out
    return set()


def _exits_loop(stmt: cst.BaseStatement) -> bool:
    """`stmt` (a statement of a loop body) holds a `break` or `return` that leaves that loop: one not inside a nested
    loop (where `break` leaves the inner loop), function or class."""

    class V(cst.CSTVisitor):
        found = False

        def visit_Break(self, node: cst.Break) -> None:
            self.found = True

        def visit_Return(self, node: cst.Return) -> None:
            self.found = True

        def visit_For(self, node: cst.For) -> bool:  # a nested loop's `break` is its own
            return False

        def visit_While(self, node: cst.While) -> bool:
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    v = V()
    if isinstance(stmt, (cst.For, cst.While)):  # its `else:` belongs to this loop's body
        if stmt.orelse is not None:
            stmt.orelse.visit(v)
        return v.found
    stmt.visit(v)
    return v.found


def _range_count(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """N for `range(N)` / `trange(N)`, also wrapped (`tqdm(range(N))`); None otherwise."""
    if m.matches(expr, m.Call(func=m.Name("range") | m.Name("trange"))) and len(expr.args) == 1:  # type: ignore[union-attr]
        return expr.args[0].value  # type: ignore[union-attr]
    if isinstance(expr, cst.Call) and expr.args and expr.args[0].keyword is None:
        return _range_count(expr.args[0].value)
    return None


def iterates_dataloader(iter_expr: cst.BaseExpression, trainer: str) -> bool:
    """`trainer.dataloader`, possibly wrapped in tqdm(...)/enumerate(...)."""
    if dotted(iter_expr) == f"{trainer}.dataloader":
        return True
    if isinstance(iter_expr, cst.Call) and iter_expr.args:
        return iterates_dataloader(iter_expr.args[0].value, trainer)
    return False


class _Replace(cst.CSTTransformer):
    """Replace expressions by source text (used only inside the loop body being moved)."""

    def __init__(self, mapping: dict[str, cst.BaseExpression]) -> None:
        self.mapping = mapping
        self._attrs: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._attrs.add(id(node.attr))
        return True

    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        if isinstance(original_node, cst.BaseExpression) and id(original_node) not in self._attrs:
            key = code(original_node).strip()
            if key in self.mapping:
                return self.mapping[key].deep_clone()  # a node may appear only once in a tree
        return updated_node


def analyse_loop(loop: cst.For, trainer: str, tokenizer_names: set[str]) -> LoopPlan | None:
    """Analyse a `for` statement: None when it is not a PPO step loop of `trainer`."""
    outer_epochs = None
    inner = loop
    if not iterates_dataloader(loop.iter, trainer):
        # `for epoch in range(N): for batch in trainer.dataloader: ...`
        body = [s for s in loop.body.body]  # type: ignore[union-attr]
        fors = [s for s in body if isinstance(s, cst.For) and iterates_dataloader(s.iter, trainer)]
        if len(fors) != 1 or not _calls_method(fors[0], trainer, "step"):
            return None
        if len(body) != 1:
            plan = LoopPlan(loop=loop, trainer=trainer)
            plan.reason = "the epoch loop does more than iterate the dataloader"
            return plan
        outer_epochs = _range_count(loop.iter)
        inner = fors[0]
    if not _calls_method(inner, trainer, "step"):
        return None
    plan = LoopPlan(loop=loop, trainer=trainer, epochs=outer_epochs)
    if outer_epochs is None and inner is not loop:
        plan.reason = "the outer loop is not `for _ in range(N)`"
        return plan
    stmts = list(inner.body.body)  # type: ignore[union-attr]
    loop_vars = _target_names(inner.target)
    if isinstance(inner.target, cst.Tuple):
        loop_vars = _target_names(inner.target)
    batch_names = {n for n in loop_vars}
    # locate the pieces
    gen_idx = step_idx = decode_idx = None
    resp_tensor: set[str] = set()
    for i, s in enumerate(stmts):
        if _calls_method(s, trainer, "step") and step_idx is None:
            step_idx = i
        if gen_idx is None and (_calls_method(s, trainer, "generate") or _find_call(s, None, "respond_to_batch")):
            gen_idx = i
            for t in _assigned(s):
                resp_tensor |= _target_names(t)
            if isinstance(s, cst.BaseCompoundStatement):
                # `for q in query_tensors: response = trainer.generate(q); response_tensors.append(...)`
                resp_tensor |= _appended_names(s)
            plan.generate_call = _find_call(s, trainer, "generate")
    if step_idx is None or gen_idx is None:
        plan.reason = "no `generate(...)` call before `step(...)` in the loop body"
        return plan
    step_call = _find_call(stmts[step_idx], trainer, "step")
    if step_call is None or len(step_call.args) < 3:
        plan.reason = "`step(...)` is not called with (queries, responses, scores)"
        return plan
    scores = step_call.args[2].value
    # the decoded response text: an assignment after generation whose value decodes the response tensors
    resp_text: cst.BaseExpression | None = None
    for i in range(gen_idx + 1, step_idx):
        s = stmts[i]
        targets = _assigned(s)
        if not targets:
            continue
        dec = _find_call(s, None, "batch_decode") or _find_call(s, None, "decode")
        if dec is not None and (_names_used(s) & resp_tensor):
            resp_text = targets[0]
            decode_idx = i
            break
    if resp_text is None or decode_idx is None:
        plan.reason = "the responses are not decoded with tokenizer.decode/batch_decode before scoring"
        return plan
    # the query text: batch["query"] (a dataset column) or an explicit decode of the query tensors
    mapping: dict[str, cst.BaseExpression] = {code(resp_text).strip(): cst.Name("completions")}
    # trainer attributes the scoring code may read (the moved code is not visited by the main transformer)
    mapping[f"{trainer}.current_device"] = cst.parse_expression(f"{trainer}.accelerator.device")
    mapping[f"{trainer}.config"] = cst.parse_expression(f"{trainer}.args")
    mapping[f"{trainer}.tokenizer"] = cst.parse_expression(f"{trainer}.processing_class")
    query_exprs = []
    for b in batch_names:
        for key in ("query", "prompt", "text", "queries"):
            query_exprs.append(f'{b}["{key}"]')
            query_exprs.append(f"{b}['{key}']")
    for q in query_exprs:
        mapping[q] = cst.Name("prompts")
    # `queries = tokenizer.batch_decode(query_tensors)` before generation: those texts are the prompts
    for i in range(0, gen_idx):
        s = stmts[i]
        targets = _assigned(s)
        dec = _find_call(s, None, "batch_decode") or _find_call(s, None, "decode")
        if dec is not None and len(targets) == 1 and isinstance(targets[0], (cst.Name, cst.Subscript)):
            mapping[code(targets[0]).strip()] = cst.Name("prompts")
    scoring: list[cst.BaseStatement] = []
    for i in range(decode_idx + 1, step_idx):
        s = stmts[i]
        if _calls_method(s, trainer, "log_stats"):
            continue
        # an explicit decode of the query tensors defines the prompts
        dec = _find_call(s, None, "batch_decode") or _find_call(s, None, "decode")
        targets = _assigned(s)
        if dec is not None and targets and (_names_used(s) - resp_tensor) and not (_names_used(s) & resp_tensor):
            mapping[code(targets[0]).strip()] = cst.Name("prompts")
            continue
        scoring.append(s)
    pairs = [(s, s.visit(_Replace(mapping))) for s in scoring]  # type: ignore[misc]
    rewards = scores.visit(_Replace(mapping))
    # keep only what computes the rewards (reference-response scoring, logging, bookkeeping go)
    pairs = _backward_slice(pairs, rewards)
    scoring = [o for o, _ in pairs]
    body = [b for _, b in pairs]
    # what the scoring code still needs from the loop: the loop vars, tensors, anything assigned in the loop
    # before the decode (other than by the scoring statements themselves)
    loop_local: set[str] = set(batch_names) | resp_tensor
    for i in range(0, decode_idx + 1):
        for t in _assigned(stmts[i]):
            loop_local |= _target_names(t)
    defined_in_scoring: set[str] = set()
    for s in body:
        for t in _assigned(s):
            defined_in_scoring |= _target_names(t)
    used = set()
    for s in body:
        used |= _names_used(s)
    used |= _names_used(rewards)
    leftover = (used & loop_local) - defined_in_scoring - {"prompts", "completions"}
    if leftover:
        plan.reason = f"the scoring code uses loop values other than the query/response texts: {sorted(leftover)}"
        return plan
    if not body and not isinstance(rewards, (cst.Name, cst.ListComp, cst.Call)):
        plan.reason = "no scoring code found"
        return plan
    plan.reward_body = body
    plan.rewards_expr = rewards
    kept = {id(s) for s in scoring}
    for s in stmts:
        if id(s) not in kept:
            plan.removed.append(_first_line(s))
    plan.stops_early = [_first_line(s) for s in stmts if _exits_loop(s)]
    return plan


def build_reward_fn(name: str, plan: LoopPlan) -> cst.FunctionDef:
    """`def <name>(prompts, completions, **kwargs): <scoring>; return [float(r) for r in <scores>]`."""
    assert plan.reward_body is not None and plan.rewards_expr is not None
    header = (
        f"def {name}(prompts, completions, **kwargs):\n"
        '    """Reward function built by trl-compat from the PPO loop\'s scoring code."""\n'
        f"    return [float(r) for r in {code(plan.rewards_expr)}]\n"
    )
    fn = cst.parse_statement(header)
    assert isinstance(fn, cst.FunctionDef)
    body = list(fn.body.body)  # type: ignore[union-attr]
    reindented = [_reindent(s) for s in plan.reward_body]
    fn = fn.with_changes(body=fn.body.with_changes(body=[body[0], *reindented, body[1]]))
    return fn


def _reindent(stmt: cst.BaseStatement) -> cst.BaseStatement:
    # libcst stores indentation relative to the block, so moving a statement between blocks needs no change;
    # only drop leading blank lines/comments that belonged to the loop layout.
    return stmt.with_changes(leading_lines=[ln for ln in stmt.leading_lines if ln.comment is not None])


def _defs(stmt: cst.CSTNode) -> set[str]:
    """What a statement (also compound) binds: names, and the source of subscript/attribute targets."""
    out: set[str] = set()

    def add(t: cst.BaseExpression) -> None:
        if isinstance(t, cst.Name):
            out.add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                add(e.value)
        elif isinstance(t, (cst.Subscript, cst.Attribute)):
            out.add(code(t).strip())

    class _V(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            for t in n.targets:
                add(t.target)

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            add(n.target)

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            add(n.target)

        def visit_For(self, n: cst.For) -> None:
            add(n.target)

        def visit_WithItem(self, n: cst.WithItem) -> None:
            if n.asname is not None:
                add(n.asname.name)

        def visit_Call(self, n: cst.Call) -> None:  # `xs.append(...)` builds xs
            if isinstance(n.func, cst.Attribute) and n.func.attr.value in ("append", "extend", "update"):
                add(n.func.value)

    stmt.visit(_V())
    return out


def _uses(node: cst.CSTNode) -> set[str]:
    out = _names_used(node)

    class _V(cst.CSTVisitor):
        def visit_Subscript(self, n: cst.Subscript) -> None:
            out.add(code(n).strip())

    node.visit(_V())
    return out


def _backward_slice(
    pairs: list[tuple[cst.BaseStatement, cst.BaseStatement]], result: cst.BaseExpression
) -> list[tuple[cst.BaseStatement, cst.BaseStatement]]:
    """The statements (in order) that the value of `result` depends on, judged on the rewritten statements."""
    needed = _uses(result)
    kept = []
    for orig, new in reversed(pairs):
        if _defs(new) & needed:
            kept.append((orig, new))
            needed |= _uses(new)
    return list(reversed(kept))


def _first_line(stmt: cst.BaseStatement) -> str:
    text = code(stmt.with_changes(leading_lines=[])).strip().splitlines()[0]
    return text if len(text) <= 80 else text[:77] + "..."


def _names_in(target: cst.CSTNode) -> list[cst.Name]:
    """The plain names an assignment target binds (`a`, `a, (b, c)`, `*rest`; not `x.y` / `x[0]`)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names_in(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names_in(target.value)
    return []


#: methods that change the object they are called on (a list / dict / set the loop fills)
_MUTATORS = frozenset({"append", "extend", "insert", "update", "add", "setdefault", "pop", "remove", "clear"})


def read_after(module: cst.Module, loop: cst.For) -> list[str]:
    """The names `loop` binds (its targets, its body's assignments) or fills (`rewards.append(...)`, `stats[k] =
    v`) that the code after it, in the function (or
    module) holding it, reads before binding them again, in document order (`_save_checkpoint(..., step)` after
    `for step, batch in enumerate(trainer.dataloader)`): removing the loop would leave them unbound."""
    bound: set[str] = set()
    stores: set[int] = set()  # ids of Name nodes that are written (assignment / for / with targets)
    skip: set[int] = set()  # ids of Name nodes that are no variable (attribute names, keywords)
    found: list[str] = []

    class _Targets(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            stores.update(id(n) for n in _names_in(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            stores.update(id(n) for n in _names_in(node.target))

        def visit_For(self, node: cst.For) -> None:
            stores.update(id(n) for n in _names_in(node.target))

        def visit_AsName(self, node: cst.AsName) -> None:
            stores.update(id(n) for n in _names_in(node.name))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            stores.update(id(n) for n in _names_in(node.target))

        def visit_Attribute(self, node: cst.Attribute) -> None:
            skip.add(id(node.attr))

        def visit_Arg(self, node: cst.Arg) -> None:
            if node.keyword is not None:
                skip.add(id(node.keyword))

    class _Container(cst.CSTVisitor):
        """The innermost function (else the module) whose body holds the loop."""

        def __init__(self) -> None:
            self.stack: list[cst.CSTNode] = [module]
            self.found: cst.CSTNode = module

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.stack.append(node)

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.stack.pop()

        def visit_For(self, node: cst.For) -> bool:
            if node is loop:
                self.found = self.stack[-1]
                return False
            return True

    finder = _Container()
    module.visit(finder)
    finder.found.visit(_Targets())

    class _Walk(cst.CSTVisitor):
        def __init__(self) -> None:
            self.state = "before"

        def visit_For(self, node: cst.For) -> None:
            if node is loop:
                self.state = "inside"

        def leave_For(self, node: cst.For) -> None:
            if node is loop:
                self.state = "after"

        def visit_Call(self, node: cst.Call) -> None:
            f = node.func  # `history.append(...)` in the loop changes what `history` holds after it
            if self.state == "inside" and isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) \
                    and f.attr.value in _MUTATORS:
                bound.add(f.value.value)

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            t = node.target  # `stats[key] = value` in the loop
            if self.state == "inside" and isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name):
                bound.add(t.value.value)

        def visit_Name(self, node: cst.Name) -> None:
            if id(node) in skip:
                return
            if self.state == "inside" and id(node) in stores:
                bound.add(node.value)
            elif self.state == "after" and node.value in bound:
                if id(node) in stores:
                    bound.discard(node.value)  # bound again before any read: the loop's value is not needed
                else:
                    found.append(node.value)

    finder.found.visit(_Walk())
    return list(dict.fromkeys(found))


def _unread_splat(expr: cst.BaseExpression) -> str:
    """The marker part for generation settings passed as `**expr` that the conversion could not read."""
    return (f"(generation settings **{code(expr)}: not read here, set them on the config: max_completion_length, "
            "temperature, top_p, top_k, ...)")


def _unread_setting(key: str, value: cst.BaseExpression) -> str:
    """The marker part for a generation setting whose value is no literal here (`max_new_tokens=cfg.n`)."""
    field = {"max_new_tokens": "max_completion_length"}.get(key, key)
    return f"(generation setting {key}={code(value)}: set {field} on the config)"


def _sampled_lengths(how: str, upper: cst.BaseExpression) -> str:
    """The marker part for response lengths the loop drew per query, now capped at the sampler's largest."""
    return (f"(response lengths drawn per query {how}: GRPO generates up to max_completion_length={code(upper)} "
            "and stops at EOS)")


class Loop:
    """Mixed into `ppo_to_grpo.transformer.Transformer`, whose state (`self.an`, `self.era`, `self.plans`, ...) it
    uses: the classic step loops, planned in `__init__` and rewritten in `leave_For`."""

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
                if plan.reward_body is not None and self._inside_loop(loop):
                    # `while trainer.current_step < total: for batch in trainer.dataloader: ...` (Code-for-HAF-RM):
                    # train() in its place would run the whole training again on each pass
                    plan.reward_body = None
                    plan.reason = "it runs inside another loop: train() there would train again on each pass"
                if plan.reward_body is not None:
                    later = read_after(self.src, loop)
                    if later:  # never remove what is still used
                        plan.reward_body = None
                        plan.reason = (f"code after the loop reads {', '.join(later)}, which the loop binds or "
                                       "fills: replacing it would leave them unbound or empty")
                self.plans[id(loop)] = plan
                for inner in all_fors(loop):
                    seen.add(id(inner))
                if plan.reward_body is not None:
                    self._loop_config(plan)
                break

    def _inside_loop(self, loop: cst.For) -> bool:
        """`loop` sits in the body of another `for` / `while` of its function (or module)."""
        node = self.an.parents.get(loop)
        while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module, cst.ClassDef)):
            if isinstance(node, (cst.For, cst.While)):
                return True
            node = self.an.parents.get(node)
        return False

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
            elif literal_value(epochs, MISSING) is not MISSING:
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
                elif len(vals) == 1 and isinstance(vals[0], cst.Call) and isinstance(vals[0].func, cst.Name) \
                        and vals[0].func.value == "dict" and "dict" not in self.an.assignments:
                    # `generation_kwargs = dict(max_new_tokens=..., top_k=50, ...)` (kartikmunjal/rlhf-and-reward-
                    # modelling-alt): the same mapping written as a call
                    for arg in vals[0].args:
                        if arg.keyword is not None:
                            kwargs[arg.keyword.value] = arg.value
                elif not self.an.subscript_sets.get(a.value.value):
                    # bound twice (haf-rm-anonymized/Code-for-HAF-RM) or to something else: not read, and said so
                    plan.removed.append(_unread_splat(a.value))
                for k, v in self.an.subscript_sets.get(a.value.value, {}).items():
                    kwargs[k] = v
            elif a.star == "**":
                plan.removed.append(_unread_splat(a.value))
        gen_extra: dict[str, cst.BaseExpression] = {}
        for k, v in kwargs.items():
            static = self._static(v)
            if k == "max_new_tokens" and literal_value(static, MISSING) is MISSING:
                upper = self._sampler_upper(v)  # `gen_len = output_length_sampler()` inside the loop
                if upper is not None:
                    extra["max_completion_length"] = upper
                    plan.removed.append(_sampled_lengths(f"({k}={code(v)})", upper))
                else:
                    plan.removed.append(_unread_setting(k, v))
                continue
            if k != "length_sampler" and literal_value(static, MISSING) is MISSING:
                # not a literal here (a sampled length, `cfg.max_new_tokens`): not moved, and the marker says so
                if k not in ("do_sample", "pad_token_id", "eos_token_id", "return_prompt", "batch_size",
                             "generate_ref_response", "min_length"):
                    plan.removed.append(_unread_setting(k, v))
                continue
            if k == "max_new_tokens":
                extra["max_completion_length"] = static
            elif k == "length_sampler":
                upper = self._sampler_upper(v)
                if upper is not None:
                    extra.setdefault("max_completion_length", upper)
                    plan.removed.append(_sampled_lengths(f"from {code(v)}", upper))
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
            if len(vals) == 1 and literal_value(vals[0], MISSING) is not MISSING:
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
        if self.an.config_calls or not self.loop_extra:
            moved = "generation settings moved to the config, the "
        else:  # the config is built in another file (`from config import config`): nothing here took the values
            settings = ", ".join(f"{k}={code(v)}" for k, v in self.loop_extra.items())
            moved = f"the config is built in another file: set {settings} on it there; the "
        self.todo(
            original_node,
            f"the PPO step loop was replaced by {plan.trainer}.train(): {moved}scoring code moved to "
            f"`{self.reward_name}`; removed: {removed}",
            TODO_STEP_LOOP,
        )
        if plan.stops_early:
            self.todo(
                original_node,
                f"set max_steps= in the config: the PPO loop stopped early "
                f"({'; '.join(dict.fromkeys(plan.stops_early))} ... break) and {plan.trainer}.train() runs "
                "num_train_epochs over the whole dataset; max_steps counts optimizer steps, not PPO batches",
                TODO_STEP_LOOP,
            )
        stmt = cst.parse_statement(f"{plan.trainer}.train()\n")
        return stmt.with_changes(leading_lines=original_node.leading_lines)
