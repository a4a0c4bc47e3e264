"""Peak memory of one training step: reference_impl vs TRL 1.16, SFT and GRPO, large vocabulary, small hidden size.

    .venv/bin/python benchmarks/trainer_memory.py            # CPU: extra peak RSS of the step
    .venv/bin/python benchmarks/trainer_memory.py --device cuda   # GPU: torch.cuda.max_memory_allocated

Each (trainer, implementation) runs in a fresh subprocess: a random-weight llama built locally with
`compat.tiny.tiny_config(vocab_size=128000)` (hidden 64, 2 layers; the tokenizer's vocabulary is 512, the model's
is 128k, so every step projects onto 128k logits), the trainer is built, one step is taken to warm up (allocator,
optimizer state), and the *second* step is measured: on CPU the peak resident set size during the step minus the
RSS just before it (sampled every millisecond from /proc/self/statm), on CUDA `max_memory_allocated` during the step
minus the allocation before it. GRPO gets fixed completions (no sampling) so both sides see the same batch.
The table prints both implementations side by side with their ratio; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

VOCAB = 128_000
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRSS:
    """Sample RSS in a thread; `peak - start` is the extra memory of the block."""

    def __enter__(self) -> PeakRSS:
        self.start = self.peak = _rss_bytes()
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop:
            self.peak = max(self.peak, _rss_bytes())
            time.sleep(0.001)

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._thread.join()
        self.peak = max(self.peak, _rss_bytes())


def _child(impl: str, trainer_name: str, device: str, seq_len: int, batch: int) -> dict:
    """Build and step one trainer; return the measured extra peak of the second step (bytes)."""
    os.environ.update(HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", TRL_EXPERIMENTAL_SILENCE="1", CI="1")
    import tempfile

    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, TrainerCallback

    from compat.tiny import tiny_config, tiny_tokenizer

    torch.manual_seed(0)
    config = tiny_config("llama", vocab_size=VOCAB, hidden_size=64, intermediate_size=128, head_dim=16)
    model = AutoModelForCausalLM.from_config(config)
    words = "the movie was great good bad fun plot story you we not very really".split()

    def text(i: int, n: int) -> str:
        return " ".join(words[(i * 7 + k) % len(words)] for k in range(n))

    if impl == "trl":
        import trl as lib
    else:
        import reference_impl as lib

    class Measure(TrainerCallback):
        """Measure the second optimizer step (the first warms up allocator and optimizer state)."""

        def __init__(self) -> None:
            self.result: dict = {}
            self._ctx: PeakRSS | None = None

        def on_step_begin(self, args, state, control, **kw):  # noqa: ANN001
            if state.global_step == 1:
                if device == "cuda":
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                    self._base = torch.cuda.memory_allocated()
                else:
                    self._ctx = PeakRSS().__enter__()

        def on_step_end(self, args, state, control, **kw):  # noqa: ANN001
            if state.global_step == 2:
                if device == "cuda":
                    torch.cuda.synchronize()
                    self.result["peak_bytes"] = torch.cuda.max_memory_allocated() - self._base
                else:
                    self._ctx.__exit__(None, None, None)
                    self.result["peak_bytes"] = self._ctx.peak - self._ctx.start

    measure = Measure()
    with tempfile.TemporaryDirectory() as d:
        common = dict(output_dir=d, max_steps=2, logging_steps=1, report_to="none", save_strategy="no",
                      use_cpu=device == "cpu", bf16=device == "cuda", gradient_checkpointing=False,
                      per_device_train_batch_size=batch, disable_tqdm=True, learning_rate=1e-5)
        if trainer_name == "sft":
            ds = Dataset.from_dict({"text": [text(i, seq_len) for i in range(2 * batch)]})
            trainer = lib.SFTTrainer(model, args=lib.SFTConfig(**common, max_length=seq_len), train_dataset=ds,
                                     processing_class=tiny_tokenizer(padding_side="right"), callbacks=[measure])
        else:
            completion_len = seq_len
            prompts = Dataset.from_dict({"prompt": [text(i, 8) for i in range(batch)]})

            def fixed(prompt_ids: list) -> list:
                return [[8 + (sum(p) + 31 * j + k) % 480 for k in range(completion_len)] for j, p in enumerate(prompt_ids)]

            def reward(completions: list, **kw: object) -> list:
                return [float(len(c)) for c in completions]

            kind = type("Fixed", (lib.GRPOTrainer,), {})
            if impl == "trl":
                kind._generate_single_turn = lambda self, ids, *a, **k: (fixed(ids), None)
            else:
                kind._generate_completions = lambda self, ids, *a, **k: (fixed(ids), None)
            cfg = lib.GRPOConfig(**common, num_generations=4, max_completion_length=completion_len,
                                 generation_batch_size=batch * 2, loss_type="dapo")
            trainer = kind(model, reward_funcs=reward, args=cfg, train_dataset=prompts,
                           processing_class=tiny_tokenizer(), callbacks=[measure])
        if device == "cuda":
            trainer.model.to("cuda")
        trainer.train()
    return measure.result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--seq-len", type=int, default=256, help="tokens per sequence (SFT) / completion (GRPO)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--child", nargs=2, metavar=("IMPL", "TRAINER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print("RESULT " + json.dumps(_child(args.child[0], args.child[1], args.device, args.seq_len, args.batch)))
        return
    rows = []
    for trainer_name in ("sft", "grpo"):
        peaks = {}
        for impl in ("reference_impl", "trl"):
            cmd = [sys.executable, os.path.abspath(__file__), "--device", args.device, "--seq-len", str(args.seq_len),
                   "--batch", str(args.batch), "--child", impl, trainer_name]
            env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
            out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
            line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
            if line is None:
                print(f"{trainer_name}/{impl} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
                peaks[impl] = float("nan")
            else:
                peaks[impl] = json.loads(line[7:])["peak_bytes"] / 2**20
        rows.append((trainer_name, peaks["reference_impl"], peaks["trl"]))
    tokens = args.batch * args.seq_len
    print(f"\nOne training step, vocab {VOCAB}, hidden 64, {tokens} tokens/step, device {args.device} "
          f"({'extra peak RSS' if args.device == 'cpu' else 'max_memory_allocated above the pre-step level'})")
    print(f"{'trainer':8} {'reference_impl MiB':>20} {'TRL 1.16 MiB':>14} {'TRL / ours':>11}")
    for name, ours, theirs in rows:
        print(f"{name:8} {ours:20.1f} {theirs:14.1f} {theirs / ours if ours else float('nan'):11.2f}")


if __name__ == "__main__":
    main()
