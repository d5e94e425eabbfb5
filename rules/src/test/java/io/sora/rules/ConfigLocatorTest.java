package io.sora.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ConfigLocatorTest {

    private static Properties props(String... keyValues) {
        Properties p = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            p.setProperty(keyValues[i], keyValues[i + 1]);
        }
        return p;
    }

    @Test
    void agentArgumentWinsOverBothProperties() {
        Map<String, String> args = Map.of("conf", "agent.conf", "trace", "mt");
        Properties p = props("sora.conf", "sora.conf.file", "com.ibm.net.rdma.conf", "jsor.conf");
        assertEquals(Optional.of(Path.of("agent.conf")), ConfigLocator.locate(args, p));
        assertEquals(Optional.of("agent argument conf"), ConfigLocator.origin(args, p));
    }

    @Test
    void soraPropertyWinsOverJsorProperty() {
        Properties p = props("sora.conf", "/etc/sora/rules.conf", "com.ibm.net.rdma.conf", "jsor.conf");
        assertEquals(Optional.of(Path.of("/etc/sora/rules.conf")), ConfigLocator.locate(Map.of(), p));
        assertEquals(Optional.of("-Dsora.conf"), ConfigLocator.origin(Map.of(), p));
    }

    @Test
    void jsorPropertyWorksUnchanged() {
        Properties p = props("com.ibm.net.rdma.conf", "rdma_server.conf");
        assertEquals(Optional.of(Path.of("rdma_server.conf")), ConfigLocator.locate(Map.of("other", "x"), p));
        assertEquals(Optional.of("-Dcom.ibm.net.rdma.conf"), ConfigLocator.origin(Map.of(), p));
    }

    @Test
    void propertyDefaultsAreSeen() {
        Properties p = new Properties(props("sora.conf", "from-defaults.conf"));
        assertEquals(Optional.of(Path.of("from-defaults.conf")), ConfigLocator.locate(null, p));
    }

    @Test
    void nothingSetMeansNoFile() {
        assertEquals(Optional.empty(), ConfigLocator.locate(Map.of(), new Properties()));
        assertEquals(Optional.empty(), ConfigLocator.origin(Map.of(), new Properties()));
        assertEquals(Optional.empty(), ConfigLocator.locate(null, null));
    }

    @Test
    void blankSettingIsAnErrorNamingTheSetting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConfigLocator.locate(Map.of("conf", " "), props("sora.conf", "x.conf")));
        assertEquals("agent argument conf is empty: give a configuration file, as in conf=rdma.conf", e.getMessage());
        IllegalArgumentException p = assertThrows(IllegalArgumentException.class,
                () -> ConfigLocator.locate(Map.of(), props("com.ibm.net.rdma.conf", "")));
        assertEquals("-Dcom.ibm.net.rdma.conf is empty: give a configuration file, as in "
                + "-Dcom.ibm.net.rdma.conf=rdma.conf", p.getMessage());
    }

    @Test
    void invalidPathIsAnErrorNamingTheSettingAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConfigLocator.locate(Map.of(), props("sora.conf", "bad\u0000name")));
        assertEquals("-Dsora.conf 'bad\u0000name' is not a valid path: Nul character not allowed", e.getMessage());
    }
}
