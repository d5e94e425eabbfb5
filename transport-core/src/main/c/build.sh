#!/bin/bash
# build.sh OUTDIR - compile sora's libsora.so (futexes for the shm fast path) into OUTDIR.
# Run by Maven (generate-resources); also usable by hand. Needs gcc and libc headers only; when gcc
# is missing and we are root, installs it with apt-get and says so. JNI headers come from
# $JAVA_HOME/include (else from the javac on PATH).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$1
SRC=$(cd "$(dirname "$0")" && pwd)

if ! command -v gcc >/dev/null 2>&1 || [ ! -f /usr/include/linux/futex.h ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "build.sh: gcc and libc6-dev are needed (apt-get install gcc libc6-dev) or run as root" >&2
    exit 1
  fi
  echo "build.sh: installing gcc libc6-dev linux-libc-dev with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends gcc libc6-dev linux-libc-dev >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev linux-libc-dev; } \
    || { echo "build.sh: apt-get install gcc libc6-dev failed" >&2; exit 1; }
fi

if [ -z "${JAVA_HOME:-}" ] || [ ! -f "$JAVA_HOME/include/jni.h" ]; then
  JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
fi
[ -f "$JAVA_HOME/include/jni.h" ] || { echo "build.sh: no jni.h under $JAVA_HOME/include (set JAVA_HOME to a JDK)" >&2; exit 1; }

mkdir -p "$OUT"
gcc -std=gnu11 -D_GNU_SOURCE -O2 -fPIC -shared -Wall -Wextra -Werror -fvisibility=hidden \
  -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" \
  -o "$OUT/libsora.so.tmp" "$SRC"/*.c -Wl,-z,defs,-z,now
mv "$OUT/libsora.so.tmp" "$OUT/libsora.so"
echo "build.sh: built $OUT/libsora.so"
