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
    void jsorNioPropertyAloneIsTheFile() {
        Properties p = props("com.ibm.nio.rdma.conf", "nio.conf");
        assertEquals(Optional.of(Path.of("nio.conf")), ConfigLocator.locate(Map.of(), p));
        assertEquals(Optional.of("-Dcom.ibm.nio.rdma.conf"), ConfigLocator.origin(Map.of(), p));
        assertEquals(java.util.List.of(Path.of("nio.conf")), ConfigLocator.locateAll(Map.of(), p));
    }

    @Test
    void jsorsTwoPropertiesNamingTwoFilesGiveBothTheSocketsFirst() {
        Properties p = props("com.ibm.net.rdma.conf", "net.conf", "com.ibm.nio.rdma.conf", "nio.conf");
        assertEquals(java.util.List.of(Path.of("net.conf"), Path.of("nio.conf")), ConfigLocator.locateAll(Map.of(), p));
        assertEquals(Optional.of("-Dcom.ibm.net.rdma.conf"), ConfigLocator.origin(Map.of(), p));
        // the same file twice is read once
        Properties same = props("com.ibm.net.rdma.conf", "dir/../rdma.conf", "com.ibm.nio.rdma.conf", "rdma.conf");
        assertEquals(java.util.List.of(Path.of("dir/../rdma.conf")), ConfigLocator.locateAll(Map.of(), same));
    }

    @Test
    void soraSettingsStillWinOverJsorsNioProperty() {
        Properties p = props("sora.conf", "sora.conf.file", "com.ibm.net.rdma.conf", "net.conf", "com.ibm.nio.rdma.conf", "nio.conf");
        assertEquals(java.util.List.of(Path.of("sora.conf.file")), ConfigLocator.locateAll(Map.of(), p));
        assertEquals(java.util.List.of(Path.of("agent.conf")), ConfigLocator.locateAll(Map.of("conf", "agent.conf"), p));
        assertEquals(java.util.List.of(), ConfigLocator.locateAll(Map.of(), new Properties()));
    }

    @Test
    void aBlankNioPropertyIsAnErrorNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConfigLocator.locateAll(Map.of(), props("com.ibm.net.rdma.conf", "net.conf", "com.ibm.nio.rdma.conf", " ")));
        assertEquals("-Dcom.ibm.nio.rdma.conf is empty: give a configuration file, as in -Dcom.ibm.nio.rdma.conf=rdma.conf",
                e.getMessage());
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
