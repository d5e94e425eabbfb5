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

    /** {@code wait}, or {@code cap} when that is shorter (null: no cap). */
    static java.time.Duration capped(java.time.Duration wait, java.time.Duration cap) {
        return cap != null && cap.compareTo(wait) < 0 ? cap : wait;
    }

    /** {@code file:line} of the rule, as reasons name it. */
    static String where(Rule rule) {
        return rule.source() + ":" + rule.line();
    }

    /** Why a transport cannot serve: not built in, or its availability's cause. */
    static String cause(Transport t) {
        if (t == null) {
            return "transport not built in";
        }
        return t.availability().unavailabilityCause().map(Throwable::getMessage).orElse("unknown");
    }
}
