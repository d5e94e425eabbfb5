#!/bin/bash
# run-bench-in-vm.sh [Bench option...] - ONE Soft-RoCE VM boot: the benchmark driver (io.sora.examples.bench.Bench)
# with its rdma row, plus peer rows from the same rxe0 (ib_send_lat -s 4096, ib_write_bw -s 65536, rstream 4 KiB,
# rstream -T s = plain TCP in the guest) in the same report. Build on the host first:
#   mvn -B -q -o install -DskipTests
# The report goes to $SORA_BENCH_WORK/report (default /tmp/sora-bench-vm/report: results.json, report.md; no
# charts, the guest has no Python venv). Extra arguments are passed to Bench (later options win).
# env: SORA_BENCH_WORK, SORA_BENCH_ROUNDS (peer round trips, 1000), SORA_BENCH_JDK (JDK 17 home),
#      SORA_BENCH_PATHS (tcp,rdma), SORA_BENCH_PLACEMENTS (split), RXE_VM_TIMEOUT (s, 1200)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
W=${SORA_BENCH_WORK:-/tmp/sora-bench-vm}
for f in agent/target/sora-agent.jar examples/target/sora-examples.jar; do
  [ -e "$f" ] || { echo "run-bench-in-vm: missing $f: build first (mvn -B -q -o install -DskipTests)" >&2; exit 2; }
done
case "$W" in /tmp/*) ;; *) echo "run-bench-in-vm: SORA_BENCH_WORK must be under /tmp (the guest writes only there): $W" >&2; exit 2;; esac
rm -rf "$W" && mkdir -p "$W"
args=""; [ $# -gt 0 ] && args=$(printf " %q" "$@")
RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-1200} \
  RXE_VM_PASSENV="SORA_BENCH_ROUNDS SORA_BENCH_JDK SORA_BENCH_PATHS SORA_BENCH_PLACEMENTS" \
  tools/rxe-vm/run-in-rxe-vm.sh "bash tools/rxe-vm/bench-in-vm-guest.sh $W$args"
