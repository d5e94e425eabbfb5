package io.sora.agent.launcher;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/** The agent's jar cache holds code this JVM runs: only a private directory of this user may be used. */
@EnabledOnOs(OS.LINUX)
class AgentCacheDirTest {
    @TempDir
    Path tmp;

    private Path privateDir(String name) throws IOException {
        return Files.createDirectory(tmp.resolve(name),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    }

    @Test
    void userNamesBecomeFileNamesWithoutSeparators() {
        assertTrue(AgentClassLoader.fileNameSafe("dom\\us er/x").equals("dom_us_er_x"));
    }

    @Test
    void aPrivateDirectoryOfThisUserIsAccepted() throws Exception {
        assertNull(AgentClassLoader.unsafeReason(privateDir("ok")));
    }

    @Test
    void aDirectoryOthersCanWriteIsRefused() throws Exception {
        Path d = privateDir("open");
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxrwxrwx"));
        String why = AgentClassLoader.unsafeReason(d);
        assertNotNull(why);
        assertTrue(why.contains("mode 777"), why);
    }

    @Test
    void aPrivateDirectoryInADirectoryOthersMayWriteWithoutTheStickyBitIsRefused() throws Exception {
        Path open = privateDir("open-parent");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path mine = Files.createDirectory(open.resolve("mine"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        String why = AgentClassLoader.unsafeReason(mine);
        assertNotNull(why, "another user could rename it away and put their own in its place");
        assertTrue(why.contains("no sticky bit"), why);
    }

    @Test
    void aSymbolicLinkIsRefusedEvenToAPrivateDirectory() throws Exception {
        Path link = Files.createSymbolicLink(tmp.resolve("link"), privateDir("target"));
        String why = AgentClassLoader.unsafeReason(link);
        assertNotNull(why);
        assertTrue(why.contains("symbolic link"), why);
    }

    @Test
    void aDirectoryOwnedByAnotherUserIsRefused() throws Exception {
        Path d = privateDir("theirs");
        UserPrincipal nobody = d.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        Assumptions.assumeFalse(nobody.equals(Files.getOwner(d)), "this test runs as nobody");
        try {
            Files.setOwner(d, nobody);
        } catch (IOException e) {
            Assumptions.abort("cannot give a directory away here (not root): " + e);
        }
        String why = AgentClassLoader.unsafeReason(d);
        assertNotNull(why);
        assertTrue(why.contains("owned by uid " + Files.getAttribute(d, "unix:uid")), why);
    }
}
