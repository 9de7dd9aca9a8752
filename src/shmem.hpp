// The server's one generator, in shared memory: its creation in the
// shared_preload_libraries hooks (which also put the epoch and layout on
// record in the state file), the node in effect, the durable reservation that
// keeps IDs unique across restarts (state_file.hpp), its renewal by a
// background worker, and the locked step that hands out IDs to every backend
// and parallel worker.
//
// Locking protocol
// - The postmaster creates SharedState in shmem_startup_hook under
//   AddinShmemInitLock (at start, and again after a crash restart), and
//   initialises it only when ShmemInitStruct reports it new: from the state
//   file's reservation, a floor for every later ID. It never moves afterwards;
//   `lock` is the single LWLock of the named tranche "snowflake".
// - `generator`, `timeline` and `timeline_checked` are read and written only
//   with `lock` held: LW_EXCLUSIVE to issue, LW_SHARED to take a snapshot.
//   `write_latency_us` is written with `lock` held (an atomic store) and may be
//   read with an atomic load without it, to size the lead of a policy. Issuing holds it for one GeneratorState::next() call (one ID,
//   or one block of consecutive IDs): integer work with no allocation, no I/O
//   and nothing that can fail. No ID is issued past the durable reservation.
// - A reservation is written by one process at a time, never under `lock`:
//   a process claims `writing` (0 -> 1) with `lock` held, releases `lock`,
//   writes and fsyncs the file, then takes `lock` again to record the new
//   reservation and the write's latency, and clears `writing` and broadcasts
//   `reserved_cv`, also when the write fails or the writer exits mid-write
//   (PG_ENSURE_ERROR_CLEANUP). Meanwhile other backends keep issuing within the
//   reservation already durable. The writer is the renewal worker, which
//   renews when half a lead is left, or a caller that found the reservation
//   spent; a caller that finds it spent while another writes sleeps on
//   `reserved_cv` (cancellably: it holds no lock) until `writing` is 0, then
//   steps again. A caller that had to write sets `renewer_latch`.
// - `node`, `clock_offset_ms` and `write_delay_ms` are single words written with
//   atomic stores (node by the postmaster when it starts or reloads, the
//   others by a test backend) and read with atomic loads; the next ID any
//   backend issues uses the new value. `blocked` and `system_identifier` are
//   written only before any backend exists. The counters outside `generator`
//   are updated with atomic adds, without the lock.
// - At a clean shutdown the postmaster (every backend and the worker gone)
//   reads the generator without the lock and writes the exact last ID to the
//   state file. After a crash it writes nothing: shared memory is suspect, and
//   the reservation on disk already covers every ID issued.
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
	int64_t lead_ms;          // how far past the clock a reservation reaches now
	int64_t write_latency_us; // the estimate the lead is sized from
	int64_t renewals;         // reservations the worker made ahead of need
	int64_t caller_writes;    // reservations a caller had to make, having found the last one spent
	int64_t caller_waits;     // callers that waited for another process's reservation write
};

// Hooks the shared state into server start; call from _PG_init while preloading only.
void install_shmem_hooks();

// Makes node the one the next ID uses; acts only in the postmaster, once the state exists.
void publish_node(int node) noexcept;

// Moves the generator's clock for every backend by offset_ms; ERROR unless fault
// injection is on and the caller is a superuser. Logged as a WARNING.
void inject_clock_offset(int64_t offset_ms);

// Makes every reservation write take delay_ms longer (a slow disk), under the same conditions.
void inject_write_delay(int64_t delay_ms);

// The renewal worker's body: renews the reservation ahead of need until the server stops.
[[noreturn]] void renew_reservations();

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
