package io.sora.agent;

import io.sora.rules.Rule;
import io.sora.transport.PairingOptions;
import io.sora.transport.Transport;

/** How a rule and a transport enter a pairing and its reasons: options, where a rule is, why a transport is out. */
final class RuleTerms {
    private RuleTerms() {
    }

    /** The pairing options of a rule (buffer sizes, fallback wait). */
    static PairingOptions options(Rule rule) {
        return new PairingOptions(rule.options().sendBufferSize(), rule.options().receiveBufferSize(),
                rule.options().fallbackWait());
    }

    /** The pairing options of a rule, its wait {@link #capped} by {@code maxWait} (null: the rule's). */
    static PairingOptions options(Rule rule, java.time.Duration maxWait) {
        return new PairingOptions(rule.options().sendBufferSize(), rule.options().receiveBufferSize(),
                capped(rule.options().fallbackWait(), maxWait));
    }

    /** {@code wait}, or {@code cap} when that is shorter (null: no cap). */
    static java.time.Duration capped(java.time.Duration wait, java.time.Duration cap) {
        return cap != null && cap.compareTo(wait) < 0 ? cap : wait;
    }

    /** {@code file:line} of the rule, as reasons name it. */
    static String where(Rule rule) {
        return rule.source() + ":" + rule.line();
    }

    /**
     * The rules of {@code rules} that have no effect, each with its place and why: {@code shm bind} rules
     * (a shm connection binds no address or port of its own) and every {@code rdma bind} rule after the
     * first (only that one sets a client's RDMA address and port). Said at the start rather than silently
     * ignored, as they were until 2026-11-29.
     */
    static java.util.List<String> ignored(io.sora.rules.RuleSet rules) {
        java.util.List<String> out = new java.util.ArrayList<>();
        Rule firstRdmaBind = null;
        for (Rule r : rules.rules()) {
            if (r.kind() != io.sora.rules.RuleKind.BIND) continue;
            String why;
            if (r.provider() == io.sora.rules.Provider.SHM) {
                why = "shm bind rules have no effect (a shm connection binds no address or port of its own)";
            } else if (firstRdmaBind == null) {
                firstRdmaBind = r;
                continue;
            } else {
                why = "only the first rdma bind rule (" + where(firstRdmaBind) + ") applies";
            }
            out.add(where(r) + ": " + why + "; this rule is ignored");
        }
        return out;
    }

    /** Why a transport cannot serve: not built in, or its availability's cause. */
    static String cause(Transport t) {
        if (t == null) {
            return "transport not built in";
        }
        return t.availability().unavailabilityCause().map(Throwable::getMessage).orElse("unknown");
    }
}
