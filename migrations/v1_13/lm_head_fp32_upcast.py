"""Project hidden states onto the LM head in the operands' own dtype and upcast only the logits.

TRL 1.13 found that computing the vocabulary projection as `h.float() @ w.float().t()` had cost 21.6% of GPU kernel
time for years: both operands are copied to fp32 and the largest matmul of the model runs in fp32. Projecting in the
operands' dtype (bf16 on tensor cores) and upcasting the *result* keeps the softmax / log-softmax that follows in fp32
and gives the same loss within bf16 tolerance (tests/migrations/v1_13/test_lm_head_fp32_upcast.py measures it).

What is rewritten (both operands upcast with the same cast: `.float()`, `.double()`, `.to(torch.float32)`,
`.to(dtype=torch.float64)`, ...; the weight transposed with `.t()`, `.T` or `.transpose(...)` before or after the cast):

    h.float() @ W.float().t()                  -> (h @ W.to(h.dtype).t()).float()
    torch.matmul(h.float(), W.float().t())     -> torch.matmul(h, W.to(h.dtype).t()).float()      (also torch.mm)
    h.float().matmul(W.float().t())            -> h.matmul(W.to(h.dtype).t()).float()
    F.linear(h.float(), W.float()[, b.float()]) -> F.linear(h, W.to(h.dtype)[, b.to(h.dtype)]).float()

only when `W` is an output projection, by name or by origin:

* an attribute `<head>.weight` whose owner is one of `HEAD_MODULES` (`lm_head`, `embed_out` (GPT-NeoX), `wte`
  (GPT-2's tied head), `word_embeddings`, `embed_tokens` (tied heads), `output_layer`, `output_embeddings`,
  `unembed`);
* `<anything>.get_output_embeddings().weight` or `.get_input_embeddings().weight` (a tied head);
* a name or attribute in `HEAD_PARAMETERS` (`lm_head_weight`, `W_U`, `unembed_weight`, `output_embedding_weight`, ...),
  or any name containing `lm_head`;
* a local name assigned exactly once, in the same function, from one of the above;
* a name passed to a context manager whose name mentions `lm_head` around the projection (TRL <= 1.12's own
  `with maybe_gather_lm_head_ctx(w, b): logits = h.float() @ w.float().t()`, which TRL 1.13 fixed this way).

`h` must be a plain expression (a name, an attribute or a subscript of one) because the rewrite reads `h.dtype`;
anything else (a call, arithmetic) and any weight the rule cannot place (e.g. `hidden.float() @ weight.float().t()`)
is reported as an unsure candidate *without* rewriting. Calls are matched by qualified name (`torch.matmul`,
`torch.nn.functional.linear` through any alias), so a local `torch` or another library's `matmul` is left alone.

A rewrite changes numerics (bf16 accumulation of the projection instead of fp32), so it is classed *unsafe*: it is
reported as a warning and marked at its line (`# TODO(trl-compat): numerics changed: ...`) for a human to check the loss.
Code that chose fp32 on purpose is left alone, with an info finding saying why: a comment on or right above the line
that says so (fp32 / float32 / precision / deliberate / intentional / on purpose), a function that takes the dtype as
a parameter, TRL's own source (a file under a `trl/` folder) and TRL's own kernels copied elsewhere
(`TRL_FP32_KERNELS`: functions that TRL at the target version itself keeps in fp32, read from the 1.16.0 wheel).

For CI: `python -m compat.migrate --only lm-head-fp32-upcast --check src/` exits 1 while a rewrite is pending;
`--report -` lists the unsure candidates too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext, todo_text
from migrations.kinds.imports import imported_names

HEAD_MODULES = frozenset({
    "lm_head", "embed_out", "wte", "word_embeddings", "embed_tokens", "output_layer", "output_embeddings", "unembed",
})
HEAD_PARAMETERS = frozenset({
    "lm_head_weight", "lm_head_w", "w_u", "unembed_weight", "unembedding", "unembedding_weight",
    "output_embedding_weight", "output_embeddings_weight", "embed_out_weight", "head_weight", "vocab_projection",
})
# Functions of TRL 1.16.0 that project onto the LM head in fp32 on purpose (from the wheel, `pip download --no-deps
# trl==1.16.0`: trl/experimental/async_distillation/async_distillation_trainer.py:241, `_jsd_loss_chunk`:
# `logits = hidden_chunk.float() @ lm_head_weight.float().t()`, the per-chunk JSD that needs fp32 logits).
TRL_FP32_KERNELS = frozenset({"_jsd_loss_chunk"})
_DELIBERATE_COMMENT = re.compile(r"fp32|float32|fp64|float64|full precision|precision|deliberate|intentional|"
                                 r"on purpose|numerical|stability", re.IGNORECASE)
_MARKER = "numerics changed: check the loss"  # <= 100 characters with the link and some indentation
HIDDEN_HINTS = ("hidden", "last_hidden", "hidden_states", "embeds", "activations", "features")
# first `_`-separated token of a short name that reads as hidden states / a weight (`h`, `h_s`, `w`, `w_t`, ...)
HIDDEN_PREFIXES = frozenset({"h", "hs", "hidden"})
WEIGHT_PREFIXES = frozenset({"w", "weight", "weights"})

_CAST_RE = r"(?:\.float\(\)|\.double\(\)|\.to\([^()\n]*?(?:float32|float64|torch\.double|torch\.float)\))"
_TRANSPOSE_RE = r"(?:\.t\(\)|\.T\b|\.transpose\([^()\n]*\))"
_NOT_RESHAPED = r"(?!\.(?:view|reshape|contiguous|unsqueeze|squeeze|expand|flatten|unflatten)\b)"  # a projection operand
# The gate, in two steps. (1) A regex cheap enough for every file (it starts at an upcast): an upcast next to a
# transpose, or two upcasts inside one `linear(` call. (2) For each such place, the operand written just before an
# upcast must be weight-ish (`lm_head.weight`, `W_U`, `w`, `get_output_embeddings().weight`, `embed_out[...]`) and not a
# module's own `self.weight` (fp32 routers and gates project that way on purpose). One regex doing both backtracks on
# every word of every file; the two steps keep `--check` over transformers' 2,912 files to the cost of reading them.
_PREFILTER = (
    rf"{_CAST_RE}\s*{_TRANSPOSE_RE}{_NOT_RESHAPED}|{_TRANSPOSE_RE}\s*{_CAST_RE}"
    rf"|linear\([\s\S]{{0,300}}?{_CAST_RE}[\s\S]{{0,300}}?{_CAST_RE}"
)
_PREFILTER_RE = re.compile(_PREFILTER)
_CAST_OR_TRANSPOSE = re.compile(rf"{_CAST_RE}|{_TRANSPOSE_RE}")
_WEIGHT_TAIL = re.compile(
    r"(?:weight|lm_head|embed\w*|wte|unembed\w*|head|vocab\w*|W_?U|\bw|_w)\w*(?:\(\))?(?:\[[^\]\n]*\])?$"
)


def _weight_operand_nearby(text: str) -> bool:
    """Step (2) of the gate: some upcast or transpose inside a step-(1) match follows a weight-ish operand."""
    for match in _PREFILTER_RE.finditer(text):
        for op in _CAST_OR_TRANSPOSE.finditer(text, match.start(), match.end()):
            before = text[max(0, op.start() - 80):op.start()]
            if _WEIGHT_TAIL.search(before) and not before.endswith("self.weight"):
                return True
    return False

_NON_HEAD_CLASS = re.compile(r"router|gate|gating|expert|moe|attention|attn|mlp", re.IGNORECASE)

_MATMUL_FUNCS = frozenset({"torch.matmul", "torch.mm"})
_LINEAR_FUNCS = frozenset({"torch.nn.functional.linear"})
_FP32 = frozenset({"torch.float32", "torch.float"})
_FP64 = frozenset({"torch.float64", "torch.double"})


@dataclass(frozen=True)
class _Weight:
    """A weight operand without its upcast and transpose: the bare weight, the precision, how it was transposed."""

    base: cst.BaseExpression
    precision: str
    style: str  # "" (F.linear), "T", "t" or "transpose"
    transpose: cst.BaseExpression | None  # the original transpose node (to re-apply `.transpose(a, b)`)


@dataclass(frozen=True)
class _Cast:
    """An upcast `inner.<cast>` found on an operand: the call node, its receiver, and the precision."""

    call: cst.Call
    inner: cst.BaseExpression
    precision: str  # "fp32" | "fp64"


class LMHeadFP32Upcast(PythonMigration):
    summary = "h.float() @ lm_head.weight.float().t() -> (h @ w.to(h.dtype).t()).float(): bf16 projection, fp32 result"
    safety = "unsafe"  # a numerics change (see the module docstring): reported as a warning and marked
    triggers = (".float()", ".double()", "float32", "float64", "torch.double")
    # step (1) of the gate below, also run on the raw bytes by the engine; `triggered_by` adds step (2): of
    # transformers' 2,912 files, 784 hold `.float()` & co, 39 pass step (1), none pass step (2)
    pattern = _PREFILTER

    def triggered_by(self, text: str) -> bool:
        return super().triggered_by(text) and _weight_operand_nearby(text)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = _Transformer(self, ctx)
        module = wrapper.visit(t)
        return module if t.changed else wrapper.module


def _last_identifier(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _is_simple(node: cst.BaseExpression) -> bool:
    """A name, attribute chain or subscript of one with simple indices: safe to evaluate twice."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _is_simple(node.value)
    if isinstance(node, cst.Subscript):
        if not _is_simple(node.value):
            return False
        for element in node.slice:
            index = element.slice
            parts: list[cst.BaseExpression | None] = (
                [index.lower, index.upper, index.step] if isinstance(index, cst.Slice) else [index.value]
                if isinstance(index, cst.Index) else [None])
            for part in parts:
                if part is not None and not isinstance(part, (cst.Name, cst.Integer, cst.UnaryOperation, cst.Ellipsis)):
                    return False
                if isinstance(part, cst.UnaryOperation) and not isinstance(part.expression, cst.Integer):
                    return False
        return True
    return False


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: LMHeadFP32Upcast, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self._scopes: list[dict[str, list[cst.BaseExpression]]] = [{}]
        self._head_context: list[set[str]] = []  # names handed to an enclosing `with ..lm_head..(w, b):`
        self._classes: list[str] = []  # enclosing class names, innermost last
        self._functions: list[cst.FunctionDef] = []  # enclosing functions, innermost last

    # -- local origins: names assigned once in the current function ---------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._scopes = [_assignments(node.body)]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(_assignments(node.body.body if isinstance(node.body, cst.IndentedBlock) else []))
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._scopes.pop()
        self._functions.pop()
        return updated_node

    # -- deliberate fp32 -------------------------------------------------------------------------------------------
    def _deliberate(self) -> str | None:
        """Why the projection at hand is fp32 on purpose, or None."""
        parts = (self.ctx.path or "").replace("\\", "/").split("/")
        if "trl" in parts[:-1]:
            return "TRL's own source"
        if self._functions and self._functions[-1].name.value in TRL_FP32_KERNELS:
            return f"TRL's own fp32 kernel `{self._functions[-1].name.value}`"
        if self._functions:
            params = self._functions[-1].params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if "dtype" in param.name.value.lower():
                    return f"the function takes the dtype as a parameter (`{param.name.value}`)"
        stmt = self._stmt_stack[-1] if self._stmt_stack else None
        comments = []
        if isinstance(stmt, cst.SimpleStatementLine):
            if stmt.trailing_whitespace.comment is not None:
                comments.append(stmt.trailing_whitespace.comment.value)
            comments.extend(line.comment.value for line in stmt.leading_lines if line.comment is not None)
        if any(_DELIBERATE_COMMENT.search(c) for c in comments):
            return "a comment at the line says so"
        return None

    def _rewrote(self, node: cst.CSTNode) -> None:
        """An applied numerics rewrite: a warning finding, and a marker above the statement."""
        self.note(node, "fp32 lm_head projection -> projection in the operands' dtype, result upcast (a numerics "
                        "change: check the loss)", severity="warning")
        if self._stmt_stack:
            self._pending.setdefault(id(self._stmt_stack[-1]), []).append(todo_text(_MARKER, self.rule.anchor, self.rule.id))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        return updated_node

    def _inside_non_head_module(self, weight: cst.BaseExpression) -> bool:
        """`self.weight` / `self.<sub>.weight` of a class whose name says it is not an output head (an MoE router or
        gate, attention, an MLP): such fp32 projections are deliberate and not candidates (e.g. transformers' MoE
        top-k routers)."""
        root = weight
        while isinstance(root, cst.Attribute):
            root = root.value
        if not (isinstance(root, cst.Name) and root.value == "self" and root is not weight and self._classes):
            return False
        return _NON_HEAD_CLASS.search(self._classes[-1]) is not None

    def visit_With(self, node: cst.With) -> None:
        names: set[str] = set()
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call) and "lm_head" in (_last_identifier(call.func) or ""):
                names.update(a.value.value for a in call.args if isinstance(a.value, cst.Name))
        self._head_context.append(names)

    def leave_With(self, original_node: cst.With, updated_node: cst.With) -> cst.With:
        self._head_context.pop()
        return updated_node

    # -- classification -----------------------------------------------------------------------------------------
    def _cast(self, node: cst.BaseExpression) -> _Cast | None:
        """`x.float()`, `x.double()`, `x.to(torch.float32)`, `x.to(dtype=torch.float64)` -> the cast, else None."""
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return None
        method = node.func.attr.value
        inner = node.func.value
        if method in ("float", "double") and not node.args:
            return _Cast(node, inner, "fp32" if method == "float" else "fp64")
        if method == "to" and len(node.args) == 1 and (
                node.args[0].keyword is None or node.args[0].keyword.value == "dtype"):
            names = imported_names(self, node.args[0].value)
            if names & _FP32:
                return _Cast(node, inner, "fp32")
            if names & _FP64:
                return _Cast(node, inner, "fp64")
        return None

    def _weight_operand(self, node: cst.BaseExpression, transposed: bool) -> _Weight | None:
        """Strip one upcast and (for a matmul) one transpose, in either order, from a weight operand."""
        precision: str | None = None
        transpose: cst.BaseExpression | None = None
        style = ""
        current = node
        for _ in range(2):
            cast = self._cast(current)
            if cast is not None and precision is None:
                precision, current = cast.precision, cast.inner
                continue
            if transposed and not style:
                if isinstance(current, cst.Attribute) and current.attr.value == "T":
                    style, transpose, current = "T", current, current.value
                    continue
                if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and (
                        (current.func.attr.value == "t" and not current.args)
                        or (current.func.attr.value == "transpose" and len(current.args) == 2)):
                    style, transpose, current = current.func.attr.value, current, current.func.value
                    continue
            break
        if precision is None or (transposed and not style):
            return None
        return _Weight(current, precision, style, transpose)

    def _is_head(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """True when `node` (the weight without its cast/transpose) is an output projection by name or origin."""
        if isinstance(node, cst.Attribute) and node.attr.value == "weight":
            owner = node.value
            if _last_identifier(owner) in HEAD_MODULES:
                return True
            if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Attribute) and owner.func.attr.value in (
                    "get_output_embeddings", "get_input_embeddings"):
                return True
            return False
        ident = _last_identifier(node)
        if ident is None:
            return False
        if ident.lower() in HEAD_PARAMETERS or "lm_head" in ident.lower():
            return True
        if isinstance(node, cst.Name) and any(node.value in names for names in self._head_context):
            return True
        if isinstance(node, cst.Name) and depth == 0:
            values = self._scopes[-1].get(node.value, [])
            if len(values) == 1:
                return self._is_head(values[0], depth + 1)
        return False

    def _looks_hidden(self, node: cst.BaseExpression) -> bool:
        ident = (_last_identifier(node if not isinstance(node, cst.Subscript) else node.value) or "").lower()
        return any(h in ident for h in HIDDEN_HINTS) or ident.split("_")[0] in HIDDEN_PREFIXES

    @staticmethod
    def _looks_weight(node: cst.BaseExpression) -> bool:
        return (_last_identifier(node) or "").lower().split("_")[0] in WEIGHT_PREFIXES

    # -- rewrites -----------------------------------------------------------------------------------------------
    def _decide(self, original: cst.CSTNode, lhs: cst.BaseExpression, rhs: cst.BaseExpression,
                transposed: bool) -> tuple[_Cast, _Weight] | None:
        """Both operands upcast alike and the weight an LM head: (hidden cast, weight cast, style); else None
        (with an unsure-candidate finding when the shape fits but the rule cannot be sure)."""
        h = self._cast(lhs)
        if h is None:
            return None
        w = self._weight_operand(rhs, transposed)
        if w is None or w.precision != h.precision:
            return None
        if self._is_head(w.base):
            reason = self._deliberate()
            if reason is not None:
                self.note(original, f"fp32 lm_head projection kept: deliberate ({reason})", changed=False)
                return None
            if _is_simple(h.inner):
                return h, w
            self.note(original, "lm_head projection on an upcast expression that is not a plain name: project in "
                                "its dtype and upcast the result by hand (see the guide)",
                      severity="warning", changed=False)
            return None
        if self._inside_non_head_module(w.base):
            return None
        if self._looks_hidden(h.inner) or self._looks_weight(w.base):
            self.note(original, "possible fp32 lm_head projection (hidden states @ an unrecognised weight); not "
                                "rewritten: if the weight is the output projection, project in bf16 and upcast the "
                                "result", severity="warning", changed=False)
        return None

    def _rewritten_weight(self, h: _Cast, w: _Weight) -> cst.BaseExpression:
        """`W.to(h.dtype)`, with the original transpose re-applied after the conversion."""
        converted = cst.Call(func=cst.Attribute(value=w.base, attr=cst.Name("to")),
                             args=[cst.Arg(cst.Attribute(value=h.inner.deep_clone(), attr=cst.Name("dtype")))])
        if w.style == "T":
            return cst.Attribute(value=converted, attr=cst.Name("T"))
        if w.style in ("t", "transpose"):
            call = w.transpose
            assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            return call.with_changes(func=call.func.with_changes(value=converted))
        return converted

    def _upcast_result(self, h: _Cast, value: cst.BaseExpression) -> cst.BaseExpression:
        """`value` cast the way the hidden states were (`.float()`, `.to(torch.float32)`, ...)."""
        func = h.call.func
        assert isinstance(func, cst.Attribute)
        if isinstance(value, cst.BinaryOperation):
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return h.call.with_changes(func=func.with_changes(value=value))

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation,
                              updated_node: cst.BinaryOperation) -> cst.BaseExpression:
        if not isinstance(original_node.operator, cst.MatrixMultiply):
            return updated_node
        decided = self._decide(original_node, original_node.left, original_node.right, transposed=True)
        if decided is None:
            return updated_node
        h, w = decided
        projection = original_node.with_changes(left=h.inner, right=self._rewritten_weight(h, w), lpar=[], rpar=[])
        self._rewrote(original_node)
        result = self._upcast_result(h, projection)
        if original_node.lpar:
            result = result.with_changes(lpar=original_node.lpar, rpar=original_node.rpar)
        return result

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = original_node.func
        names = imported_names(self, func)
        method = func.attr.value if isinstance(func, cst.Attribute) else ""
        if names & _MATMUL_FUNCS or names & _LINEAR_FUNCS:
            args = original_node.args
            if len(args) < 2 or any(a.keyword is not None or a.star for a in args[:2]):
                return updated_node
            linear = bool(names & _LINEAR_FUNCS)
            if len(args) > (3 if linear else 2):
                return updated_node
            decided = self._decide(original_node, args[0].value, args[1].value, transposed=not linear)
            if decided is None:
                return updated_node
            h, w = decided
            new_args = [args[0].with_changes(value=h.inner), args[1].with_changes(value=self._rewritten_weight(h, w))]
            if linear and len(args) == 3:
                bias = self._cast(args[2].value)
                if bias is None or bias.precision != h.precision:
                    self.note(original_node, "fp32 lm_head projection with a bias that is not upcast alike: not "
                                             "rewritten", severity="warning", changed=False)
                    return updated_node
                dtype = cst.Attribute(value=h.inner.deep_clone(), attr=cst.Name("dtype"))
                new_args.append(args[2].with_changes(value=cst.Call(
                    func=cst.Attribute(value=bias.inner, attr=cst.Name("to")), args=[cst.Arg(dtype)])))
            self._rewrote(original_node)
            return self._upcast_result(h, updated_node.with_changes(args=new_args))
        if method in ("matmul", "mm") and isinstance(func, cst.Attribute) and len(original_node.args) == 1 \
                and original_node.args[0].keyword is None and not names & _MATMUL_FUNCS:
            decided = self._decide(original_node, func.value, original_node.args[0].value, transposed=True)
            if decided is None:
                return updated_node
            h, w = decided
            new = original_node.with_changes(
                func=func.with_changes(value=h.inner),
                args=[original_node.args[0].with_changes(value=self._rewritten_weight(h, w))])
            self._rewrote(original_node)
            return self._upcast_result(h, new)
        return updated_node


def _assignments(body: object) -> dict[str, list[cst.BaseExpression]]:
    """Name -> every value assigned to it directly in `body` (nested functions and classes excluded)."""
    found: dict[str, list[cst.BaseExpression]] = {}

    class _Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    found.setdefault(target.target.value, []).append(node.value)
                else:  # tuple targets etc.: mark the names as assigned more than once (unknown origin)
                    for name in _names_in(target.target):
                        found.setdefault(name, []).extend([node.value, node.value])

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name):
                found.setdefault(node.target.value, []).extend([node.value, node.value])

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if isinstance(node.target, cst.Name) and node.value is not None:
                found.setdefault(node.target.value, []).append(node.value)

        def visit_For(self, node: cst.For) -> None:
            for name in _names_in(node.target):
                found.setdefault(name, []).extend([node.iter, node.iter])

    for stmt in body:  # type: ignore[attr-defined]
        stmt.visit(_Collect())
    return found


def _names_in(node: cst.CSTNode) -> list[str]:
    names: list[str] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            names.append(n.value)

    node.visit(_Names())
    return names


MIGRATION = LMHeadFP32Upcast()
