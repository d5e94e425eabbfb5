/*
 * com.ibm.disni.util.NativeAffinity: CPU affinity of the calling thread as a
 * 64-bit mask (bit i = CPU i), which DiSNI's CQ processor threads use.
 */
#include "disni.h"

#include <errno.h>
#include <sched.h>

JNIEXPORT void JNICALL NA(_1setAffinity)(JNIEnv *env, jclass cls UNUSED, jlong mask)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < 64; cpu++) {
        if (((uint64_t) mask >> cpu) & 1) {
            CPU_SET(cpu, &set);
        }
    }
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        int err = errno;
        sora_throw_arg(env, "sched_setaffinity(mask=0x%llx) failed with errno %d: no usable CPU in the mask?",
                       (unsigned long long) mask, err);
    }
}

JNIEXPORT jlong JNICALL NA(_1getAffinity)(JNIEnv *env, jclass cls UNUSED)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        sora_throw_state(env, "sched_getaffinity failed with errno %d", errno);
        return 0;
    }
    uint64_t mask = 0;
    for (int cpu = 0; cpu < 64; cpu++) {
        if (CPU_ISSET(cpu, &set)) {
            mask |= (uint64_t) 1 << cpu;
        }
    }
    return (jlong) mask;
}
