package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void writesNestedValuesWithEscapesAndNullForNaN() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", "tcp \"split\"\n\\");
        m.put("rtt", 2.5);
        m.put("count", 7L);
        m.put("missing", Double.NaN);
        m.put("sizes", new int[] {64, 4096});
        m.put("rows", List.of(new String[] {"a", "b"}, new String[] {"c"}));
        m.put("ok", true);
        String json = Json.write(m).replaceAll("\\s+", "");
        assertEquals("{\"name\":\"tcp\\\"split\\\"\\n\\\\\",\"rtt\":2.5,\"count\":7,\"missing\":null,"
                + "\"sizes\":[64,4096],\"rows\":[[\"a\",\"b\"],[\"c\"]],\"ok\":true}", json);
    }

    @Test
    void numbersKeepSixSignificantDigitsWithoutTrailingZeros() {
        assertEquals("[0.000123,1234.57,1e-07,3]\n",
                Json.write(List.of(0.000123, 1234.5678, 1e-7, 3.0)).replaceAll("[ \\n]+(?=.)", ""));
    }

    @Test
    void refusesUnknownTypes() {
        assertThrows(IllegalArgumentException.class, () -> Json.write(List.of(new Object())));
    }
}
