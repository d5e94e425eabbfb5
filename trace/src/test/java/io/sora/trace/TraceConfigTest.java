package io.sora.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class TraceConfigTest {

    @Test
    void jsorStyleSpecSelectsEachNamedCategory() {
        TraceConfig c = TraceConfig.parse("iprint=mt,iprint=NET", null);
        assertTrue(c.isOn(Category.MT));
        assertTrue(c.isOn(Category.NET));
        assertFalse(c.isOn(Category.JSOR));
        assertTrue(c.anyOn());
    }

    @Test
    void allAndPrintSynonymAndCaseInsensitiveNames() {
        TraceConfig all = TraceConfig.parse("iprint=ALL", null);
        for (Category cat : Category.values()) {
            assertTrue(all.isOn(cat), cat.label());
        }
        TraceConfig c = TraceConfig.parse("print=jsor, PRINT=Mt", null);
        assertTrue(c.isOn(Category.JSOR));
        assertTrue(c.isOn(Category.MT));
        assertFalse(c.isOn(Category.NET));
    }

    @Test
    void agentArgumentSeparatorsPlusAndSemicolonWorkLikeCommas() {
        TraceConfig plus = TraceConfig.parse("iprint=mt+iprint=NET", null);
        TraceConfig semi = TraceConfig.parse("iprint=mt;iprint=NET", null);
        for (TraceConfig c : List.of(plus, semi)) {
            assertTrue(c.isOn(Category.MT));
            assertTrue(c.isOn(Category.NET));
            assertFalse(c.isOn(Category.JSOR));
        }
    }

    @Test
    void nullBlankAndEmptyTokensMeanOff() {
        assertFalse(TraceConfig.parse(null, null).anyOn());
        assertFalse(TraceConfig.parse("  ", null).anyOn());
        assertFalse(TraceConfig.parse(",,", null).anyOn());
    }

    @Test
    void unknownCategoryIsNamedExactly() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TraceConfig.parse("iprint=mt,iprint=FOO", null));
        assertEquals("trace option 'iprint=FOO': unknown category 'FOO' (valid: mt, NET, JSOR, all)", e.getMessage());
    }

    @Test
    void unknownKeyAndMissingValueAreNamedExactly() {
        IllegalArgumentException key = assertThrows(IllegalArgumentException.class,
                () -> TraceConfig.parse("iprint=mt,maximal=8k", null));
        assertEquals("trace option 'maximal=8k': unknown key 'maximal' (valid: iprint, print, methods)", key.getMessage());
        IllegalArgumentException bare = assertThrows(IllegalArgumentException.class,
                () -> TraceConfig.parse("mt", null));
        assertEquals("trace option 'mt': expected key=value (valid keys: iprint, print, methods)", bare.getMessage());
    }

    @Test
    void methodsBracesKeepTheirCommasAndFilterMtHooksByGlob() {
        TraceConfig c = TraceConfig.parse(
                "methods={java/net/Socket.connect,java/net/ServerSocket.*},iprint=mt,iprint=NET", null);
        assertEquals(List.of("java/net/Socket.connect", "java/net/ServerSocket.*"), c.methodGlobs());
        assertTrue(c.selects(Hook.SOCKET_CONNECT_ENTRY));
        assertTrue(c.selects(Hook.SERVER_SOCKET_ACCEPT_EXIT));
        assertFalse(c.selects(Hook.SOCKET_CLOSE_ENTRY));
        // the filter is about mt only: NET hooks pass, JSOR ones are off by category
        assertTrue(c.selects(Hook.PATH));
        assertFalse(c.selects(Hook.INITVERBS_ENTRY));
    }

    @Test
    void methodsGlobMatchesLikeJsorsRdmaStarStar() {
        TraceConfig c = TraceConfig.parse("iprint=mt,methods={java/net/Sock*.*}", null);
        assertTrue(c.selects(Hook.SOCKET_GET_INPUT_STREAM_ENTRY));
        assertFalse(c.selects(Hook.SERVER_SOCKET_BIND_ENTRY));
        TraceConfig none = TraceConfig.parse("iprint=mt", null);
        for (Hook h : Hook.values()) {
            assertEquals(h.category() == Category.MT, none.selects(h), h.name());
        }
    }

    @Test
    void methodsInsideAnAgentArgumentUsePlus() {
        TraceConfig c = TraceConfig.parse("iprint=mt+methods={java/net/Socket.close+java/net/ServerSocket.close}", null);
        assertEquals(List.of("java/net/Socket.close", "java/net/ServerSocket.close"), c.methodGlobs());
    }

    @Test
    void malformedMethodsAreRejectedNamingTheOption() {
        IllegalArgumentException unclosed = assertThrows(IllegalArgumentException.class,
                () -> TraceConfig.parse("iprint=mt,methods={java/net/Socket.*", null));
        assertEquals("trace option 'iprint=mt,methods={java/net/Socket.*': unclosed '{'", unclosed.getMessage());
        IllegalArgumentException noBraces = assertThrows(IllegalArgumentException.class,
                () -> TraceConfig.parse("methods=java/net/Socket.*", null));
        assertTrue(noBraces.getMessage().startsWith("trace option 'methods=java/net/Socket.*': expected methods={"),
                noBraces.getMessage());
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
                () -> TraceConfig.parse("methods={}", null));
        assertEquals("trace option 'methods={}': no method pattern inside the braces", empty.getMessage());
    }

    @Test
    void outputFormatFollowsTheFileName() {
        assertEquals(TraceConfig.Format.TEXT, TraceConfig.parse("iprint=NET", null).format());
        assertNull(TraceConfig.parse("iprint=NET", " ").file());
        TraceConfig json = TraceConfig.parse("iprint=NET", "/tmp/x/client.trace");
        assertEquals(TraceConfig.Format.JSON_LINES, json.format());
        assertEquals(Path.of("/tmp/x/client.trace"), json.file());
        assertEquals(TraceConfig.Format.TEXT, TraceConfig.parse("iprint=NET", "client.TXT").format());
    }

    @Test
    void percentPBecomesThePid() {
        TraceConfig c = TraceConfig.parse("iprint=NET", "/tmp/sora-%p.trace");
        assertEquals(Path.of("/tmp/sora-" + ProcessHandle.current().pid() + ".trace"), c.file());
    }

    @Test
    void readsBothSystemProperties() {
        Properties p = new Properties();
        p.setProperty("sora.trace", "iprint=JSOR");
        p.setProperty("sora.trace.file", "out.trace");
        TraceConfig c = TraceConfig.fromSystemProperties(p);
        assertTrue(c.isOn(Category.JSOR));
        assertFalse(c.isOn(Category.NET));
        assertEquals(Path.of("out.trace"), c.file());
        assertFalse(TraceConfig.fromSystemProperties(new Properties()).anyOn());
    }
}
