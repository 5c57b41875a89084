#!/usr/bin/env bash
# The first run after installing, as a new user meets it: a fresh clone of REPO at COMMIT in a
# fresh venv, `pip install .` timed, then the README's command run twice from an empty
# directory (wall and user CPU, children included; whether the "compiling kernels" notice showed).
#     benchmarks/install_startup.sh REPO COMMIT WORKDIR    (WORKDIR is emptied)
set -u
repo=$1; commit=$2; work=$3
rm -rf "$work"; mkdir -p "$work/run"
git clone -q "$repo" "$work/src" && git -C "$work/src" checkout -q "$commit"
python3 -m venv "$work/venv" && "$work/venv/bin/pip" install -q --upgrade pip >/dev/null 2>&1
echo "$commit load before install: $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$work/src" && /usr/bin/time -f "$commit install: %e s wall, %U s user" "$work/venv/bin/pip" install -q . 2>&1 | grep -v WARNING
cd "$work/run"
for r in first second; do
  echo "$commit load before $r run: $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "$commit $r run: %e s wall, %U s user" "$work/venv/bin/matchpart" partition delaunay:100000 8 > out.$r 2> err.$r
  tail -1 err.$r
  echo "$commit $r run compile notices: $(grep -c 'compiling kernels' err.$r)"
done
