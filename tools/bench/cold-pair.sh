#!/bin/bash
# The JSOR sample as a user times it: SampleServer, then SampleClient (1,000 round trips of 4 KiB), both
# JVMs cold, with or without the agent and ./sora demo's shm rules. Time the whole script from outside
# (docs/benchmarks.md, "Start-up, first connection and exit"). Needs a build (./sora build or mvn package).
#   tools/bench/cold-pair.sh tcp|sora        (EXTRA="-D..." adds JVM options to both;
#                                             SORA_AGENT=JAR times another agent jar, e.g. an older build)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CP="$ROOT/examples/target/sora-examples.jar"; AGENT="${SORA_AGENT:-$ROOT/agent/target/sora-agent.jar}"
case "${1:-}" in tcp|sora) ;; *) echo "usage: $0 tcp|sora" >&2; exit 2 ;; esac
D=$(mktemp -d /tmp/sora-cold-pair.XXXXXX)
trap 'rm -rf "$D"' EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'shm accept 127.0.0.1 %s 127.0.0.1\n' "$PORT" > "$D/server.conf"
printf 'shm connect 127.0.0.1 %s\n' "$PORT" > "$D/client.conf"
SA=(); CA=()
if [ "$1" = sora ]; then
  SA=(-javaagent:"$AGENT" -Dsora.conf="$D/server.conf"); CA=(-javaagent:"$AGENT" -Dsora.conf="$D/client.conf")
fi
# shellcheck disable=SC2086
java "${SA[@]}" ${EXTRA:-} -cp "$CP" io.sora.examples.SampleServer 127.0.0.1 "$PORT" 1000 4096 > "$D/server.out" 2>&1 &
SP=$!
for _ in $(seq 1 1000); do grep -q 'Server Ready>' "$D/server.out" 2>/dev/null && break; sleep 0.01; done
grep -q 'Server Ready>' "$D/server.out" || { echo "cold-pair: server not ready" >&2; cat "$D/server.out" >&2; kill $SP; exit 1; }
# shellcheck disable=SC2086
java "${CA[@]}" ${EXTRA:-} -cp "$CP" io.sora.examples.SampleClient 127.0.0.1 "$PORT" 1000 4096 > "$D/client.out" 2>&1
wait $SP
grep -q 'Round trip time' "$D/client.out" || { echo "cold-pair: client printed no round trip time" >&2; cat "$D/client.out" >&2; exit 1; }
