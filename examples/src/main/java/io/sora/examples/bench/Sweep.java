package io.sora.examples.bench;

/**
 * How much work each size of a sweep gets, the same rule on every path so their figures compare.
 * Small messages get the full iteration count; large ones a byte budget, so a 1 MiB sweep step
 * costs about what a 64 KiB one does. Stateless.
 */
final class Sweep {
    /** Fewest timed round trips per repetition at any size: below this a median means little. */
    static final int MIN_ITERATIONS = 32;
    /** Fewest writes in a timed streaming repetition. */
    static final long MIN_WRITES = 16;

    private Sweep() {
    }

    /** Timed round trips per repetition for {@code size}: {@code bytes / size}, within [{@link #MIN_ITERATIONS}, max]. */
    static int iterations(int size, int maxIterations, long bytesPerRep) {
        long n = bytesPerRep / size;
        return (int) Math.max(Math.min(n, maxIterations), Math.min(MIN_ITERATIONS, maxIterations));
    }

    /** Untimed round trips before a size: the full warm-up for the first size, then half a repetition (at least 50). */
    static int warmup(boolean firstSize, int warmup, int iterations) {
        return firstSize ? warmup : Math.min(warmup, Math.max(50, iterations / 2));
    }

    /**
     * Untimed writes before a streaming size, which also measure the rate the timed repetitions are
     * sized from: 16 MiB (at most 1/8 of the volume cap), within [16, 16384] writes. The JIT warms up
     * on the first (smallest) size's 16384 writes; later sizes only need the rate.
     */
    static long streamWarmWrites(int size, long maxBytes) {
        return Math.max(16, Math.min(16_384, Math.min(16L << 20, maxBytes / 8) / size));
    }

    /**
     * Writes per timed streaming repetition: as many as the warm-up's rate moves in {@code targetNanos},
     * at least {@link #MIN_WRITES}, at most {@code maxBytes / size}.
     */
    static long streamWrites(int size, double warmBytesPerSecond, long targetNanos, long maxBytes) {
        double want = warmBytesPerSecond * targetNanos / 1e9 / size;
        long cap = Math.max(MIN_WRITES, maxBytes / size);
        return (long) Math.max(MIN_WRITES, Math.min(cap, want));
    }

    /** Parses a comma-separated list of sizes such as {@code 64,4k,1m} (k = KiB, m = MiB). */
    static int[] parseSizes(String what, String list) {
        String[] parts = list.split(",");
        int[] out = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = parseSize(what, parts[i].trim());
        }
        return out;
    }

    /** One size: digits with an optional k (KiB) or m (MiB) suffix, at least {@link Wire#MIN_SIZE}, at most 256 MiB. */
    static int parseSize(String what, String text) {
        String t = text.toLowerCase(java.util.Locale.ROOT);
        long unit = t.endsWith("k") ? 1024 : t.endsWith("m") ? 1024 * 1024 : 1;
        String digits = unit == 1 ? t : t.substring(0, t.length() - 1);
        long v;
        try {
            v = Long.parseLong(digits) * unit;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": '" + text + "' is not a size (digits with optional k or m)", e);
        }
        if (v < Wire.MIN_SIZE || v > 256L << 20) {
            throw new IllegalArgumentException(what + ": '" + text + "' must be between " + Wire.MIN_SIZE + " and 256m");
        }
        return (int) v;
    }

    /** Human form of a byte size: 64 B, 4 KiB, 1 MiB. */
    static String label(long size) {
        if (size >= 1 << 20 && size % (1 << 20) == 0) {
            return (size >> 20) + " MiB";
        }
        if (size >= 1024 && size % 1024 == 0) {
            return (size >> 10) + " KiB";
        }
        return size + " B";
    }
}
