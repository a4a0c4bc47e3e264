#!/usr/bin/env bash
# One prepared GPU run of the chunked-loss benchmark (reference_impl/bench.py) for a lent H200, at most ~8 minutes.
#
# Run from the repository root on the device machine (its python3 has a CUDA torch; nothing can be downloaded
# there). TRL wheels are taken from $WHEELS_DIR (default: .whl/, git-ignored), so carry that folder:
#   here:   mkdir -p .whl && cp /tmp/wheels/trl-1.16.0-py3-none-any.whl /tmp/wheels/trl-1.13.0-py3-none-any.whl .whl/
#           (pip download --no-deps datasets dill multiprocess -d .whl   -- trl imports datasets; the image lacks it)
#   device: run(command="bash benchmarks/gpu_bench.sh", carry=[".whl"], timeout_s=540)
# Without the wheels the TRL variants are reported as errors and the rest still runs.
# Results (results.json, table.md, bench.png, the log) are written to $OUT.
set -uo pipefail
OUT="${OUT:-/tmp/gpu_bench_out}"
WHEELS_DIR="${WHEELS_DIR:-.whl}"
BUDGET="${BUDGET:-420}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
SITE="$(mktemp -d)"
{
  echo "== machine"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
  "$PY" -c "import torch, sys; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
} 2>&1 | tee "$OUT/log.txt"

# `import trl` needs datasets (+ dill, multiprocess), which the image lacks: install them from $WHEELS_DIR if there
for dep in datasets dill multiprocess; do
  if ls "$WHEELS_DIR"/$dep-*.whl >/dev/null 2>&1; then
    "$PY" -m pip install --quiet --no-index --no-deps --target "$SITE/deps" "$(ls "$WHEELS_DIR"/$dep-*.whl | head -1)" \
      2>&1 | tail -2 | tee -a "$OUT/log.txt"
  fi
done
export PYTHONPATH="$SITE/deps${PYTHONPATH:+:$PYTHONPATH}"
# TRL 1.16 (trl.kernels) installed into a private folder, no dependencies (the image has transformers and triton)
if ls "$WHEELS_DIR"/trl-1.16.*.whl >/dev/null 2>&1; then
  "$PY" -m pip install --quiet --no-index --no-deps --target "$SITE/trl116" "$WHEELS_DIR"/trl-1.16.*.whl \
    2>&1 | tail -2 | tee -a "$OUT/log.txt"
  export PYTHONPATH="$SITE/trl116${PYTHONPATH:+:$PYTHONPATH}"
fi
# TRL 1.13 unpacked (the bench's trl113 variant puts it first on sys.path in its own subprocess)
if ls "$WHEELS_DIR"/trl-1.13.*.whl >/dev/null 2>&1; then
  "$PY" -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" \
    "$(ls "$WHEELS_DIR"/trl-1.13.*.whl | head -1)" "$SITE/trl113"
  export REFERENCE_IMPL_TRL113_PATH="$SITE/trl113"
fi
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}"

# correctness on CUDA first (the out_dtype GEMM paths only run there): engine vs a naive fp32 computation
"$PY" - <<'PYEOF' 2>&1 | tee -a "$OUT/log.txt"
import torch
from reference_impl.chunking import chunked_logprobs, chunked_divergence
torch.manual_seed(0)
dev = "cuda"
n, h, v = 1000, 512, 50257
for dtype in (torch.bfloat16, torch.float32):
    for head in ("trainable", "frozen"):
        x = torch.randn(n, h, device=dev).to(dtype)
        w = (torch.randn(v, h, device=dev) * 0.02).to(dtype)
        t = torch.randint(0, v, (n,), device=dev); t[::7] = -100
        res = {}
        for name in ("ours", "exact", "naive"):
            xx = x.detach().clone().double() if name == "exact" else x.detach().clone()
            ww = w.detach().clone().double() if name == "exact" else w.detach().clone()
            xx.requires_grad_(); ww.requires_grad_(head == "trainable")
            if name == "ours":
                out = chunked_logprobs(xx, ww, t, chunk=32, outputs=("logp", "entropy"))
                loss = -out["logp"].sum() / (t != -100).sum() + 0.1 * out["entropy"].mean()
            else:
                lp = torch.log_softmax((xx @ ww.t()).to(torch.float64 if name == "exact" else torch.float32), -1)
                m = t != -100
                logp = lp.gather(1, t.clamp(min=0)[:, None]).squeeze(1) * m
                ent = -(lp.exp() * lp).sum(-1) * m
                loss = -logp.sum() / m.sum() + 0.1 * ent.mean()
            loss.backward()
            res[name] = (loss.double(), xx.grad.double(), None if ww.grad is None else ww.grad.double())
        def rel(a, b): return ((a - b).norm() / b.norm()).item()
        ex = res["exact"]
        line = [f"{dtype} {head}:"]
        for name in ("ours", "naive"):
            r = res[name]
            line.append(f"{name} loss {abs(r[0]-ex[0]).item():.2e} dh {rel(r[1], ex[1]):.2e}"
                        + (f" dW {rel(r[2], ex[2]):.2e}" if r[2] is not None else ""))
        print("  ".join(line))
hs = torch.randn(300, 256, device=dev, requires_grad=True); ws = torch.randn(5000, 256, device=dev) * 0.05
ht = torch.randn(300, 384, device=dev); wt = torch.randn(5000, 384, device=dev) * 0.05
for beta in (0.0, 0.5, 1.0):
    d = chunked_divergence(hs.bfloat16(), ws.bfloat16(), ht.bfloat16(), wt.bfloat16(), beta=beta, chunk=16)["divergence"]
    ls, lt = torch.log_softmax(hs.bfloat16().double() @ ws.bfloat16().double().t(), -1), torch.log_softmax(ht.bfloat16().double() @ wt.bfloat16().double().t(), -1)
    m = torch.logaddexp(ls + torch.log(torch.tensor(1 - beta + 1e-300, device=dev, dtype=torch.float64)), lt + torch.log(torch.tensor(beta + 1e-300, device=dev, dtype=torch.float64)))
    ref = (beta * (lt.exp() * (lt - m)).sum(-1) + (1 - beta) * (ls.exp() * (ls - m)).sum(-1)) if 0 < beta < 1 else ((lt.exp() * (lt - ls)).sum(-1) if beta == 0 else (ls.exp() * (ls - lt)).sum(-1))
    print(f"divergence beta={beta}: max abs err {(d.double() - ref).abs().max().item():.2e} (mean {ref.mean().item():.3f})")
print("cuda check done")
PYEOF

# the three shapes of the issue, bf16 (head trainable and frozen) with every variant; fp32 rows if time is left
timeout 500 "$PY" -m reference_impl.bench --device cuda --shapes s1,s2,s3 --dtypes bf16,fp32 \
  --heads trainable,frozen --repeats 5 --budget "$BUDGET" --out "$OUT" ${BENCH_ARGS:-} 2>&1 | tee -a "$OUT/log.txt"
echo "exit: ${PIPESTATUS[0]}" | tee -a "$OUT/log.txt"
