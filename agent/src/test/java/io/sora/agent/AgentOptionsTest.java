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
