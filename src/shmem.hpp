// The server's one generator, in shared memory: its creation in the
// shared_preload_libraries hooks, the node in effect, the durable
// reservation that keeps IDs unique across restarts (state_file.hpp), and the
// locked step that hands out IDs to every backend and parallel worker.
//
// Locking protocol
// - The postmaster creates SharedState in shmem_startup_hook under
//   AddinShmemInitLock (at start, and again after a crash restart), and
//   initialises it only when ShmemInitStruct reports it new: from the state
//   file's reservation, a floor for every later ID. It never moves afterwards;
//   `lock` is the single LWLock of the named tranche "snowflake".
// - `generator`, `timeline` and `timeline_checked` are read and written only
//   with `lock` held: LW_EXCLUSIVE to issue, LW_SHARED to take a snapshot. Issuing
//   holds it for one GeneratorState::next() call (one ID, or one block of
//   consecutive IDs), integer work with no
//   allocation and nothing that can fail, except when next() asks for a new
//   reservation: then the state file is written and fsynced under the lock,
//   at most once per reservation step (half of snowflake.max_clock_drift), so
//   no backend can issue past a reservation that is not yet durable. A failed
//   write raises an ERROR, which releases the lock with nothing issued. The
//   lock is taken once per ID and released before any logging, waiting or
//   other error reporting.
// - `node` and `clock_offset_ms` are single words written with atomic stores
//   (node by the postmaster when it starts or reloads, the offset by a test
//   backend) and read with atomic loads under `lock`; the next ID any backend
//   issues uses the new value. `blocked` is written only before any backend
//   exists. The wait counters are updated with atomic adds, without the lock.
// - At a clean shutdown the postmaster (every backend gone) reads the
//   generator without the lock and writes the exact last ID to the state file.
//   After a crash it writes nothing: shared memory is suspect, and the
//   reservation on disk already covers every ID issued.
#pragma once

#include "generator.hpp"

#include <cstdint>

namespace snowflake {

// Why the generator refuses to run; decided once, at server start.
enum class Blocked : int32_t {
	No,
	StateDamaged,    // snowflake.state is invalid: the high-water mark is unknown
	StateUnreadable, // snowflake.state could not be read at start (state_errno says why)
	LayoutChanged,   // snowflake.state was written with another epoch or layout (snowflake.layout)
};

// A consistent copy of the generator and its counters, for snowflake_stats().
struct Stats {
	int32_t node;
	Blocked blocked;
	int64_t recorded_epoch_ms; // the state file's epoch when blocked is LayoutChanged (else epoch_ms)
	GeneratorState generator;
	int64_t waits;   // times a call slept for the clock
	int64_t wait_ms; // total time slept
	int64_t clock_offset_ms;
};

// Hooks the shared state into server start; call from _PG_init while preloading only.
void install_shmem_hooks();

// Makes node the one the next ID uses; acts only in the postmaster, once the state exists.
void publish_node(int node) noexcept;

// Moves the generator's clock for every backend by offset_ms; ERROR unless fault
// injection is on and the caller is a superuser. Logged as a WARNING.
void inject_clock_offset(int64_t offset_ms);

// The next ID of this server, above every ID it ever issued; ERRORs say why not.
int64_t next_id();

// Consecutive IDs first..last of this server.
struct IdBlock {
	int64_t first;
	int64_t last;
};

// The next count consecutive IDs of one tick (ERROR 22023 unless 1 <= count <= max_seq + 1): all
// above every ID this server issued, and below every later one; they decode to this node.
IdBlock next_block(int64_t count);

// The layout and epoch to decode with; ERROR when this server's IDs would decode differently than
// when they were issued, or when none can be trusted (a custom one without preloading).
LayoutSpec decoding_layout();

// The generator's state and counters now; ERROR when snowflake is not preloaded.
Stats read_stats();

} // namespace snowflake
