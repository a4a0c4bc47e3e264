"""Launched by tests/reference_impl/test_distributed.py under `accelerate launch` (2 CPU processes, gloo).

Trains SFT, DPO and GRPO (real `model.generate`) two steps each, then checks that every parameter is identical on
all ranks: each rank saw different data, so equality means the gradients were all-reduced through the engine-head
forward. `import trl` is made impossible first, so this is also the "trains without TRL installed" check.
Rank 0 writes a JSON summary to argv[1].
"""

from __future__ import annotations

import json
import sys
import tempfile

sys.modules["trl"] = None  # type: ignore[assignment]  # any `import trl` now raises ImportError

import torch

sys.path.insert(0, ".")
from tests.reference_impl import _trainer_helpers as H  # noqa: E402


def checksum(model: torch.nn.Module) -> torch.Tensor:
    """One number per parameter (FSDP2 DTensors are gathered first)."""
    full = [p.full_tensor() if hasattr(p, "full_tensor") else p for p in model.parameters()]
    return torch.stack([p.detach().double().sum().cpu() for p in full])


def main(out_path: str, config_file: str, device: str = "cpu") -> None:
    import reference_impl as ri

    results = {}
    with tempfile.TemporaryDirectory() as d:
        gpu = {"use_cpu": False, "bf16": True} if device == "cuda" else {}
        kw = H.config_kwargs(d, max_steps=2, per_device_train_batch_size=2, **gpu)
        builders = {
            "sft": lambda: ri.SFTTrainer(H.model(), args=ri.SFTConfig(**kw),
                                         train_dataset=H.prompt_completion_dataset(8),
                                         processing_class=H.tokenizer("right")),
            # an explicit reference: `create_reference_model` refuses ZeRO-3 (a copy of a partitioned model)
            "dpo": lambda: ri.DPOTrainer(H.model(), ref_model=H.model(seed=1), args=ri.DPOConfig(**kw),
                                         train_dataset=H.preference_dataset(8), processing_class=H.tokenizer("right")),
            "grpo": lambda: ri.GRPOTrainer(
                H.model(), reward_funcs=H.reward_len,
                args=ri.GRPOConfig(**{**kw, "num_generations": 2, "max_completion_length": 5,
                                      "beta": 0.0 if "zero3" in config_file else 0.05}),
                train_dataset=H.prompt_only_dataset(8), processing_class=H.tokenizer()),
        }
        for name, build in builders.items():
            trainer = build()
            trainer.train()
            acc = trainer.accelerator
            sums = acc.gather(checksum(acc.unwrap_model(trainer.model)).to(acc.device).unsqueeze(0)).cpu()
            logs = [h for h in trainer.state.log_history if "loss" in h]
            results[name] = {
                "num_processes": acc.num_processes,
                "distributed_type": str(acc.distributed_type),
                "losses": [h["loss"] for h in logs],
                "ranks_identical": all(bool(torch.allclose(sums[0], s, rtol=0, atol=1e-9)) for s in sums),
                "moved": bool((sums[0] - checksum(H.model()).to(sums.device)).abs().max() > 0),
                "trl_importable": "trl" in sys.modules and sys.modules["trl"] is not None,
            }
            acc.wait_for_everyone()
        if acc.is_main_process:
            with open(out_path, "w") as f:
                json.dump({"config": config_file, "results": results}, f)


if __name__ == "__main__":
    main(sys.argv[1], *sys.argv[2:])
