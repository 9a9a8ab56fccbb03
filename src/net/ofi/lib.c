/* libfabric itself, opened when the channel is first used (dlopen), not when rcoll is loaded.
 *
 * rcoll does not link libfabric. Debian's libfabric links libpsm_infinipath, whose load-time
 * crash handler made every process that preloaded the MPI drop-in, network or not, write
 * "*.btr" files into its working directory on a crash, print a backtrace and exit with status
 * 1 instead of the signal (native MPICH, which does not load libfabric, does none of that).
 * Now a process loads libfabric only when a team opens the libfabric channel. The five
 * functions below are the only ones rcoll calls that libfabric's headers do not define inline
 * (the rest go through the tables in its objects). */
#include "net/ofi/ofi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define OFI_LIB_NAME "libfabric.so.1"

static struct {
    pthread_once_t once;
    ofi_lib_t lib;
    bool ok;
    char why[200];
} loaded = {PTHREAD_ONCE_INIT, {0}, false, ""};

/* One symbol into *at; false (and the reason) if missing. */
static bool find(void *h, const char *name, void *at)
{
    void *f = dlsym(h, name);
    if (!f) {
        snprintf(loaded.why, sizeof loaded.why, "%s has no %s", OFI_LIB_NAME, name);
        return false;
    }
    memcpy(at, &f, sizeof f); /* an object pointer into a function pointer (POSIX dlsym) */
    return true;
}

static void load(void)
{
    void *h = dlopen(OFI_LIB_NAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(loaded.why, sizeof loaded.why, "%s", e ? e : "dlopen(" OFI_LIB_NAME ") failed");
        return;
    }
    ofi_lib_t *l = &loaded.lib;
    loaded.ok = find(h, "fi_getinfo", &l->getinfo) && find(h, "fi_freeinfo", &l->freeinfo) &&
                find(h, "fi_dupinfo", &l->dupinfo) && find(h, "fi_fabric", &l->fabric) &&
                find(h, "fi_strerror", &l->strerror);
    /* Kept open either way: the channel's objects live as long as the process may use them. */
}

const ofi_lib_t *rcoll_ofi_lib(char *err, size_t err_len)
{
    pthread_once(&loaded.once, load);
    if (!loaded.ok && err_len)
        snprintf(err, err_len, "libfabric could not be loaded: %s", loaded.why);
    return loaded.ok ? &loaded.lib : NULL;
}
