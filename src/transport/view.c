/* The transport's view of its team (view.h): message formatting for the callbacks. */
#include "transport/view.h"

#include <stdarg.h>
#include <stdio.h>

rcoll_status_t rcoll_view_error(const rcoll_view_t *v, rcoll_status_t status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return v->error(v->owner, status, msg);
}

void rcoll_view_log(const rcoll_view_t *v, rcoll_log_level_t level, const char *fmt, ...)
{
    if (level > v->cfg->log_level)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    v->log(v->owner, level, msg);
}
