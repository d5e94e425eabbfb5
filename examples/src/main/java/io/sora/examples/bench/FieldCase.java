package io.sora.examples.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * One row and setting of the field benchmark (e.g. {@code pp4k} under {@code split}, or {@code think}
 * with T = 20 µs under {@code unpinned}) and the runs it collected: run {@code i} of {@link #tcp} and
 * run {@code i} of {@link #shm} are adjacent JVM pairs, and optionally run {@code i} of {@link #floor}
 * followed them. A shm run that did not end on shm ({@link Run#onPath} false, only possible for
 * {@code sample-cold}) counts in no shm figure and no ratio. Filled by the driver's thread, read
 * afterwards by the report.
 */
final class FieldCase {
    /**
     * One path's figures from one JVM pair: per-round-trip median and p99 in nanoseconds (NaN where the
     * row has none), round trips a second, whether the connection really ran on the intended path (and
     * which path it ran on), the child's raw key=value figures and the pair's wall time.
     */
    record Run(String path, int pair, double medianNs, double p99Ns, double rtps, boolean onPath, String actualPath,
            Map<String, String> values, double seconds) {
    }

    final String row;
    final String setting;
    final String placement;
    /** What the row's ratio compares: round-trips a second (true) or per-round-trip latency (false). */
    final boolean throughput;
    final Map<String, Object> params = new LinkedHashMap<>();
    final List<Run> tcp = new ArrayList<>();
    final List<Run> shm = new ArrayList<>();
    final List<Run> floor = new ArrayList<>();

    FieldCase(String row, String setting, String placement, boolean throughput) {
        this.row = row;
        this.setting = setting;
        this.placement = placement;
        this.throughput = throughput;
    }

    /** A file-name friendly id, e.g. {@code think-T20-split}. */
    String id() {
        return (row + "-" + setting).replaceAll("[^A-Za-z0-9]+", "-").replaceAll("-+$", "");
    }

    static double[] values(List<Run> runs, ToDoubleFunction<Run> f) {
        double[] v = new double[runs.size()];
        for (int i = 0; i < v.length; i++) {
            Run r = runs.get(i);
            v[i] = r.onPath() ? f.applyAsDouble(r) : Double.NaN;
        }
        return v;
    }

    static double[] medians(List<Run> runs) {
        return values(runs, Run::medianNs);
    }

    /** The figure the ratio is made of: throughput or median latency. */
    double[] primary(List<Run> runs) {
        return throughput ? values(runs, Run::rtps) : medians(runs);
    }

    /** Ratio per adjacent pair, above 1 when shm was faster (NaN for a pair whose shm run fell back). */
    double[] ratios() {
        return FieldStats.pairRatios(primary(tcp), primary(shm), throughput);
    }

    FieldStats.Summary ratio() {
        return FieldStats.summarize(ratios());
    }

    /** Median over pairs of each pair's median (ns). */
    static double medianOfMedians(List<Run> runs) {
        return FieldStats.median(medians(runs));
    }

    /** Median over pairs of each pair's p99 (ns). */
    static double medianOfP99(List<Run> runs) {
        return FieldStats.median(values(runs, Run::p99Ns));
    }

    static double medianRtps(List<Run> runs) {
        return FieldStats.median(values(runs, Run::rtps));
    }

    /** shm median / floor median per pair, then summarized (only when the floor ran). */
    FieldStats.Summary shmOverFloor() {
        if (floor.isEmpty()) {
            return FieldStats.Summary.NONE;
        }
        return FieldStats.summarize(FieldStats.quotients(medians(shm), medians(floor)));
    }

    int shmOnPath() {
        return (int) shm.stream().filter(Run::onPath).count();
    }
}
