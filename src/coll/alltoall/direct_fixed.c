/* Alltoall Direct in fixed order: the baseline the arrival-aware Direct is measured against.
 * Paper: [qian-phd] 6.4.2, the non-PAP Direct alltoall: "each process p first posts its RDMA
 * Writes to all other processes in sequence (after it receives the destination buffer
 * addresses) ... finally it waits to receive the incoming messages from all processes".
 * Steps: one sweep in strict order: the block for (p+d) mod N, d = 1..N-1, by distance, a
 * single-copy write waiting for its receiver's advertised buffer (its arrival), no later write
 * before it; then the blocks from (p-d) mod N by distance. The same protocols as direct (inline,
 * inbox slot p*m, single copy to recvbuf + p*m), the same bytes: (N-1) m in N-1 messages.
 * When it wins: never by design: kept, selectable only by name (RCOLL_TUNE, rcoll-bench
 * rcoll:direct_fixed), to show what serving peers in arrival order gains under skew
 * (rcoll-bench --mif; docs/tuning.md, "Process arrival patterns"). */
#include "coll/alltoall/slots.h"

static rcoll_status_t alltoall_direct_fixed(rcoll_args_t *a)
{
    a2a_sweep_t s;
    rcoll_msg_proto_t proto = a2a_proto(a, a->bytes, (size_t)a->size * a->bytes);
    a2a_sweep_init(&s, a, 0, proto);
    s.in_order = true;
    for (int d = 1; d < a->size; d++)
        s.out[d] = s.in[d] = 1;
    a2a_sweep_start(&s);
    return a2a_sweep_run(&s);
}

const rcoll_algo_t rcoll_alltoall_direct_fixed = {
    .name = "direct_fixed",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "[qian-phd] 6.4 non-PAP baseline: Direct with peers served in rank order",
    .run = alltoall_direct_fixed,
    .by_name = true, /* a baseline: never the rules' or the model's pick */
};
