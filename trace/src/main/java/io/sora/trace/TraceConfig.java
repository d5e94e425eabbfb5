package io.sora.trace;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What to trace and where, selected the way IBM JSOR's {@code -Xtrace} option did it.
 *
 * <p>Spec grammar: options separated by {@code ,} (or {@code ;} or {@code +}, because the agent's own
 * argument string already uses commas), each {@code key=value}:
 * <ul>
 *   <li>{@code iprint=mt|NET|JSOR|all} (synonym {@code print=}): switch a category on; names are
 *       case-insensitive; repeat the option for several categories.</li>
 *   <li>{@code methods={glob,glob}}: only {@code mt} hooks whose name (e.g. {@code java/net/Socket.connect})
 *       matches one of the globs are printed; {@code *} matches any run of characters. Inside the braces
 *       the globs are separated by {@code ,}, {@code ;} or {@code +}. Repeated options add globs.</li>
 * </ul>
 * Example: {@code iprint=mt,iprint=NET,methods={java/net/Socket.*}}. A null or blank spec turns everything off.
 *
 * <p>Output: a file path (JSON lines, or the JSOR-style text form when the name ends in {@code .txt}), or
 * none, meaning the text form on stderr. {@code %p} in the file name is replaced by the process id, so a
 * client and a server on one host can share one setting.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class TraceConfig {
    /** The system property holding the spec, e.g. {@code -Dsora.trace=iprint=mt,iprint=NET}. */
    public static final String PROPERTY = "sora.trace";
    /** The system property holding the output file. */
    public static final String FILE_PROPERTY = "sora.trace.file";

    /** How events are written. */
    public enum Format {
        /** One JSON object a line, after a header line; read back by {@link TraceReader}. */
        JSON_LINES,
        /** The JSOR-style human-readable form. */
        TEXT
    }

    private static final String VALID_CATEGORIES = "mt, NET, JSOR, all";
    private static final String VALID_KEYS = "iprint, print, methods";

    private final Set<Category> categories;
    private final List<String> methodGlobs;
    private final List<Pattern> methodPatterns;
    private final Path file;
    private final Format format;

    private TraceConfig(Set<Category> categories, List<String> methodGlobs, Path file) {
        this.categories = categories.isEmpty() ? EnumSet.noneOf(Category.class) : EnumSet.copyOf(categories);
        this.methodGlobs = List.copyOf(methodGlobs);
        List<Pattern> patterns = new ArrayList<>();
        for (String glob : methodGlobs) {
            patterns.add(globToPattern(glob));
        }
        this.methodPatterns = List.copyOf(patterns);
        this.file = file;
        boolean text = file == null || file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".txt");
        this.format = text ? Format.TEXT : Format.JSON_LINES;
    }

    /**
     * Parses a spec and an output file name.
     *
     * @param spec the options, e.g. {@code iprint=mt,iprint=NET}; null or blank means everything off
     * @param file the output file, or null/blank for the text form on stderr; {@code %p} becomes the pid
     * @throws IllegalArgumentException naming the offending option, e.g.
     *         {@code trace option 'iprint=FOO': unknown category 'FOO' (valid: mt, NET, JSOR, all)}
     */
    public static TraceConfig parse(String spec, String file) {
        Set<Category> categories = EnumSet.noneOf(Category.class);
        List<String> globs = new ArrayList<>();
        if (spec != null) {
            for (String token : split(spec, spec)) {
                applyOption(token, categories, globs);
            }
        }
        Path path = null;
        if (file != null && !file.isBlank()) {
            String expanded = file.strip().replace("%p", Long.toString(ThisProcess.pid()));
            try {
                path = Path.of(expanded);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("trace file '" + file + "': not a valid path: " + e.getMessage(), e);
            }
        }
        return new TraceConfig(categories, globs, path);
    }

    /** Reads {@value #PROPERTY} and {@value #FILE_PROPERTY} from {@code properties} (e.g. System.getProperties()). */
    public static TraceConfig fromSystemProperties(Properties properties) {
        return parse(properties.getProperty(PROPERTY), properties.getProperty(FILE_PROPERTY));
    }

    private static void applyOption(String token, Set<Category> categories, List<String> globs) {
        int eq = token.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("trace option '" + token + "': expected key=value (valid keys: "
                    + VALID_KEYS + ")");
        }
        String key = token.substring(0, eq).strip().toLowerCase(Locale.ROOT);
        String value = token.substring(eq + 1).strip();
        switch (key) {
            case "iprint":
            case "print":
                categories.addAll(categoriesOf(token, value));
                break;
            case "methods":
                globs.addAll(methodGlobsOf(token, value));
                break;
            default:
                throw new IllegalArgumentException("trace option '" + token + "': unknown key '"
                        + token.substring(0, eq).strip() + "' (valid: " + VALID_KEYS + ")");
        }
    }

    private static Set<Category> categoriesOf(String token, String value) {
        if (value.equalsIgnoreCase("all")) {
            return EnumSet.allOf(Category.class);
        }
        for (Category c : Category.values()) {
            if (c.label().equalsIgnoreCase(value)) {
                return EnumSet.of(c);
            }
        }
        throw new IllegalArgumentException("trace option '" + token + "': unknown category '" + value
                + "' (valid: " + VALID_CATEGORIES + ")");
    }

    private static List<String> methodGlobsOf(String token, String value) {
        if (value.length() < 2 || value.charAt(0) != '{' || value.charAt(value.length() - 1) != '}') {
            throw new IllegalArgumentException("trace option '" + token
                    + "': expected methods={glob,...}, e.g. methods={java/net/Socket.*}");
        }
        List<String> globs = new ArrayList<>();
        for (String glob : split(value.substring(1, value.length() - 1), token)) {
            if (glob.indexOf('{') >= 0 || glob.indexOf('}') >= 0) {
                throw new IllegalArgumentException("trace option '" + token + "': nested braces in '" + glob + "'");
            }
            globs.add(glob);
        }
        if (globs.isEmpty()) {
            throw new IllegalArgumentException("trace option '" + token + "': no method pattern inside the braces");
        }
        return globs;
    }

    /**
     * Splits at top-level separators ({@code , ; +}), keeping braces together; drops empty pieces.
     * {@code whole} is the text named in an error about unbalanced braces.
     */
    private static List<String> split(String s, String whole) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}') {
                if (--depth < 0) {
                    throw new IllegalArgumentException("trace option '" + whole + "': unbalanced '}' at index " + i);
                }
            } else if (depth == 0 && (c == ',' || c == ';' || c == '+')) {
                addPart(parts, s.substring(start, i));
                start = i + 1;
            }
        }
        if (depth != 0) {
            throw new IllegalArgumentException("trace option '" + whole + "': unclosed '{'");
        }
        addPart(parts, s.substring(start));
        return parts;
    }

    private static void addPart(List<String> parts, String part) {
        String p = part.strip();
        if (!p.isEmpty()) {
            parts.add(p);
        }
    }

    private static Pattern globToPattern(String glob) {
        StringBuilder re = new StringBuilder();
        int from = 0;
        for (int star = glob.indexOf('*'); star >= 0; star = glob.indexOf('*', from)) {
            if (star > from) {
                re.append(Pattern.quote(glob.substring(from, star)));
            }
            re.append(".*");
            from = star + 1;
        }
        if (from < glob.length()) {
            re.append(Pattern.quote(glob.substring(from)));
        }
        return Pattern.compile(re.toString());
    }

    /** Whether {@code category} was selected. */
    public boolean isOn(Category category) {
        return categories.contains(category);
    }

    /** Whether any category was selected; when not, {@link Traces#create} returns {@link Tracer#OFF}. */
    public boolean anyOn() {
        return !categories.isEmpty();
    }

    /**
     * Whether {@code hook} passes this configuration: its category is on and, for an {@code mt} hook
     * when {@code methods=} was given, its name matches one of the globs.
     */
    public boolean selects(Hook hook) {
        if (!isOn(hook.category())) {
            return false;
        }
        if (hook.category() != Category.MT || methodPatterns.isEmpty()) {
            return true;
        }
        for (Pattern p : methodPatterns) {
            if (p.matcher(hook.hookName()).matches()) {
                return true;
            }
        }
        return false;
    }

    /** The {@code methods=} globs, in the order given; empty when there is no filter. */
    public List<String> methodGlobs() {
        return methodGlobs;
    }

    /** The output file after {@code %p} expansion, or null for stderr. */
    public Path file() {
        return file;
    }

    /** The output form: TEXT for stderr or a {@code .txt} file, JSON_LINES otherwise. */
    public Format format() {
        return format;
    }

    @Override
    public String toString() {
        return "TraceConfig[categories=" + categories + ", methods=" + methodGlobs + ", file=" + file
                + ", format=" + format + "]";
    }
}
