package io.sora.agent;

import io.sora.rules.Provider;
import io.sora.rules.Rule;
import io.sora.rules.RuleKind;
import io.sora.rules.RuleSet;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.Availability;
import io.sora.transport.Transport;
import io.sora.transport.disni.DisniTransport;
import io.sora.transport.shm.ShmSettings;
import io.sora.transport.shm.ShmTransport;
import java.lang.instrument.Instrumentation;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * The fast paths of this JVM, probed once at start-up. The sequence and its trace reproduce JSOR's
 * initialisation: {@code RDMA_Init} wraps {@code initverbs} (is an RDMA device usable through DiSNI?)
 * and {@code initjsor} (sora's stream protocol and the same-host {@code shm} medium). RDMA_Init's
 * return code is 0 when at least one fast path is usable, -1 otherwise; neither is an error the
 * application sees.
 */
final class FastPaths {
    /** What {@code status} shows for a fast path no rule uses: it was never probed. */
    static final String NOT_PROBED = io.sora.agent.status.StatusTable.NOT_PROBED + " (no rule in the configuration uses it)";
    private static final Availability NOT_USED = Availability.unavailable(new IllegalStateException(NOT_PROBED));

    private final Map<Provider, Transport> transports;

    private final java.util.Set<Provider> deferred;

    private FastPaths(Map<Provider, Transport> transports, java.util.Set<Provider> deferred) {
        this.transports = transports;
        this.deferred = java.util.Collections.unmodifiableSet(deferred);
    }

    /** The fast paths whose probe was left to {@link #probeDeferred} (or to the first connection). */
    java.util.Set<Provider> deferred() {
        return deferred;
    }

    /** Probes every fast path (the operator's tools: doctor, status of this machine). */
    static FastPaths initialize(Tracer tracer) {
        return initialize(tracer, RuleSet.empty(), null, true);
    }

    /**
     * Probes only the fast paths the rules use, and all of them when the JSOR trace is on (its
     * {@code initverbs}/{@code initjsor} lines report every probe, as JSOR's did). A path no rule
     * uses costs nothing: the RDMA probe loads DiSNI and libibverbs and, where a device exists, pairs
     * a self-test connection (tens of milliseconds to seconds of the application's start-up).
     */
    static FastPaths initialize(Tracer tracer, RuleSet rules, Instrumentation inst) {
        return initialize(tracer, rules, inst, tracer.isOn(Category.JSOR));
    }

    /**
     * @param rules the agent's rules: the first {@code rdma bind} rule sets where client RDMA
     *              connections bind (a wildcard address = the RDMA device's)
     * @param inst  the agent's instrumentation; null outside an agent (DiSNI's module access is then not checked)
     */
    private static FastPaths initialize(Tracer tracer, RuleSet rules, Instrumentation inst, boolean probeAll) {
        boolean rdmaUsed = probeAll || rules.uses(Provider.RDMA);
        boolean shmUsed = probeAll || rules.uses(Provider.SHM);
        Map<Provider, Transport> map = new EnumMap<>(Provider.class);
        java.util.Set<Provider> deferred = java.util.EnumSet.noneOf(Provider.class);
        // JSOR's layering: the NET boundary (initialize0) wraps the native RDMA_Init
        if (tracer.isOn(Category.NET)) {
            tracer.entry(Hook.INITIALIZE_ENTRY, 0, null);
        }
        entry(tracer, Hook.RDMA_INIT_ENTRY, null);

        Availability rdmaAvailability = NOT_USED;
        if (rdmaUsed) {
            String denied = inst == null ? null : RdmaModuleAccess.check(FastPaths.class.getClassLoader());
            entry(tracer, Hook.INITVERBS_ENTRY, denied);
            // DiSNI logs through SLF4J: bound to the agent's log first, never to what -Dslf4j.provider names
            io.sora.agent.logging.SoraSlf4jProvider.bindWithoutLookingUp();
            DisniTransport rdma = DisniTransport.create(tracer);
            applyBindRule(rdma, rules);
            rdmaAvailability = rdma.availability();
            exit(tracer, Hook.INITVERBS_EXIT, rdmaAvailability);
            map.put(Provider.RDMA, rdma);
        }

        // shm's probe is left to the background thread (probeDeferred) or the first connection that
        // needs it, whichever comes first; with the JSOR trace it runs now, for initjsor's line
        boolean shmUsable = false; // as far as known now
        if (shmUsed) {
            ShmTransport shm = new ShmTransport(ShmSettings.fromSystemProperties(), tracer);
            map.put(Provider.SHM, shm);
            if (tracer.isOn(Category.JSOR)) {
                entry(tracer, Hook.INITJSOR_ENTRY, null);
                shm.initialize();
                exit(tracer, Hook.INITJSOR_EXIT, shm.availability());
                shmUsable = shm.availability().isAvailable();
            } else {
                deferred.add(Provider.SHM);
                shmUsable = true; // not probed yet (RDMA_Init is not traced then; NET's initialize reports 0)
            }
        }

        boolean any = rdmaAvailability.isAvailable() || shmUsable;
        if (tracer.isOn(Category.JSOR)) {
            tracer.exit(Hook.RDMA_INIT_EXIT, 0, any ? 0 : -1, null);
        }
        if (tracer.isOn(Category.NET)) {
            tracer.exit(Hook.INITIALIZE_EXIT, 0, any ? 0 : -1, null);
        }
        return new FastPaths(Collections.unmodifiableMap(map), deferred);
    }

    private static void applyBindRule(DisniTransport rdma, RuleSet rules) {
        for (Rule r : rules.rules()) {
            if (r.kind() == RuleKind.BIND && r.provider() == Provider.RDMA) {
                rdma.setClientBind(r.isWildcardAddress() ? null : r.address().orElse(null), r.ports().lowest(),
                        r.ports()::contains);
                return;
            }
        }
    }

    private static void entry(Tracer tracer, Hook hook, String detail) {
        if (tracer.isOn(Category.JSOR)) {
            tracer.entry(hook, 0, detail);
        }
    }

    private static void exit(Tracer tracer, Hook hook, Availability a) {
        if (tracer.isOn(Category.JSOR)) {
            tracer.exit(hook, 0, a.isAvailable() ? 0 : -1,
                    a.unavailabilityCause().map(c -> "cause=" + c.getMessage()).orElse(null));
        }
    }

    /** Probes what {@link #initialize} left to the first use (from a background thread at start-up). */
    void probeDeferred() {
        for (Transport t : transports.values()) {
            t.availability();
        }
    }

    Map<Provider, Transport> transports() {
        return transports;
    }
}
