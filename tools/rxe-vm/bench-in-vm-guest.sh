#!/bin/bash
# bench-in-vm-guest.sh WORKDIR - runs INSIDE the Soft-RoCE VM (started by run-bench-in-vm.sh). First the
# peers on rxe0: perftest's ib_send_lat -s 4096 and ib_write_bw -s 65536, rsockets' rstream with 4 KiB
# messages and its plain-TCP mode (rstream -T s); then the benchmark driver itself
# (io.sora.examples.bench.Bench) with its rdma row on the same rxe0, small settings (TCG is 6-20x slower),
# the peers passed in as --external-row rows. Raw peer outputs: WORKDIR/peers/*.log; report: WORKDIR/report.
set -u
W=$1
shift
IP=${RXE_IP:-192.168.77.1}
DEV=${RXE_DEV:-rxe0}
JDK=${SORA_BENCH_JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
J=$JDK/bin/java
[ -x "$J" ] || J=java
N=${SORA_BENCH_ROUNDS:-1000}
P=$W/peers
mkdir -p "$P"
pair(){ # name "server cmd" "client cmd": server in the background, client after 2 s, both bounded
  local name=$1
  timeout 120 bash -c "$2" > "$P/$name-server.log" 2>&1 &
  local spid=$!
  sleep 2
  timeout 120 bash -c "$3" > "$P/$name.log" 2>&1
  wait $spid 2>/dev/null
  echo "--- $name"; cat "$P/$name.log"
}
t0=$(date +%s)
pair ib_send_lat "ib_send_lat -d $DEV -s 4096 -n $N" "ib_send_lat -d $DEV -s 4096 -n $N $IP"
pair ib_write_bw "ib_write_bw -d $DEV -s 65536 -n 2000" "ib_write_bw -d $DEV -s 65536 -n 2000 $IP"
pair rstream "rstream -S 4096 -C $N -p 7471" "rstream -s $IP -S 4096 -C $N -p 7471"
pair rstream_tcp "rstream -T s -S 4096 -C $N -p 7472" "rstream -T s -s $IP -S 4096 -C $N -p 7472"
echo "=== peers took $(( $(date +%s) - t0 )) s"

# ib_send_lat's t_typical and rstream's usec/xfer are both half a round trip (rstream divides by 2 x transfers)
twice(){ [ -n "$1" ] && awk -v l="$1" 'BEGIN{printf "%.2f", 2*l}' || echo -; }
lat=$(awk '/^ *4096 /{print $5; exit}' "$P/ib_send_lat.log")       # t_typical [usec]
bw=$(awk '/^ *65536 /{print $4; exit}' "$P/ib_write_bw.log")        # BW average [MB/sec]
rs=$(awk '$2=="4k" {print $NF; exit}' "$P/rstream.log")             # usec/xfer
rst=$(awk '$2=="4k" {print $NF; exit}' "$P/rstream_tcp.log")
rows=()
add(){ # name rtt mbps: only rows with a figure (a tool that failed leaves its log, not a row)
  if [ "$2" != - ] || [ "$3" != - ]; then rows+=(--external-row "$1=$2,$3"); else echo "bench-in-vm: no figure from $1 (see $P)" >&2; fi
}
add "ib_send_lat -s 4096 (2 x t_typical)" "$(twice "$lat")" -
add "ib_write_bw -s 65536" - "${bw:--}"
add "rstream 4 KiB (rsockets, 2 x usec/xfer)" "$(twice "$rs")" -
add "rstream -T s 4 KiB (TCP in the guest, 2 x usec/xfer)" "$(twice "$rst")" -

t1=$(date +%s)
# Small settings: every agent JVM costs ~14 s to start under TCG; tcp and rdma under split only, no copy,
# no start-up timing. wait=10s: a slow guest JVM must not miss the pairing and fall back to TCP.
# 5000 warm-up round trips: under TCG the JIT needs thousands of round trips to compile the data path
# (with 300, the rdma median was 5.6 ms, with 3000 1.0 ms: the JIT, not the medium, was measured).
# -Dsora.startup.background=false: the agent starts before main, as it did before 2daff3d. Beside main,
# its start took more than the start gate's 10 s under TCG, so the client's Socket class loaded
# unpatched and the driver stopped ("installed no delegate"); start-up is not what this run measures.
"$J" -cp examples/target/sora-examples.jar io.sora.examples.bench.Bench --agent agent/target/sora-agent.jar \
  --paths "${SORA_BENCH_PATHS:-tcp,rdma}" --placements "${SORA_BENCH_PLACEMENTS:-split}" --rdma-address "$IP" \
  --sizes 64,4k,64k --write-sizes 4k,64k --iterations 1000 --reps 3 --warmup 5000 --pp-mib 4 \
  --stream-ms 300 --stream-max-mib 32 --stream-reps 2 --copy-mib 0 --startup-runs 0 --timeout 400 \
  --rule-options wait=10s --jvm-arg -Dsora.startup.background=false --report "$W/report" --no-charts "${rows[@]}" "$@"
rc=$?
echo "=== driver took $(( $(date +%s) - t1 )) s, exit status $rc"
exit $rc
