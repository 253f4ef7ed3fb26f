#!/usr/bin/env bash
# One command: our partition_graph vs DGL 2.1's partition_graph vs pymetis, same graphs, one pass.
# Needs the shared harness (../shared/bench) and its DGL venv (/tmp/venv-dgl, see its README).
# Usage: bash benchmarks/run_partition_vs_dgl.sh [sizes] [k] [methods]
#   sizes: "100k 1m" (default "100k"), k: parts (default 4), methods: ours (default "metis")
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bench="$here/../shared/bench"
py=${GRAPHSHARD_PY:-$here/.venv/bin/python}
sizes=${1:-100k}; k=${2:-4}; methods=${3:-metis}
out=${BENCH_OUT:-/tmp/graphshard-bench}; mkdir -p "$out" /tmp/graphs
declare -A N=([100k]=100000 [1m]=1000000) E=([100k]=1000000 [1m]=10000000)
for s in $sizes; do
  for kind in rmat rgg; do
    f=/tmp/graphs/$kind-$s.npz
    [ -f "$f" ] || "$py" "$bench/gen_graph.py" $kind --nodes ${N[$s]} --edges ${E[$s]} --seed 1 -o "$f"
    ext=()
    for m in $methods; do
      ext+=(--external "graphshard-$m=$py $here/benchmarks/bench_partition_graph.py {npz} {k} {parts} {workdir} $m")
    done
    "$py" "$bench/peers.py" run "$f" --k "$k" --peers pymetis,dgl-metis \
      --python deps="$py" --python dgl=/tmp/venv-dgl/bin/python "${ext[@]}" --out "$out/partition.jsonl"
  done
done
"$py" "$bench/summarize.py" --only=partition "$out/partition.jsonl"
