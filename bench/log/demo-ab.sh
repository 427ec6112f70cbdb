#!/bin/bash
# Interleaved A/B of whole demo runs on a noisy machine: runs each labelled command in turn, ROUNDS
# times, and prints per run the start time, the load average before and after, and the demo
# table's throughput, append latency, event-loop delay and correctness rows (exactly-once |
# at-least-once). Each command runs from the repository root; its stderr is dropped.
#   bench/log/demo-ab.sh ROUNDS LABEL1 "CMD1" LABEL2 "CMD2" [LABEL3 "CMD3" …]
# e.g. bench/log/demo-ab.sh 4 main "node /work/wt/base/bin/weir.js demo" branch "node bin/weir.js demo"
set -u
rounds=$1
shift
variants=("$@")
root=$(cd "$(dirname "$0")/../.." && pwd)
for r in $(seq 1 "$rounds"); do
  for ((i = 0; i < ${#variants[@]}; i += 2)); do
    label=${variants[$i]}
    cmd=${variants[$((i + 1))]}
    t0=$(date -u +%H:%M:%S)
    l0=$(cut -d' ' -f1 /proc/loadavg)
    out=$(cd "$root" && eval "$cmd" 2>/dev/null)
    echo "round $r $label $t0 load $l0..$(cut -d' ' -f1 /proc/loadavg) exit-ok=$(echo "$out" | grep -c '^report:')"
    echo "$out" | grep -E "^append latency|^main-thread event-loop|^throughput|^correctness" | sed -E 's/ {2,}/ | /g'
  done
done
