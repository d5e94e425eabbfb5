/* Library set-up, exception helpers and bounded waiting shared by all natives. */
#include "disni.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static jclass io_exception;
static jclass illegal_argument;
static jclass illegal_state;

static jclass global_class(JNIEnv *env, const char *name)
{
    jclass local = (*env)->FindClass(env, name);
    if (local == NULL) {
        return NULL; /* NoClassDefFoundError pending */
    }
    jclass global = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    return global;
}

/*
 * Both NativeDispatcher and NativeAffinity call System.loadLibrary("disni");
 * the JVM runs this once per class loader that loads the library.
 */
JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved UNUSED)
{
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **) &env, JNI_VERSION_1_8) != JNI_OK) {
        return JNI_ERR;
    }
    io_exception = global_class(env, "java/io/IOException");
    if (io_exception == NULL) {
        return JNI_ERR;
    }
    illegal_argument = global_class(env, "java/lang/IllegalArgumentException");
    if (illegal_argument == NULL) {
        return JNI_ERR;
    }
    illegal_state = global_class(env, "java/lang/IllegalStateException");
    if (illegal_state == NULL) {
        return JNI_ERR;
    }
    return JNI_VERSION_1_8;
}

JNIEXPORT void JNICALL JNI_OnUnload(JavaVM *vm, void *reserved UNUSED)
{
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **) &env, JNI_VERSION_1_8) != JNI_OK) {
        return;
    }
    (*env)->DeleteGlobalRef(env, io_exception);
    (*env)->DeleteGlobalRef(env, illegal_argument);
    (*env)->DeleteGlobalRef(env, illegal_state);
}

static void throw_v(JNIEnv *env, jclass cls, const char *suffix, const char *fmt, va_list ap)
{
    char msg[512];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n >= 0 && (size_t) n < sizeof msg && suffix != NULL) {
        snprintf(msg + n, sizeof msg - (size_t) n, "%s", suffix);
    }
    /* Never stack a second exception on a pending one (-Xcheck:jni). */
    if (!(*env)->ExceptionCheck(env)) {
        (*env)->ThrowNew(env, cls, msg);
    }
}

void sora_throw_io(JNIEnv *env, int err, const char *fmt, ...)
{
    char suffix[256];
    const char *hint = "";
    if (err == ENOMEM) {
        hint = "; memory registration needs lockable memory: check ulimit -l";
    } else if (err == ENODEV || err == ENOENT) {
        hint = "; no RDMA device: check /dev/infiniband and that rdma_ucm is loaded";
    }
    char buf[128];
    const char *text = strerror_r(err, buf, sizeof buf);
    snprintf(suffix, sizeof suffix, ": %s (errno %d)%s", text, err, hint);
    va_list ap;
    va_start(ap, fmt);
    throw_v(env, io_exception, suffix, fmt, ap);
    va_end(ap);
}

void sora_throw_arg(JNIEnv *env, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    throw_v(env, illegal_argument, NULL, fmt, ap);
    va_end(ap);
}

void sora_throw_state(JNIEnv *env, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    throw_v(env, illegal_state, NULL, fmt, ap);
    va_end(ap);
}

int sora_set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) {
        return -1;
    }
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int64_t sora_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sora_deadline(int timeout_ms)
{
    return timeout_ms < 0 ? -1 : sora_now_ms() + timeout_ms;
}

int sora_wait_readable(int fd, int64_t deadline_ms)
{
    for (;;) {
        int wait_ms = -1;
        if (deadline_ms >= 0) {
            int64_t left = deadline_ms - sora_now_ms();
            if (left <= 0) {
                return 0;
            }
            wait_ms = left > INT32_MAX ? INT32_MAX : (int) left;
        }
        struct pollfd pfd = { .fd = fd, .events = POLLIN, .revents = 0 };
        int r = poll(&pfd, 1, wait_ms);
        if (r > 0) {
            return 1;
        }
        if (r < 0 && errno != EINTR) {
            return -1;
        }
        /* r == 0: loop re-checks the deadline; EINTR: retry with what is left. */
    }
}
