#!/bin/bash
# run-rdma-bench.sh - one VM run: sora over RDMA (4 KiB round trips, median after warm-up; streaming
# throughput) against ib_send_lat -s 4096, ib_write_bw, rstream and TCP on the same rxe0. Call after
# the Maven build (agent jar and it-tests test classes). Prints the table; a benchmark, not a test.
#
# env: SORA_BENCH_ROUNDS (1000), SORA_BENCH_MIB (64), SORA_BENCH_JDK (JDK 17 home)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
W=${SORA_BENCH_WORK:-/tmp/sora-rdma-bench}
for f in agent/target/sora-agent.jar it-tests/target/test-classes/io/sora/it/rdma/RdmaBench.class; do
  [ -e "$f" ] || { echo "run-rdma-bench: missing $f: build first" >&2; exit 2; }
done
rm -rf "$W" && mkdir -p "$W" && cp agent/target/sora-agent.jar "$W/" && cp -r it-tests/target/test-classes "$W/"
cat > "$W/suite.conf" <<CONF
rdma accept 192.168.77.1 * 192.168.77.1 wait=5s
rdma connect 192.168.77.1 * wait=5s
CONF
RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-900} RXE_VM_PASSENV="SORA_BENCH_ROUNDS SORA_BENCH_MIB SORA_BENCH_JDK" \
  tools/rxe-vm/run-in-rxe-vm.sh "bash tools/rxe-vm/rdma-bench-guest.sh $W"
