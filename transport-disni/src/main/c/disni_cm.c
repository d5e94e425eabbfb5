/*
 * NativeDispatcher natives backed by librdmacm (connection manager): event
 * channels, CM ids, address/route resolution, connect/accept, CM events.
 *
 * Socket addresses travel in DiSNI's SockAddrIn image, which is a raw
 * struct sockaddr_in (family, port and address in network order) inside a
 * buffer of SockAddrIn.CSIZE (= sizeof(struct sockaddr_in6)) bytes.
 */
#include "disni.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(struct sockaddr_in6) == 28, "SockAddrIn.CSIZE is 28");
_Static_assert(RDMA_PS_TCP == 0x0106 && RDMA_PS_UDP == 0x0111 && RDMA_PS_IPOIB == 0x0002,
               "RdmaCm.RDMA_PS_* values");
_Static_assert(RDMA_CM_EVENT_CONNECT_REQUEST == 4 && RDMA_CM_EVENT_ESTABLISHED == 9
               && RDMA_CM_EVENT_TIMEWAIT_EXIT == 15,
               "RdmaCmEvent.EventType ordinals are librdmacm's event numbers");

/* Copies the Java-side address image into *out; throws and returns -1 if unusable. */
static int read_sockaddr(JNIEnv *env, const char *method, jlong addr,
                         struct sockaddr_storage *out)
{
    const unsigned char *p = PTR(const unsigned char, addr);
    sa_family_t family;
    memcpy(&family, p, sizeof family);
    memset(out, 0, sizeof *out);
    if (family == AF_INET) {
        /* sin_zero may hold stale bytes: DiSNI recycles its buffers. */
        memcpy(out, p, offsetof(struct sockaddr_in, sin_zero));
        return 0;
    }
    if (family == AF_INET6) {
        memcpy(out, p, sizeof(struct sockaddr_in6));
        return 0;
    }
    sora_throw_arg(env, "%s: address family %u is neither AF_INET (%d) nor AF_INET6 (%d)",
                   method, (unsigned) family, AF_INET, AF_INET6);
    return -1;
}

/* "a.b.c.d:port" or "[v6]:port", for error messages. */
static const char *format_sockaddr(const struct sockaddr *sa, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *) sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        port = ntohs(in->sin_port);
        snprintf(buf, len, "%s:%u", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        port = ntohs(in6->sin6_port);
        snprintf(buf, len, "[%s]:%u", host, port);
    } else {
        snprintf(buf, len, "(family %u)", (unsigned) sa->sa_family);
    }
    return buf;
}

/* Writes sa into the Java buffer (SockAddrIn.CSIZE bytes); 0 or -errno. */
static jint write_sockaddr(const struct sockaddr *sa, jlong addr)
{
    unsigned char *p = PTR(unsigned char, addr);
    size_t len;
    if (sa->sa_family == AF_INET) {
        len = sizeof(struct sockaddr_in);
    } else if (sa->sa_family == AF_INET6) {
        len = sizeof(struct sockaddr_in6);
    } else {
        return -EAFNOSUPPORT;
    }
    memset(p, 0, sizeof(struct sockaddr_in6));
    memcpy(p, sa, len);
    return 0;
}

JNIEXPORT jlong JNICALL ND(_1createEventChannel)(JNIEnv *env, jobject self UNUSED)
{
    struct rdma_event_channel *ch = rdma_create_event_channel();
    if (ch == NULL) {
        sora_throw_io(env, errno, "rdma_create_event_channel failed (opening /dev/infiniband/rdma_cm)");
        return -1;
    }
    /* Non-blocking, so _getCmEvent can honour its timeout with poll(). */
    if (sora_set_nonblocking(ch->fd) != 0) {
        int err = errno;
        rdma_destroy_event_channel(ch);
        sora_throw_io(env, err, "rdma_create_event_channel: cannot make fd non-blocking");
        return -1;
    }
    return ID(ch);
}

JNIEXPORT jlong JNICALL ND(_1createId)(JNIEnv *env, jobject self UNUSED, jlong channel, jshort ps)
{
    REQUIRE(env, channel, "_createId", "channel", -1);
    struct rdma_cm_id *id = NULL;
    enum rdma_port_space space = (enum rdma_port_space) (uint16_t) ps;
    if (rdma_create_id(PTR(struct rdma_event_channel, channel), &id, NULL, space) != 0) {
        sora_throw_io(env, errno, "rdma_create_id(port space 0x%x) failed", (unsigned) (uint16_t) ps);
        return -1;
    }
    return ID(id);
}

JNIEXPORT jlong JNICALL ND(_1createQP)(JNIEnv *env, jobject self UNUSED, jlong id, jlong pd,
                                        jlong sendcq, jlong recvcq, jint qptype, jint maxsendwr,
                                        jint maxrecvwr, jint maxinline)
{
    REQUIRE(env, id, "_createQP", "id", -1);
    REQUIRE(env, sendcq, "_createQP", "sendcq", -1);
    REQUIRE(env, recvcq, "_createQP", "recvcq", -1);
    struct rdma_cm_id *cm = PTR(struct rdma_cm_id, id);
    struct ibv_pd *ibpd = PTR(struct ibv_pd, pd); /* NULL: librdmacm's default PD */
    struct ibv_context *ctx = ibpd != NULL ? ibpd->context : cm->verbs;
    int max_sge = SORA_QP_MAX_SGE;
    struct ibv_device_attr dev;
    if (ctx != NULL && ibv_query_device(ctx, &dev) == 0 && dev.max_sge < max_sge) {
        max_sge = dev.max_sge;
    }
    struct ibv_qp_init_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.send_cq = PTR(struct ibv_cq, sendcq);
    attr.recv_cq = PTR(struct ibv_cq, recvcq);
    attr.qp_type = (enum ibv_qp_type) qptype;
    attr.cap.max_send_wr = (uint32_t) maxsendwr;
    attr.cap.max_recv_wr = (uint32_t) maxrecvwr;
    attr.cap.max_send_sge = (uint32_t) max_sge;
    attr.cap.max_recv_sge = (uint32_t) max_sge;
    attr.cap.max_inline_data = (uint32_t) maxinline;
    if (rdma_create_qp(cm, ibpd, &attr) != 0) {
        sora_throw_io(env, errno,
                      "rdma_create_qp(type=%d, max_send_wr=%d, max_recv_wr=%d, max_inline=%d, max_sge=%d) failed",
                      qptype, maxsendwr, maxrecvwr, maxinline, max_sge);
        return -1;
    }
    return ID(cm->qp);
}

JNIEXPORT void JNICALL ND(_1bindAddr)(JNIEnv *env, jobject self UNUSED, jlong id, jlong addr)
{
    REQUIRE(env, id, "_bindAddr", "id", );
    REQUIRE(env, addr, "_bindAddr", "addr", );
    struct sockaddr_storage sa;
    if (read_sockaddr(env, "_bindAddr", addr, &sa) != 0) {
        return;
    }
    if (rdma_bind_addr(PTR(struct rdma_cm_id, id), (struct sockaddr *) &sa) != 0) {
        char text[80];
        sora_throw_io(env, errno, "rdma_bind_addr(%s) failed",
                      format_sockaddr((struct sockaddr *) &sa, text, sizeof text));
    }
}

JNIEXPORT void JNICALL ND(_1listen)(JNIEnv *env, jobject self UNUSED, jlong id, jint backlog)
{
    REQUIRE(env, id, "_listen", "id", );
    if (rdma_listen(PTR(struct rdma_cm_id, id), backlog) != 0) {
        sora_throw_io(env, errno, "rdma_listen(backlog=%d) failed", backlog);
    }
}

JNIEXPORT void JNICALL ND(_1resolveAddr)(JNIEnv *env, jobject self UNUSED, jlong id, jlong src,
                                          jlong dst, jint timeout)
{
    REQUIRE(env, id, "_resolveAddr", "id", );
    REQUIRE(env, dst, "_resolveAddr", "dst", );
    struct sockaddr_storage source, dest;
    if (src != 0 && read_sockaddr(env, "_resolveAddr", src, &source) != 0) {
        return;
    }
    if (read_sockaddr(env, "_resolveAddr", dst, &dest) != 0) {
        return;
    }
    if (rdma_resolve_addr(PTR(struct rdma_cm_id, id), src != 0 ? (struct sockaddr *) &source : NULL,
                          (struct sockaddr *) &dest, timeout) != 0) {
        char text[80];
        sora_throw_io(env, errno, "rdma_resolve_addr(%s, timeout=%d ms) failed",
                      format_sockaddr((struct sockaddr *) &dest, text, sizeof text), timeout);
    }
}

JNIEXPORT void JNICALL ND(_1resolveRoute)(JNIEnv *env, jobject self UNUSED, jlong id, jint timeout)
{
    REQUIRE(env, id, "_resolveRoute", "id", );
    if (rdma_resolve_route(PTR(struct rdma_cm_id, id), timeout) != 0) {
        sora_throw_io(env, errno, "rdma_resolve_route(timeout=%d ms) failed", timeout);
    }
}

/*
 * Waits up to timeout ms (<0: forever, 0: just look) for the next CM event,
 * stores the listening id and the event's id as two 8-byte values at
 * listenid/clientid, acknowledges the event and returns its type (librdmacm's
 * numbering = RdmaCmEvent.EventType ordinal). Returns -1 on timeout, -2 on
 * error. The event is acknowledged here because DiSNI's _ackCmEvent receives
 * only the event type, not the event; nothing of it is used after this call.
 */
JNIEXPORT jint JNICALL ND(_1getCmEvent)(JNIEnv *env, jobject self UNUSED, jlong channel,
                                         jlong listenid, jlong clientid, jint timeout)
{
    REQUIRE(env, channel, "_getCmEvent", "channel", -2);
    REQUIRE(env, listenid, "_getCmEvent", "listenid", -2);
    REQUIRE(env, clientid, "_getCmEvent", "clientid", -2);
    struct rdma_event_channel *ch = PTR(struct rdma_event_channel, channel);
    int64_t deadline = sora_deadline(timeout);
    struct rdma_cm_event *event = NULL;
    while (rdma_get_cm_event(ch, &event) != 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return -2;
        }
        int ready = sora_wait_readable(ch->fd, deadline);
        if (ready == 0) {
            return -1;
        }
        if (ready < 0) {
            return -2;
        }
    }
    uint64_t listen = (uint64_t) (uintptr_t) event->listen_id;
    uint64_t client = (uint64_t) (uintptr_t) event->id;
    memcpy(PTR(void, listenid), &listen, sizeof listen);
    memcpy(PTR(void, clientid), &client, sizeof client);
    jint type = (jint) event->event;
    rdma_ack_cm_event(event);
    return type;
}

/* Both sides ask for the device's maximum RDMA READ/atomic depth; librdmacm clamps. */
static void fill_conn_param(struct rdma_conn_param *param, jint retry, jint rnr_retry)
{
    memset(param, 0, sizeof *param);
    param->responder_resources = RDMA_MAX_RESP_RES;
    param->initiator_depth = RDMA_MAX_INIT_DEPTH;
    param->retry_count = (uint8_t) retry;
    param->rnr_retry_count = (uint8_t) rnr_retry;
}

JNIEXPORT void JNICALL ND(_1connect)(JNIEnv *env, jobject self UNUSED, jlong id, jint retry,
                                      jint rnrretry, jlong privdata, jbyte privlen)
{
    REQUIRE(env, id, "_connect", "id", );
    struct rdma_conn_param param;
    fill_conn_param(&param, retry, rnrretry);
    if (privdata != 0) {
        param.private_data = PTR(const void, privdata);
        param.private_data_len = (uint8_t) privlen;
    }
    if (rdma_connect(PTR(struct rdma_cm_id, id), &param) != 0) {
        sora_throw_io(env, errno, "rdma_connect(retry=%d, rnr_retry=%d, private_data_len=%u) failed",
                      retry, rnrretry, (unsigned) param.private_data_len);
    }
}

JNIEXPORT void JNICALL ND(_1accept)(JNIEnv *env, jobject self UNUSED, jlong id, jint retry,
                                     jint rnrretry)
{
    REQUIRE(env, id, "_accept", "id", );
    struct rdma_conn_param param;
    fill_conn_param(&param, retry, rnrretry);
    if (rdma_accept(PTR(struct rdma_cm_id, id), &param) != 0) {
        sora_throw_io(env, errno, "rdma_accept(retry=%d, rnr_retry=%d) failed", retry, rnrretry);
    }
}

/* Events are acknowledged in _getCmEvent already (see there). */
JNIEXPORT jint JNICALL ND(_1ackCmEvent)(JNIEnv *env UNUSED, jobject self UNUSED, jint event UNUSED)
{
    return 0;
}

JNIEXPORT jint JNICALL ND(_1disconnect)(JNIEnv *env, jobject self UNUSED, jlong id)
{
    REQUIRE(env, id, "_disconnect", "id", -EINVAL);
    return rdma_disconnect(PTR(struct rdma_cm_id, id)) == 0 ? 0 : -errno;
}

JNIEXPORT jint JNICALL ND(_1destroyEventChannel)(JNIEnv *env, jobject self UNUSED, jlong channel)
{
    REQUIRE(env, channel, "_destroyEventChannel", "channel", -EINVAL);
    rdma_destroy_event_channel(PTR(struct rdma_event_channel, channel));
    return 0;
}

JNIEXPORT jint JNICALL ND(_1destroyCmId)(JNIEnv *env, jobject self UNUSED, jlong id)
{
    REQUIRE(env, id, "_destroyCmId", "id", -EINVAL);
    return rdma_destroy_id(PTR(struct rdma_cm_id, id)) == 0 ? 0 : -errno;
}

/* Takes the CM id (not the QP), as rdma_destroy_qp does. */
JNIEXPORT jint JNICALL ND(_1destroyQP)(JNIEnv *env, jobject self UNUSED, jlong id)
{
    REQUIRE(env, id, "_destroyQP", "id", -EINVAL);
    rdma_destroy_qp(PTR(struct rdma_cm_id, id));
    return 0;
}

JNIEXPORT jint JNICALL ND(_1getSrcAddr)(JNIEnv *env, jobject self UNUSED, jlong id, jlong addr)
{
    REQUIRE(env, id, "_getSrcAddr", "id", -EINVAL);
    REQUIRE(env, addr, "_getSrcAddr", "address", -EINVAL);
    return write_sockaddr(rdma_get_local_addr(PTR(struct rdma_cm_id, id)), addr);
}

JNIEXPORT jint JNICALL ND(_1getDstAddr)(JNIEnv *env, jobject self UNUSED, jlong id, jlong addr)
{
    REQUIRE(env, id, "_getDstAddr", "id", -EINVAL);
    REQUIRE(env, addr, "_getDstAddr", "address", -EINVAL);
    return write_sockaddr(rdma_get_peer_addr(PTR(struct rdma_cm_id, id)), addr);
}

JNIEXPORT jint JNICALL ND(_1destroyEp)(JNIEnv *env, jobject self UNUSED, jlong id)
{
    REQUIRE(env, id, "_destroyEp", "id", -EINVAL);
    rdma_destroy_ep(PTR(struct rdma_cm_id, id));
    return 0;
}

/* The device context librdmacm opened for this id, or -1 while it has none (unbound). */
JNIEXPORT jlong JNICALL ND(_1getContext)(JNIEnv *env, jobject self UNUSED, jlong id)
{
    REQUIRE(env, id, "_getContext", "id", -1);
    struct ibv_context *ctx = PTR(struct rdma_cm_id, id)->verbs;
    return ctx != NULL ? ID(ctx) : -1;
}
