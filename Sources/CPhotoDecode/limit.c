#include "photo_decode.h"

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

int imhost_photo_limit_memory(uint64_t budget) {
    /* The first field of /proc/self/statm: the pages mapped now (libraries, the runtime). */
    FILE *statm = fopen("/proc/self/statm", "re");
    if (!statm) return -1;
    unsigned long long pages = 0;
    int read = fscanf(statm, "%llu", &pages);
    fclose(statm);
    if (read != 1) {
        errno = EINVAL;
        return -1;
    }
    struct rlimit limit;
    limit.rlim_cur = limit.rlim_max = (rlim_t)(pages * (uint64_t)sysconf(_SC_PAGESIZE) + budget);
    return setrlimit(RLIMIT_AS, &limit);
}

int imhost_photo_limit_cpu(unsigned seconds) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return -1;
    struct rlimit limit;
    if (getrlimit(RLIMIT_CPU, &limit) != 0) return -1;
    rlim_t used = (rlim_t)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + 1;
    limit.rlim_cur = used + seconds;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_cur > limit.rlim_max) limit.rlim_cur = limit.rlim_max;
    return setrlimit(RLIMIT_CPU, &limit);
}
