/* Memory images that DiSNI's Java classes write and this library reads. */
#ifndef SORA_DISNI_LAYOUT_H
#define SORA_DISNI_LAYOUT_H

#include <infiniband/verbs.h>
#include <stdint.h>

/*
 * One work request as NatIbvSendWR.writeBack lays it out (CSIZE 72): the
 * first 72 bytes of libibverbs' struct ibv_send_wr, whose full size (128 in
 * rdma-core 44) DiSNI does not know. `next` points at the next such image
 * (DiSNI computes it with CSIZE), `sg_list` at NatIbvSge images, which are
 * struct ibv_sge exactly. The 32-byte `wr` union (rdma/atomic/ud) is copied
 * into struct ibv_send_wr byte for byte.
 */
struct sora_send_wr {
    uint64_t wr_id;
    uint64_t next;
    uint64_t sg_list;
    uint32_t num_sge;
    uint32_t opcode;
    uint32_t send_flags;
    uint32_t imm_data;
    union {
        struct {
            uint64_t remote_addr;
            uint32_t rkey;
            uint32_t reserved;
        } rdma;
        unsigned char raw[32];
    } wr;
};

#endif
