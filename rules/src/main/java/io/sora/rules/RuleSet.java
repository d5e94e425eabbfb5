package io.sora.rules;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The rules of one configuration file, in file order.
 *
 * <p>Matching: the <em>first</em> rule in file order that matches wins, whatever its provider; the caller picks
 * the transport by {@link Rule#provider()}. Addresses are never resolved: an unresolved
 * {@link InetSocketAddress} matches nothing.
 *
 * <p>Immutable and thread-safe. The match methods allocate nothing but the JDK's copy of the address bytes,
 * and use no regular expressions.
 *
 * <pre>{@code
 * RuleSet rules = RuleSet.parse(Path.of("rdma_client.conf"));
 * rules.matchConnect(new InetSocketAddress(InetAddress.getByName("192.168.1.1"), 65444))
 *      .ifPresent(rule -> useFastPath(rule.provider(), rule.options()));
 * }</pre>
 */
public final class RuleSet {

    private static final RuleSet EMPTY = new RuleSet("(no rules)", List.of());

    private final String source;
    private final List<Rule> rules;
    private final Rule[] connect;
    private final Rule[] accept;
    private final Rule[] bind;

    RuleSet(String source, List<Rule> rules) {
        this.source = Objects.requireNonNull(source);
        this.rules = List.copyOf(rules);
        this.connect = ofKind(rules, RuleKind.CONNECT);
        this.accept = ofKind(rules, RuleKind.ACCEPT);
        this.bind = ofKind(rules, RuleKind.BIND);
    }

    private static Rule[] ofKind(List<Rule> rules, RuleKind kind) {
        List<Rule> out = new ArrayList<>();
        for (Rule r : rules) {
            if (r.kind() == kind) {
                out.add(r);
            }
        }
        return out.toArray(new Rule[0]);
    }

    /** A rule set with no rules: every connection stays on TCP. Its {@link #source()} is {@code (no rules)}. */
    public static RuleSet empty() {
        return EMPTY;
    }

    /**
     * Reads and parses a UTF-8 configuration file (a byte order mark and CRLF line ends are fine).
     *
     * @param file the file; error messages and {@link Rule#source()} name it as given ({@code file.toString()})
     * @return the file's rules
     * @throws RuleSyntaxException if any line is wrong; it lists the first error of every faulty line
     * @throws IOException if the file cannot be read (e.g. {@link java.nio.file.NoSuchFileException}, whose
     *                     message is the path); bytes that are not UTF-8 are an error of their line (a
     *                     {@link RuleSyntaxException}) outside comments, and ignored in one
     */
    public static RuleSet parse(Path file) throws RuleSyntaxException, IOException {
        // bytes that are not UTF-8 become U+FFFD: ignored in a comment (a Latin-1 or Shift_JIS remark in a
        // file JSOR read), an error naming its line and column in a rule (RuleParser)
        return parse(file.toString(), new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
    }

    /**
     * Parses configuration text.
     *
     * @param sourceName names the text in error messages and in {@link Rule#source()}
     * @param content    the configuration text
     * @return the text's rules
     * @throws RuleSyntaxException if any line is wrong; it lists the first error of every faulty line
     */
    public static RuleSet parse(String sourceName, String content) throws RuleSyntaxException {
        return RuleParser.parse(Objects.requireNonNull(sourceName, "sourceName"),
                Objects.requireNonNull(content, "content"));
    }

    /**
     * This set's rules, then {@code other}'s (JSOR's two rule files read together: {@link ConfigLocator#locateAll});
     * each rule keeps the file and line it came from.
     */
    public RuleSet and(RuleSet other) {
        if (other.isEmpty()) return this;
        if (isEmpty()) return other;
        List<Rule> all = new ArrayList<>(rules);
        all.addAll(other.rules);
        return new RuleSet(source + " + " + other.source, all);
    }

    /** All rules in file order; immutable. */
    public List<Rule> rules() {
        return rules;
    }

    /** True if there are no rules. */
    public boolean isEmpty() {
        return rules.isEmpty();
    }

    /** Whether any rule, of any kind, names {@code provider}: the agent prepares only the fast paths some rule uses. */
    public boolean uses(Provider provider) {
        for (Rule r : rules) {
            if (r.provider() == provider) return true;
        }
        return false;
    }

    /** The source name given to the parser. */
    public String source() {
        return source;
    }

    /** First CONNECT rule (file order) whose address and port match the remote end. */
    public Optional<Rule> matchConnect(InetSocketAddress remote) {
        Memo m = lastConnect;
        if (m == null || !m.end.equals(remote)) lastConnect = m = new Memo(remote, first(connect, remote));
        return m.rule;
    }

    /**
     * The last match of each kind, by the endpoint it was for (an application's connections mostly go to one
     * server, and a listener's all have its address): a connection's set-up runs interpreted in a cold JVM's
     * first connections, and asking the rules again cost a few per cent of it. The result depends only on the
     * endpoint's address bytes and port, which {@code InetSocketAddress.equals} compares.
     */
    private static final class Memo {
        final InetSocketAddress end;
        final Optional<Rule> rule;

        Memo(InetSocketAddress end, Optional<Rule> rule) {
            this.end = end;
            this.rule = rule;
        }
    }

    private volatile Memo lastConnect;
    private volatile Memo lastAccept;

    /**
     * First ACCEPT rule whose address and port match the accepted socket's local end. Does NOT check the
     * client list: the caller calls {@link Rule#allowsClient} and reports the reason when it says no.
     */
    public Optional<Rule> matchAccept(InetSocketAddress local) {
        Memo m = lastAccept;
        if (m == null || !m.end.equals(local)) lastAccept = m = new Memo(local, first(accept, local));
        return m.rule;
    }

    /**
     * True if some ACCEPT rule could match connections accepted by a server socket bound to {@code bound}: its
     * port must be in the rule's ports, and its address must match the rule's address, except that a wildcard
     * bound address ({@code 0.0.0.0}, {@code ::}) matches any rule address.
     */
    public boolean mayAccept(InetSocketAddress bound) {
        InetAddress a = bound.getAddress();
        if (a == null) {
            return false;
        }
        if (a.isAnyLocalAddress()) {
            for (Rule r : accept) {
                if (r.matchesPort(bound.getPort())) {
                    return true;
                }
            }
            return false;
        }
        return first(accept, bound).isPresent();
    }

    /**
     * First BIND rule for {@code provider} whose ports contain {@code port}. A rule with port {@code *} matches
     * every port; a rule with port 0 matches only 0.
     */
    public Optional<Rule> matchBind(Provider provider, int port) {
        Objects.requireNonNull(provider, "provider");
        for (Rule r : bind) {
            if (r.provider() == provider && r.matchesPort(port)) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }

    private static Optional<Rule> first(Rule[] candidates, InetSocketAddress end) {
        InetAddress a = Objects.requireNonNull(end, "address").getAddress();
        if (a == null || candidates.length == 0) {
            return Optional.empty();
        }
        byte[] b = a.getAddress();
        int family = AddressPattern.family(b);
        long hi = AddressPattern.high(b);
        long lo = AddressPattern.low(b);
        int port = end.getPort();
        for (Rule r : candidates) {
            if (r.matches(family, hi, lo, port)) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return source + " (" + rules.size() + (rules.size() == 1 ? " rule)" : " rules)");
    }
}
