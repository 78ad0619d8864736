#!/usr/bin/env bash
# The prepared GPU check (ISSUE scale): CUDA-vs-CPU equality tests and the standard-size end-to-end benchmark on
# one GPU, within a 10-minute device call. Two steps:
#
#   bash benchmarks/gpu_check.sh prepare   # here, with PyPI: wheels the GPU image lacks, into .gpu/ (git-ignored)
#   bash benchmarks/gpu_check.sh run       # there (device `run`, carry [".gpu", "checkpoints/encoders"]):
#                                          # install the wheels, test, benchmark; logs and tables into $OUT
#
# `prepare` also copies the BEAT2 sample motion (../shared, not part of the repository) into .gpu/ for
# the per-metric benchmark, where it exists.
#
# The GPU image has its own python3 with torch, Lightning, torchmetrics, scipy, sklearn, pandas, matplotlib,
# sentence-transformers; nothing can be downloaded there, so the rest travels as wheels for its Python 3.12.
set -euo pipefail
cd "$(dirname "$0")/.."
MISSING=(hydra-core omegaconf antlr4-python3-runtime hydra-joblib-launcher hydra-submitit-launcher submitit
         smplx librosa audioread soxr pooch soundfile cffi pycparser decorator praatio pydantic pydantic-core
         annotated-types typing-inspection platformdirs prdc sniffio distro
         wandb cwevals opentelemetry-api opentelemetry-sdk opentelemetry-semantic-conventions opentelemetry-proto
         opentelemetry-exporter-otlp-proto-http opentelemetry-exporter-otlp-proto-common
         opentelemetry-exporter-otlp-common opentelemetry-exporter-http-transport googleapis-common-protos)
# (the dependency closure of the project and its dev extra, less what the image has: KINDS.md's list of
# 2026-11-17; wandb 0.31 brings cwevals and OpenTelemetry, whose absence failed the second GPU run)
# Left behind to stay under the 64 MiB a device call carries: imageio-ffmpeg (clips are off) and the packaged
# MiniLM text model (83 MB), so SC is not checked on the GPU by this script (tests/test_cuda.py says so).

# Each wheel at the version this checkout's environment tested (`python3` here: the project's venv), so the GPU run
# uses the same libraries as the CPU tests; unpinned where the package is not installed here.
pinned() {
    python3 - "${MISSING[@]}" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
for name in sys.argv[1:]:
    try:
        print(f"{name}=={version(name)}")
    except PackageNotFoundError:
        print(name)
PY
}

case "${1:-}" in
prepare)
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    # omegaconf's parser runtime is published as a source archive only: build its (pure-Python) wheel here.
    python3 -m pip wheel --quiet --no-deps --wheel-dir .gpu/wheels antlr4-python3-runtime==4.9.3
    python3 -m pip download --quiet --dest .gpu/wheels --no-deps --only-binary=:all: \
        --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux_2_28_x86_64 --platform any $(pinned | grep -v '^antlr4-python3-runtime')
    sample=../shared/data/beat2-sample/2_scott_0_1_1.npz
    [ -f "$sample" ] && cp "$sample" .gpu/
    du -sh .gpu
    ;;
run)
    # Each step has its own time limit and writes its log under $OUT as it goes, so that a step that
    # overruns still leaves the others' figures. The wheels are pinned and complete, so they go in
    # without dependency resolution (wandb names a dependency that is not on PyPI for this Python).
    OUT="${OUT:-/tmp/gpu-check}"
    mkdir -p "$OUT"
    python3 -m pip install --quiet --no-index --no-deps .gpu/wheels/*.whl
    export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1 WANDB_MODE=offline
    {
        date -u
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
        lscpu | grep -E '^(Model name|CPU\(s\))'
        python3 - <<'PY'
import importlib.util, sys, torch
triton = importlib.util.find_spec("triton") and __import__("triton").__version__
print("python", sys.version.split()[0], "torch", torch.__version__, "CUDA", torch.version.cuda,
      "triton", triton, "GPUs", torch.cuda.device_count(), "(two-GPU DDP cannot run on one)")
PY
    } 2>&1 | tee "$OUT/gpu.txt" || true
    # The standard-size split is generated (one CPU core) while the CUDA tests run in 4 workers.
    (timeout 200 python3 launch.py task=make_data dataset.size=standard logger=none \
        hydra.run.dir=/tmp/make-data > "$OUT/make-data.txt" 2>&1) &
    make_data=$!
    timeout 170 python3 -m pytest -q -p no:cacheprovider -n 4 tests/test_cuda.py \
        tests/metrics/test_all_metrics.py::test_all_metrics_agree_between_cpu_and_cuda \
        tests/metrics/test_surface.py::test_triton_kernel_matches_the_kdtree_and_brute_force \
        2>&1 | tee "$OUT/cuda-tests.txt" || true
    sample=()
    [ -f .gpu/2_scott_0_1_1.npz ] && sample=(--sample .gpu/2_scott_0_1_1.npz)
    timeout 40 python3 benchmarks/bench_metrics.py --lengths 10 --device cuda --only chamfer \
        --nearest cdist triton "${sample[@]}" 2>&1 | tee "$OUT/bench-metrics.txt" || true
    wait "$make_data" || true
    timeout 160 python3 benchmarks/bench_e2e.py --trainer gpu --size standard --fractions 1 \
        --models ground_truth perturbed --overrides '~metrics.sc' --out /tmp/bench-gpu 2>&1 \
        | tee "$OUT/bench-e2e.txt" || true
    ;;
*)
    echo "usage: bash benchmarks/gpu_check.sh prepare|run" >&2
    exit 2
    ;;
esac
