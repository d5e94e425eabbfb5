#!/bin/bash
# run-smoke.sh - runs inside the Soft-RoCE VM (tools/rxe-vm/run-in-rxe-vm.sh): sora's libdisni
# end to end through DiSNI's verbs layer (io.sora.transport.disni.VerbsSmoke), client and server
# in one JVM over rxe0, under -Xcheck:jni, once per JDK. Fails on any JNI warning.
#
# Build on the host first (the guest only runs java):
#   cd /work/main && mvn -B -q -pl transport-disni -am install -DskipTests
# then, from the repository root on the host:
#   tools/rxe-vm/run-in-rxe-vm.sh 'bash transport-disni/src/test/vm/run-smoke.sh'
#
# env: SORA_SMOKE_JDKS (JDK homes, default: JDK 17 and Temurin 25), RXE_IP (set by the VM).
set -u
MOD=$(cd "$(dirname "$0")/../../.." && pwd)
T=$MOD/target
RESOURCE=io/sora/transport/disni/native/linux-x86_64/libdisni.so
JDKS=${SORA_SMOKE_JDKS:-/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64}
IP=${RXE_IP:-192.168.77.1}
die(){ echo "run-smoke: $*" >&2; exit 2; }

JAR=$(ls "$T"/sora-transport-disni-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1)
[ -n "$JAR" ] && [ -f "$T/test-classpath.txt" ] && [ -d "$T/test-classes/io" ] \
  || die "no build under $T; on the host run: mvn -B -q -pl transport-disni -am install -DskipTests"
[ -e /dev/infiniband/uverbs0 ] || die "no RDMA device (/dev/infiniband/uverbs0): run me inside tools/rxe-vm"

# The library exactly as the jar ships it; build outputs must go to /tmp (the rest is read-only).
OUT=$(mktemp -d /tmp/sora-smoke.XXXXXX)
mkdir -p "$OUT/lib"
unzip -p "$JAR" "$RESOURCE" > "$OUT/lib/libdisni.so" && [ -s "$OUT/lib/libdisni.so" ] \
  || die "$JAR has no $RESOURCE"
CP="$T/test-classes:$JAR:$(cat "$T/test-classpath.txt")"
echo "run-smoke: $(ibv_devices 2>/dev/null | awk 'NR>2{print $1}' | tr '\n' ' ')device(s); library from $JAR; ulimit -l $(ulimit -l)"

fail=0 port=17471
for jdk in $JDKS; do
  [ -x "$jdk/bin/java" ] || die "no JDK at $jdk"
  name=$(basename "$jdk")
  echo "=== $name: $("$jdk/bin/java" -version 2>&1 | head -1)"
  start=$(date +%s.%N)
  # TieredStopAtLevel=1: the guest is emulated (TCG); C2 compilation would only cost time here.
  "$jdk/bin/java" -Xcheck:jni -XX:TieredStopAtLevel=1 \
    --add-exports java.base/sun.nio.ch=ALL-UNNAMED --enable-native-access=ALL-UNNAMED \
    -Djava.library.path="$OUT/lib" -cp "$CP" io.sora.transport.disni.VerbsSmoke "$IP" "$port" \
    > "$OUT/$name.log" 2>&1
  rc=$?
  cat "$OUT/$name.log"
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  if grep -qE 'WARNING in native method|FATAL ERROR in native method|JNI call made' "$OUT/$name.log"; then
    echo "run-smoke: $name: JNI warnings (see above)"; fail=1
  elif [ $rc -ne 0 ] || ! grep -q '^VERBS SMOKE PASSED' "$OUT/$name.log"; then
    echo "run-smoke: $name: FAILED (exit $rc)"; fail=1
  else
    echo "run-smoke: $name: passed, no JNI warnings (${secs}s)"
  fi
  port=$((port + 10))
done
rm -rf "$OUT"
exit $fail
