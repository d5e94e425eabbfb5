package io.sora.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceReaderTest {
    private static final String HEADER =
            "{\"schema\":\"sora-trace\",\"version\":1,\"pid\":123,\"start\":\"2026-11-22T04:26:27.500123Z\",\"jvm\":\"17.0.15\"}";
    private static final String EVENT =
            "{\"ts\":\"2026-11-22T04:26:27.502001Z\",\"thread\":\"main\",\"tid\":1,\"cat\":\"JSOR\",\"id\":43,"
                    + "\"hook\":\"initverbs\",\"dir\":\"<\",\"rc\":0}";

    @TempDir
    Path dir;

    private Path write(String... lines) throws IOException {
        Path f = dir.resolve("t.trace");
        Files.write(f, List.of(lines));
        return f;
    }

    private TraceReader.MalformedTraceException malformed(String... lines) throws IOException {
        Path f = write(lines);
        return assertThrows(TraceReader.MalformedTraceException.class, () -> TraceReader.read(f));
    }

    @Test
    void readsHeaderAndEvents() throws IOException {
        TraceReader.Trace t = TraceReader.read(write(HEADER, EVENT));
        assertEquals(new TraceReader.Header(1, 123, Instant.parse("2026-11-22T04:26:27.500123Z"), "17.0.15"),
                t.header());
        assertEquals(List.of(new TraceEvent(Instant.parse("2026-11-22T04:26:27.502001Z"), "main", 1, Category.JSOR,
                43, "initverbs", "<", 0, 0, null, null, null)), t.events());
    }

    @Test
    void toleratesWhitespaceBlankLinesExplicitNullsAndUnknownFields() throws IOException {
        String spaced = " { \"ts\" : \"2026-11-22T04:26:27.502001Z\" , \"thread\":\"t\\u0041\",\"tid\":-1,"
                + "\"cat\":\"NET\",\"id\":462,\"hook\":\"path\",\"dir\":\"-\",\"rc\":null,\"conn\":9,"
                + "\"path\":\"rdma\",\"future\":true,\"detail\":null }\t";
        TraceReader.Trace t = TraceReader.read(write(HEADER, "", spaced, "   "));
        TraceEvent e = t.events().get(0);
        assertEquals("tA", e.thread());
        assertEquals(-1, e.tid());
        assertEquals(9, e.conn());
        assertEquals("rdma", e.path());
        assertEquals(null, e.rc());
        assertEquals(null, e.detail());
        assertEquals(1, t.events().size());
    }

    @Test
    void wrongSchemaIsReportedWithFileAndLine() throws IOException {
        TraceReader.MalformedTraceException e = malformed("", "{\"schema\":\"other\",\"version\":1}");
        assertEquals(2, e.line());
        assertTrue(e.getMessage().startsWith(dir.resolve("t.trace") + ":2: bad sora-trace header: schema is \"other\""),
                e.getMessage());
    }

    @Test
    void newerVersionIsRefused() throws IOException {
        TraceReader.MalformedTraceException e = malformed(HEADER.replace("\"version\":1", "\"version\":2"), EVENT);
        assertTrue(e.getMessage().endsWith(":1: bad sora-trace header: version 2 is not supported by this reader "
                + "(supports 1)"), e.getMessage());
    }

    @Test
    void textTraceIsNotMistakenForJson() throws IOException {
        TraceReader.MalformedTraceException e = malformed("04:26:27.502 0x21e3e100  JSOR.39    >initverbs()");
        assertTrue(e.getMessage().endsWith(":1: bad sora-trace header: column 1: expected '{', found '0'"),
                e.getMessage());
    }

    @Test
    void malformedEventLineNamesLineAndColumn() throws IOException {
        TraceReader.MalformedTraceException e = malformed(HEADER, EVENT, EVENT.replace(",\"tid\":1", ",\"tid\":1.5"));
        assertEquals(3, e.line());
        assertTrue(e.getMessage().contains(":3: malformed event: column "), e.getMessage());
        assertTrue(e.getMessage().endsWith("expected an integer (the trace schema has no fractions), found '.'"),
                e.getMessage());
    }

    @Test
    void truncatedLastLineIsAnError() throws IOException {
        TraceReader.MalformedTraceException e = malformed(HEADER, EVENT, EVENT.substring(0, 40));
        assertEquals(3, e.line());
    }

    @Test
    void missingAndMistypedFieldsAreNamed() throws IOException {
        assertTrue(malformed(HEADER, EVENT.replace("\"hook\":\"initverbs\",", "")).getMessage()
                .endsWith(":2: malformed event: missing field \"hook\""));
        assertTrue(malformed(HEADER, EVENT.replace("\"cat\":\"JSOR\"", "\"cat\":\"IB\"")).getMessage()
                .endsWith(":2: malformed event: field \"cat\": unknown category \"IB\""));
        assertTrue(malformed(HEADER, EVENT.replace("\"dir\":\"<\"", "\"dir\":\"<<\"")).getMessage()
                .endsWith("field \"dir\": expected \">\", \"<\" or \"-\", found \"<<\""));
        assertTrue(malformed(HEADER, EVENT.replace("\"tid\":1", "\"tid\":\"1\"")).getMessage()
                .endsWith("field \"tid\": expected an integer, found \"1\""));
        assertTrue(malformed(HEADER, EVENT.replace("2026-11-22T04:26:27.502001Z", "yesterday")).getMessage()
                .endsWith("field \"ts\": not an ISO-8601 UTC instant: \"yesterday\""));
        assertTrue(malformed(HEADER, EVENT.replace("\"id\":43", "\"id\":4300000000")).getMessage()
                .endsWith("field \"id\": 4300000000 is out of the int range"));
        assertTrue(malformed(HEADER, EVENT.replace("\"id\":43", "\"id\":43,\"id\":44")).getMessage()
                .contains("duplicate key \"id\""));
    }

    @Test
    void emptyFileIsAnError() throws IOException {
        TraceReader.MalformedTraceException e = malformed();
        assertTrue(e.getMessage().endsWith(":1: empty file, expected a sora-trace header line"), e.getMessage());
    }
}
