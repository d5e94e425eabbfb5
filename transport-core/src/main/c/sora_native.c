/*
 * libsora: the few system calls sora's pure-Java code cannot make, for the shm fast path.
 *
 * Futexes on a 32-bit word of a shared mapping (a MappedByteBuffer of an shm segment): a reader or
 * writer that has to sleep waits in the kernel on its own "waiting" word, and the peer process wakes
 * it directly with FUTEX_WAKE - no helper thread, no socket, one system call on each side. The
 * futexes are shared (not FUTEX_PRIVATE_FLAG): the two sides are different processes mapping the
 * same file, and the kernel keys shared futexes by the page, not the virtual address.
 *
 * Also: the CPU a thread runs on (sched_getcpu), creating a segment file with all of its pages
 * allocated at once (posix_fallocate), so that a full tmpfs fails the creation, not a later access,
 * and giving a closed segment's ring pages back to the file system (madvise MADV_REMOVE).
 *
 * And for the shm rendezvous socket (a Unix-domain socket) of each pairing: its peer's user id
 * (SO_PEERCRED) and a wait until it is readable (poll), each one system call where the JDK's own way
 * costs far more (UnixDomainPrincipal looks the user's name up in /etc/passwd on every call; a Selector
 * is an epoll instance, an eventfd and their registrations, made and closed for one reply).
 *
 * And the state of one TCP connection of this network namespace, named by its four-tuple, asked of the
 * kernel through sock_diag (one netlink request for exactly that socket, not a dump of the tables): a
 * shm server pairs only a connection its own kernel has established.
 *
 * Only libc is needed (no rdma-core), so the library loads on any Linux machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

#define EXPORT __attribute__((visibility("default")))

/* Returns the word at buf+offset, or NULL after throwing IllegalArgumentException. */
static int32_t *word(JNIEnv *env, jobject buf, jint offset)
{
    char *base = (*env)->GetDirectBufferAddress(env, buf);
    jlong cap = (*env)->GetDirectBufferCapacity(env, buf);
    if (base == NULL || cap < 0) {
        jclass iae = (*env)->FindClass(env, "java/lang/IllegalArgumentException");
        if (iae != NULL) (*env)->ThrowNew(env, iae, "futex: the buffer is not a direct buffer");
        return NULL;
    }
    if (offset < 0 || (offset & 3) != 0 || (jlong)offset + 4 > cap) {
        jclass iae = (*env)->FindClass(env, "java/lang/IllegalArgumentException");
        if (iae != NULL) (*env)->ThrowNew(env, iae, "futex: offset must be 4-aligned and inside the buffer");
        return NULL;
    }
    return (int32_t *)(base + offset);
}

/*
 * Sleeps while the word equals `expected`, at most timeoutNanos (<= 0: no limit).
 * Returns 0 when woken (or spuriously), 1 when the word already differed, 2 on timeout, 3 when a
 * signal interrupted the wait, -errno on any other failure. The caller re-checks its condition in
 * every case: a futex guarantees no lost wake-up, not the absence of spurious ones.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_Futex_wait0(JNIEnv *env, jclass cls, jobject buf, jint offset,
                                                                  jint expected, jlong timeoutNanos)
{
    (void)cls;
    int32_t *w = word(env, buf, offset);
    if (w == NULL) return -EINVAL;
    struct timespec ts, *tsp = NULL;
    if (timeoutNanos > 0) {
        ts.tv_sec = (time_t)(timeoutNanos / 1000000000LL);
        ts.tv_nsec = (long)(timeoutNanos % 1000000000LL);
        tsp = &ts;
    }
    long rc = syscall(SYS_futex, w, FUTEX_WAIT, (int32_t)expected, tsp, NULL, 0);
    if (rc == 0) return 0;
    switch (errno) {
    case EAGAIN: return 1;
    case ETIMEDOUT: return 2;
    case EINTR: return 3;
    default: return -errno;
    }
}

/* Wakes up to `count` threads sleeping on the word; returns how many were woken, or -errno. */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_Futex_wake0(JNIEnv *env, jclass cls, jobject buf, jint offset,
                                                                  jint count)
{
    (void)cls;
    int32_t *w = word(env, buf, offset);
    if (w == NULL) return -EINVAL;
    long rc = syscall(SYS_futex, w, FUTEX_WAKE, count, NULL, NULL, 0);
    return rc < 0 ? -errno : (jint)rc;
}

/*
 * The CPU the calling thread runs on (sched_getcpu: the vDSO's getcpu, no system call on x86-64), or
 * -1. A waiting reader compares it with the CPU its peer last waited on: a peer on this very CPU cannot
 * run while this thread spins, so the wait hands the CPU over at once instead.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_ThisCpu_current0(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return sched_getcpu();
}

/*
 * Creates the file at path (NUL-terminated bytes: O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600) and
 * allocates all of its size bytes at once (posix_fallocate; on tmpfs the pages, zeroed): a shared-memory
 * segment a full tmpfs cannot hold fails here with ENOSPC, rather than with SIGBUS at the first touch
 * of a page through its mapping. Returns 0, or -errno (the file then removed, if this call created it).
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeFiles_createAllocated0(JNIEnv *env, jclass cls,
                                                                                  jbyteArray path, jlong size)
{
    (void)cls;
    jsize n = (*env)->GetArrayLength(env, path);
    if (n < 1 || size < 0) return -EINVAL;
    char name[4096];
    if (n > (jsize)sizeof(name)) return -ENAMETOOLONG;
    (*env)->GetByteArrayRegion(env, path, 0, n, (jbyte *)name);
    if (name[n - 1] != '\0') return -EINVAL;
    int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -errno;
    int rc = size == 0 ? 0 : posix_fallocate(fd, 0, (off_t)size);
    if (close(fd) != 0 && rc == 0) rc = errno;
    if (rc != 0) {
        unlink(name);
        return -rc;
    }
    return 0;
}

/*
 * Maps the regular file at path (NUL-terminated bytes), all of its size bytes, shared read-write, and
 * returns a direct ByteBuffer over the mapping, or NULL with out[0] set: -errno, or 1 when the file has
 * another size (out[1] = its size), or 2 when it is not a regular file. On success out[1] = size and
 * out[2] = the mapping's address (for unmap0; the buffer does not unmap itself).
 * create != 0: the file must not exist and is made here (O_CREAT | O_EXCL, mode 0600 from the start)
 * with every page allocated (posix_fallocate, as createAllocated0); on any failure it is removed.
 * Either way O_NOFOLLOW (a planted symbolic link is refused) and O_NONBLOCK (a planted FIFO cannot make
 * the open wait); the descriptor is closed before returning, the mapping stays.
 * One call where the JDK's FileChannel.open + map + close runs a few hundred Java methods per
 * connection (interpreted in a cold JVM: 66 us of a client's set-up at steady state, measured).
 */
EXPORT JNIEXPORT jobject JNICALL Java_io_sora_transport_NativeFiles_map0(JNIEnv *env, jclass cls, jbyteArray path,
                                                                        jlong size, jboolean create, jlongArray out)
{
    (void)cls;
    jlong r[3] = {0, 0, 0};
    jobject result = NULL;
    jsize n = (*env)->GetArrayLength(env, path);
    char name[4096];
    if (n < 1 || n > (jsize)sizeof(name) || size <= 0 || size > 0x7fffffffL) {
        r[0] = -EINVAL;
        goto done;
    }
    (*env)->GetByteArrayRegion(env, path, 0, n, (jbyte *)name);
    if (name[n - 1] != '\0') {
        r[0] = -EINVAL;
        goto done;
    }
    int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (create ? O_CREAT | O_EXCL : 0);
    int fd = open(name, flags, 0600);
    if (fd < 0) {
        r[0] = -errno;
        goto done;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        r[0] = -errno;
    } else if (!S_ISREG(st.st_mode)) {
        r[0] = 2;
    } else if (create) {
        int rc = posix_fallocate(fd, 0, (off_t)size);
        if (rc != 0) r[0] = -rc;
    } else if (st.st_size != (off_t)size) {
        r[0] = 1;
        r[1] = (jlong)st.st_size;
    }
    void *addr = MAP_FAILED;
    if (r[0] == 0) {
        addr = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (addr == MAP_FAILED) r[0] = -errno;
    }
    close(fd);
    if (r[0] == 0) {
        result = (*env)->NewDirectByteBuffer(env, addr, size);
        if (result == NULL) {
            munmap(addr, (size_t)size);
            r[0] = -ENOMEM;
        } else {
            r[1] = size;
            r[2] = (jlong)(uintptr_t)addr;
        }
    }
    if (r[0] != 0 && create) unlink(name);
done:
    if (!(*env)->ExceptionCheck(env)) (*env)->SetLongArrayRegion(env, out, 0, 3, r);
    return result;
}

/* rename(2) of one NUL-terminated path to another (atomic within a file system). Returns 0 or -errno. */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeFiles_rename0(JNIEnv *env, jclass cls, jbyteArray from,
                                                                        jbyteArray to)
{
    (void)cls;
    char a[4096];
    char b[4096];
    jsize na = (*env)->GetArrayLength(env, from);
    jsize nb = (*env)->GetArrayLength(env, to);
    if (na < 1 || nb < 1 || na > (jsize)sizeof(a) || nb > (jsize)sizeof(b)) return -EINVAL;
    (*env)->GetByteArrayRegion(env, from, 0, na, (jbyte *)a);
    (*env)->GetByteArrayRegion(env, to, 0, nb, (jbyte *)b);
    if (a[na - 1] != '\0' || b[nb - 1] != '\0') return -EINVAL;
    return rename(a, b) == 0 ? 0 : -errno;
}

/* Unmaps what map0 mapped (address and size as it returned them). Returns 0 or -errno. */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeFiles_unmap0(JNIEnv *env, jclass cls, jlong address,
                                                                       jlong size)
{
    (void)env;
    (void)cls;
    if (address == 0 || size <= 0) return -EINVAL;
    return munmap((void *)(uintptr_t)address, (size_t)size) == 0 ? 0 : -errno;
}

/*
 * Frees the pages of [offset, offset + length) of a shared file mapping (a direct buffer) and their
 * backing store: madvise(MADV_REMOVE), which on tmpfs punches a hole in the file, so its memory is
 * given back now rather than when the mapping is unmapped (by the garbage collector, for a
 * MappedByteBuffer). The range is shrunk inward to whole pages at its start and grown to the end of
 * its last page (the mapping's own). Later reads of the range see zeros. Returns 0 or -errno (EINVAL
 * for memory that is not a shared file mapping, EOPNOTSUPP for a file system without hole punching).
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeFiles_removePages0(JNIEnv *env, jclass cls, jobject buf,
                                                                              jlong offset, jlong length)
{
    (void)cls;
    char *base = (*env)->GetDirectBufferAddress(env, buf);
    jlong cap = (*env)->GetDirectBufferCapacity(env, buf);
    if (base == NULL || cap < 0 || offset < 0 || length < 0 || offset > cap || length > cap - offset) return -EINVAL;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return -EINVAL;
    uintptr_t start = ((uintptr_t)(base + offset) + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)(base + offset + length) + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    if (end <= start) return 0;
    if (madvise((void *)start, end - start, MADV_REMOVE) != 0) return -errno;
    return 0;
}

/*
 * The effective user id of the process at the other end of the connected Unix-domain socket fd, as
 * the kernel recorded it when that process connected (SO_PEERCRED); or -errno.
 */
EXPORT JNIEXPORT jlong JNICALL Java_io_sora_transport_NativeSockets_peerUid0(JNIEnv *env, jclass cls, jint fd)
{
    (void)env;
    (void)cls;
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -(jlong)errno;
    if (len < sizeof(cred)) return -(jlong)EINVAL;
    return (jlong)cred.uid;
}

/* 1 when the socket fd has SO_LINGER on with 0 seconds (its close resets the connection), 0 when not, -errno on failure. */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_lingersZero0(JNIEnv *env, jclass cls, jint fd)
{
    (void)env;
    (void)cls;
    struct linger l;
    socklen_t len = sizeof(l);
    if (getsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &len) != 0) return -errno;
    return l.l_onoff != 0 && l.l_linger == 0 ? 1 : 0;
}

/* The effective user id of this process (what SO_PEERCRED reports of it to its peers). */
EXPORT JNIEXPORT jlong JNICALL Java_io_sora_transport_NativeSockets_effectiveUid0(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return (jlong)geteuid();
}

/*
 * Waits up to millis (>= 0) until fd is readable, or hung up, or in error (any of which a read then
 * reports). Returns 1 when it is, 0 on timeout or when a signal interrupted the wait (the caller
 * re-checks its deadline), -errno on failure.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_awaitReadable0(JNIEnv *env, jclass cls, jint fd,
                                                                                  jint millis)
{
    (void)env;
    (void)cls;
    struct pollfd p = { .fd = fd, .events = POLLIN, .revents = 0 };
    int rc = poll(&p, 1, millis < 0 ? 0 : millis);
    if (rc < 0) return errno == EINTR ? 0 : -errno;
    return rc > 0 ? 1 : 0;
}

/*
 * A TCP connection of this process to itself on the local address addr (4 or 16 bytes), made without
 * the JDK's socket classes (the RDMA self-test runs while the agent starts beside main, and must not load
 * java.net.Socket or ServerSocket then: see the agent's StartGate): a listening socket on an ephemeral
 * port, a client connected to it, and the accepted end. Fills out[0..4] = listening fd, client fd,
 * accepted fd, server port, client port. Returns 0, or -errno with nothing left open.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_tcpPair0(JNIEnv *env, jclass cls, jbyteArray addr,
                                                                            jintArray out)
{
    (void)cls;
    jsize n = (*env)->GetArrayLength(env, addr);
    if ((n != 4 && n != 16) || (*env)->GetArrayLength(env, out) < 5) return -EINVAL;
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof ss);
    int family;
    if (n == 4) {
        struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
        in4->sin_family = AF_INET;
        (*env)->GetByteArrayRegion(env, addr, 0, 4, (jbyte *)&in4->sin_addr);
        len = sizeof *in4;
        family = AF_INET;
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        (*env)->GetByteArrayRegion(env, addr, 0, 16, (jbyte *)&in6->sin6_addr);
        len = sizeof *in6;
        family = AF_INET6;
    }
    int l = -1, c = -1, a = -1, err = 0;
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    struct sockaddr_storage mine;
    socklen_t mlen = sizeof mine;
    l = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&ss, len) != 0 || listen(l, 1) != 0
        || getsockname(l, (struct sockaddr *)&bound, &blen) != 0) {
        err = errno;
        goto fail;
    }
    c = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&bound, blen) != 0
        || getsockname(c, (struct sockaddr *)&mine, &mlen) != 0) {
        err = errno;
        goto fail;
    }
    a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (a < 0) {
        err = errno;
        goto fail;
    }
    jint r[5];
    r[0] = l;
    r[1] = c;
    r[2] = a;
    r[3] = ntohs(family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port : ((struct sockaddr_in6 *)&bound)->sin6_port);
    r[4] = ntohs(family == AF_INET ? ((struct sockaddr_in *)&mine)->sin_port : ((struct sockaddr_in6 *)&mine)->sin6_port);
    (*env)->SetIntArrayRegion(env, out, 0, 5, r);
    return 0;
fail:
    if (a >= 0) close(a);
    if (c >= 0) close(c);
    if (l >= 0) close(l);
    return -(err != 0 ? err : EIO);
}

/* Closes a descriptor tcpPair0 made. Returns 0 or -errno. */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_close0(JNIEnv *env, jclass cls, jint fd)
{
    (void)env;
    (void)cls;
    return close(fd) == 0 ? 0 : -errno;
}

/*
 * The shm doorbell loop's own epoll set (NativeEpoll): the thread that pairs a connection adds its
 * control channel to the set itself (epoll_ctl may run beside an epoll_wait), where the JDK's Selector
 * queues each registration, cancellation and change of events for its selecting thread and wakes it:
 * three wake-ups of the doorbell thread per connection and side (registration, the peer's end, the
 * cancelled key), measured, where the end alone needs one.
 * create0: out[0] = the epoll descriptor, out[1] = an eventfd in the set with data 0 (wake0 makes the
 * waiting thread return). Returns 0 or -errno.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeEpoll_create0(JNIEnv *env, jclass cls, jintArray out)
{
    (void)cls;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return -errno;
    int ev = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ev < 0) {
        int err = errno;
        close(ep);
        return -err;
    }
    struct epoll_event e;
    memset(&e, 0, sizeof(e));
    e.events = EPOLLIN;
    e.data.u64 = 0;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e) != 0) {
        int err = errno;
        close(ev);
        close(ep);
        return -err;
    }
    jint r[2] = {ep, ev};
    (*env)->SetIntArrayRegion(env, out, 0, 2, r);
    return 0;
}

/* epoll_ctl(epfd, op, fd) with the given events and 64-bit data. Returns 0 or -errno. */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeEpoll_ctl0(JNIEnv *env, jclass cls, jint epfd, jint op,
                                                                     jint fd, jint events, jlong data)
{
    (void)env;
    (void)cls;
    struct epoll_event e;
    memset(&e, 0, sizeof(e));
    e.events = (uint32_t)events;
    e.data.u64 = (uint64_t)data;
    return epoll_ctl(epfd, op, fd, &e) == 0 ? 0 : -errno;
}

/*
 * Waits for events (timeoutMillis < 0: no limit) and writes each as two longs, its data and its
 * events, into out (room for out.length / 2, at most 64). Returns how many, 0 on a signal, or -errno.
 * The eventfd's own event (data 0) is drained here.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeEpoll_wait0(JNIEnv *env, jclass cls, jint epfd, jint efd,
                                                                      jlongArray out, jint timeoutMillis)
{
    (void)cls;
    struct epoll_event evs[64];
    jsize room = (*env)->GetArrayLength(env, out) / 2;
    if (room > 64) room = 64;
    if (room < 1) return -EINVAL;
    int n = epoll_wait(epfd, evs, room, timeoutMillis);
    if (n < 0) return errno == EINTR ? 0 : -errno;
    jlong r[128];
    for (int i = 0; i < n; i++) {
        if (evs[i].data.u64 == 0) {
            uint64_t drained;
            ssize_t unused = read(efd, &drained, sizeof(drained));
            (void)unused;
        }
        r[2 * i] = (jlong)evs[i].data.u64;
        r[2 * i + 1] = (jlong)evs[i].events;
    }
    if (n > 0) (*env)->SetLongArrayRegion(env, out, 0, 2 * n, r);
    return n;
}

/* Makes a wait0 on the set return (or the next one, at once). Returns 0 or -errno. */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeEpoll_wake0(JNIEnv *env, jclass cls, jint efd)
{
    (void)env;
    (void)cls;
    uint64_t one = 1;
    return write(efd, &one, sizeof(one)) == (ssize_t)sizeof(one) || errno == EAGAIN ? 0 : -errno;
}

/* Closes a descriptor create0 made. Returns 0 or -errno. */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeEpoll_close0(JNIEnv *env, jclass cls, jint fd)
{
    (void)env;
    (void)cls;
    return close(fd) == 0 ? 0 : -errno;
}

/*
 * The TCP state (the kernel's numbering: 1 ESTABLISHED, 3 SYN_RECV, 8 CLOSE_WAIT, 10 LISTEN, ...) of the socket
 * of this network namespace whose local end is local:lport and remote end remote:rport (4- or 16-byte
 * addresses, of the same length) on interface ifindex (0: any; a link-local address's scope), found by
 * sock_diag's exact lookup, which falls back to the port's listening socket; 0 when there is none (or the
 * kernel has no TCP sock_diag: it says ENOENT then too), -errno when the lookup fails.
 */
static jint tcp_state(JNIEnv *env, jbyteArray local, jint lport, jbyteArray remote, jint rport, jint ifindex,
                      uint32_t *found_if, uint32_t *inode);

EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_tcpState0(JNIEnv *env, jclass cls, jbyteArray local,
                                                                             jint lport, jbyteArray remote, jint rport,
                                                                             jint ifindex, jlongArray inodeOut)
{
    (void)cls;
    uint32_t found_if = 0, inode = 0;
    jint state = tcp_state(env, local, lport, remote, rport, ifindex, &found_if, &inode);
    /* no connection, but a listener bound to a device (SO_BINDTODEVICE, a VRF): its connections are found
       only by a lookup that names that device */
    if (state == 10 && ifindex == 0 && found_if != 0) {
        state = tcp_state(env, local, lport, remote, rport, (jint)found_if, &found_if, &inode);
    }
    /* the socket's inode, when a connection was found (not only its port's listener): 0 while it waits in
       the accept queue (no socket file yet), the accepted socket's once accepted (as fstat of its descriptor) */
    if (inodeOut != NULL && state > 0 && state != 10) {
        jlong v = (jlong)inode;
        (*env)->SetLongArrayRegion(env, inodeOut, 0, 1, &v);
    }
    return state;
}

/* The inode of descriptor fd (fstat), or -errno. */
EXPORT JNIEXPORT jlong JNICALL Java_io_sora_transport_NativeSockets_fdInode0(JNIEnv *env, jclass cls, jint fd)
{
    (void)env;
    (void)cls;
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    return (jlong)st.st_ino;
}

static jint tcp_state(JNIEnv *env, jbyteArray local, jint lport, jbyteArray remote, jint rport, jint ifindex,
                      uint32_t *found_if, uint32_t *inode)
{
    jsize llen = (*env)->GetArrayLength(env, local);
    jsize rlen = (*env)->GetArrayLength(env, remote);
    if ((llen != 4 && llen != 16) || llen != rlen || lport < 0 || lport > 65535 || rport < 0 || rport > 65535) return -EINVAL;
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 req;
    } msg;
    memset(&msg, 0, sizeof(msg));
    msg.nlh.nlmsg_len = sizeof(msg);
    msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    msg.nlh.nlmsg_flags = NLM_F_REQUEST; /* one socket, no NLM_F_DUMP */
    msg.req.sdiag_family = llen == 4 ? AF_INET : AF_INET6;
    msg.req.sdiag_protocol = IPPROTO_TCP;
    msg.req.idiag_states = ~0U;
    msg.req.id.idiag_sport = htons((uint16_t)lport);
    msg.req.id.idiag_dport = htons((uint16_t)rport);
    (*env)->GetByteArrayRegion(env, local, 0, llen, (jbyte *)msg.req.id.idiag_src);
    (*env)->GetByteArrayRegion(env, remote, 0, rlen, (jbyte *)msg.req.id.idiag_dst);
    msg.req.id.idiag_if = (uint32_t)ifindex;
    msg.req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    msg.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -errno;
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof(kernel));
    kernel.nl_family = AF_NETLINK;
    if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    /* aligned for the headers: an inet_diag_msg and its attributes, or an error */
    long buf[1024];
    ssize_t n;
    do {
        n = recv(fd, buf, sizeof(buf), 0);
    } while (n < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (n < 0) return -e;
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    if (!NLMSG_OK(h, (size_t)n)) return -EBADMSG;
    if (h->nlmsg_type == NLMSG_ERROR) {
        struct nlmsgerr *err = (struct nlmsgerr *)NLMSG_DATA(h);
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*err))) return -EBADMSG;
        return err->error == -ENOENT ? 0 : (err->error < 0 ? err->error : -EBADMSG);
    }
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg))) return -EBADMSG;
    struct inet_diag_msg *m = (struct inet_diag_msg *)NLMSG_DATA(h);
    *found_if = m->id.idiag_if;
    *inode = m->idiag_inode;
    return m->idiag_state == 0 ? -EBADMSG : (jint)m->idiag_state;
}

/*
 * The RDMA pairing's proof that a client owns the TCP connection it names (docs/rdma.md, "Proof of the
 * TCP connection"): the client writes a secret the server sent it over RDMA on the TCP connection itself,
 * which only the connection's owner can; the server looks at the front of what it received without
 * taking it, and takes the proof only when it is there.
 */

/*
 * The descriptor of a java.net.Socket of the JDK's platform implementation: Socket.impl, then
 * SocketImpl.fd, then FileDescriptor.fd, read through JNI (which applies no access checks; these fields
 * are the same on JDK 17 and 25). -1 when a link is missing (another implementation, a socket not yet
 * created, or closed).
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_socketFd0(JNIEnv *env, jclass cls, jobject socket)
{
    (void)cls;
    static jclass delegating; /* a global reference, made once */
    static jfieldID implField, fdField, fdIntField, delegateField;
    if (socket == NULL) return -1;
    if (__atomic_load_n(&delegateField, __ATOMIC_ACQUIRE) == NULL) {
        jclass s = (*env)->FindClass(env, "java/net/Socket");
        jclass si = s == NULL ? NULL : (*env)->FindClass(env, "java/net/SocketImpl");
        jclass fdc = si == NULL ? NULL : (*env)->FindClass(env, "java/io/FileDescriptor");
        jclass dl = fdc == NULL ? NULL : (*env)->FindClass(env, "java/net/DelegatingSocketImpl");
        jfieldID a = dl == NULL ? NULL : (*env)->GetFieldID(env, s, "impl", "Ljava/net/SocketImpl;");
        jfieldID b = a == NULL ? NULL : (*env)->GetFieldID(env, si, "fd", "Ljava/io/FileDescriptor;");
        jfieldID c = b == NULL ? NULL : (*env)->GetFieldID(env, fdc, "fd", "I");
        jfieldID d = c == NULL ? NULL : (*env)->GetFieldID(env, dl, "delegate", "Ljava/net/SocketImpl;");
        jclass g = d == NULL ? NULL : (*env)->NewGlobalRef(env, dl);
        if (g == NULL) {
            (*env)->ExceptionClear(env);
            return -1;
        }
        /* field ids stay valid while their classes are loaded: these never unload */
        implField = a;
        fdField = b;
        fdIntField = c;
        delegating = g; /* two first calls at once each make one: one global reference kept for good */
        __atomic_store_n(&delegateField, d, __ATOMIC_RELEASE); /* last: the others are set when it is */
    }
    jobject impl = (*env)->GetObjectField(env, socket, implField);
    /* a client socket's impl is a SOCKS wrapper (DelegatingSocketImpl) around the platform one */
    for (int depth = 0; impl != NULL && depth < 4; depth++) {
        jobject fd = (*env)->GetObjectField(env, impl, fdField);
        if (fd != NULL) return (*env)->GetIntField(env, fd, fdIntField);
        if (!(*env)->IsInstanceOf(env, impl, delegating)) return -1;
        impl = (*env)->GetObjectField(env, impl, delegateField);
    }
    return -1;
}

/* The port of a socket address (either family); -1 for another family. */
static int port_of(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    if (ss->ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return -1;
}

/* 0 if fd is still the connected socket between localPort and remotePort, else -EBADF (or -errno). */
static int same_connection(int fd, int localPort, int remotePort)
{
    struct sockaddr_storage mine, peer;
    socklen_t ml = sizeof mine, pl = sizeof peer;
    if (getsockname(fd, (struct sockaddr *)&mine, &ml) != 0 || getpeername(fd, (struct sockaddr *)&peer, &pl) != 0) {
        return errno == ENOTSOCK || errno == ENOTCONN || errno == EBADF ? -EBADF : -errno;
    }
    return port_of(&mine) == localPort && port_of(&peer) == remotePort ? 0 : -EBADF;
}

/*
 * Writes all of bytes on the connected TCP socket fd, if fd's local and remote ports are still
 * localPort and remotePort (a descriptor the application closed meanwhile, and the number given to a
 * new file, is not written to). Waits for room at most 1 s (a fresh connection's buffer always has room
 * for a proof). Returns 0, -EBADF when fd is not that connection, -errno when nothing was written, or the
 * count written when the connection failed after some of the bytes.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_send0(JNIEnv *env, jclass cls, jint fd, jbyteArray bytes,
                                                                         jint localPort, jint remotePort)
{
    (void)cls;
    jbyte buf[256];
    jsize n = (*env)->GetArrayLength(env, bytes);
    if (n < 0 || n > (jsize)sizeof buf) return -EINVAL;
    (*env)->GetByteArrayRegion(env, bytes, 0, n, buf);
    int same = same_connection(fd, localPort, remotePort);
    if (same != 0) return same;
    jsize done = 0;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (done < n) {
        ssize_t w = send(fd, buf + done, (size_t)(n - done), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            done += (jsize)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return done > 0 ? done : -errno;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long spent = (now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000L;
        if (spent >= 1000) return done > 0 ? done : -ETIMEDOUT;
        struct pollfd p = { .fd = fd, .events = POLLOUT, .revents = 0 };
        if (poll(&p, 1, (int)(1000 - spent)) < 0 && errno != EINTR) return done > 0 ? done : -errno;
    }
    return 0;
}

/*
 * If fd is still the connection between the two ports (as send0 checks), copies up to len(into) bytes
 * from the front of what the TCP socket fd received, without taking them, after waiting at most millis
 * until atLeast of them are there (SO_RCVLOWAT raised to that count for the wait, then put back) or the
 * stream ended. Returns the count copied (0: none yet), -ENODATA at the end of the stream with nothing
 * received, or -errno. hup[0] is set to 1 when the peer's end (or an error) was seen, so a caller holding
 * fewer bytes than it wants knows no more come.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_peek0(JNIEnv *env, jclass cls, jint fd, jbyteArray into,
                                                                         jint atLeast, jint millis, jintArray hup,
                                                                         jint localPort, jint remotePort)
{
    (void)cls;
    char buf[256];
    jsize want = (*env)->GetArrayLength(env, into);
    if (want <= 0 || want > (jsize)sizeof buf) return -EINVAL;
    int same = same_connection(fd, localPort, remotePort);
    if (same != 0) return same;
    if (atLeast < 1 || atLeast > want) return -EINVAL;
    int old = 1, lowat = atLeast;
    socklen_t ol = sizeof old;
    if (getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &old, &ol) != 0) return -errno;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat) != 0) return -errno;
    struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP, .revents = 0 };
    int rc = poll(&p, 1, millis < 0 ? 0 : millis);
    int perr = errno;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &old, sizeof old) != 0) {
        /* left raised, the application's reads would wait for that many bytes: the caller shuts it down */
        return -errno;
    }
    if (rc < 0 && perr != EINTR) return -perr;
    jint ended = rc > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) ? 1 : 0;
    (*env)->SetIntArrayRegion(env, hup, 0, 1, &ended);
    ssize_t got = recv(fd, buf, (size_t)want, MSG_PEEK | MSG_DONTWAIT);
    if (got < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
    if (got == 0) return -ENODATA;
    (*env)->SetByteArrayRegion(env, into, 0, (jsize)got, (jbyte *)buf);
    return (jint)got;
}

/*
 * Takes n (<= 256) bytes that peek0 showed at the front of fd (if fd is still the connection between the two
 * ports, as send0 checks). Returns the count taken, or -errno.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_discard0(JNIEnv *env, jclass cls, jint fd, jint n,
                                                                            jint localPort, jint remotePort)
{
    (void)env;
    (void)cls;
    char buf[256];
    if (n < 0 || n > (jint)sizeof buf) return -EINVAL;
    int same = same_connection(fd, localPort, remotePort);
    if (same != 0) return same;
    jint done = 0;
    while (done < n) {
        ssize_t r = recv(fd, buf, (size_t)(n - done), MSG_DONTWAIT);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return done > 0 ? done : -errno;
        if (r == 0) break;
        done += (jint)r;
    }
    return done;
}

/*
 * shutdown(fd, SHUT_RDWR) if fd is still the connection between the two ports: its reader sees the end of the
 * stream, its writer an error, the peer an end. Returns 0 or -errno.
 */
EXPORT JNIEXPORT jint JNICALL Java_io_sora_transport_NativeSockets_shutdown0(JNIEnv *env, jclass cls, jint fd,
                                                                             jint localPort, jint remotePort)
{
    (void)env;
    (void)cls;
    int same = same_connection(fd, localPort, remotePort);
    if (same != 0) return same;
    return shutdown(fd, SHUT_RDWR) == 0 ? 0 : -errno;
}
