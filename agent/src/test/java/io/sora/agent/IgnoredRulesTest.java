package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sora.rules.RuleSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Rules that have no effect are named at the start, with their place and why (they were silently ignored). */
class IgnoredRulesTest {
    @Test
    void shmBindRulesAndEveryRdmaBindRuleAfterTheFirstAreNamed() throws Exception {
        RuleSet rules = RuleSet.parse("b.conf", String.join("\n",
                "shm accept 127.0.0.1 7107",
                "shm bind 127.0.0.1 7107",
                "rdma bind 0.0.0.0 65333",
                "rdma bind 10.0.0.1 65334",
                "rdma connect 10.0.0.2 80"));
        assertEquals(List.of(
                "b.conf:2: shm bind rules have no effect (a shm connection binds no address or port of its own); this rule is ignored",
                "b.conf:4: only the first rdma bind rule (b.conf:3) applies; this rule is ignored"), RuleTerms.ignored(rules));
        assertEquals(List.of(), RuleTerms.ignored(RuleSet.parse("c.conf", "rdma bind 0.0.0.0 65333\nshm connect 127.0.0.1 80\n")));
    }
}
