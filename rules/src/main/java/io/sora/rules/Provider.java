package io.sora.rules;

/**
 * The network provider named in the first field of a rule: which fast path carries a matching connection.
 *
 * <p>JSOR knew only {@code rdma}; sora adds {@code shm}, a same-host shared-memory path.
 */
public enum Provider {
    /** RDMA (InfiniBand, RoCE, Soft-RoCE) through DiSNI. Keyword {@code rdma}. */
    RDMA("rdma"),
    /** Shared memory between two processes on the same host. Keyword {@code shm}. */
    SHM("shm");

    private final String keyword;

    Provider(String keyword) {
        this.keyword = keyword;
    }

    /** The keyword as written in a configuration file, in lower case. */
    public String keyword() {
        return keyword;
    }

    /** The provider whose keyword is exactly {@code word} (case-sensitive), or null. */
    static Provider forKeyword(String word) {
        for (Provider p : values()) {
            if (p.keyword.equals(word)) {
                return p;
            }
        }
        return null;
    }
}
