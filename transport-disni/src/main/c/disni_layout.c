/*
 * The size handshake: NativeDispatcher's constructor compares these answers
 * with its Java constants (and adopts ours where they differ). Ours are chosen
 * to equal DiSNI 2.1's constants, and the asserts below prove that each Java
 * image matches the libibverbs struct this library hands it to (or, for the
 * send WR, the part of it that disni_verbs.c copies).
 */
#include "disni.h"
#include "disni_layout.h"

#include <netinet/in.h>
#include <stddef.h>

/* NatIbvRecvWR (CSIZE 32): passed to ibv_post_recv as it is. */
_Static_assert(sizeof(struct ibv_recv_wr) == 32, "NatIbvRecvWR.CSIZE");
_Static_assert(offsetof(struct ibv_recv_wr, wr_id) == 0, "recv wr_id");
_Static_assert(offsetof(struct ibv_recv_wr, next) == 8, "recv next");
_Static_assert(offsetof(struct ibv_recv_wr, sg_list) == 16, "recv sg_list");
_Static_assert(offsetof(struct ibv_recv_wr, num_sge) == 24, "recv num_sge");

/* NatIbvSge (CSIZE 16): addr, length, lkey. */
_Static_assert(sizeof(struct ibv_sge) == 16, "NatIbvSge.CSIZE");
_Static_assert(offsetof(struct ibv_sge, length) == 8 && offsetof(struct ibv_sge, lkey) == 12, "sge");

/* NatIbvSendWR (CSIZE 72): the first 72 bytes of struct ibv_send_wr. */
_Static_assert(sizeof(struct sora_send_wr) == 72, "NatIbvSendWR.CSIZE");
_Static_assert(offsetof(struct sora_send_wr, send_flags) == 32, "NatIbvSendWR.SENDFLAGS_OFFSET");
_Static_assert(offsetof(struct sora_send_wr, wr.rdma.remote_addr) == 40, "REMOTEADDR_OFFSET");
_Static_assert(offsetof(struct sora_send_wr, wr.rdma.rkey) == 48, "RKEY_OFFSET");
_Static_assert(offsetof(struct ibv_send_wr, num_sge) == offsetof(struct sora_send_wr, num_sge), "num_sge");
_Static_assert(offsetof(struct ibv_send_wr, opcode) == offsetof(struct sora_send_wr, opcode), "opcode");
_Static_assert(offsetof(struct ibv_send_wr, imm_data) == offsetof(struct sora_send_wr, imm_data), "imm");
_Static_assert(offsetof(struct ibv_send_wr, wr) == offsetof(struct sora_send_wr, wr), "wr union");
_Static_assert(sizeof(((struct ibv_send_wr *) 0)->wr) == sizeof(((struct sora_send_wr *) 0)->wr),
               "wr union size");
_Static_assert(IBV_WR_RDMA_WRITE == 0 && IBV_WR_RDMA_WRITE_WITH_IMM == 1 && IBV_WR_SEND == 2
               && IBV_WR_SEND_WITH_IMM == 3 && IBV_WR_RDMA_READ == 4
               && IBV_WR_ATOMIC_CMP_AND_SWP == 5 && IBV_WR_ATOMIC_FETCH_AND_ADD == 6,
               "IbvSendWR.IBV_WR_* opcodes");
_Static_assert(IBV_SEND_FENCE == 1 && IBV_SEND_SIGNALED == 2 && IBV_SEND_SOLICITED == 4
               && IBV_SEND_INLINE == 8, "IbvSendWR.IBV_SEND_* flags");

/* IbvWC (CSIZE 48): ibv_poll_cq writes struct ibv_wc straight into DiSNI's buffer. */
_Static_assert(sizeof(struct ibv_wc) == 48, "IbvWC.CSIZE");
_Static_assert(offsetof(struct ibv_wc, status) == 8 && offsetof(struct ibv_wc, opcode) == 12
               && offsetof(struct ibv_wc, vendor_err) == 16 && offsetof(struct ibv_wc, byte_len) == 20
               && offsetof(struct ibv_wc, imm_data) == 24 && offsetof(struct ibv_wc, qp_num) == 28
               && offsetof(struct ibv_wc, src_qp) == 32 && offsetof(struct ibv_wc, wc_flags) == 36
               && offsetof(struct ibv_wc, pkey_index) == 40 && offsetof(struct ibv_wc, slid) == 42
               && offsetof(struct ibv_wc, sl) == 44 && offsetof(struct ibv_wc, dlid_path_bits) == 45,
               "IbvWC field order");
_Static_assert(IBV_WC_SUCCESS == 0 && IBV_WC_GENERAL_ERR == 21, "IbvWcStatus ordinals");
_Static_assert(IBV_WC_SEND == 0 && IBV_WC_BIND_MW == 5 && IBV_WC_RECV == 128
               && IBV_WC_RECV_RDMA_WITH_IMM == 129, "IbvWcOpcode values");

/* IbvMr access flags and IbvQP types/states. */
_Static_assert(IBV_ACCESS_LOCAL_WRITE == 1 && IBV_ACCESS_REMOTE_WRITE == 2 && IBV_ACCESS_REMOTE_READ == 4
               && IBV_ACCESS_REMOTE_ATOMIC == 8 && IBV_ACCESS_MW_BIND == 16 && IBV_ACCESS_ON_DEMAND == 64,
               "IbvMr.IBV_ACCESS_*");
_Static_assert(IBV_QPT_RC == 2 && IBV_QPT_UC == 3 && IBV_QPT_UD == 4, "IbvQP.IBV_QPT_*");
_Static_assert(IBV_QPS_RESET == 0 && IBV_QPS_RTS == 3 && IBV_QPS_ERR == 6, "IbvQP.IBV_QPS_*");
_Static_assert(IBV_ODP_SUPPORT_SEND == 1 && IBV_ODP_SUPPORT_RECV == 2 && IBV_ODP_SUPPORT_WRITE == 4
               && IBV_ODP_SUPPORT_READ == 8 && IBV_ODP_SUPPORT_ATOMIC == 16, "IbvContext.IBV_ODP_SUPPORT_*");

JNIEXPORT jint JNICALL ND(_1getSockAddrInSize)(JNIEnv *env UNUSED, jobject self UNUSED)
{
    return (jint) sizeof(struct sockaddr_in6);
}

JNIEXPORT jint JNICALL ND(_1getIbvRecvWRSize)(JNIEnv *env UNUSED, jobject self UNUSED)
{
    return (jint) sizeof(struct ibv_recv_wr);
}

JNIEXPORT jint JNICALL ND(_1getIbvSendWRSize)(JNIEnv *env UNUSED, jobject self UNUSED)
{
    return (jint) sizeof(struct sora_send_wr);
}

JNIEXPORT jint JNICALL ND(_1getIbvSgeSize)(JNIEnv *env UNUSED, jobject self UNUSED)
{
    return (jint) sizeof(struct ibv_sge);
}

JNIEXPORT jint JNICALL ND(_1getIbvWCSize)(JNIEnv *env UNUSED, jobject self UNUSED)
{
    return (jint) sizeof(struct ibv_wc);
}

JNIEXPORT jint JNICALL ND(_1getRemoteAddressOffset)(JNIEnv *env UNUSED, jobject self UNUSED)
{
    return (jint) offsetof(struct sora_send_wr, wr.rdma.remote_addr);
}

JNIEXPORT jint JNICALL ND(_1getRKeyOffset)(JNIEnv *env UNUSED, jobject self UNUSED)
{
    return (jint) offsetof(struct sora_send_wr, wr.rdma.rkey);
}

JNIEXPORT jint JNICALL ND(_1getVersion)(JNIEnv *env UNUSED, jobject self UNUSED)
{
    return SORA_DISNI_VERSION;
}
