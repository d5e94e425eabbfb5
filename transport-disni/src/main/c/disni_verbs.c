/*
 * NativeDispatcher natives backed by libibverbs: protection domains, memory
 * regions, completion channels and queues, posting work requests, and the
 * small accessors DiSNI's Java objects use.
 */
#include "disni.h"
#include "disni_layout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

JNIEXPORT jlong JNICALL ND(_1allocPd)(JNIEnv *env, jobject self UNUSED, jlong context)
{
    REQUIRE(env, context, "_allocPd", "context", -1);
    struct ibv_pd *pd = ibv_alloc_pd(PTR(struct ibv_context, context));
    if (pd == NULL) {
        sora_throw_io(env, errno, "ibv_alloc_pd failed");
        return -1;
    }
    return ID(pd);
}

JNIEXPORT jlong JNICALL ND(_1createCompChannel)(JNIEnv *env, jobject self UNUSED, jlong context)
{
    REQUIRE(env, context, "_createCompChannel", "context", -1);
    struct ibv_comp_channel *ch = ibv_create_comp_channel(PTR(struct ibv_context, context));
    if (ch == NULL) {
        sora_throw_io(env, errno, "ibv_create_comp_channel failed");
        return -1;
    }
    /* Non-blocking, so _getCqEvent can honour its timeout with poll(). */
    if (sora_set_nonblocking(ch->fd) != 0) {
        int err = errno;
        ibv_destroy_comp_channel(ch);
        sora_throw_io(env, err, "ibv_create_comp_channel: cannot make fd non-blocking");
        return -1;
    }
    return ID(ch);
}

/* compChannel may be 0: a CQ without completion events. */
JNIEXPORT jlong JNICALL ND(_1createCQ)(JNIEnv *env, jobject self UNUSED, jlong context,
                                        jlong compChannel, jint ncqe, jint compVector)
{
    REQUIRE(env, context, "_createCQ", "context", -1);
    struct ibv_cq *cq = ibv_create_cq(PTR(struct ibv_context, context), ncqe, NULL,
                                      PTR(struct ibv_comp_channel, compChannel), compVector);
    if (cq == NULL) {
        sora_throw_io(env, errno, "ibv_create_cq(cqe=%d, comp_vector=%d) failed", ncqe, compVector);
        return -1;
    }
    return ID(cq);
}

/*
 * DiSNI 2.1 always passes attr = 0 (its IbvQpAttr has no native image): then
 * nothing is modified and the QP's current state (IbvQP.IBV_QPS_*) is
 * returned. A non-zero attr is taken as a struct ibv_qp_attr whose qp_state
 * is applied (mask IBV_QP_STATE), the one attribute that needs no other.
 */
JNIEXPORT jint JNICALL ND(_1modifyQP)(JNIEnv *env, jobject self UNUSED, jlong qp, jlong attr)
{
    REQUIRE(env, qp, "_modifyQP", "qp", -1);
    struct ibv_qp *ibqp = PTR(struct ibv_qp, qp);
    if (attr != 0) {
        int err = ibv_modify_qp(ibqp, PTR(struct ibv_qp_attr, attr), IBV_QP_STATE);
        if (err != 0) {
            sora_throw_io(env, err, "ibv_modify_qp(qp_num=%u, qp_state=%d) failed", ibqp->qp_num,
                          (int) PTR(struct ibv_qp_attr, attr)->qp_state);
            return -1;
        }
    }
    struct ibv_qp_attr now;
    struct ibv_qp_init_attr init;
    int err = ibv_query_qp(ibqp, &now, IBV_QP_STATE, &init);
    if (err != 0) {
        sora_throw_io(env, err, "ibv_query_qp(qp_num=%u) failed", ibqp->qp_num);
        return -1;
    }
    return (jint) now.qp_state;
}

/* Registers [addr, addr+len); writes lkey, rkey, handle as 4-byte values. */
JNIEXPORT jlong JNICALL ND(_1regMr)(JNIEnv *env, jobject self UNUSED, jlong pd, jlong addr, jint len,
                                     jint access, jlong lkey, jlong rkey, jlong handle)
{
    REQUIRE(env, pd, "_regMr", "pd", -1);
    REQUIRE(env, lkey, "_regMr", "lkey", -1);
    REQUIRE(env, rkey, "_regMr", "rkey", -1);
    REQUIRE(env, handle, "_regMr", "handle", -1);
    if (len < 0) {
        sora_throw_arg(env, "_regMr: len must be >= 0 but was %d", len);
        return -1;
    }
    struct ibv_mr *mr = ibv_reg_mr(PTR(struct ibv_pd, pd), PTR(void, addr), (size_t) len, access);
    if (mr == NULL) {
        sora_throw_io(env, errno, "ibv_reg_mr(addr=0x%llx, length=%d, access=0x%x) failed",
                      (unsigned long long) addr, len, (unsigned) access);
        return -1;
    }
    memcpy(PTR(void, lkey), &mr->lkey, 4);
    memcpy(PTR(void, rkey), &mr->rkey, 4);
    memcpy(PTR(void, handle), &mr->handle, 4);
    return ID(mr);
}

/* RC on-demand-paging capabilities (IbvContext.IBV_ODP_SUPPORT_*), or -1 without ODP. */
JNIEXPORT jint JNICALL ND(_1queryOdpSupport)(JNIEnv *env, jobject self UNUSED, jlong context)
{
    REQUIRE(env, context, "_queryOdpSupport", "context", -1);
    struct ibv_device_attr_ex attr;
    memset(&attr, 0, sizeof attr);
    if (ibv_query_device_ex(PTR(struct ibv_context, context), NULL, &attr) != 0) {
        return -1;
    }
    if (!(attr.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
        return -1;
    }
    return (jint) attr.odp_caps.per_transport_caps.rc_odp_caps;
}

/* Prefetches an ODP range (ibv_advise_mr, the upstream successor of ibv_exp_prefetch_mr). */
JNIEXPORT jint JNICALL ND(_1expPrefetchMr)(JNIEnv *env, jobject self UNUSED, jlong mr, jlong addr,
                                            jint len)
{
    REQUIRE(env, mr, "_expPrefetchMr", "handle", -1);
    if (len < 0) {
        sora_throw_arg(env, "_expPrefetchMr: len must be >= 0 but was %d", len);
        return -1;
    }
    struct ibv_mr *ibmr = PTR(struct ibv_mr, mr);
    struct ibv_sge sge = { .addr = (uint64_t) addr, .length = (uint32_t) len, .lkey = ibmr->lkey };
    int err = ibv_advise_mr(ibmr->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
    if (err != 0) {
        sora_throw_io(env, err, "ibv_advise_mr(PREFETCH, addr=0x%llx, length=%d) failed",
                      (unsigned long long) addr, len);
        return -1;
    }
    return 0;
}

JNIEXPORT void JNICALL ND(_1deregMr)(JNIEnv *env, jobject self UNUSED, jlong mr)
{
    REQUIRE(env, mr, "_deregMr", "handle", );
    struct ibv_mr *ibmr = PTR(struct ibv_mr, mr);
    uint32_t lkey = ibmr->lkey;
    int err = ibv_dereg_mr(ibmr);
    if (err != 0) {
        sora_throw_io(env, err, "ibv_dereg_mr(lkey=0x%x) failed", lkey);
    }
}

/* Counts the DiSNI send WR images; -1 if the list is longer than SORA_MAX_WR_LIST. */
static int count_send_wrs(const struct sora_send_wr *w)
{
    int n = 0;
    for (; w != NULL; w = PTR(const struct sora_send_wr, w->next)) {
        if (++n > SORA_MAX_WR_LIST) {
            return -1;
        }
    }
    return n;
}

/*
 * DiSNI's send WR images are shorter than struct ibv_send_wr, so they are
 * copied into real ones first: on the stack for the usual short lists.
 */
JNIEXPORT void JNICALL ND(_1postSend)(JNIEnv *env, jobject self UNUSED, jlong qp, jlong wrList)
{
    REQUIRE(env, qp, "_postSend", "qp", );
    REQUIRE(env, wrList, "_postSend", "wrList", );
    const struct sora_send_wr *first = PTR(const struct sora_send_wr, wrList);
    int n = count_send_wrs(first);
    if (n < 0) {
        sora_throw_arg(env, "_postSend: work request list longer than %d (or cyclic)", SORA_MAX_WR_LIST);
        return;
    }
    struct ibv_send_wr local[16];
    struct ibv_send_wr *wrs = local;
    if (n > (int) (sizeof local / sizeof local[0])) {
        wrs = calloc((size_t) n, sizeof *wrs);
        if (wrs == NULL) {
            sora_throw_io(env, ENOMEM, "_postSend: cannot copy %d work requests", n);
            return;
        }
    }
    const struct sora_send_wr *w = first;
    for (int i = 0; i < n; i++, w = PTR(const struct sora_send_wr, w->next)) {
        struct ibv_send_wr *d = &wrs[i];
        memset(d, 0, sizeof *d);
        d->wr_id = w->wr_id;
        d->next = i + 1 < n ? &wrs[i + 1] : NULL;
        d->sg_list = PTR(struct ibv_sge, w->sg_list);
        d->num_sge = (int) w->num_sge;
        d->opcode = (enum ibv_wr_opcode) w->opcode;
        d->send_flags = w->send_flags;
        d->imm_data = w->imm_data;
        memcpy(&d->wr, &w->wr, sizeof w->wr);
    }
    struct ibv_send_wr *bad = NULL;
    int err = ibv_post_send(PTR(struct ibv_qp, qp), wrs, &bad);
    if (err != 0) {
        long index = bad != NULL ? (long) (bad - wrs) : -1;
        unsigned long long wr_id = bad != NULL ? (unsigned long long) bad->wr_id : 0;
        sora_throw_io(env, err, "ibv_post_send failed at work request #%ld of %d (wr_id=%llu, opcode=%d)",
                      index, n, wr_id, bad != NULL ? (int) bad->opcode : -1);
    }
    if (wrs != local) {
        free(wrs);
    }
}

/* DiSNI's recv WR images are struct ibv_recv_wr exactly (see disni_layout.c). */
JNIEXPORT void JNICALL ND(_1postRecv)(JNIEnv *env, jobject self UNUSED, jlong qp, jlong wrList)
{
    REQUIRE(env, qp, "_postRecv", "qp", );
    REQUIRE(env, wrList, "_postRecv", "wrList", );
    struct ibv_recv_wr *first = PTR(struct ibv_recv_wr, wrList);
    struct ibv_recv_wr *bad = NULL;
    int err = ibv_post_recv(PTR(struct ibv_qp, qp), first, &bad);
    if (err != 0) {
        long index = 0;
        for (struct ibv_recv_wr *w = first; w != NULL && w != bad && index < SORA_MAX_WR_LIST; w = w->next) {
            index++;
        }
        sora_throw_io(env, err, "ibv_post_recv failed at work request #%ld (wr_id=%llu)", index,
                      bad != NULL ? (unsigned long long) bad->wr_id : 0ULL);
    }
}

/*
 * Waits up to timeout ms (<0: forever) for a completion event; returns 0 when
 * one was taken (the caller acknowledges it with _ackCqEvent), -1 on timeout.
 */
JNIEXPORT jint JNICALL ND(_1getCqEvent)(JNIEnv *env, jobject self UNUSED, jlong compChannel, jint timeout)
{
    REQUIRE(env, compChannel, "_getCqEvent", "compChannel", -1);
    struct ibv_comp_channel *ch = PTR(struct ibv_comp_channel, compChannel);
    int64_t deadline = sora_deadline(timeout);
    struct ibv_cq *cq;
    void *cq_context;
    while (ibv_get_cq_event(ch, &cq, &cq_context) != 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            sora_throw_io(env, errno, "ibv_get_cq_event(fd=%d) failed", ch->fd);
            return -1;
        }
        int ready = sora_wait_readable(ch->fd, deadline);
        if (ready == 0) {
            return -1;
        }
        if (ready < 0) {
            sora_throw_io(env, errno, "poll on completion channel fd %d failed", ch->fd);
            return -1;
        }
    }
    return 0;
}

/* ibv_poll_cq straight into DiSNI's IbvWC images (struct ibv_wc exactly). */
JNIEXPORT jint JNICALL ND(_1pollCQ)(JNIEnv *env, jobject self UNUSED, jlong cq, jint ne, jlong wclist)
{
    REQUIRE(env, cq, "_pollCQ", "cq", -1);
    REQUIRE(env, wclist, "_pollCQ", "wclist", -1);
    if (ne < 0) {
        sora_throw_arg(env, "_pollCQ: ne must be >= 0 but was %d", ne);
        return -1;
    }
    return ibv_poll_cq(PTR(struct ibv_cq, cq), ne, PTR(struct ibv_wc, wclist));
}

JNIEXPORT jint JNICALL ND(_1reqNotifyCQ)(JNIEnv *env, jobject self UNUSED, jlong cq, jint solicitedOnly)
{
    REQUIRE(env, cq, "_reqNotifyCQ", "cq", -1);
    return ibv_req_notify_cq(PTR(struct ibv_cq, cq), solicitedOnly);
}

JNIEXPORT jint JNICALL ND(_1ackCqEvent)(JNIEnv *env, jobject self UNUSED, jlong cq, jint nevents)
{
    REQUIRE(env, cq, "_ackCqEvent", "cq", -1);
    if (nevents < 0) {
        sora_throw_arg(env, "_ackCqEvent: nevents must be >= 0 but was %d", nevents);
        return -1;
    }
    ibv_ack_cq_events(PTR(struct ibv_cq, cq), (unsigned int) nevents);
    return 0;
}

JNIEXPORT jint JNICALL ND(_1destroyCompChannel)(JNIEnv *env, jobject self UNUSED, jlong compChannel)
{
    REQUIRE(env, compChannel, "_destroyCompChannel", "compChannel", -EINVAL);
    return -ibv_destroy_comp_channel(PTR(struct ibv_comp_channel, compChannel));
}

JNIEXPORT jint JNICALL ND(_1deallocPd)(JNIEnv *env, jobject self UNUSED, jlong pd)
{
    REQUIRE(env, pd, "_deallocPd", "pd", -EINVAL);
    return -ibv_dealloc_pd(PTR(struct ibv_pd, pd));
}

JNIEXPORT jint JNICALL ND(_1destroyCQ)(JNIEnv *env, jobject self UNUSED, jlong cq)
{
    REQUIRE(env, cq, "_destroyCQ", "cq", -EINVAL);
    return -ibv_destroy_cq(PTR(struct ibv_cq, cq));
}

JNIEXPORT jint JNICALL ND(_1getQpNum)(JNIEnv *env, jobject self UNUSED, jlong qp)
{
    REQUIRE(env, qp, "_getQpNum", "qp", -1);
    return (jint) PTR(struct ibv_qp, qp)->qp_num;
}

JNIEXPORT jint JNICALL ND(_1getContextFd)(JNIEnv *env, jobject self UNUSED, jlong context)
{
    REQUIRE(env, context, "_getContextFd", "context", -1);
    return PTR(struct ibv_context, context)->cmd_fd;
}

JNIEXPORT jint JNICALL ND(_1getContextNumCompVectors)(JNIEnv *env, jobject self UNUSED, jlong context)
{
    REQUIRE(env, context, "_getContextNumCompVectors", "context", -1);
    return PTR(struct ibv_context, context)->num_comp_vectors;
}

JNIEXPORT jint JNICALL ND(_1getPdHandle)(JNIEnv *env, jobject self UNUSED, jlong pd)
{
    REQUIRE(env, pd, "_getPdHandle", "pd", -1);
    return (jint) PTR(struct ibv_pd, pd)->handle;
}
