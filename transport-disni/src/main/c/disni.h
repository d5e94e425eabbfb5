/*
 * sora's libdisni: the native half of IBM DiSNI 2.1, written for sora from the
 * JNI signatures and the memory layouts DiSNI's Java classes define.
 *
 * Object ids handed to Java are the native pointers (struct rdma_cm_id *,
 * struct ibv_cq *, ...) cast to jlong; on Linux x86_64 user space they are
 * positive, which is what DiSNI's "objId >= 0 means success" checks expect.
 * A zero id is refused with IllegalArgumentException instead of crashing.
 */
#ifndef SORA_DISNI_H
#define SORA_DISNI_H

#include <jni.h>
#include <stdint.h>

#define UNUSED __attribute__((unused))

/* The protocol version DiSNI 2.1's NativeDispatcher requires (JVERBS_VERSION). */
#define SORA_DISNI_VERSION 32

/* Longest work request list one post call accepts; longer means a cycle. */
#define SORA_MAX_WR_LIST 65536

/* Scatter/gather entries per WR when creating a QP (DiSNI passes no value). */
#define SORA_QP_MAX_SGE 4

/* JNI names of the two Java classes whose natives this library implements. */
#define ND(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher_##name
#define NA(name) Java_com_ibm_disni_util_NativeAffinity_##name

/* jlong object id <-> native pointer. */
#define PTR(type, id) ((type *) (uintptr_t) (id))
#define ID(ptr) ((jlong) (uintptr_t) (ptr))

/* Throws java.io.IOException "<what>: <strerror(err)> (errno <err>)<hint>". */
void sora_throw_io(JNIEnv *env, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Throws java.lang.IllegalArgumentException with the formatted message. */
void sora_throw_arg(JNIEnv *env, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Throws java.lang.IllegalStateException with the formatted message. */
void sora_throw_state(JNIEnv *env, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Refuses a zero object id or address: throws IllegalArgumentException naming
 * the native method and the parameter, then returns `ret` from the caller.
 */
#define REQUIRE(env, value, method, param, ret)                                  \
    do {                                                                         \
        if ((value) == 0) {                                                      \
            sora_throw_arg((env), "%s: %s must not be 0", (method), (param));    \
            return ret;                                                          \
        }                                                                        \
    } while (0)

/*
 * Makes fd non-blocking, so that event retrieval can be bounded by poll():
 * returns 0, or -1 with errno set.
 */
int sora_set_nonblocking(int fd);

/*
 * Waits until fd is readable or the deadline passes. deadline_ms < 0 waits
 * forever. Returns 1 when readable (or possibly so), 0 on timeout, -1 on error
 * (errno set; EINTR is retried).
 */
int sora_wait_readable(int fd, int64_t deadline_ms);

/* Monotonic clock in milliseconds; deadline for a DiSNI timeout (<0: none). */
int64_t sora_now_ms(void);
int64_t sora_deadline(int timeout_ms);

#endif
