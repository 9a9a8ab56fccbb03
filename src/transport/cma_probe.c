/* What a single copy by CMA costs on this machine against the copy path's two copies, measured
 * once per process (rcoll_tl_probe, at context creation) and carried in every rank's hello.
 *
 * The node transport's thresholds for single copy (node.c, layout) were measured on the Intel
 * machine of 2026-11-29, where a process_vm_readv/writev cost ~2.5 us and then copied about as
 * fast as memcpy: single copy won from 32-256 KB. On the AMD EPYC VM of 2026-12-07 the same
 * call pins pages at ~0.45 us per 4 KB page: 256 KB took 19 us against 9.7 us for two memcpy,
 * and the copy path beat single copy at every size it fits (np=2 allgather and alltoall 32-512
 * KB 1.3-2.5x with buffers reused, up to 1.3x with their data rewritten every call, allreduce
 * 128-512 KB 5x; only into brand-new pages every call did it lose, 20-38% at 128-512 KB;
 * docs/tuning.md, "Where a single copy is slow"). A team whose node measured so takes the copy
 * path wherever it fits (node.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "signal/wait.h"
#include "transport/transport.h"

#define CMA_PROBE_BYTES (256 * 1024)
#define CMA_PROBE_ROUNDS 5

static uint32_t clamp_ns(uint64_t ns)
{
    return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

void rcoll_tl_probe(const rcoll_config_t *cfg, rcoll_tl_probe_t *out)
{
    memset(out, 0, sizeof *out);
    if (cfg->cma != RCOLL_CMA_AUTO || cfg->zcopy_threshold) {
        out->set_slow = cfg->cma == RCOLL_CMA_SLOW && !cfg->zcopy_threshold;
        return; /* no single copy, its threshold or the verdict set: nothing to measure */
    }
    size_t n = CMA_PROBE_BYTES;
    unsigned char *buf = malloc(3 * n);
    if (!buf)
        return;
    memset(buf, 0x5a, 3 * n);
    unsigned char *src = buf, *mid = buf + n, *dst = buf + 2 * n;
    struct iovec local = {dst, n}, remote = {src, n};
    uint64_t cma = UINT64_MAX, copy = UINT64_MAX;
    for (int round = 0; round < CMA_PROBE_ROUNDS; round++) {
        uint64_t t0 = rcoll_now_ns();
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)n) {
            free(buf);
            return; /* no CMA here (the transport's own probe will say so) */
        }
        uint64_t t1 = rcoll_now_ns();
        memcpy(mid, src, n);
        __asm__ volatile("" : : "r"(mid) : "memory");
        memcpy(dst, mid, n);
        __asm__ volatile("" : : "r"(dst) : "memory");
        uint64_t t2 = rcoll_now_ns();
        if (t1 - t0 < cma)
            cma = t1 - t0;
        if (t2 - t1 < copy)
            copy = t2 - t1;
    }
    free(buf);
    out->cma_ns = clamp_ns(cma);
    out->copy_ns = clamp_ns(copy);
}

bool rcoll_tl_probe_cma_slow(const rcoll_tl_probe_t *p)
{
    /* Clearly slower, not about equal: 1.5x (AMD EPYC VM: 2.0, stable over runs). */
    return p->set_slow ||
           (p->cma_ns && p->copy_ns && (uint64_t)p->cma_ns * 2 > (uint64_t)p->copy_ns * 3);
}
