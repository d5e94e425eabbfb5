package io.sora.transport;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * What the running JDK's socket reads do, read from its own class file where no API says it: whether
 * {@code sun.nio.ch.NioSocketImpl.read(byte[], int, int)} takes its read lock with {@code tryLock}, so that
 * the wait for the lock counts in {@code SO_TIMEOUT} (JDK 25) or not (JDK 17). A paired socket's stream
 * does as the JDK's does ({@link RingInputStream}).
 */
final class JdkSocketReads {
    private JdkSocketReads() {
    }

    /** False when the class file cannot be read or parsed (then reads wait for the lock, as JDK 17's). */
    static boolean readCallsTryLock() {
        try (InputStream in = Object.class.getResourceAsStream("/sun/nio/ch/NioSocketImpl.class")) {
            return in != null && calls(new DataInputStream(in), "read", "([BII)I", "tryLock");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Whether method {@code name}{@code desc} of the class file in {@code in} invokes (static, virtual or
     * interface) a method named {@code callee} that takes a timeout ({@code long} then {@code TimeUnit}: JDK
     * 25's helper and {@code ReentrantLock.tryLock(long, TimeUnit)} alike): an invoke opcode followed by the
     * index of such a method reference (an operand that happened to read so would be a false yes, which the
     * indexes of this class make very unlikely).
     */
    static boolean calls(DataInputStream in, String name, String desc, String callee) throws IOException {
        if (in.readInt() != 0xCAFEBABE) return false;
        in.readUnsignedShort();
        in.readUnsignedShort();
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        int[] refNameAndType = new int[count]; // Methodref / InterfaceMethodref: its NameAndType
        int[] nameOf = new int[count];         // NameAndType: its name
        int[] descOf = new int[count];         // NameAndType: its descriptor
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8[i] = in.readUTF();
                case 3, 4 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++; // two slots
                }
                case 7, 8, 16, 19, 20 -> in.readUnsignedShort();
                case 9 -> in.readInt();
                case 10, 11 -> {
                    in.readUnsignedShort();
                    refNameAndType[i] = in.readUnsignedShort();
                }
                case 12 -> {
                    nameOf[i] = in.readUnsignedShort();
                    descOf[i] = in.readUnsignedShort();
                }
                case 15 -> {
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                case 17, 18 -> in.readInt();
                default -> throw new IOException("constant pool tag " + tag);
            }
        }
        in.readUnsignedShort();
        in.readUnsignedShort();
        in.readUnsignedShort();
        skipInterfaces(in);
        skipMembers(in); // fields
        int methods = in.readUnsignedShort();
        for (int m = 0; m < methods; m++) {
            in.readUnsignedShort();
            boolean wanted = name.equals(utf8[in.readUnsignedShort()]) & desc.equals(utf8[in.readUnsignedShort()]);
            int attributes = in.readUnsignedShort();
            for (int a = 0; a < attributes; a++) {
                String attribute = utf8[in.readUnsignedShort()];
                int length = in.readInt();
                if (!wanted || !"Code".equals(attribute)) {
                    in.skipNBytes(length);
                    continue;
                }
                byte[] code = new byte[length];
                in.readFully(code);
                // max_stack, max_locals, code_length, then the bytecode
                int codeLength = ((code[4] & 0xff) << 24) | ((code[5] & 0xff) << 16) | ((code[6] & 0xff) << 8) | (code[7] & 0xff);
                for (int i = 8; i + 2 < 8 + codeLength && i + 2 < code.length; i++) {
                    int op = code[i] & 0xff;
                    if (op != 0xb8 && op != 0xb6 && op != 0xb9) continue; // invokestatic, invokevirtual, invokeinterface
                    int index = ((code[i + 1] & 0xff) << 8) | (code[i + 2] & 0xff);
                    if (index <= 0 || index >= count || refNameAndType[index] == 0) continue;
                    int nt = refNameAndType[index];
                    String d = utf8[descOf[nt]];
                    if (callee.equals(utf8[nameOf[nt]]) && d != null && d.contains("JLjava/util/concurrent/TimeUnit;")) return true;
                }
                return false;
            }
        }
        return false;
    }

    private static void skipInterfaces(DataInputStream in) throws IOException {
        in.skipNBytes(2L * in.readUnsignedShort());
    }

    private static void skipMembers(DataInputStream in) throws IOException {
        int n = in.readUnsignedShort();
        for (int i = 0; i < n; i++) {
            in.skipNBytes(6);
            int attributes = in.readUnsignedShort();
            for (int a = 0; a < attributes; a++) {
                in.skipNBytes(2);
                in.skipNBytes(in.readInt());
            }
        }
    }
}
