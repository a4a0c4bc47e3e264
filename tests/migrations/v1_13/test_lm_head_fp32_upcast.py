"""The fp32 lm_head upcast rule: positive cases, negative (byte-identical) cases, unsure candidates, and a tiny-model
end-to-end check that the rewritten projection gives the same loss within bf16 tolerance."""

from __future__ import annotations

import textwrap

import pytest

from migrations.base import todo_text
from migrations.v1_13.lm_head_fp32_upcast import _MARKER
from migrations.v1_13.lm_head_fp32_upcast import MIGRATION as RULE
from tests.migrations._driver import run

T = "import torch\nimport torch.nn.functional as F\n"
MARK = todo_text(_MARKER, RULE.anchor)  # every applied rewrite is a numerics change: marked at its line

POSITIVE = [
    ("h.float() @ lm_head.weight.float().t()", "(h @ lm_head.weight.to(h.dtype).t()).float()"),
    ("hidden_states.float() @ model.lm_head.weight.float().T",
     "(hidden_states @ model.lm_head.weight.to(hidden_states.dtype).T).float()"),
    ("torch.matmul(h.float(), self.lm_head.weight.float().t())",
     "torch.matmul(h, self.lm_head.weight.to(h.dtype).t()).float()"),
    ("torch.mm(h.float(), lm_head.weight.float().t())", "torch.mm(h, lm_head.weight.to(h.dtype).t()).float()"),
    ("F.linear(h.float(), model.lm_head.weight.float())", "F.linear(h, model.lm_head.weight.to(h.dtype)).float()"),
    ("torch.nn.functional.linear(h.float(), lm_head.weight.float())",
     "torch.nn.functional.linear(h, lm_head.weight.to(h.dtype)).float()"),
    ("h.to(torch.float32) @ lm_head.weight.to(torch.float32).t()",
     "(h @ lm_head.weight.to(h.dtype).t()).to(torch.float32)"),
    ("h.double() @ lm_head.weight.double().t()", "(h @ lm_head.weight.to(h.dtype).t()).double()"),
    ("h.float() @ model.get_output_embeddings().weight.float().t()",
     "(h @ model.get_output_embeddings().weight.to(h.dtype).t()).float()"),
    ("h.float() @ self.embed_out.weight.float().t()", "(h @ self.embed_out.weight.to(h.dtype).t()).float()"),
    ("h.float() @ model.transformer.wte.weight.float().t()",
     "(h @ model.transformer.wte.weight.to(h.dtype).t()).float()"),
    ("h.float() @ lm_head_weight.float().t()", "(h @ lm_head_weight.to(h.dtype).t()).float()"),
    ("h.float() @ lm_head.weight.t().float()", "(h @ lm_head.weight.to(h.dtype).t()).float()"),
    ("h.float().matmul(lm_head.weight.float().t())", "h.matmul(lm_head.weight.to(h.dtype).t()).float()"),
    ("h.to(dtype=torch.float32) @ lm_head.weight.to(dtype=torch.float32).t()",
     "(h @ lm_head.weight.to(h.dtype).t()).to(dtype=torch.float32)"),
    ("F.linear(h.float(), lm_head.weight.float(), lm_head.bias.float())",
     "F.linear(h, lm_head.weight.to(h.dtype), lm_head.bias.to(h.dtype)).float()"),
    ("out[:, -1].float() @ W_U.float().transpose(0, 1)", "(out[:, -1] @ W_U.to(out[:, -1].dtype).transpose(0, 1)).float()"),
    ("h.float() @ model.model.embed_tokens.weight.float().T",
     "(h @ model.model.embed_tokens.weight.to(h.dtype).T).float()"),
]


@pytest.mark.parametrize("before,after", POSITIVE)
def test_positive(before, after):
    out, findings = run(RULE, f"{T}logits = {before}\n")
    assert out == f"{T}{MARK}\nlogits = {after}\n"
    assert [(f.changed, f.severity) for f in findings] == [(True, "warning")]
    assert len(MARK) + 8 <= 100  # the marker fits a line even indented twice


def test_positive_aliases_and_local_origin():
    out, _ = run(RULE, """\
        import torch as th
        from torch import matmul as mm_

        def loss(model, h):
            w = model.lm_head.weight
            a = mm_(h.float(), w.float().t())
            b = th.matmul(h.float(), w.float().t())
            return torch.log_softmax(a, -1), b
    """)
    assert "a = mm_(h, w.to(h.dtype).t()).float()" in out
    assert "b = th.matmul(h, w.to(h.dtype).t()).float()" in out
    assert "torch.log_softmax(a, -1)" in out  # the softmax stays as it was, in fp32


NEGATIVE = [
    "x.float() @ y.float().t()",                                       # unrelated operands
    "h @ lm_head.weight.t()",                                          # already in the operands' dtype
    "h.float() @ lm_head.weight.t()",                                  # only one side upcast
    "attn.float() @ v.float()",                                        # attention, not a head
    "q.float() @ k.float().transpose(-1, -2)",
    "h.half() @ lm_head.weight.half().t()",                            # a downcast
    "h.to(torch.bfloat16) @ lm_head.weight.to(torch.bfloat16).t()",
    "torch.matmul(h.float(), proj.weight.float().t())",                # not an output projection
    "F.linear(x.float(), self.fc.weight.float())",
    "(h @ lm_head.weight.to(h.dtype).t()).float()",                    # already rewritten
    "lm_head.weight.float()",                                          # no projection
    "h.float() * lm_head.weight.float()",                              # elementwise
    "lm_head(h.float())",                                              # module call
    "mylib.matmul(h.float(), lm_head.weight.float().t())",             # not torch
    "h.double() @ lm_head.weight.float().t()",                         # mismatched casts
    "h.float() @ lm_head.bias.float()",                                # not the weight
    "torch.matmul(h.float(), lm_head.weight.float())",                 # matmul without a transpose
    "'h.float() @ lm_head.weight.float().t()'",                        # a string
]


@pytest.mark.parametrize("expr", NEGATIVE)
def test_negative_is_byte_identical(expr):
    src = f"{T}# h.float() @ lm_head.weight.float().t() in a comment\nlogits = {expr}\n"
    out, findings = run(RULE, src)
    assert out == src
    assert not [f for f in findings if f.changed]


def test_negative_shadowed_torch_and_reassigned_weight():
    src = textwrap.dedent("""\
        def f(torch, h, lm_head):
            return torch.matmul(h.float(), lm_head.weight.float().t())

        def g(model, h, other):
            w = model.lm_head.weight
            w = other.weight
            return h.float() @ w.float().t()
    """)
    out, findings = run(RULE, src, dedent=False)
    assert out == src
    # the reassigned `w` has no single origin: reported as unsure (line 7), never rewritten
    assert [(f.severity, f.line, f.changed) for f in findings] == [("warning", 7, False)]


def test_trl_1_12_chunk_function_gets_trl_1_13_fix():
    """TRL 1.12's own `_chunk` (sft_trainer.py), as teams copied it; 1.13 changed the line to exactly this."""
    out, findings = run(RULE, """\
        def _chunk(h, w, b, lbl, logit_scale, final_logit_softcapping):
            with maybe_gather_lm_head_ctx(w, b):
                logits = h.float() @ w.float().t()
                if b is not None:
                    logits = logits + b.float()
            return logits
    """)
    assert "        logits = (h @ w.to(h.dtype).t()).float()\n" in out
    assert "logits = logits + b.float()" in out and [f.changed for f in findings] == [True]


def test_unsure_candidates_are_reported_not_rewritten():
    src = (f"{T}a = hidden_states.float() @ weight.float().t()\n"
           "b = model(x).last_hidden_state.float() @ lm_head.weight.float().t()\n"
           "c = h_s.float() @ w_s.float().t()  # e.g. parameters of a helper, no lm_head context\n")
    out, findings = run(RULE, src, dedent=False)
    assert out == src
    assert [f.severity for f in findings] == ["warning", "warning", "warning"]
    assert {f.line for f in findings} == {3, 4, 5}


def test_router_weight_in_a_router_class_is_not_a_candidate():
    """transformers' MoE routers project in fp32 on purpose (`F.linear(h.float(), self.weight.float())` in a
    `...TopKRouter`): neither rewritten nor reported (the prefilter does not even parse the file). A sub-module's
    weight inside a head-like class is still reported as unsure; inside a router class it is not."""
    router = (f"{T}class Ernie4_5_MoeTopKRouter(torch.nn.Module):\n"
              "    def forward(self, hidden_states):\n"
              "        return F.linear(hidden_states.float(), self.weight.float())\n")
    out, findings = run(RULE, router, dedent=False)
    assert out == router and findings == []
    assert not RULE.triggered_by(router)
    head = router.replace("Ernie4_5_MoeTopKRouter", "ValueHeadProjection").replace("self.weight", "self.proj.weight")
    out, findings = run(RULE, head, dedent=False)
    assert out == head and [f.severity for f in findings] == ["warning"]
    gate = head.replace("ValueHeadProjection", "SparseMoeGate")
    out, findings = run(RULE, gate, dedent=False)
    assert out == gate and findings == []


def test_bias_not_upcast_is_left():
    src = f"{T}y = F.linear(h.float(), lm_head.weight.float(), b)\n"
    out, findings = run(RULE, src, dedent=False)
    assert out == src and findings[0].severity == "warning"


@pytest.mark.slow
def test_end_to_end_tiny_model_loss_matches_in_bf16():
    """The rewritten projection, executed, gives the original loss within bf16 tolerance on a tiny model."""
    torch = pytest.importorskip("torch")
    from compat.tiny import tiny_model

    model = tiny_model("causal-lm", "llama", vocab_size=512, seed=0).to(torch.bfloat16)
    ids = torch.randint(0, 512, (2, 16), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        hidden = model.model(input_ids=ids).last_hidden_state
    source = textwrap.dedent("""\
        import torch
        import torch.nn.functional as F

        def loss_fn(model, hidden, labels):
            logits = hidden.float() @ model.lm_head.weight.float().t()
            logp = torch.log_softmax(logits, dim=-1)
            return F.nll_loss(logp[:, :-1].reshape(-1, logp.size(-1)), labels[:, 1:].reshape(-1))
    """)
    migrated, _ = run(RULE, source, dedent=False)
    assert "logits = (hidden @ model.lm_head.weight.to(hidden.dtype).t()).float()" in migrated

    def compile_fn(code: str):
        namespace: dict = {}
        exec(compile(code, "<migrated>", "exec"), namespace)
        return namespace["loss_fn"]

    with torch.no_grad():
        before = compile_fn(source)(model, hidden, ids)
        after = compile_fn(migrated)(model, hidden, ids)
        logits_after = (hidden @ model.lm_head.weight.to(hidden.dtype).t()).float()
    assert logits_after.dtype == torch.float32  # the softmax input stays fp32
    assert before.dtype == after.dtype == torch.float32
    # bf16 has an 8-bit mantissa: relative error of the projection ~ 2**-8; the loss agrees far inside that
    assert torch.allclose(after, before, rtol=2 ** -7, atol=1e-3), (before.item(), after.item())


# -- deliberate fp32 is left alone (issue 18, item 8) -----------------------------------------------------------------

TRL_1_16_KERNEL = """\
    import torch
    import torch.nn.functional as F

    def _jsd_loss_chunk(hidden_chunk, lm_head_weight, lm_head_bias, temperature):
        logits = hidden_chunk.float() @ lm_head_weight.float().t()
        if lm_head_bias is not None:
            logits = logits + lm_head_bias.float()
        return F.log_softmax(logits / temperature, dim=-1)
"""


@pytest.mark.parametrize("src, path, why", [
    # TRL 1.16.0's own per-chunk JSD (trl/experimental/async_distillation/async_distillation_trainer.py:241), in its
    # style, copied into a user's repository: fp32 there is intentional
    (TRL_1_16_KERNEL, "example.py", "TRL's own fp32 kernel"),
    # the same shape inside a TRL source tree (a vendored or installed copy)
    (TRL_1_16_KERNEL.replace("_jsd_loss_chunk", "_other_chunk"), "vendor/trl/trainer/x.py", "TRL's own source"),
    # a comment that says so
    ("import torch\n\ndef f(h, lm_head_weight):\n    # keep the projection in fp32 on purpose\n"
     "    return h.float() @ lm_head_weight.float().t()\n", "example.py", "a comment"),
    ("import torch\nlogits = h.float() @ lm_head.weight.float().t()  # full precision: deliberate\n", "example.py",
     "a comment"),
    # the dtype is the caller's choice
    ("import torch\n\ndef f(h, lm_head_weight, compute_dtype=torch.float32):\n"
     "    return h.float() @ lm_head_weight.float().t()\n", "example.py", "dtype as a parameter"),
])
def test_deliberate_fp32_projection_is_left_alone(src, path, why):
    out, findings = run(RULE, src, path=path)
    assert out == textwrap.dedent(src)
    assert [(f.severity, f.changed) for f in findings] == [("info", False)]
    assert "deliberate" in findings[0].message and why in findings[0].message


def test_the_rule_is_classed_unsafe():
    assert RULE.safety == "unsafe"
