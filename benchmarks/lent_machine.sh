#!/bin/bash
# The checks for a lent GPU machine (16 cores, an H100/H200, no network), as one prepared run.
#
#   here:   bash benchmarks/lent_machine.sh fetch
#           (downloads the kaminpar, tbb and tcmlib wheels for the machine's Python 3.12 into
#           .whl/, which .git/info/exclude must list; the machine has numba, numpy, scipy,
#           networkx, CuPy, pytest and hypothesis)
#   there:  bash benchmarks/lent_machine.sh run      (carry .whl; about 9 minutes)
#
# run writes to $OUT (or ./out): env.txt; kernel_scaling.txt (each kernel's time at 1, 4 and
# 16 threads, delaunay 2^20 k = 32); cores.md (matchpart's CPU presets and KaMinPar at 1, 4, 8
# and 16 threads); gpu_tests.log (the gpu-marked tests on CuPy); gpu.md (GPU against the
# CPU). Every step has its own time limit and writes as it goes, so a step cut short keeps
# what it measured. Learned on the first lent machine: the tbb wheel's library must be
# unpacked by hand (a --target install drops it, and the machine has no unzip), and every
# timing of ours must say device="cpu" (auto would pick the GPU).
set -u
cd "$(dirname "$0")/.."
WHEELS="kaminpar==3.7.3 tbb==2023.2.0 tcmlib==1.6.0"
if [ "${1:-}" = fetch ]; then
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl $WHEELS
    ls -la .whl
    exit
fi
[ "${1:-}" = run ] || { echo "usage: bash benchmarks/lent_machine.sh fetch|run" >&2; exit 2; }
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/kaminpar*.whl
python3 -c "import zipfile, glob; [zipfile.ZipFile(w).extractall('/tmp/tbbw') for w in glob.glob('.whl/t*.whl')]"
export LD_LIBRARY_PATH="$(ls -d /tmp/tbbw/*.data/data/lib 2>/dev/null | tr '\n' ':')${LD_LIBRARY_PATH:-}"
export PYTHONPATH="/tmp/site:$PWD"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi -L
  python3 -c "import numba, numpy, cupy; print('numba', numba.__version__, 'numpy', numpy.__version__, 'cupy', cupy.__version__)"
  python3 -c "import matchpart.threads as t; t.configure(); import numba; print('threading layer', numba.config.THREADING_LAYER)"
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
echo "== kernel scaling $(date +%T)"
timeout 120 python3 benchmarks/kernel_scaling.py --threads 1,4,16 --runs 2 --top 25 > "$OUT/kernel_scaling.txt" 2>&1
tail -n 30 "$OUT/kernel_scaling.txt"
echo "== cores $(date +%T)"
timeout 200 python3 benchmarks/cores.py --threads 1,4,8,16 --runs 3 --instances delaunay:1048576@32,rmat:19@32 \
    --out "$OUT/cores.md" > /dev/null 2>&1
tail -n 40 "$OUT/cores.md"
echo "== gpu tests $(date +%T)"
timeout 140 python3 -m pytest -m gpu -q -p no:cacheprovider tests > "$OUT/gpu_tests.log" 2>&1
tail -n 5 "$OUT/gpu_tests.log"
echo "== gpu $(date +%T)"
timeout 90 python3 benchmarks/gpu.py --instances delaunay:1048576@32 --runs 3 --out "$OUT/gpu.md" > /dev/null 2>&1
tail -n 20 "$OUT/gpu.md"
echo "== end $(date +%T)"
