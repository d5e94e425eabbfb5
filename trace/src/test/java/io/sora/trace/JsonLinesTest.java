package io.sora.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonLinesTest {
    private static final Instant T = Instant.parse("2026-11-22T04:26:27.500123Z");

    /** Runs {@code body} against a JSON-lines tracer for {@code spec} and returns the lines written. */
    private static String[] lines(String spec, java.util.function.Consumer<Tracer> body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Tracer t = Traces.create(TraceConfig.parse(spec, "x.trace"), out, Clock.fixed(T, ZoneOffset.UTC));
        body.accept(t);
        t.close();
        return out.toString(StandardCharsets.UTF_8).split("\n");
    }

    @Test
    void headerComesFirstWithSchemaVersionPidStartAndJvm() {
        String[] lines = lines("iprint=NET", t -> { });
        assertEquals(1, lines.length);
        assertEquals("{\"schema\":\"sora-trace\",\"version\":1,\"pid\":" + ProcessHandle.current().pid()
                + ",\"start\":\"2026-11-22T04:26:27.500123Z\",\"jvm\":\"" + System.getProperty("java.version")
                + "\"}", lines[0]);
    }

    @Test
    void eventFieldsComeInTheDocumentedOrder() {
        String[] lines = lines("iprint=NET",
                t -> t.event(Hook.PATH, 42, "tcp", "no accept rule", "peer 10.0.0.2:65444"));
        Thread me = Thread.currentThread();
        assertEquals("{\"ts\":\"2026-11-22T04:26:27.500123Z\",\"thread\":\"" + me.getName() + "\",\"tid\":"
                + LogbackTracer.threadId(me) + ",\"cat\":\"NET\",\"id\":462,\"hook\":\"path\",\"dir\":\"-\","
                + "\"conn\":42,\"path\":\"tcp\",\"reason\":\"no accept rule\",\"detail\":\"peer 10.0.0.2:65444\"}",
                lines[1]);
    }

    @Test
    void absentValuesAreOmittedAndRcIsKeptEvenWhenZero() {
        String[] lines = lines("iprint=JSOR", t -> {
            t.entry(Hook.INITVERBS_ENTRY, 0, null);
            t.exit(Hook.INITVERBS_EXIT, 0, 0, null);
        });
        assertTrue(lines[1].endsWith("\"hook\":\"initverbs\",\"dir\":\">\"}"), lines[1]);
        assertTrue(lines[2].endsWith("\"hook\":\"initverbs\",\"dir\":\"<\",\"rc\":0}"), lines[2]);
    }

    @Test
    void stringsAreEscapedAndBracesAreNotLogbackPlaceholders() {
        String[] lines = lines("iprint=NET",
                t -> t.event(Hook.AGENT_ERROR, 0, null, null, "a\"b\\c\nd\u0001e{}f\u00e9"));
        assertEquals(2, lines.length);
        assertTrue(lines[1].endsWith(",\"detail\":\"a\\\"b\\\\c\\nd\\u0001e{}f\u00e9\"}"), lines[1]);
    }

    @Test
    void escaperRoundTripsEveryCharacterThroughTheParser() {
        StringBuilder all = new StringBuilder();
        for (char c = 0; c < 0x250; c++) {
            all.append(c);
        }
        all.append("\ud83d\ude00\u2028");
        StringBuilder json = new StringBuilder("{\"k\":");
        JsonLines.appendString(json, all.toString());
        json.append('}');
        for (int i = 0; i < json.length(); i++) {
            assertTrue(json.charAt(i) >= 0x20 && json.charAt(i) != 0x7f, "raw control char at " + i);
        }
        Map<String, Object> parsed = FlatJson.parseObject(json.toString());
        assertEquals(all.toString(), parsed.get("k"));
    }

    @Test
    void noCategoryMeansTheSharedOffTracer() {
        assertSame(Tracer.OFF, Traces.create(TraceConfig.parse("", "x.trace")));
        assertSame(Tracer.OFF, Traces.create(TraceConfig.parse(null, null)));
    }

    @Test
    void filteredHooksAreNotWrittenAndReportOff() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Tracer t = Traces.create(TraceConfig.parse("iprint=mt,methods={java/net/Socket.connect}", "x.trace"),
                out, Clock.fixed(T, ZoneOffset.UTC));
        assertTrue(t.isOn(Category.MT));
        assertTrue(t.isOn(Hook.SOCKET_CONNECT_ENTRY));
        assertEquals(false, t.isOn(Hook.SOCKET_CLOSE_ENTRY));
        assertEquals(false, t.isOn(Category.NET));
        t.entry(Hook.SOCKET_CLOSE_ENTRY, 1, null);
        t.entry(Hook.SOCKET_CONNECT_ENTRY, 1, "10.0.0.2:65444");
        t.event(Hook.PATH, 1, "rdma", null, null);
        t.close();
        String[] lines = out.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(2, lines.length);
        assertTrue(lines[1].contains("\"hook\":\"java/net/Socket.connect\""), lines[1]);
    }

    @Test
    void closeIsIdempotentAndLaterEventsAreDropped() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Tracer t = Traces.create(TraceConfig.parse("iprint=NET", "x.trace"), out, Clock.fixed(T, ZoneOffset.UTC));
        t.close();
        t.close();
        t.event(Hook.PATH, 1, "rdma", null, null);
        assertEquals(1, out.toString(StandardCharsets.UTF_8).split("\n").length);
    }
}
