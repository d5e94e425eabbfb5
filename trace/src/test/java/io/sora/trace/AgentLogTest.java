package io.sora.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

class AgentLogTest {

    private static String log(String level, java.util.function.Consumer<Logger> body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        LoggerContext context = AgentLog.newContext(level, out);
        body.accept(context.getLogger("sora.agent"));
        context.stop();
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void defaultIsWarnWithThePrefix() {
        String out = log(null, l -> {
            l.info("not shown");
            l.warn("RDMA unavailable ({}); using TCP", "no device");
        });
        assertEquals("[sora] WARN RDMA unavailable (no device); using TCP" + System.lineSeparator(), out);
    }

    @Test
    void levelPropertyValuesChangeTheThreshold() {
        assertTrue(log("DEBUG", l -> l.debug("pairing")).startsWith("[sora] DEBUG pairing"));
        assertEquals("", log("error", l -> l.warn("hidden")));
        assertEquals("", log("off", l -> l.error("hidden")));
        assertTrue(log("info", l -> l.info("shown")).startsWith("[sora] INFO shown"));
        assertEquals(Level.OFF, AgentLog.parseLevel(" Off "));
        assertNull(AgentLog.parseLevel("verbose"));
    }

    @Test
    void anUnknownLevelFallsBackToWarnAndSaysSo() {
        String out = log("verbose", l -> l.info("hidden"));
        assertEquals("[sora] WARN sora.log.level 'verbose' not understood "
                + "(valid: trace, debug, info, warn, error, off); using warn" + System.lineSeparator(), out);
    }

    @Test
    void exceptionsCarryTheirStackTrace() {
        String out = log(null, l -> l.error("probe failed", new IOException("no libdisni")));
        assertTrue(out.startsWith("[sora] ERROR probe failed" + System.lineSeparator()
                + "java.io.IOException: no libdisni"), out);
        assertTrue(out.contains("at io.sora.trace.AgentLogTest"), out);
    }

    @Test
    void getWritesToStderrFromItsOwnContext() {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            Logger l = AgentLog.get("sora.test");
            assertSame(l, AgentLog.get("sora.test"));
            l.warn("to stderr");
            assertEquals("sora-agent", ((ch.qos.logback.classic.Logger) l).getLoggerContext().getName());
        } finally {
            System.setErr(saved);
        }
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("[sora] WARN to stderr"), err.toString());
    }
}
