#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "core_split.h"

#if defined(__linux__)
_Static_assert(sizeof(magnets_cpu_mask) >= sizeof(cpu_set_t), "a saved mask holds a cpu_set_t");

/// The processors the process may use, read once (by the first thread to ask).
static cpu_set_t allowed;
static int allowed_count = -1;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load_allowed(void) {
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) allowed_count = CPU_COUNT(&allowed);
}

int magnets_can_confine(void) {
    pthread_once(&once, load_allowed);
    return allowed_count >= 2;
}

int magnets_thread_id(void) { return (int)syscall(SYS_gettid); } // (gettid() itself needs glibc 2.30)

int magnets_confine_current_thread(int reserved, magnets_cpu_mask *saved) {
    if (!magnets_can_confine()) return -1;
    cpu_set_t current;
    if (sched_getaffinity(0, sizeof current, &current) != 0) return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    int first = 1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        if (first == reserved) CPU_SET(cpu, &set); // the first for the reserved, the rest for the others
        first = 0;
    }
    if (sched_setaffinity(0, sizeof set, &set) != 0) return -1;
    memset(saved, 0, sizeof *saved);
    memcpy(saved, &current, sizeof current);
    return 0;
}

int magnets_move_thread_to_reserved(int tid) {
    if (!magnets_can_confine() || tid <= 0) return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &allowed)) {
            CPU_SET(cpu, &set);
            break;
        }
    }
    return sched_setaffinity((pid_t)tid, sizeof set, &set) == 0 ? 0 : -1;
}

int magnets_current_cpu_count(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

int magnets_restore_thread(int tid, const magnets_cpu_mask *saved) {
    cpu_set_t set;
    memcpy(&set, saved, sizeof set);
    return sched_setaffinity((pid_t)tid, sizeof set, &set) == 0 ? 0 : -1;
}
int magnets_start_writeback(int fd) { return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE); }
#else
int magnets_start_writeback(int fd) {
    (void)fd;
    return -1;
}
int magnets_can_confine(void) { return 0; }
int magnets_thread_id(void) { return -1; }
int magnets_confine_current_thread(int reserved, magnets_cpu_mask *saved) {
    (void)reserved;
    (void)saved;
    return -1;
}
int magnets_move_thread_to_reserved(int tid) {
    (void)tid;
    return -1;
}
int magnets_current_cpu_count(void) { return -1; }
int magnets_restore_thread(int tid, const magnets_cpu_mask *saved) {
    (void)tid;
    (void)saved;
    return -1;
}
#endif
