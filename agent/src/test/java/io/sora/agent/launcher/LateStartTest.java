package io.sora.agent.launcher;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Without a rule file, a trace or any argument, the agent loads nothing while the application starts. */
class LateStartTest {
    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) p.setProperty(kv[i], kv[i + 1]);
        return p;
    }

    @Test
    void nothingGivenMeansNothingToDoAtStartUp() {
        assertTrue(SoraLauncher.hasNothingToDoAtStartUp(null, props()));
        assertTrue(SoraLauncher.hasNothingToDoAtStartUp("  ", props("sora.jmx.delay", "0")));
    }

    @Test
    void aRuleFileATraceOrAnyArgumentMeansAStartNow() {
        assertFalse(SoraLauncher.hasNothingToDoAtStartUp("conf=x.conf", props()));
        assertFalse(SoraLauncher.hasNothingToDoAtStartUp("trace=iprint=NET", props()));
        assertFalse(SoraLauncher.hasNothingToDoAtStartUp(null, props("sora.conf", "x.conf")));
        assertFalse(SoraLauncher.hasNothingToDoAtStartUp(null, props("com.ibm.net.rdma.conf", "x.conf")));
        assertFalse(SoraLauncher.hasNothingToDoAtStartUp(null, props("com.ibm.nio.rdma.conf", "x.conf")));
        assertFalse(SoraLauncher.hasNothingToDoAtStartUp(null, props("sora.trace", "iprint=NET")));
    }

    @Test
    void aRuleFileAloneStartsBesideMainATraceOrTheSwitchBeforeIt() {
        assertTrue(SoraLauncher.startsBesideMain("conf=x.conf", props()));
        assertTrue(SoraLauncher.startsBesideMain(null, props("sora.conf", "x.conf")));
        assertFalse(SoraLauncher.startsBesideMain("conf=x.conf,trace=iprint=NET", props()));
        assertFalse(SoraLauncher.startsBesideMain(null, props("sora.trace", "iprint=NET")));
        assertFalse(SoraLauncher.startsBesideMain(null, props("sora.startup.background", "false")));
        assertFalse(SoraLauncher.startsBesideMain(null, props("sora.instrumentation.bytebuddy", "true")));
    }
}
