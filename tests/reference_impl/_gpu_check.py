"""GPU check run by hand on a device machine (not collected by pytest): every reference trainer trains two steps
on CUDA in bf16, and SFT / DPO / GRPO first-step losses are compared with TRL 1.16 on the same GPU.

    python3 tests/reference_impl/_gpu_check.py
"""

from __future__ import annotations

import sys
import tempfile
import time

sys.path.insert(0, ".")

import torch  # noqa: E402

from tests.reference_impl import _trainer_helpers as H  # noqa: E402
from tests.reference_impl.test_trainers import TRAINERS, _build  # noqa: E402

torch.set_num_threads(8)


def main() -> None:
    assert torch.cuda.is_available()
    print(torch.cuda.get_device_name(0), torch.__version__)
    for name in TRAINERS:
        for lora in (False, True):
            with tempfile.TemporaryDirectory() as d:
                t0 = time.perf_counter()
                trainer = _build(name, d, lora, use_cpu=False, bf16=True)
                trainer.train()
                logs = [h for h in trainer.state.log_history if "loss" in h]
                device = next(trainer.model.parameters()).device
                print(f"{name:13} lora={lora!s:5} device={device} losses={[round(h['loss'], 5) for h in logs]} "
                      f"grad_norms={[round(h['grad_norm'], 4) for h in logs]} {time.perf_counter() - t0:.1f}s")
    import trl

    from reference_impl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

    with tempfile.TemporaryDirectory() as d:
        kw = H.config_kwargs(d, use_cpu=False, bf16=True)
        ours = H.first_log(SFTTrainer(H.model(), args=SFTConfig(**kw), train_dataset=H.lm_dataset(),
                                      processing_class=H.tokenizer("right")))
        theirs = H.first_log(trl.SFTTrainer(H.model(), args=trl.SFTConfig(**kw), train_dataset=H.lm_dataset(),
                                            processing_class=H.tokenizer("right")))
        print("SFT  bf16 cuda  ours", ours["loss"], ours["grad_norm"], " trl", theirs["loss"], theirs["grad_norm"])
        ds = H.preference_dataset()
        ours = H.first_log(DPOTrainer(H.model(), ref_model=H.model(seed=1), args=DPOConfig(**kw), train_dataset=ds,
                                      processing_class=H.tokenizer("right")))
        theirs = H.first_log(trl.DPOTrainer(H.model(), ref_model=H.model(seed=1), args=trl.DPOConfig(**kw),
                                            train_dataset=ds, processing_class=H.tokenizer("right")))
        print("DPO  bf16 cuda  ours", ours["loss"], ours["grad_norm"], " trl", theirs["loss"], theirs["grad_norm"])


if __name__ == "__main__":
    main()
