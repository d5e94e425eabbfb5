package io.sora.rules;

import java.net.InetAddress;
import java.util.Objects;
import java.util.Optional;

/**
 * One line of a configuration file: {@code <provider> <kind> <address> <ports> [clients...] [key=value...]}.
 *
 * <p>Immutable and thread-safe. The match methods do not allocate beyond the JDK's copy of the address bytes
 * and use no regular expressions: they run on every connect and accept.
 */
public final class Rule {

    private static final AddressPattern[] NO_CLIENTS = new AddressPattern[0];

    private final Provider provider;
    private final RuleKind kind;
    private final String source;
    private final int line;
    private final String text;
    private final String canonical;
    private final AddressPattern address;
    private final PortSet ports;
    private final AddressPattern[] clients; // accept only; empty = any client
    private final RuleOptions options;

    Rule(Provider provider, RuleKind kind, String source, int line, String text, String canonical,
            AddressPattern address, PortSet ports, AddressPattern[] clients, RuleOptions options) {
        this.provider = Objects.requireNonNull(provider);
        this.kind = Objects.requireNonNull(kind);
        this.source = Objects.requireNonNull(source);
        this.line = line;
        this.text = Objects.requireNonNull(text);
        this.canonical = Objects.requireNonNull(canonical);
        this.address = Objects.requireNonNull(address);
        this.ports = Objects.requireNonNull(ports);
        this.clients = clients.length == 0 ? NO_CLIENTS : clients.clone();
        this.options = Objects.requireNonNull(options);
    }

    /** Field 1: which fast path carries a matching connection. */
    public Provider provider() {
        return provider;
    }

    /** Field 2: accept, bind or connect. */
    public RuleKind kind() {
        return kind;
    }

    /** The source name the rule was parsed from (for files, the path as given). */
    public String source() {
        return source;
    }

    /** 1-based line number in {@link #source()}. */
    public int line() {
        return line;
    }

    /** The rule's line without its comment, trimmed (inner white space as in the file). */
    public String text() {
        return text;
    }

    /** The rule's options; {@link RuleOptions#defaults()} for those not given. */
    public RuleOptions options() {
        return options;
    }

    /** Field 4: the ports. */
    public PortSet ports() {
        return ports;
    }

    /**
     * Field 3 as an address, or empty for a wildcard ({@code *}, {@code 0.0.0.0}, {@code ::}). For a bind rule
     * a wildcard means "the host's first address of the provider", which the transport resolves.
     */
    public Optional<InetAddress> address() {
        return Optional.ofNullable(address.toInetAddress());
    }

    /** True if field 3 is {@code *}, {@code 0.0.0.0} or {@code ::} (any address of either family). */
    public boolean isWildcardAddress() {
        return address.isAny();
    }

    /**
     * Whether {@code a} matches field 3: a wildcard matches every address; otherwise the bytes must be equal,
     * IPv4-mapped IPv6 ({@code ::ffff:a.b.c.d}) comparing equal to {@code a.b.c.d}. Zone ids are ignored.
     */
    public boolean matchesAddress(InetAddress a) {
        return address.matches(Objects.requireNonNull(a, "address"));
    }

    /** Whether {@code port} is in field 4. */
    public boolean matchesPort(int port) {
        return ports.contains(port);
    }

    /**
     * For an accept rule, whether {@code client} is in its client list (fields 5 onwards: addresses, CIDR
     * blocks, {@code *}); an accept rule without a client list allows every client. For other kinds, true.
     * IPv4-mapped IPv6 client addresses are compared as IPv4.
     */
    public boolean allowsClient(InetAddress client) {
        Objects.requireNonNull(client, "client");
        if (clients.length == 0) {
            return true;
        }
        byte[] b = client.getAddress();
        int family = AddressPattern.family(b);
        long hi = AddressPattern.high(b);
        long lo = AddressPattern.low(b);
        for (AddressPattern p : clients) {
            if (p.matches(family, hi, lo)) {
                return true;
            }
        }
        return false;
    }

    /** Address-and-port match on a precomputed address key; used by {@link RuleSet} to look the key up once. */
    boolean matches(int family, long hi, long lo, int port) {
        return ports.contains(port) && address.matches(family, hi, lo);
    }

    /** E.g. {@code server.conf:3: rdma accept 192.168.1.1 65444 192.168.1.3}: fields joined by one space. */
    @Override
    public String toString() {
        return source + ":" + line + ": " + canonical;
    }
}
