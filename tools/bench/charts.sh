#!/usr/bin/env bash
# Draws the benchmark charts of a report directory written by io.sora.examples.bench.Bench:
#   tools/bench/charts.sh DIR      reads DIR/results.json, writes DIR/{rtt,stream,cpu}.{svg,png} and DIR/index.html
# matplotlib comes from a private venv (default /tmp/sora-bench-venv, or $SORA_BENCH_VENV), created on first use.
set -euo pipefail
dir=${1:?usage: charts.sh REPORT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
venv=${SORA_BENCH_VENV:-/tmp/sora-bench-venv}
[ -f "$dir/results.json" ] || { echo "charts.sh: $dir/results.json not found" >&2; exit 1; }
if ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
  command -v python3 >/dev/null || { echo "charts.sh: python3 is required for the charts" >&2; exit 1; }
  echo "charts.sh: creating $venv with matplotlib (once)" >&2
  python3 -m venv "$venv" || { echo "charts.sh: python3 -m venv failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install -q --disable-pip-version-check 'matplotlib>=3.7,<4' >&2
fi
exec "$venv/bin/python" "$here/charts.py" "$dir"
