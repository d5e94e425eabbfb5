package io.sora.rules;

/** The second field of a rule: which socket operation the rule applies to. */
public enum RuleKind {
    /** Server side: connections accepted on a local address and port, optionally from listed clients only. */
    ACCEPT("accept"),
    /** Either side: the local address and port the fast-path endpoint binds to. */
    BIND("bind"),
    /** Client side: connections made to a remote address and port. */
    CONNECT("connect");

    private final String keyword;

    RuleKind(String keyword) {
        this.keyword = keyword;
    }

    /** The keyword as written in a configuration file, in lower case. */
    public String keyword() {
        return keyword;
    }

    /** The kind whose keyword is exactly {@code word} (case-sensitive), or null. */
    static RuleKind forKeyword(String word) {
        for (RuleKind k : values()) {
            if (k.keyword.equals(word)) {
                return k;
            }
        }
        return null;
    }
}
