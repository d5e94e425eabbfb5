package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class FieldOptionsTest {
    private static FieldOptions parse(String... a) {
        return FieldOptions.parse(a);
    }

    private static void bad(String expectedInMessage, String... a) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(a));
        assertTrue(e.getMessage().contains(expectedInMessage), e.getMessage());
    }

    @Test
    void defaultsRunEveryRowAndPlacementWithFivePairsAndWaitRules() {
        FieldOptions o = parse("--agent", "a.jar");
        assertEquals(Path.of("a.jar"), o.agent);
        assertEquals(5, o.pairs);
        assertEquals(List.of("pp4k", "sample-cold", "think", "conns", "hog", "setup", "nio"), List.copyOf(o.rows));
        assertEquals(List.of("unpinned", "split", "same"), List.copyOf(o.placements));
        assertEquals("wait=2s", o.ruleOptions);
        assertEquals(Path.of("target", "bench-report"), o.report);
        assertEquals(20_000, o.pp4kRoundTrips());
        assertEquals(5_000, o.thinkRoundTrips());
        assertEquals(10_000, o.hogRoundTrips());
        assertFalse(o.quick);
    }

    @Test
    void quickMeansTwoPairsAndFewerRoundTripsUnlessPairsAreGiven() {
        FieldOptions q = parse("--agent", "a.jar", "--quick");
        assertEquals(2, q.pairs);
        assertEquals(5_000, q.pp4kRoundTrips());
        assertEquals(1_000, q.thinkRoundTrips());
        assertEquals(3, parse("--quick", "--pairs", "3", "--agent", "a.jar").pairs);
        assertEquals(1, parse("--agent=a.jar", "--pairs=1").pairs);
    }

    @Test
    void rowsAndPlacementsAreSubsetsInTheOrderGiven() {
        FieldOptions o = parse("--agent", "a.jar", "--rows", "hog,pp4k,hog", "--placements", "same, unpinned");
        assertEquals(List.of("hog", "pp4k"), List.copyOf(o.rows));
        assertEquals(List.of("same", "unpinned"), List.copyOf(o.placements));
    }

    @Test
    void badOptionsAreRejectedWithTheirName() {
        bad("--agent", "--quick");
        bad("unknown option '--frobnicate'", "--agent", "a.jar", "--frobnicate", "1");
        bad("--rows: unknown 'pingpong'", "--agent", "a.jar", "--rows", "pp4k,pingpong");
        bad("--placements: unknown 'split2'", "--agent", "a.jar", "--placements", "split2");
        bad("--rows names nothing", "--agent", "a.jar", "--rows", ",");
        bad("--pairs 0 must be between 1 and 100", "--agent", "a.jar", "--pairs", "0");
        bad("--pairs 'x' is not a whole number", "--agent", "a.jar", "--pairs", "x");
        bad("needs a value", "--agent", "a.jar", "--pairs");
        bad("--timeout", "--agent", "a.jar", "--timeout", "-5");
    }

    @Test
    void helpNeedsNoAgentAndRuleOptionsMayBeEmpty() {
        assertTrue(parse("--help").help);
        assertEquals("", parse("--agent", "a.jar", "--rule-options", "").ruleOptions);
    }
}
