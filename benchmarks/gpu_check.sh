#!/usr/bin/env bash
# The prepared GPU check (ISSUE scale): CUDA-vs-CPU equality tests and the standard-size end-to-end benchmark on
# one GPU, within a 10-minute device call. Two steps:
#
#   bash benchmarks/gpu_check.sh prepare   # here, with PyPI: wheels the GPU image lacks, into .gpu/ (git-ignored)
#   bash benchmarks/gpu_check.sh run       # there (device `run`, carry [".gpu", "checkpoints/encoders"]):
#                                          # install the wheels, test, benchmark; logs and tables into $OUT
#
# The GPU image has its own python3 with torch, Lightning, torchmetrics, scipy, sklearn, pandas, matplotlib,
# sentence-transformers; nothing can be downloaded there, so the rest travels as wheels for its Python 3.12.
set -euo pipefail
cd "$(dirname "$0")/.."
MISSING=(hydra-core omegaconf antlr4-python3-runtime hydra-joblib-launcher hydra-submitit-launcher submitit
         smplx librosa audioread soxr pooch soundfile cffi pycparser praatio wandb gitpython gitdb smmap sentry-sdk
         platformdirs setproctitle pydantic pydantic-core annotated-types typing-inspection prdc)
# Left behind to stay under the 64 MiB a device call carries: imageio-ffmpeg (clips are off) and the packaged
# MiniLM text model (83 MB), so SC is not checked on the GPU by this script (tests/test_cuda.py says so).

case "${1:-}" in
prepare)
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    # omegaconf's parser runtime is published as a source archive only: build its (pure-Python) wheel here.
    python3 -m pip wheel --quiet --no-deps --wheel-dir .gpu/wheels antlr4-python3-runtime==4.9.3
    python3 -m pip download --quiet --dest .gpu/wheels --no-deps --only-binary=:all: \
        --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux_2_28_x86_64 --platform any "${MISSING[@]/antlr4-python3-runtime}"
    du -sh .gpu/wheels
    ;;
run)
    OUT="${OUT:-/tmp/gpu-check}"
    mkdir -p "$OUT"
    python3 -m pip install --quiet --no-index --find-links .gpu/wheels "${MISSING[@]}"
    export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1 WANDB_MODE=offline
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
    python3 launch.py task=make_data dataset.size=standard logger=none
    python3 -m pytest -q -m cuda -p no:cacheprovider 2>&1 | tee "$OUT/cuda-tests.txt"
    python3 benchmarks/bench_e2e.py --trainer gpu --size standard --fractions 0.25 1 \
        --models ground_truth perturbed --overrides '~metrics.sc' --out /tmp/bench-gpu 2>&1 | tee "$OUT/bench-gpu.txt"
    ;;
*)
    echo "usage: bash benchmarks/gpu_check.sh prepare|run" >&2
    exit 2
    ;;
esac
