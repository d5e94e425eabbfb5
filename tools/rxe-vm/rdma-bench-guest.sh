#!/bin/bash
# rdma-bench-guest.sh WORKDIR - runs INSIDE the Soft-RoCE VM (started by run-rdma-bench.sh): on the
# same rxe0, perftest's ib_send_lat and ib_write_bw, rsockets' rstream (RDMA and its TCP mode), then
# io.sora.it.rdma.RdmaBench over TCP (no agent) and over RDMA (agent + rdma rules). Raw outputs go to
# WORKDIR/bench/*.log; a table is printed at the end.
set -u
W=$1
IP=${RXE_IP:-192.168.77.1}
DEV=${RXE_DEV:-rxe0}
J=${SORA_BENCH_JDK:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
N=${SORA_BENCH_ROUNDS:-1000}
MIB=${SORA_BENCH_MIB:-64}
B=$W/bench
mkdir -p "$B"
pair(){ # name "server cmd" "client cmd"
  local name=$1
  timeout 120 bash -c "$2" > "$B/$name-server.log" 2>&1 &
  local spid=$!
  sleep 2
  timeout 120 bash -c "$3" > "$B/$name.log" 2>&1
  wait $spid 2>/dev/null
  echo "--- $name"; cat "$B/$name.log"
}
pair ib_send_lat "ib_send_lat -d $DEV -s 4096 -n $N" "ib_send_lat -d $DEV -s 4096 -n $N $IP"
pair ib_write_bw "ib_write_bw -d $DEV -s 65536 -n 2000" "ib_write_bw -d $DEV -s 65536 -n 2000 $IP"
pair rstream "rstream -S 4096 -C $N -p 7471" "rstream -s $IP -S 4096 -C $N -p 7471"
pair rstream_tcp "rstream -T s -S 4096 -C $N -p 7472" "rstream -T s -s $IP -S 4096 -C $N -p 7472"
CP="$W/test-classes"
# Under the guest's CPU emulation the agent's start can take longer than the 10 s a thread loading
# ServerSocket waits for it by default (then that run measured TCP): wait for it (docs/configuration.md)
GATE=-Dsora.startup.gateWait=${SORA_BENCH_GATE_WAIT:-120000}
echo "--- sora bench over TCP (no agent)"
"$J" -cp "$CP" io.sora.it.rdma.RdmaBench "$IP" 7473 "$N" "$MIB" 2>&1 | tee "$B/tcp.log"
echo "--- sora bench over RDMA (agent, rdma rules)"
"$J" $GATE "-javaagent:$W/sora-agent.jar=conf=$W/suite.conf" -cp "$CP" io.sora.it.rdma.RdmaBench "$IP" 7474 "$N" "$MIB" 2>&1 \
  | tee "$B/rdma.log"

port=7480
for spin in ${SORA_BENCH_SPINS:-0 300}; do
  port=$((port + 1))
  echo "--- sora bench over RDMA, -Dsora.spin.iterations=$spin"
  "$J" $GATE -Dsora.spin.iterations=$spin "-javaagent:$W/sora-agent.jar=conf=$W/suite.conf" -cp "$CP" io.sora.it.rdma.RdmaBench \
    "$IP" $port "$N" "$MIB" 2>&1 | tee "$B/rdma-spin$spin.log"
done

# ib_send_lat's t_typical and rstream's usec/xfer are both half a round trip (rstream divides by 2 x transfers)
lat=$(awk '/^ *4096 /{print $5; exit}' "$B/ib_send_lat.log")        # t_typical [usec]
bw=$(awk '/^ *65536 /{print $4; exit}' "$B/ib_write_bw.log")         # BW average [MB/sec]
rs=$(awk '$2=="4k" {print $NF; exit}' "$B/rstream.log")
rst=$(awk '$2=="4k" {print $NF; exit}' "$B/rstream_tcp.log")
sr=$(sed -n 's/.*rtt path=rdma .*median_us=\([0-9.]*\).*/\1/p' "$B/rdma.log")
st=$(sed -n 's/.*rtt path=tcp.*median_us=\([0-9.]*\).*/\1/p' "$B/tcp.log")
sbw=$(sed -n 's/.*stream path=rdma .*MB_per_s=\([0-9.]*\).*/\1/p' "$B/rdma.log")
tbw=$(sed -n 's/.*stream path=tcp.*MB_per_s=\([0-9.]*\).*/\1/p' "$B/tcp.log")
echo
echo "=== 4 KiB round trip on $DEV (same VM run)"
printf '%-34s %10s\n' "path" "RTT (us)"
printf '%-34s %10s\n' "ib_send_lat (2 x t_typical)" "$(awk -v l="${lat:-0}" 'BEGIN{printf "%.1f", 2*l}')"
printf '%-34s %10s\n' "rstream (rsockets, 2 x usec/xfer)" "$(awk -v l="${rs:-0}" 'BEGIN{printf "%.1f", 2*l}')"
printf '%-34s %10s\n' "rstream -T s (TCP, 2 x usec/xfer)" "$(awk -v l="${rst:-0}" 'BEGIN{printf "%.1f", 2*l}')"
printf '%-34s %10s\n' "sora over TCP (median)" "${st:-?}"
printf '%-34s %10s\n' "sora over RDMA (median)" "${sr:-?}"
for spin in ${SORA_BENCH_SPINS:-0 300}; do
  printf '%-34s %10s\n' "sora over RDMA, spin $spin (median)" "$(sed -n 's/.*rtt path=rdma .*median_us=\([0-9.]*\).*/\1/p' "$B/rdma-spin$spin.log")"
done
echo "=== streaming throughput"
printf '%-34s %10s\n' "ib_write_bw 64 KiB (MB/s)" "${bw:-?}"
printf '%-34s %10s\n' "sora over RDMA, 64 KiB writes (MB/s)" "${sbw:-?}"
printf '%-34s %10s\n' "sora over TCP, 64 KiB writes (MB/s)" "${tbw:-?}"
