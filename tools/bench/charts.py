"""Draws sora's benchmark charts from a report directory written by io.sora.examples.bench.Bench.

    python charts.py DIR

reads DIR/results.json and writes, into DIR:
  rtt.svg/.png     ping-pong round trip (median) against message size, log-log, one line per path
  stream.svg/.png  one-way streaming throughput against write size, log-log
  cpu.svg/.png     CPU ns per KiB moved while streaming (client + server), against write size
  index.html       a self-contained page: the run's header, the charts (inline SVG) and every table
Colour names the path, line style the placement (solid: split over two CPUs, dashed: both on one CPU).
"""
import html
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

COLOURS = {"tcp": "#1f77b4", "tcp+agent": "#17becf", "shm": "#d62728", "shm-1m": "#ff7f0e",
           "rdma": "#2ca02c", "floor": "#7f7f7f"}
STYLES = {"split": "-", "same": "--", "unpinned": ":"}
MARKERS = {"split": "o", "same": "s", "unpinned": "^"}


def size_label(n):
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def number_label(v, _pos=None):
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 1:
        return f"{v:g}"
    return f"{v:.2g}"


def subtitle(doc):
    m = doc["machine"]
    load = [h for h in doc["header"] if "load average" in h]
    quick = " (--quick)" if doc["options"].get("quick") else ""
    return f"{m['cpu']}, {m['cpus_online']} CPUs, {m['date'][:16]}{quick}" + (
        f"\n{load[0].replace('note: ', '')}" if load else "")


def plot(doc, section, y_of, title, ylabel, out, legend_loc):
    fig, ax = plt.subplots(figsize=(8.5, 5.2), dpi=110)
    sizes = set()
    for row in doc["rows"]:
        points = [(p["size"], y_of(p)) for p in row[section]]
        points = [(x, y) for x, y in points if y is not None and y > 0]
        if not points:
            continue
        sizes.update(x for x, _ in points)
        xs, ys = zip(*points)
        ax.plot(xs, ys, STYLES.get(row["placement"], "-"), marker=MARKERS.get(row["placement"], "o"),
                markersize=4, linewidth=1.6, color=COLOURS.get(row["path"], None), label=row["name"])
    if not sizes:
        plt.close(fig)
        return False
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted(sizes)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: size_label(v)))
    ax.yaxis.set_major_formatter(FuncFormatter(number_label))
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", axis="y", alpha=0.12)
    ax.set_xlabel("message size" if section == "pingpong" else "write size")
    ax.set_ylabel(ylabel)
    ax.set_title(title + "\n" + subtitle(doc), fontsize=10)
    ax.legend(fontsize=8, loc=legend_loc, ncol=2)
    fig.tight_layout()
    for ext in ("svg", "png"):
        fig.savefig(out.with_suffix("." + ext), metadata={"Date": None} if ext == "svg" else None)
    plt.close(fig)
    return True


def cpu_of(p):
    c, s = p.get("cpu_client_ns_per_kib"), p.get("cpu_server_ns_per_kib")
    return None if c is None or s is None else c + s


def index_html(doc, charts, out):
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>sora benchmark</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0;font-size:90%}td,th{border:1px solid #ccc;padding:3px 8px}"
             "td{text-align:right}td:first-child{text-align:left}th{background:#f4f4f4}"
             "svg{max-width:100%;height:auto}</style></head><body>",
             "<h1>sora benchmark</h1><ul>"]
    parts += [f"<li>{html.escape(h)}</li>" for h in doc["header"]]
    parts.append("</ul>")
    for name in charts:
        svg = (out.parent / name).read_text(encoding="utf-8")
        parts.append("<div>" + svg[svg.index("<svg"):] + "</div>")
    for table in doc["tables"]:
        rows = table["rows"]
        parts.append(f"<h2>{html.escape(table['title'])}</h2><table>")
        parts.append("<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in rows[0]) + "</tr>")
        for r in rows[1:]:
            parts.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
        parts.append("</table>")
    parts.append("<p>Method: docs/benchmarks.md in the sora repository. Figures: results.json.</p></body></html>")
    out.write_text("\n".join(parts), encoding="utf-8")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: charts.py REPORT_DIR")
    d = Path(sys.argv[1])
    doc = json.loads((d / "results.json").read_text(encoding="utf-8"))
    plt.rcParams["svg.hashsalt"] = "sora-bench"  # stable ids, so a re-drawn chart diffs cleanly
    drawn = []
    if plot(doc, "pingpong", lambda p: p.get("rtt_median_us"), "Ping-pong round trip, median (lower is better)",
            "round trip (µs)", d / "rtt", "upper left"):
        drawn.append("rtt.svg")
    if plot(doc, "stream", lambda p: p.get("mb_per_s"), "One-way streaming throughput (higher is better)",
            "MB/s (10^6 bytes a second)", d / "stream", "lower right"):
        drawn.append("stream.svg")
    if plot(doc, "stream", cpu_of, "CPU time per KiB streamed, client + server processes (lower is better)",
            "CPU ns per KiB", d / "cpu", "upper right"):
        drawn.append("cpu.svg")
    index_html(doc, drawn, d / "index.html")
    print("charts.py: wrote " + ", ".join(drawn + ["index.html"]) + " in " + str(d))


if __name__ == "__main__":
    main()
