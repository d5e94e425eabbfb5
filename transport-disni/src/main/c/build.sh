#!/bin/bash
# build.sh OUTDIR - compile sora's libdisni.so (the native half of IBM DiSNI 2.1)
# into OUTDIR. Run by Maven (generate-resources); also usable by hand.
#
# Needs gcc and Debian's rdma-core headers (libibverbs-dev, librdmacm-dev); when
# they are missing and we are root, installs them with apt-get and says so.
# JNI headers come from $JAVA_HOME/include (else from the javac on PATH).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$1
SRC=$(cd "$(dirname "$0")" && pwd)

need=""
command -v gcc >/dev/null 2>&1 || need="$need gcc"
[ -f /usr/include/infiniband/verbs.h ] || need="$need libibverbs-dev"
[ -f /usr/include/rdma/rdma_cma.h ] || need="$need librdmacm-dev"
if [ -n "$need" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "build.sh: missing$need; install them (apt-get install$need) or run as root" >&2
    exit 1
  fi
  echo "build.sh: installing$need with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends $need; } \
    || { echo "build.sh: apt-get install$need failed" >&2; exit 1; }
fi

if [ -z "${JAVA_HOME:-}" ] || [ ! -f "$JAVA_HOME/include/jni.h" ]; then
  JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
fi
[ -f "$JAVA_HOME/include/jni.h" ] || { echo "build.sh: no jni.h under $JAVA_HOME/include (set JAVA_HOME to a JDK)" >&2; exit 1; }

mkdir -p "$OUT"
gcc -std=gnu11 -D_GNU_SOURCE -O2 -fPIC -shared -Wall -Wextra -Werror -fvisibility=hidden \
  -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" \
  -o "$OUT/libdisni.so.tmp" "$SRC"/*.c -libverbs -lrdmacm -Wl,-z,defs,-z,now
mv "$OUT/libdisni.so.tmp" "$OUT/libdisni.so"
echo "build.sh: built $OUT/libdisni.so"
