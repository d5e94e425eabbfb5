package io.sora.benchapps;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a sora JSON-lines trace and lists its path decisions ({@code NET.462}, {@code "hook":"path"}):
 * one per connection the agent looked at, saying which medium carried its bytes and why.
 */
final class TraceCheck {
    /** One path decision. */
    record PathEvent(long conn, String path, String reason, String detail) {
        /** The local port from the detail ({@code local=/127.0.0.1:51000 remote=...}); -1 when absent. */
        int localPort() {
            return port("local=");
        }

        /** The remote port from the detail; -1 when absent. */
        int remotePort() {
            return port("remote=");
        }

        private int port(String key) {
            for (String word : detail.split("\\s+")) {
                if (word.startsWith(key)) {
                    int colon = word.lastIndexOf(':');
                    try {
                        return Integer.parseInt(word.substring(colon + 1));
                    } catch (RuntimeException e) {
                        return -1;
                    }
                }
            }
            return -1;
        }

        @Override
        public String toString() {
            return "conn=" + conn + " path=" + path + " reason=" + reason + (detail.isEmpty() ? "" : " (" + detail + ")");
        }
    }

    private TraceCheck() {
    }

    static List<PathEvent> pathEvents(Path trace) throws IOException {
        List<PathEvent> events = new ArrayList<>();
        for (String line : Files.readAllLines(trace, StandardCharsets.UTF_8)) {
            if (!line.contains("\"hook\":\"path\"")) {
                continue;
            }
            String conn = field(line, "conn");
            events.add(new PathEvent(conn.isEmpty() ? 0 : Long.parseLong(conn),
                    field(line, "path"), field(line, "reason"), field(line, "detail")));
        }
        return events;
    }

    /** The value of a top-level string or integer field of one flat JSON object; "" when absent. */
    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\":(\"((?:[^\"\\\\]|\\\\.)*)\"|(-?\\d+))").matcher(json);
        if (!m.find()) {
            return "";
        }
        if (m.group(3) != null) {
            return m.group(3);
        }
        return m.group(2).replace("\\\"", "\"").replace("\\\\", "\\");
    }
}
