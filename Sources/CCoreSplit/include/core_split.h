#ifndef MAGNETS_CORE_SPLIT_H
#define MAGNETS_CORE_SPLIT_H

/// Two things the kernel can do for a sync (Linux): keep a processor for its replay, and write a
/// file's pages back early.
///
/// Keeping one processor for one thread (a sync's replay) and the others for the threads beside
/// it, through the kernel's CPU affinity (Linux): the kernel then shares those processors out
/// among the threads beside it, with no hand-over of turns between them, and nothing of theirs
/// runs where the replay does. Elsewhere (and with fewer than two processors) nothing is done.

/// A thread's affinity, as it was before it was confined.
typedef struct {
    unsigned long long bits[16];
} magnets_cpu_mask;

/// Whether confining can be done here: Linux, and two processors or more for this process.
int magnets_can_confine(void);

/// The calling thread's id.
int magnets_thread_id(void);

/// Confines the calling thread to the first processor this process may use (`reserved` true) or
/// to all the others (false), saving its affinity in `saved`. 0 when done, -1 when not (then
/// nothing changed).
int magnets_confine_current_thread(int reserved, magnets_cpu_mask *saved);

/// How many processors the calling thread may run on (-1 where that is not known).
int magnets_current_cpu_count(void);

/// Moves thread `tid` of this process to the first processor (the one confined threads kept
/// free), where it then stays until given its affinity back: the kernel would move a thread to a
/// processor that falls idle only at its next balancing, some milliseconds later. 0 when done.
int magnets_move_thread_to_reserved(int tid);

/// Gives thread `tid` of this process back the affinity `saved`. 0 when done.
int magnets_restore_thread(int tid, const magnets_cpu_mask *saved);

/// Starts writing back the file's dirty pages, without waiting (Linux `sync_file_range`).
int magnets_start_writeback(int fd);

#endif
