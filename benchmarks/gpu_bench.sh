#!/usr/bin/env bash
# One prepared GPU run of the chunked-loss benchmark (reference_impl/bench.py) for a lent H200, at most 9 minutes
# (timeouts: numerics 90 s, precision 60 s, bench $BUDGET=330 s + 30 s, plus ~30 s of wheel installs):
# device-side numerics (benchmarks/gpu_checks.py: Triton fold, torch fold, naive, 3-GEMM scalar path vs float64),
# the dW precision table (bench --precision), then the timed bench with every variant.
#
# Run from the repository root on the device machine (its python3 has a CUDA torch and triton; nothing can be
# downloaded there). Wheels are taken from $WHEELS_DIR (default: .whl/, git-ignored), so carry that folder:
#   here:   mkdir -p .whl && cp /tmp/wheels/trl-1.16.0-py3-none-any.whl /tmp/wheels/trl-1.13.0-py3-none-any.whl .whl/
#           (pip download --no-deps datasets dill multiprocess -d .whl   -- trl imports datasets; the image lacks it)
#           (pip download --no-deps liger-kernel==0.8.5 cut-cross-entropy==25.1.1 -d .whl   -- the fused anchors)
#   device: run(command="bash benchmarks/gpu_bench.sh", carry=[".whl"], timeout_s=600)
# Without the wheels those variants are reported as errors and the rest still runs.
# DRY=1: the same steps on this CPU at tiny shapes (Triton in its interpreter), to check the script itself.
# Results (results.json, table.md, bench.png, precision.md, the log) are written to $OUT.
set -uo pipefail
OUT="${OUT:-/tmp/gpu_bench_out}"
WHEELS_DIR="${WHEELS_DIR:-.whl}"
BUDGET="${BUDGET:-330}"
PY="${PYTHON:-python3}"
DRY="${DRY:-0}"
mkdir -p "$OUT"
SITE="$(mktemp -d)"
if [ "$DRY" = 1 ]; then
  DEVICE=cpu; CHECK_ARGS="--small"; export TRITON_INTERPRET=1
  PRECISION_ARGS="--shapes s1 --scale 64 --dtypes fp32"
  BENCH_DEFAULT="--shapes s1 --scale 64 --dtypes fp32 --heads trainable --repeats 1 --variants naive,ours,ours_scalar"
  BUDGET="${DRY_BUDGET:-60}"
else
  DEVICE=cuda; CHECK_ARGS=""
  PRECISION_ARGS="--shapes s1,s3 --dtypes bf16,fp32"
  BENCH_DEFAULT="--shapes s1,s2,s3 --dtypes bf16,fp32 --heads trainable,frozen --repeats 5"
fi
{
  echo "== machine (device $DEVICE)"
  if [ "$DEVICE" = cuda ]; then nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1; fi
  "$PY" -c "import torch, sys; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
  "$PY" -c "import triton; print('triton', triton.__version__)" 2>&1 | tail -1
} 2>&1 | tee "$OUT/log.txt"

# `import trl` needs datasets (+ dill, multiprocess), which the image lacks: install them from $WHEELS_DIR if there
for dep in datasets dill multiprocess; do
  if ls "$WHEELS_DIR"/$dep-*.whl >/dev/null 2>&1; then
    "$PY" -m pip install --quiet --no-index --no-deps --target "$SITE/deps" "$(ls "$WHEELS_DIR"/$dep-*.whl | head -1)" \
      2>&1 | tail -2 | tee -a "$OUT/log.txt"
  fi
done
export PYTHONPATH="$SITE/deps${PYTHONPATH:+:$PYTHONPATH}"
# Liger and Cut Cross-Entropy (fused-linear anchors, Triton, CUDA only): no dependencies (the image has torch/triton)
for dep in liger_kernel cut_cross_entropy; do
  if ls "$WHEELS_DIR"/$dep-*.whl >/dev/null 2>&1; then
    "$PY" -m pip install --quiet --no-index --no-deps --target "$SITE/deps" "$(ls "$WHEELS_DIR"/$dep-*.whl | head -1)" \
      2>&1 | tail -2 | tee -a "$OUT/log.txt"
  fi
done
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

# numerics on the device first (the Triton fold and the out_dtype GEMMs only run there): every path vs float64
echo "== numerics (benchmarks/gpu_checks.py)" | tee -a "$OUT/log.txt"
timeout 90 "$PY" benchmarks/gpu_checks.py --device "$DEVICE" $CHECK_ARGS 2>&1 | tee -a "$OUT/log.txt"

# dW / dh / loss precision against float64 at s1 (the 1.31e-3 dW figure of reference_impl/README.md) and s3
echo "== precision (bench --precision)" | tee -a "$OUT/log.txt"
timeout 60 "$PY" -m reference_impl.bench --precision --device "$DEVICE" $PRECISION_ARGS --out "$OUT" 2>&1 \
  | tee -a "$OUT/log.txt"

# the three shapes of the issue, bf16 (head trainable and frozen) with every variant; fp32 rows if time is left
echo "== bench" | tee -a "$OUT/log.txt"
timeout $((BUDGET + 30)) "$PY" -m reference_impl.bench --device "$DEVICE" ${BENCH_ARGS:-$BENCH_DEFAULT} \
  --budget "$BUDGET" --out "$OUT" 2>&1 | tee -a "$OUT/log.txt"
echo "exit: ${PIPESTATUS[0]}" | tee -a "$OUT/log.txt"
