"""One first training step of SFT, DPO and GRPO, each on a tiny llama with an untied and with a tied head.

Launched by tests/reference_impl/test_distributed.py under `accelerate launch` with a sharding config (FSDP2 over
gloo, or DeepSpeed ZeRO on CPU), and imported by the same test to compute the single-process oracle in-process:
`run_cases(per_device)` builds each case with the given per-device batch, trains one step and returns, per case,
the logged loss and gradient norm, the float64 norm of the gradients (`GradNorm`), the samples each rank trained on, what the chunked engine was handed (an
instrumented wrapper around `reference_impl.chunking.gathered`, the engine's one doorway to the head weight: one
entry per engine forward and per engine backward), and how the head parameter is stored after `prepare` (its local
shape: half the vocabulary rows on each of 2 ranks when it is sharded).

The 2-process run uses half the per-device batch of the single-process run, so both train on the same 4 samples
(sequential sampling): loss and gradient norm must agree.

    accelerate launch --config_file reference_impl/accelerate_configs/fsdp2_cpu.yaml \
        tests/reference_impl/_sharded_job.py OUT.json
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tests.reference_impl import _trainer_helpers as H  # noqa: E402 (after the sys.path insert)

# 4096 x 32 = 131,072 head weights: above DeepSpeed's default persistence threshold (1e5), so ZeRO-3 partitions the head
VOCAB, HIDDEN = 4096, 32
CASES = [(name, head) for name in ("sft", "dpo", "grpo") for head in ("untied", "tied")]


class EngineRecorder:
    """Wraps `reference_impl.chunking.gathered` (entered once per engine forward and once per engine backward) and
    records what the engine sees: the phase (the calling frame is the autograd Function's `forward` or `backward`),
    whether the weight is a ZeRO-3 partition still to be gathered, and the weight's class, shape and `requires_grad`."""

    def __init__(self) -> None:
        from reference_impl import chunking

        self._module = chunking
        self._original = chunking.gathered
        self.calls: list[dict[str, Any]] = []

    def __enter__(self) -> EngineRecorder:
        from reference_impl.zero3 import is_partitioned

        original, calls = self._original, self.calls

        @contextlib.contextmanager
        def record(phase: str, params: tuple[Any, ...]) -> Any:
            weight = params[0]
            entry = {"phase": phase, "partitioned": is_partitioned(weight)}  # a ZeRO-3 shard to be gathered
            with original(*params):
                entry.update(type=type(weight).__name__, shape=list(weight.shape),  # what the engine computes with
                             requires_grad=bool(weight.requires_grad))
                calls.append(entry)
                yield

        def recording(*params: Any) -> Any:
            return record(sys._getframe(1).f_code.co_name, params)

        self._module.gathered = recording
        return self

    def __exit__(self, *exc: Any) -> None:
        self._module.gathered = self._original


def _samples(inputs: Any, pad_id: int) -> list[str]:
    """What one micro-batch is made of, as comparable strings (token ids without padding, or prompt texts)."""
    if isinstance(inputs, dict) and "input_ids" in inputs:
        keys = [k for k in ("input_ids", "chosen_input_ids", "rejected_input_ids", "prompt_input_ids")
                if k in inputs] or ["input_ids"]
        rows = []
        for k in keys:
            for row in inputs[k].tolist():
                rows.append(k + ":" + " ".join(str(t) for t in row if t != pad_id))
        return rows
    if isinstance(inputs, dict):
        rows = []
        for k, v in inputs.items():
            if torch.is_tensor(v) and v.dtype == torch.long and v.dim() == 2:
                rows += [k + ":" + " ".join(str(t) for t in row if t != pad_id) for row in v.tolist()]
        return rows
    return [str(x.get("prompt", x)) if isinstance(x, dict) else str(x) for x in inputs]


_saved_models: dict[tuple[int, bool], str] = {}


def save_models(root: str) -> None:
    """The tiny models of every case, saved before any config exists: loading them with `from_pretrained` gives
    the same weights with and without `deepspeed.zero.Init` (random init inside zero.Init draws differently)."""
    vocab = int(os.environ.get("SHARDED_JOB_VOCAB", VOCAB))
    for seed in (0, 1):
        for tied in (False, True):
            path = os.path.join(root, f"seed{seed}-{'tied' if tied else 'untied'}")
            H.model(seed=seed, vocab_size=vocab, tie_word_embeddings=tied).save_pretrained(path)
            _saved_models[(seed, tied)] = path


def build(name: str, head: str, out_dir: str, per_device: int) -> Any:
    """The trainer of one case. The config is made before the models: under a ZeRO-3 launch it is what switches
    `deepspeed.zero.Init` on for `from_pretrained`, so every model of every case is loaded partitioned."""
    import reference_impl as ri

    tied = head == "tied"
    kw = H.config_kwargs(out_dir, max_steps=1, per_device_train_batch_size=per_device,
                         train_sampling_strategy="sequential", **json.loads(os.environ.get("SHARDED_JOB_ARGS", "{}")))

    def model(seed: int = 0) -> Any:
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM.from_pretrained(_saved_models[(seed, tied)], dtype=torch.float32)

    if name == "sft":
        args = ri.SFTConfig(**kw)
        return ri.SFTTrainer(model(), args=args, train_dataset=H.prompt_completion_dataset(4),
                             processing_class=H.tokenizer("right"))
    if name == "dpo":
        args = ri.DPOConfig(**kw)
        return ri.DPOTrainer(model(), ref_model=model(seed=1), args=args, train_dataset=H.preference_dataset(4),
                             processing_class=H.tokenizer("right"))

    class FixedRolloutGRPO(ri.GRPOTrainer):
        """Deterministic completions (as in test_parity): both runs score the same rollouts."""

        def _generate_completions(self, prompt_ids: Any, generation_config: Any = None, model: Any = None) -> Any:
            return H.fixed_completions(prompt_ids), None

    args = ri.GRPOConfig(**{**kw, "num_generations": 2, "max_completion_length": 6, "beta": 0.0, "loss_type": "grpo"})
    return FixedRolloutGRPO(model(), reward_funcs=H.reward_len, args=args, train_dataset=H.prompt_only_dataset(2),
                            processing_class=H.tokenizer())


def _head_storage(trainer: Any) -> dict[str, Any]:
    """How the (prepared) model stores its head weight on this rank."""
    from reference_impl.trainers._model import causal_lm

    lm = causal_lm(trainer.accelerator.unwrap_model(trainer.model))
    weight = lm.get_output_embeddings().weight
    local = weight.to_local() if hasattr(weight, "to_local") else weight
    ds_local = getattr(weight, "ds_tensor", None)
    return {"type": type(weight).__name__, "local_shape": list(local.shape),
            "ds_shape": list(getattr(weight, "ds_shape", []) or []),
            "ds_local_numel": None if ds_local is None else ds_local.numel(),
            "ds_persist": getattr(weight, "ds_persist", None),
            "tied": weight is lm.get_input_embeddings().weight,
            "wrapper": type(trainer.model_wrapped).__name__, "model_class": type(lm).__name__}


class GradNorm:
    """The float64 norm of the (reduced) gradients right before the first optimizer step, over the unwrapped
    model's parameters: `.grad` (FSDP2 DTensors gathered with `full_tensor`), or under DeepSpeed the full gradient
    read back from the ZeRO-1/2/3 partitions (`deepspeed.utils.safe_get_full_grad`), just before the engine steps.

    The logged `grad_norm` is not precise enough for a 1e-5 comparison: torch's `clip_grad_norm_` sums squares in
    fp32, and over a 131,072-element head that rounds at ~2e-5 (relative), differently for a whole tensor and for
    two FSDP shards (DeepSpeed's logged norm agrees with this float64 one)."""

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.value: float | None = None

    def _record(self, grads: list[torch.Tensor | None]) -> None:
        if self.value is None:
            self.value = float(torch.stack([g.double().norm() for g in grads if g is not None]).norm())

    def __enter__(self) -> GradNorm:
        outer = self
        if self.trainer.is_deepspeed_enabled:
            from deepspeed.runtime.engine import DeepSpeedEngine
            from deepspeed.utils import safe_get_full_grad

            self._cls, self._original = DeepSpeedEngine, DeepSpeedEngine.step
            original = self._original

            def step(engine: Any, *args: Any, **kwargs: Any) -> Any:
                if engine.optimizer is not None:  # the trained model's engine, not a frozen reference's
                    outer._record([safe_get_full_grad(p) for p in engine.module.parameters() if p.requires_grad])
                return original(engine, *args, **kwargs)
        else:
            self._cls, self._original = torch.optim.AdamW, torch.optim.AdamW.step
            original = self._original

            def step(optimizer: Any, *args: Any, **kwargs: Any) -> Any:
                model = self.trainer.accelerator.unwrap_model(self.trainer.model)
                grads = [p.grad for p in model.parameters() if p.requires_grad]
                outer._record([g.full_tensor() if hasattr(g, "full_tensor") else g for g in grads if g is not None])
                return original(optimizer, *args, **kwargs)

        self._cls.step = step
        return self

    def __exit__(self, *exc: Any) -> None:
        self._cls.step = self._original


def run_case(name: str, head: str, per_device: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        trainer = build(name, head, d, per_device)
        pad_id = trainer.processing_class.pad_token_id
        seen: list[str] = []
        original_step = trainer.training_step

        def training_step(model: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
            seen.extend(_samples(inputs, pad_id))
            return original_step(model, inputs, *args, **kwargs)

        trainer.training_step = training_step
        with EngineRecorder() as rec, GradNorm(trainer) as norm:
            log = H.first_log(trainer)
        acc = trainer.accelerator
        from accelerate.utils import gather_object

        per_rank = gather_object([{"samples": seen, "calls": rec.calls, "head": _head_storage(trainer)}])
        result = {"loss": log["loss"], "grad_norm": log["grad_norm"], "num_processes": acc.num_processes,
                  "distributed_type": str(acc.distributed_type), "ranks": per_rank,
                  "grad_norm_fp64": norm.value}
        acc.wait_for_everyone()
        return result


def zero3_gather_case() -> dict[str, Any]:
    """The engine handed a ZeRO-3 partition outside any module forward (where DeepSpeed's own parameter getter does
    not gather): `zero3.gathered` must all-gather it in the engine's forward and again in its backward. Frozen head
    (a partitioned parameter cannot take a `[V, H]` gradient outside ZeRO-3's hooks), both backward modes;
    compared with float64 on the same weight gathered by `deepspeed.zero.GatheredParameters`."""
    import deepspeed

    from reference_impl.chunking import chunked_logprobs
    from reference_impl.zero3 import is_partitioned

    with tempfile.TemporaryDirectory() as d:
        model = build("sft", "untied", d, 2).model  # loaded under zero.Init; not prepared: no hooks
    weight = model.get_output_embeddings().weight.requires_grad_(False)
    out: dict[str, Any] = {"partitioned_before": is_partitioned(weight), "modes": {}}
    with deepspeed.zero.GatheredParameters([weight]):
        full = weight.detach().clone().double()
    gen = torch.Generator().manual_seed(0)
    hidden = torch.randn(12, full.shape[1], generator=gen)
    targets = torch.randint(0, full.shape[0], (12,), generator=gen)
    targets[3] = -100
    for mode in ("auto", "recompute"):
        h = hidden.clone().requires_grad_()
        with EngineRecorder() as rec:
            logp = chunked_logprobs(h, weight, targets, backward=mode)["logp"]
            logp.sum().backward()
        h64 = hidden.double().requires_grad_()
        lp = torch.log_softmax(h64 @ full.t(), -1)
        valid = targets != -100
        ref = torch.where(valid, lp.gather(1, targets.clamp(min=0)[:, None]).squeeze(1), torch.zeros(()))
        ref.sum().backward()
        out["modes"][mode] = {"calls": rec.calls, "logp_err": float((logp.double() - ref).abs().max()),
                              "dh_err": float((h.grad.double() - h64.grad).abs().max()),
                              "partitioned_after": is_partitioned(weight)}
    return out


def run_cases(per_device: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as root:
        save_models(root)
        results = {f"{name}/{head}": run_case(name, head, per_device) for name, head in CASES}
        if os.environ.get("ACCELERATE_USE_DEEPSPEED") == "true":
            results["zero3_gathered"] = zero3_gather_case() if _zero3_launch() else None
        return results


def _zero3_launch() -> bool:
    return os.environ.get("ACCELERATE_DEEPSPEED_ZERO_STAGE") == "3"


def main(out_path: str, per_device: str = "2") -> None:
    from accelerate import PartialState

    results = run_cases(per_device=int(per_device))
    if PartialState().is_main_process:
        with open(out_path, "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main(*sys.argv[1:])
