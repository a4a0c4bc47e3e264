"""What a smoke run of a typical migrated GRPO script costs, next to what the same 2 training steps cost anyway.

    .venv/bin/python benchmarks/smoke_overhead.py [-n 1]

Timed in the same run, interleaved round by round so machine load hits every column alike:

* ``import``: a fresh interpreter doing ``from trl import GRPOConfig, GRPOTrainer`` (every run pays this);
* ``plain``: a hand-written script that builds the tiny models/tokenizer/dataset itself (compat.tiny) and trains
  GRPO for 2 steps on CPU with a sentiment-pipeline reward: no smoke mode, the floor for "2 steps of this script";
* ``smoke``: ``compat.smoke.run`` on tests/smoke/fixtures/grpo_sentiment.py, the migrated IMDB script unchanged
  (hub model, hub dataset, sentiment pipeline, GPU-sized GRPOConfig): stand-ins built, config forced, 2 steps.

Prints medians of wall time and of the children's CPU time (user+sys, from getrusage: far less sensitive to other
processes on a shared machine than wall time), the ratios smoke/plain and smoke/import, and whether the smoke run
stayed under the 30 s target. A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compat.smoke import run  # noqa: E402

FIXTURE = ROOT / "tests" / "smoke" / "fixtures" / "grpo_sentiment.py"
PLAIN = textwrap.dedent('''
    import os, sys
    sys.path.insert(0, {root!r})
    from datasets import Dataset
    from transformers import pipeline
    from trl import GRPOConfig, GRPOTrainer
    from compat.tiny import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer(padding_side="left")
    tok.model_input_names = ["input_ids", "attention_mask"]
    model = tiny_model("causal-lm", "gpt2", vocab_size=576)
    clf = tiny_model("sequence-classification", "distilbert", vocab_size=576, num_labels=2)
    pipe = pipeline("text-classification", model=clf, tokenizer=tok, device="cpu")
    words = "the movie was great and the acting was wonderful but the plot felt long".split()
    data = Dataset.from_dict({{"prompt": [" ".join(words[i % 7:i % 7 + 6]) for i in range(256)]}})

    def reward_fn(prompts, completions, **kwargs):
        return [out[0]["score"] for out in pipe([p + c for p, c in zip(prompts, completions)], top_k=None)]

    args = GRPOConfig(output_dir={out!r}, max_steps=2, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=8, use_cpu=True, bf16=False, report_to="none", save_strategy="no",
                      gradient_checkpointing=False, logging_steps=1, disable_tqdm=True)
    GRPOTrainer(model=model, reward_funcs=reward_fn, args=args, train_dataset=data, processing_class=tok).train()
''')


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    start, cpu = time.perf_counter(), child_cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return time.perf_counter() - start, child_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1, help="rounds (each runs all three once)")
    opts = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "TRL_EXPERIMENTAL_SILENCE": "1"}
    wall: dict[str, list[float]] = {"import": [], "plain": [], "smoke": []}
    cpu: dict[str, list[float]] = {k: [] for k in wall}

    def record(name: str, figures: tuple[float, float]) -> None:
        wall[name].append(figures[0])
        cpu[name].append(figures[1])

    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "plain_grpo.py"
        plain.write_text(PLAIN.format(root=str(ROOT), out=str(Path(tmp) / "out")), encoding="utf-8")
        for round_ in range(opts.n):
            record("import", timed([sys.executable, "-c", "from trl import GRPOConfig, GRPOTrainer"], env))
            record("plain", timed([sys.executable, str(plain)], env))
            before = child_cpu()
            result = run(FIXTURE, timeout=600)
            if not result.passed:
                raise SystemExit(result.format(verbose=True) + "\n" + result.output_tail)
            record("smoke", (result.duration_s, child_cpu() - before))
            print(f"round {round_ + 1}/{opts.n}: " + ", ".join(
                f"{k} {wall[k][-1]:.1f} s wall / {cpu[k][-1]:.1f} s cpu" for k in wall), flush=True)
    w = {k: statistics.median(v) for k, v in wall.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"\n{'case':<8} {'wall s':>8} {'cpu s':>8}  wall/plain  cpu/plain")
    for name in wall:
        print(f"{name:<8} {w[name]:>8.1f} {c[name]:>8.1f}  {w[name] / w['plain']:>9.2f}x  {c[name] / c['plain']:>8.2f}x")
    print(f"\nsmoke/plain = {c['smoke'] / c['plain']:.2f}x cpu ({w['smoke'] / w['plain']:.2f}x wall), "
          f"smoke/import = {c['smoke'] / c['import']:.2f}x cpu; typical migrated GRPO script smoke-run: "
          f"{w['smoke']:.1f} s wall, {c['smoke']:.1f} s cpu: {'under' if w['smoke'] < 30 else 'OVER'} the 30 s target "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus)")


if __name__ == "__main__":
    main()
