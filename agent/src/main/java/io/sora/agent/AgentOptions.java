package io.sora.agent;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The agent's options: {@code -javaagent:sora-agent.jar=conf=FILE,trace=iprint=mt+iprint=NET,trace.file=PATH}.
 * Options are separated by commas, so inside an option value {@code +} or {@code ;} stand for commas
 * (the trace spec {@code iprint=mt,iprint=NET} becomes {@code trace=iprint=mt+iprint=NET}); after
 * {@code trace=}, what is not one of the agent's options continues the trace spec, so JSOR's commas
 * ({@code trace=iprint=mt,iprint=NET}) work too.
 * System properties ({@code sora.conf}, {@code com.ibm.net.rdma.conf}, {@code sora.trace},
 * {@code sora.trace.file}) apply where the agent argument says nothing.
 */
public final class AgentOptions {
    private static final java.util.Set<String> KNOWN = java.util.Set.of("conf", "trace", "trace.file");

    private final Map<String, String> args;

    private AgentOptions(Map<String, String> args) {
        this.args = Collections.unmodifiableMap(args);
    }

    /** Parses the agent argument string; null or blank means no options. */
    public static AgentOptions parse(String agentArgs) {
        Map<String, String> m = new LinkedHashMap<>();
        if (agentArgs != null && !agentArgs.isBlank()) {
            String last = null;
            for (String part : splitTopLevel(agentArgs)) {
                String p = part.trim();
                if (p.isEmpty()) {
                    continue;
                }
                int eq = p.indexOf('=');
                String key = eq <= 0 ? null : p.substring(0, eq).trim();
                if ("trace".equals(last) && (key == null || !KNOWN.contains(key))) {
                    // JSOR's comma inside the trace spec (trace=iprint=NET,iprint=JSOR): the rest of the spec,
                    // not an option of the agent's; a mistake in it costs the trace, not the rules (it
                    // stopped the whole agent, every connection on TCP)
                    m.put("trace", m.get("trace") + "," + p);
                    continue;
                }
                if (key == null) {
                    throw new IllegalArgumentException("agent option '" + p + "' is not key=value (known: conf, trace, trace.file)");
                }
                if (!KNOWN.contains(key)) {
                    throw new IllegalArgumentException("unknown agent option '" + key + "' in '" + p + "' (known: conf, trace, trace.file)");
                }
                m.put(key, p.substring(eq + 1).trim());
                last = key;
            }
        }
        return new AgentOptions(m);
    }

    /** Commas split options, except inside braces ({@code methods={a,b}}). */
    private static java.util.List<String> splitTopLevel(String s) {
        java.util.List<String> out = new java.util.ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}') {
                depth = Math.max(0, depth - 1);
            } else if (c == ',' && depth == 0) {
                out.add(s.substring(start, i));
                start = i + 1;
            }
        }
        out.add(s.substring(start));
        return out;
    }

    public Map<String, String> asMap() {
        return args;
    }

    /** The trace spec, agent argument first, then {@code -Dsora.trace}; null when tracing is off. */
    public String traceSpec(Properties sys) {
        String t = args.get("trace");
        if (t != null) {
            return t.replace('+', ',').replace(';', ',');
        }
        return sys.getProperty("sora.trace");
    }

    /** The trace file, agent argument first, then {@code -Dsora.trace.file}; null means stderr. */
    public String traceFile(Properties sys) {
        String f = args.get("trace.file");
        return f != null ? f : sys.getProperty("sora.trace.file");
    }
}
