package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class AgentOptionsTest {
    @Test
    void parsesConfTraceAndTraceFile() {
        AgentOptions o = AgentOptions.parse("conf=/etc/sora/server.conf,trace=iprint=mt+iprint=NET;iprint=JSOR,trace.file=/tmp/t.json");
        assertEquals(Map.of("conf", "/etc/sora/server.conf", "trace", "iprint=mt+iprint=NET;iprint=JSOR",
                "trace.file", "/tmp/t.json"), o.asMap());
        assertEquals("iprint=mt,iprint=NET,iprint=JSOR", o.traceSpec(new Properties()));
        assertEquals("/tmp/t.json", o.traceFile(new Properties()));
    }

    /** JSOR's commas inside the trace spec continue it; the agent's own options after it still count. */
    @Test
    void commasAfterTraceContinueTheTraceSpec() {
        AgentOptions o = AgentOptions.parse("conf=t.conf,trace=iprint=NET,iprint=JSOR,trace.file=/tmp/t.json");
        assertEquals(Map.of("conf", "t.conf", "trace", "iprint=NET,iprint=JSOR", "trace.file", "/tmp/t.json"), o.asMap());
        assertEquals("iprint=NET,iprint=JSOR", o.traceSpec(new Properties()));
        // a mistake there is the trace's (its parser names it), not an option the agent refuses
        assertEquals("iprint=NET,bogus", AgentOptions.parse("trace=iprint=NET,bogus").asMap().get("trace"));
    }

    @Test
    void bracesKeepTheirCommas() {
        AgentOptions o = AgentOptions.parse("trace=methods={java/net/Socket.*,java/net/ServerSocket.*}+iprint=mt");
        assertEquals("methods={java/net/Socket.*,java/net/ServerSocket.*}+iprint=mt", o.asMap().get("trace"));
    }

    @Test
    void systemPropertiesApplyWhenTheArgumentIsSilent() {
        Properties p = new Properties();
        p.setProperty("sora.trace", "iprint=NET");
        p.setProperty("sora.trace.file", "x.txt");
        AgentOptions o = AgentOptions.parse(null);
        assertEquals("iprint=NET", o.traceSpec(p));
        assertEquals("x.txt", o.traceFile(p));
        assertNull(AgentOptions.parse("").traceSpec(new Properties()));
    }

    @Test
    void agentArgumentWinsOverSystemProperty() {
        Properties p = new Properties();
        p.setProperty("sora.trace", "iprint=NET");
        assertEquals("iprint=JSOR", AgentOptions.parse("trace=iprint=JSOR").traceSpec(p));
    }

    @Test
    void unknownOrMalformedOptionsNameTheOffendingText() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse("cnf=x"));
        assertEquals("unknown agent option 'cnf' in 'cnf=x' (known: conf, trace, trace.file)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse("conf=a,verbose"));
        assertEquals("agent option 'verbose' is not key=value (known: conf, trace, trace.file)", e.getMessage());
    }
}
