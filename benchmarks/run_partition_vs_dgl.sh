#!/usr/bin/env bash
# One command: our partition_graph vs DGL 2.1's partition_graph vs pymetis, same graphs, one pass.
# Needs the shared harness (../shared/bench) and its DGL venv (/tmp/venv-dgl, see its README).
#
#   bash benchmarks/run_partition_vs_dgl.sh                      # rmat-100k, rgg-100k, k=4
#   KS="8 64" METHODS="auto metis" bash benchmarks/run_partition_vs_dgl.sh /tmp/graphs/*.npz
#
# Graphs: harness .npz files (make more with gen_graph.py or benchmarks/make_npz.py).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bench="$here/../shared/bench"
py=${GRAPHSHARD_PY:-$here/.venv/bin/python}
out=${BENCH_OUT:-/tmp/graphshard-bench}; mkdir -p "$out" /tmp/graphs
graphs=("$@")
if [ ${#graphs[@]} -eq 0 ]; then
  for kind in rmat rgg; do
    f=/tmp/graphs/$kind-100k.npz
    [ -f "$f" ] || "$py" "$bench/gen_graph.py" $kind --nodes 100000 --edges 1000000 --seed 1 -o "$f"
    graphs+=("$f")
  done
fi
for f in "${graphs[@]}"; do
  for k in ${KS:-4}; do
    ext=()
    for m in ${METHODS:-auto}; do
      ext+=(--external "graphshard-$m=$py $here/benchmarks/bench_partition_graph.py {npz} {k} {parts} {workdir} $m")
    done
    "$py" "$bench/peers.py" run "$f" --k "$k" --peers "${PEERS:-pymetis,dgl-metis}" \
      --timeout "${BENCH_TIMEOUT:-1500}" --python deps="$py" --python dgl=/tmp/venv-dgl/bin/python \
      "${ext[@]}" --out "$out/partition.jsonl"
  done
done
"$py" "$here/benchmarks/partition_table.py" "$out/partition.jsonl"
