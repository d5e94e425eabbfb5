package io.sora.rules.fuzz;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A small mutational fuzzer for the default build, where Jazzer only replays its seeds: it mutates a
 * corpus (bit flips, random bytes, dictionary tokens, deletions, duplications, splices) and keeps an
 * input in the corpus when it produces an outcome signature not seen before, a coarse stand-in for
 * coverage feedback. Deterministic for a given seed, bounded in time and in iterations.
 *
 * <p>Not thread-safe; one run per instance.
 */
public final class MutationalFuzzer {
    /** The code under test; returns a short signature of what happened (an error class, a count). */
    public interface Target {
        String run(byte[] input) throws Exception;
    }

    /** What a run did, for the test's output and docs/reliability.md. */
    public record Report(long seed, int executions, int corpusSize, int signatures, long millis) {
        @Override
        public String toString() {
            return "seed=" + seed + " executions=" + executions + " corpus=" + corpusSize
                    + " distinct_outcomes=" + signatures + " ms=" + millis;
        }
    }

    private final List<byte[]> corpus = new ArrayList<>();
    private final List<byte[]> dictionary;
    private final Set<String> seen = new HashSet<>();
    private final SplittableRandom random;
    private final long seed;
    private final int maxLength;

    public MutationalFuzzer(List<byte[]> seeds, List<String> dictionary, long seed, int maxLength) {
        if (seeds.isEmpty()) throw new IllegalArgumentException("at least one seed is needed");
        this.corpus.addAll(seeds);
        this.dictionary = dictionary.stream().map(s -> s.getBytes(StandardCharsets.UTF_8)).toList();
        this.seed = seed;
        this.random = new SplittableRandom(seed);
        this.maxLength = maxLength;
    }

    /** The seed to use: {@code -Dsora.fuzz.seed} if given (to replay a run), else the clock. */
    public static long seedFromProperty() {
        String s = System.getProperty("sora.fuzz.seed");
        return s == null || s.isBlank() ? System.nanoTime() : Long.parseLong(s.trim());
    }

    /** {@code -Dsora.fuzz.seconds} (the soak profile raises it), else {@code defaultSeconds}. */
    public static Duration budgetFromProperty(int defaultSeconds) {
        String s = System.getProperty("sora.fuzz.seconds");
        return Duration.ofSeconds(s == null || s.isBlank() ? defaultSeconds : Long.parseLong(s.trim()));
    }

    /**
     * Runs every seed, then mutants, until {@code budget} or {@code maxExecutions}. The first
     * exception from the target fails the run with an {@link AssertionError} that shows the input.
     */
    public Report run(Target target, Duration budget, int maxExecutions) {
        long start = System.nanoTime();
        long deadline = start + budget.toNanos();
        int executions = 0;
        for (byte[] s : List.copyOf(corpus)) {
            seen.add(execute(target, s));
            executions++;
        }
        while (executions < maxExecutions && System.nanoTime() < deadline) {
            byte[] input = mutate(corpus.get(random.nextInt(corpus.size())));
            if (seen.add(execute(target, input))) corpus.add(input);
            executions++;
        }
        return new Report(seed, executions, corpus.size(), seen.size(), (System.nanoTime() - start) / 1_000_000L);
    }

    private String execute(Target target, byte[] input) {
        try {
            return target.run(input);
        } catch (Exception | Error e) {
            throw new AssertionError("fuzz seed " + seed + ": input " + show(input) + " -> " + e, e);
        }
    }

    /** The input as Java string literal text, printable for a bug report. */
    public static String show(byte[] input) {
        StringBuilder sb = new StringBuilder("\"");
        for (byte b : input) {
            int c = b & 0xff;
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') sb.append((char) c);
            else sb.append(String.format("\\x%02x", c));
        }
        return sb.append("\" (").append(input.length).append(" bytes)").toString();
    }

    private byte[] mutate(byte[] parent) {
        byte[] b = parent.clone();
        int rounds = 1 + random.nextInt(4);
        for (int i = 0; i < rounds; i++) {
            b = mutateOnce(b);
        }
        return b.length > maxLength ? java.util.Arrays.copyOf(b, maxLength) : b;
    }

    private byte[] mutateOnce(byte[] b) {
        int op = random.nextInt(7);
        if (b.length == 0 && op < 5) op = 5;
        switch (op) {
            case 0 -> b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
            case 1 -> b[random.nextInt(b.length)] = (byte) random.nextInt(256);
            case 2 -> b = delete(b);
            case 3 -> b = insert(b, slice(b), random.nextInt(b.length + 1));
            case 4 -> b = insert(b, slice(corpus.get(random.nextInt(corpus.size()))), random.nextInt(b.length + 1));
            case 5 -> b = insert(b, dictionary.get(random.nextInt(dictionary.size())), random.nextInt(b.length + 1));
            default -> {
                byte[] r = new byte[1 + random.nextInt(8)];
                random.nextBytes(r);
                b = insert(b, r, random.nextInt(b.length + 1));
            }
        }
        return b;
    }

    private byte[] slice(byte[] b) {
        if (b.length == 0) return b;
        int from = random.nextInt(b.length);
        int len = 1 + random.nextInt(Math.min(64, b.length - from));
        return java.util.Arrays.copyOfRange(b, from, from + len);
    }

    private byte[] delete(byte[] b) {
        int from = random.nextInt(b.length);
        int len = 1 + random.nextInt(Math.min(16, b.length - from));
        byte[] out = new byte[b.length - len];
        System.arraycopy(b, 0, out, 0, from);
        System.arraycopy(b, from + len, out, from, b.length - from - len);
        return out;
    }

    private static byte[] insert(byte[] b, byte[] what, int at) {
        byte[] out = new byte[b.length + what.length];
        System.arraycopy(b, 0, out, 0, at);
        System.arraycopy(what, 0, out, at, what.length);
        System.arraycopy(b, at, out, at + what.length, b.length - at);
        return out;
    }
}
