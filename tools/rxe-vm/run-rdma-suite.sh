#!/bin/bash
# run-rdma-suite.sh - the RDMA suite, for real, in the Soft-RoCE VM. Call it AFTER the Maven build
# (mvn install; the it-tests test classes must be compiled). It prepares on the host what the guest
# needs under /tmp (jars, test classes, the JUnit console launcher, rule files), boots the VM once
# and runs tools/rxe-vm/rdma-suite-guest.sh in it: per JDK (17 and 25) the JSOR sample over rdma,
# the socket-semantics suite and a 256 MiB SHA-256 transfer, the RDMA reliability tests (memory
# exposure, peer kill -9, connect/close churn), and detach over RDMA (attach/serve/detach cycles leave
# nothing behind). Prints a PASS/FAIL summary; exits non-zero on any failure.
#
# env: SORA_RDMA_JDKS (guest JDK homes), SORA_RDMA_PARTS ("sample suite reliability" by default, "detach" on request, a subset to
# iterate faster), SORA_RDMA_CHURN_CYCLES (200), RXE_VM_TIMEOUT (default here 2100 s)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
W=${SORA_RDMA_WORK:-/tmp/sora-rdma-suite}
die(){ echo "run-rdma-suite: $*" >&2; exit 2; }
start=$(date +%s)

for f in agent/target/sora-agent.jar examples/target/sora-examples.jar \
         it-tests/target/test-classes/io/sora/it/rdma/RdmaSemanticsTest.class \
         it-tests/target/test-classes/io/sora/it/rdma/RdmaPeerKillTest.class; do
  [ -e "$f" ] || die "missing $f: build first (mvn -B install -DskipTests && mvn -B -pl it-tests test-compile)"
done
rm -rf "$W" && mkdir -p "$W/lib" || die "cannot create $W"
cp agent/target/sora-agent.jar examples/target/sora-examples.jar "$W/" && cp -r it-tests/target/test-classes "$W/" \
  || die "cannot copy the build into $W"

# JUnit's console launcher, from Maven Central through Maven (the platform version follows Jupiter's 5.x.y -> 1.x.y)
JUPITER=$(sed -n 's:.*<junit.version>\(5\.[0-9.]*\)</junit.version>.*:\1:p' pom.xml | head -1)
PLATFORM=${JUPITER:+1.${JUPITER#5.}}
PLATFORM=${PLATFORM:-1.13.4}
ART=org.junit.platform:junit-platform-console-standalone:$PLATFORM
JAR=junit-platform-console-standalone-$PLATFORM.jar
mvn -B -q -o dependency:copy -Dartifact=$ART -DoutputDirectory="$W/lib" >/dev/null 2>&1 \
  || mvn -B -q dependency:copy -Dartifact=$ART -DoutputDirectory="$W/lib" >/dev/null 2>&1 \
  || die "cannot fetch $ART"
mv "$W/lib/$JAR" "$W/lib/junit-platform-console-standalone.jar"

IP=192.168.77.1
cat > "$W/server.conf" <<CONF
rdma accept $IP 65444 $IP
CONF
cat > "$W/client.conf" <<CONF
rdma connect $IP 65444
CONF
cat > "$W/suite.conf" <<CONF
# every connection of the suite JVM to the rxe address goes over RDMA
rdma accept $IP * $IP wait=5s
rdma connect $IP * wait=5s
CONF

echo "run-rdma-suite: prepared $W in $(( $(date +%s) - start ))s; booting the VM"
RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-2100} RXE_VM_PASSENV="SORA_RDMA_JDKS SORA_RDMA_PARTS SORA_RDMA_DETACH_JDKS SORA_RDMA_CHURN_CYCLES ${RXE_VM_PASSENV:-}" \
  tools/rxe-vm/run-in-rxe-vm.sh "bash tools/rxe-vm/rdma-suite-guest.sh $W"
rc=$?
echo
echo "=== run-rdma-suite: $( [ $rc -eq 0 ] && echo PASS || echo "FAIL (exit $rc)" ) in $(( $(date +%s) - start ))s"
[ -s "$W/summary.txt" ] && cat "$W/summary.txt"
exit $rc
