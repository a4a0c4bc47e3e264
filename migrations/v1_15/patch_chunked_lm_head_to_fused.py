"""TRL 1.15 replaced `trl.trainer.patch_chunked_lm_head` with `trl.trainer.add_fused_lm_head` (new signature).

Old (1.14): `patch_chunked_lm_head(model, chunk_size, temperature, output_router_logits=False)`; the patched forward
took `(input_ids, attention_mask, labels, completion_mask)` and returned a dict with `log_probs`, `entropy`,
`aux_loss`. New (1.15, 1.16): `add_fused_lm_head(model, temperature=1.0, cast_lm_head_to_fp32=False,
outputs=("log_probs",))`; the forward is the original one unless called with `fused_lm_head=True`, which returns a
`FusedCausalLMOutput` (attributes `loss`, `log_probs`, `entropy`, ..., `aux_loss`).

The call is rewritten: `model` stays, `temperature` becomes a keyword, `chunk_size` is dropped (the kernel tiles
itself), `outputs=("log_probs", "entropy")` keeps the entropy the old head returned, and a literal
`output_router_logits=False` is dropped. `output_router_logits=True` (or a non-literal) becomes a TODO: the new head
follows `model.config.output_router_logits`. The forward calls change meaning, so every rewritten call also gets a
TODO saying how to call the model now.
"""

from __future__ import annotations

import libcst as cst

from migrations.kinds.symbols import Moved, SymbolMigration, SymbolTransformer

_TO = Moved("trl.trainer", "add_fused_lm_head", "new signature")
_PARAMS = ("model", "chunk_size", "temperature", "output_router_logits")


class PatchChunkedLMHead(SymbolMigration):
    summary = "trl.trainer.patch_chunked_lm_head (removed in 1.15) -> add_fused_lm_head(model, temperature=..., outputs=...)"
    triggers = ("patch_chunked_lm_head",)
    symbols = {"trl.trainer.patch_chunked_lm_head": _TO, "trl.trainer.utils.patch_chunked_lm_head": _TO}

    def rewrite_call(self, t: SymbolTransformer, qname: str, original: cst.Call, updated: cst.Call) -> cst.Call:
        bound: dict[str, cst.BaseExpression] = {}
        for i, arg in enumerate(updated.args):
            if arg.star:
                t.todo(original, "add_fused_lm_head(model, temperature=..., outputs=(...)) takes different arguments "
                                 "than patch_chunked_lm_head: rewrite this call by hand")
                return updated
            key = arg.keyword.value if arg.keyword is not None else _PARAMS[i] if i < len(_PARAMS) else f"#{i}"
            bound[key] = arg.value
        model = bound.get("model")
        if model is None:
            return updated
        args = [cst.Arg(model)]
        if "temperature" in bound:
            args.append(_kw("temperature", bound["temperature"]))
        args.append(_kw("outputs", cst.parse_expression('("log_probs", "entropy")')))
        router = bound.get("output_router_logits")
        if router is not None and not (isinstance(router, cst.Name) and router.value == "False"):
            t.todo(original, "add_fused_lm_head adds the MoE aux loss when model.config.output_router_logits is set; "
                             "set it on the config instead of passing output_router_logits")
        t.todo(original, "the fused head is used only when the model is called with fused_lm_head=True and labels "
                         "(-100 where the old completion_mask was 0); it returns FusedCausalLMOutput attributes "
                         "(.log_probs, .entropy, .aux_loss), not a dict")
        t.note(original, "chunk_size dropped: add_fused_lm_head tiles the projection itself")
        return updated.with_changes(args=_with_commas(args))


def _kw(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(keyword=cst.Name(name), value=value, equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def _with_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    return [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) if i < len(args) - 1 else a
            for i, a in enumerate(args)]


MIGRATION = PatchChunkedLMHead()
