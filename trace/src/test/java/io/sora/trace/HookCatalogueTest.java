package io.sora.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The catalogue is consistent and docs/trace.md lists every hook exactly as the code defines it. */
class HookCatalogueTest {
    private static final Path DOC = Path.of("..", "docs", "trace.md");
    /** {@code | JSOR.39 | initverbs | > | meaning | fields |} */
    private static final Pattern ROW =
            Pattern.compile("^\\|\\s*(mt|NET|JSOR)\\.(\\d+)\\s*\\|\\s*`?([^|`]+?)`?\\s*\\|\\s*`?([<>-])`?\\s*\\|.*\\|\\s*$");

    @Test
    void categoryAndIdIdentifyExactlyOneHook() {
        Map<String, Hook> seen = new HashMap<>();
        for (Hook h : Hook.values()) {
            Hook clash = seen.put(h.category().label() + "." + h.id(), h);
            assertNull(clash, h + " and " + clash + " share " + h.category().label() + "." + h.id());
            assertEquals(Optional.of(h), Hook.of(h.category(), h.id()));
        }
    }

    @Test
    void categoryNameAndDirectionAreUnique() {
        Map<String, Hook> seen = new HashMap<>();
        for (Hook h : Hook.values()) {
            Hook clash = seen.put(h.category() + "/" + h.hookName() + "/" + h.direction(), h);
            assertNull(clash, h + " and " + clash);
        }
    }

    @Test
    void everyEntryHasAnExitOfTheSameNameAndBackAgain() {
        for (Hook h : Hook.values()) {
            if (h.direction() == Hook.Direction.EVENT) {
                continue;
            }
            Hook.Direction other = h.direction() == Hook.Direction.ENTRY ? Hook.Direction.EXIT : Hook.Direction.ENTRY;
            boolean found = false;
            for (Hook g : Hook.values()) {
                found |= g.category() == h.category() && g.hookName().equals(h.hookName()) && g.direction() == other;
            }
            assertTrue(found, h + " has no " + other);
        }
    }

    @Test
    void theJsorInitialisationIdsMatchIbmsTrace() {
        assertEquals(List.of(0, 39, 43, 46, 47, 3), List.of(Hook.RDMA_INIT_ENTRY.id(), Hook.INITVERBS_ENTRY.id(),
                Hook.INITVERBS_EXIT.id(), Hook.INITJSOR_ENTRY.id(), Hook.INITJSOR_EXIT.id(), Hook.RDMA_INIT_EXIT.id()));
        assertEquals(440, Hook.INITIALIZE_ENTRY.id());
        assertEquals(441, Hook.INITIALIZE_EXIT.id());
    }

    @Test
    void docsTableListsEveryHookWithItsNameAndDirection() throws IOException {
        Map<String, String[]> rows = new HashMap<>();
        for (String line : Files.readAllLines(DOC, StandardCharsets.UTF_8)) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                String key = m.group(1) + "." + m.group(2);
                String[] previous = rows.put(key, new String[] {m.group(3).trim(), m.group(4)});
                assertNull(previous, "docs/trace.md lists " + key + " twice");
            }
        }
        Set<Hook> missing = EnumSet.noneOf(Hook.class);
        for (Hook h : Hook.values()) {
            String[] row = rows.remove(h.category().label() + "." + h.id());
            if (row == null) {
                missing.add(h);
                continue;
            }
            assertEquals(h.hookName(), row[0], "name of " + h + " in docs/trace.md");
            assertEquals(h.direction().symbol(), row[1], "direction of " + h + " in docs/trace.md");
        }
        assertEquals(Set.of(), missing, "hooks missing from docs/trace.md");
        assertEquals(Set.of(), rows.keySet(), "docs/trace.md lists hooks the code does not define");
    }
}
