#!/bin/bash
# The main isolate's allocation and GC under the demo's feed (issue 13): runs the feed alone
# (`bench/log/demo-append-path.mjs REPO alone N 25000 os`, one isolate: the main thread) under
# `--trace-gc-nvp` at 50 000 and 150 000 clicks and prints, per repository, the heap bytes
# allocated per click (the difference of the two runs' summed `allocated=` over 100 000 clicks, so
# start-up cancels out) and, for the 150 000-click run, the scavenges (count, summed pause, bytes
# that survived them) and mark-compacts. Allocation and survival counts hardly depend on the
# machine's load; pause times do (V8's helper threads wait for a core), so compare those only as
# interleaved ratios. Each repository needs a built dist/.
#   bench/log/feed-gc.sh ROUNDS LABEL1 REPO1 [LABEL2 REPO2 …]
# e.g. bench/log/feed-gc.sh 3 base /work/wt/base branch .
set -u
rounds=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  for ((i = 1; i < $#; i += 2)); do
    label=${!i}
    j=$((i + 1))
    repo=$(cd "${!j}" && pwd)
    t0=$(date -u +%H:%M:%S)
    l0=$(cut -d' ' -f1 /proc/loadavg)
    for n in 50000 150000; do
      node --trace-gc-nvp "$root/bench/log/demo-append-path.mjs" "$repo" alone $n 25000 os >"$out/$n.txt" 2>&1
    done
    node -e '
      const fs = require("fs");
      const stat = (f) => {
        const r = { alloc: 0, s: 0, sp: 0, surv: 0, mc: 0, mcp: 0, max: 0 };
        for (const l of fs.readFileSync(f, "utf8").split("\n")) {
          const m = Object.fromEntries([...l.matchAll(/(\S+?)=(\S+)/g)].map((x) => [x[1], x[2]]));
          if (!m.gc) continue;
          r.alloc += +m.allocated;
          r.max = Math.max(r.max, +m.pause);
          if (m.gc === "s") { r.s++; r.sp += +m.pause; r.surv += +m.new_space_survived; }
          else { r.mc++; r.mcp += +m.pause; }
        }
        return r;
      };
      const [a, b] = [stat(process.argv[1]), stat(process.argv[2])];
      console.log(`round ${process.argv[3]} ${process.argv[4]} ${process.argv[5]} load ${process.argv[6]}: ` +
        `${((b.alloc - a.alloc) / 100000).toFixed(0)} B/click | 150k clicks: ${b.s} scavenges, ` +
        `${b.sp.toFixed(0)} ms, ${(b.surv / 1e6).toFixed(1)} MB survived | ${b.mc} mark-compacts, ` +
        `${b.mcp.toFixed(0)} ms | longest pause ${b.max.toFixed(1)} ms`);
    ' "$out/50000.txt" "$out/150000.txt" "$r" "$label" "$t0" "$l0..$(cut -d' ' -f1 /proc/loadavg)"
  done
done
