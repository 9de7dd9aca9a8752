// The server's one generator, in shared memory: the struct every backend,
// parallel worker and the renewal worker share, its creation in the
// shared_preload_libraries hooks, and the small accessors every glue file uses
// (the node in effect, the generator's clock, the state last seen). What is
// done with it lives above: the durable reservation in reservation.hpp, what a
// start recovers in restart.hpp, the path that issues IDs in issuing.hpp, and
// the snapshot snowflake_stats() reports in stats.hpp.
//
// Locking protocol. Every field of SharedState is in exactly one of these
// classes, and is touched only as its class says:
// - Written once at startup: the postmaster's shmem_startup_hook creates the
//   struct under AddinShmemInitLock (at start, and again after a crash
//   restart) and initialises it only when ShmemInitStruct reports it new,
//   before any backend or worker exists. After that these never change and
//   are read without a lock: `lock`, `system_identifier`, `blocked` (but see
//   redo and a database's record, below),
//   `state_errno`, `foreign_file`, `recorded_epoch_ms`, `recorded_layout` (the same),
//   `start_floor` and `start_floor_tick`.
// - The generator's LWLock (`lock`, the single lock of the named tranche
//   "snowflake"): `generator`, `floor_from`, `wal_tick`, `timeline` and `timeline_checked` are read and
//   written only with it held, LW_EXCLUSIVE to issue, LW_SHARED to take a
//   snapshot. Issuing holds it for one GeneratorState step (one ID, or one
//   block of consecutive IDs): integer work with no allocation, no I/O and
//   nothing that can fail. No ID is issued past the durable reservation.
// - The writer's claim (reservation.hpp has the whole protocol): `writing`
//   goes from 0 to 1 only with `lock` held, so one process at a time writes a
//   reservation, and back to 0 by that writer without the lock, followed by a
//   broadcast on `reserved_cv` (PostgreSQL's condition variable, with its own
//   spinlock). The claimant stores `writer_pid` and `write_started_us`, then
//   a write barrier, then sets `writing`; they describe the current write
//   while `writing` is 1. The writer stores `write_errno` and
//   `write_failed_at_us` when its write ends, then a write barrier, then
//   clears `writing`. A reader without the lock loads `writing`, then takes a
//   read barrier before it loads the others. `write_latency_us` is stored with
//   `lock` held and may be loaded without it.
// - Atomics (pg_atomic_*), each a single word, loaded and stored whole with no
//   lock: `node`, `configured_node`, `node_number`, `refused_node`,
//   `node_changes`, `node_moves_done`, `node_moves_cleared` and `node_changed_us` (node.hpp has the protocol that
//   publishes them),
//   `clock_offset_ms` and `write_delay_ms` (stored by a test backend),
//   `wal_logged_end` (stored by the writer of a reservation), the
//   renewal worker's `renewer_latch` (stored by the worker at its start and
//   exit, loaded by callers to wake it), the counters `waits`, `wait_us`,
//   `renewals`, `caller_writes` and `caller_waits` (fetch-add), and the state
//   last seen: `seen_state` changes only by compare-and-exchange, whose
//   winner then stores `seen_since_us`. A reader may see a new value in one
//   atomic and an old one in another: each is a fact on its own, and nothing
//   is derived from two of them together but a state and its "since", which
//   may be a moment stale.
// - The node check's report (claims.hpp): `check_status` and `check_at_us`
//   are atomics only the report's one writer stores (below), and
//   `node_checked` one only the worker stores, after the outcome of its pass;
//   `report` is written by that writer alone under a sequence lock
//   (`report_version` made odd, a write barrier, the text, a write barrier,
//   made even), and read by copying it between two loads of an even,
//   unchanged version;
//   `checked_cv` is broadcast after every pass. The worker also stores
//   `check_pid` at its start and clears it at its exit, and counts
//   `check_failed_connects` (node_check_worker.hpp); `check_leave_for` is
//   stored by a backend that asks the worker to leave its database and
//   exchanged back to 0 by the worker at its exit. Whether a node check
//   worker is registered at all (node_check_worker.hpp): the renewal worker
//   stores `check_registered` 1 before it registers one, and back to 0 when
//   the registration fails or it sees the worker gone; the worker stores 0 at
//   its exit, after its last word in `report`, with `check_retry_at_us`. So
//   `report` has one writer at a time: the worker while `check_registered` is
//   1, else the renewal worker.
// - Redo (wal.hpp), in the startup process while the server is in recovery
//   and so issues nothing: with `lock` held it raises `generator`,
//   `floor_from`, `wal_tick` and `timeline`, and lowers `blocked` from
//   StateLost to No (the WAL knows what the lost file held); a reader without
//   the lock may see `blocked` a moment stale, never a call that issues.
// - A database's record of the layout (layout_record.hpp): while
//   `layout_unconfirmed` is 1 (stored at start, cleared by the call that
//   confirms), a call whose database records another epoch or layout sets
//   `blocked` to LayoutChanged and `recorded_*` with `lock` held, only while
//   the generator has issued and reserved nothing this run. So every step
//   under the lock that could issue first sees them (locked_step() checks
//   `blocked` there), and a reader without the lock a moment stale.
// - At a clean shutdown the postmaster (every backend and the worker gone)
//   reads the generator without the lock and writes the exact last ID to the
//   state file. After a crash it writes nothing: shared memory is suspect, and
//   the reservation on disk already covers every ID issued.
#pragma once

#include "pg_boundary.hpp"

#include <cstdint>

namespace snowflake {

// Why the generator refuses to run; decided once, at server start.
enum class Blocked : int32_t {
	No,
	StateDamaged,    // snowflake.state is invalid: the high-water mark is unknown
	StateUnreadable, // snowflake.state could not be read at start (state_errno says why)
	StateLost,       // no snowflake.state of this cluster's after a crash: nothing bounds the IDs issued
	                 // since pg_control's latest checkpoint (foreign_file says whether another's was there)
	LayoutChanged,   // snowflake.state was written with another epoch or layout (snowflake.layout)
};

// Where the floor the IDs of this run must lie above came from: at server start, or later.
enum class StartFloor : int32_t {
	None,                       // no floor: a new cluster (or the generator is blocked)
	Reservation,                // the reservation snowflake.state records
	LastCheckpoint,             // no snowflake.state of this cluster's, after a clean shutdown: pg_control's
	                            // latest checkpoint + 1 s + the drift bound
	CheckpointAboveReservation, // the same, above a reservation snowflake.state records that the postmaster
	                            // did not write at that (clean) shutdown: a copy put back, a file of 0.4.0
	NewTimeline,                // the clock at the first step on a new timeline + the drift bound (promotion)
	Wal,                        // the last reservation the WAL carried here (replayed: crash recovery, a standby)
};

// Whether snowflake_nextval() can issue an ID now, and if not, the condition that makes it fail, in
// the order a call meets them. state_text() words each for snowflake_stats().state.
enum class Readiness : uint32_t {
	Ok,
	Recovery,
	StateDamaged,
	StateUnreadable,
	StateLost,
	EpochChanged,
	LayoutChanged,
	NodeUnset,
	NodeSetTwice,
	NoNodeInHostName,
	NodeVariableUnset,
	NodeVariableInvalid,
	NodeOutOfRange,
	CitusGroupUnknown,
	NodeConflict,
	NodeReserved,
	ClockBeforeEpoch,
	TimeRunOut,
	ClockBehind,  // the clock lags the last ID, or the floor of this run, by more than a call may wait
	WriteStalled, // a reservation is needed, and the write of one has run longer than a call waits
	WriteFailing, // a reservation is needed, and the last write of one failed
};

// The words for r: "ok", "clock behind", ... (docs/functions.md lists them).
const char *state_text(Readiness r) noexcept;

// What the node check found last (`check_status`; claims.hpp has the check, node_check_text() the words).
enum class NodeCheck : uint32_t {
	Off,         // snowflake.node_check_interval = 0 (no worker runs, none is registered), or a single-user
	             // backend (no worker runs there)
	Starting,    // no pass yet since the worker started
	NoExtension, // the database of the node check has no snowflake extension: nothing to claim with
	Failing,     // the last pass raised an error (report: its message)
	Standby,     // a standby, where the worker does not run: it issues nothing, so it claims nothing
	Ok,          // no other live claim on this server's node
	Refusing,    // another server claimed the node first: this one refuses (report: the other)
	Warning,     // another server claims the node too, and this one keeps issuing (report: the other)
	Incomplete,  // no other claim seen, but some Citus servers could not be asked (report: which, and why)
	OthersShare, // no other claim on this server's node, but two other servers claim one node (an aggregator
	             // that holds both claims; report: the node and both servers)
	CannotConnect, // the worker is not connected to snowflake.database: its attempt failed, or it left the
	               // database for a DROP, RENAME or TEMPLATE of it (report: which; node_check_worker.hpp)
	NoWorkerSlot,  // the renewal worker could not register the node check's worker: every background worker
	               // slot (max_worker_processes) is taken; it tries again every second (node_check_worker.hpp)
	Stale,       // read only: the last pass ended more than kStalePasses intervals and 10 s ago (a stuck or
	             // stopped worker); never stored
};

struct SharedState {
	LWLock *lock;                 // once: the tranche's lock
	uint64_t system_identifier;   // once: this cluster's (pg_control), recorded with every reservation
	Blocked blocked;              // once: why generation refuses since start
	int32_t state_errno;          // once: why the state file was unreadable (Blocked::StateUnreadable)
	int64_t recorded_epoch_ms;    // once: the state file's epoch (Blocked::LayoutChanged; else the setting)
	Layout recorded_layout;       // once: the state file's layout (Blocked::LayoutChanged; else the setting)
	int32_t foreign_file;         // once: 1 when snowflake.state was another cluster's at start
	int32_t file_trusted;         // once: 1 when the file this
	                              // start read is the last word on the reservation (not a file without the
	                              // mark of the clean shutdown pg_control records)
	int64_t start_checkpoint_s;   // once: the time of pg_control's latest checkpoint at start, Unix s (-1: unread)
	StartFloor start_floor;       // once: what the floor of this run came from at start
	int64_t start_floor_tick;     // once: that floor (-1: none)
	StartFloor floor_from;        // lock: what the generator's floor came from (start_floor, or a later one)
	int64_t wal_tick;             // lock: the highest reservation replayed from the WAL, in ticks of the layout
	                              // on record (recorded_*; -1: none; wal.hpp)
	GeneratorState generator;     // lock
	uint32_t timeline;            // lock: the WAL timeline the state file records (0: none), then the current one
	int32_t timeline_checked;     // lock: 1 once a step has compared `timeline` with the current one
	pg_atomic_uint32 node;        // atomic: the node in effect, as int32 bits (node.hpp); -1 when none
	pg_atomic_uint64 configured_node; // atomic: what the node source gave, packed (node.hpp)
	pg_atomic_uint64 node_number;     // atomic: the number the source read, before the offset (-1: none)
	pg_atomic_uint32 refused_node;    // atomic: the node a node conflict refuses, as int32 bits (-1: none)
	pg_atomic_uint64 clock_offset_ms; // atomic: int64 bits added to the system clock; 0 unless a test injected it
	pg_atomic_uint64 write_delay_ms;  // atomic: added to every reservation write; 0 unless a test injected it
	ConditionVariable reserved_cv;    // its own spinlock: broadcast when a reservation write ends
	pg_atomic_uint32 writing;         // claim: 1 while one process writes a reservation
	pg_atomic_uint32 writer_pid;      // claim: that process
	pg_atomic_uint64 write_started_us; // claim: when its write began, on the monotonic clock
	pg_atomic_uint64 write_latency_us; // claim: the estimate the lead is sized from (stored under lock)
	pg_atomic_uint32 write_errno;      // claim: why the last write failed (0: it succeeded)
	pg_atomic_uint64 write_failed_at_us; // claim: since when writes fail, Unix µs (0: the last succeeded)
	pg_atomic_uint64 renewer_latch;    // atomic: the renewal worker's Latch * while it runs, else 0
	pg_atomic_uint64 wal_logged_end;   // atomic: the end of the last reservation record logged (0: none; wal.hpp)
	pg_atomic_uint64 waits;            // atomic counter: times a call slept for the clock
	pg_atomic_uint64 wait_us;          // atomic counter: total time slept
	pg_atomic_uint64 renewals;         // atomic counter: reservations the worker made
	pg_atomic_uint64 caller_writes;    // atomic counter: reservations callers made
	pg_atomic_uint64 caller_waits;     // atomic counter: callers that waited for another's write
	pg_atomic_uint32 seen_state;       // atomic: the Readiness a call or a snapshot saw last
	pg_atomic_uint64 seen_since_us;    // atomic: since when, Unix µs
	pg_atomic_uint32 check_status;     // atomic: what the node check found last (claims.hpp)
	pg_atomic_uint64 check_at_us;      // atomic: when its last pass ended, Unix µs (0: none yet)
	pg_atomic_uint32 node_changes;     // atomic: 1 at creation, then one more at each move of the node to another
	pg_atomic_uint64 node_changed_us;  // atomic: when node_changes last grew, on the monotonic clock
	pg_atomic_uint32 node_moves_done;  // atomic: 1 at creation, then one more once each counted move is published
	pg_atomic_uint32 node_checked;     // atomic: the node_changes under which the node check's last pass ran
	pg_atomic_uint32 node_moves_cleared; // atomic: the node_changes up to which no pass is owed (node.hpp)
	ConditionVariable checked_cv;      // its own spinlock: broadcast after every pass of the node check
	pg_atomic_uint32 report_version;   // atomic: the sequence lock over `report`, odd while it is rewritten
	char report[192];                  // report_version: the other server on this node, or the check's error
	pg_atomic_uint32 check_pid;        // atomic: the node check worker's PID from its start to its exit (0: none)
	pg_atomic_uint32 check_failed_connects; // atomic: its attempts in a row that ended before it connected
	pg_atomic_uint32 check_leave_for;  // atomic: the database command a backend asked it to leave for (0: none)
	pg_atomic_uint32 check_registered; // atomic: 1 from the renewal worker's registration of the node check's
	                                   // worker until that worker's exit (or its failure to start)
	pg_atomic_uint64 check_retry_at_us; // atomic: no new node check worker before this, on the monotonic clock
	pg_atomic_uint32 layout_unconfirmed; // atomic: 1 from a start without a state file of this cluster's until a
	                                     // call compared its database's record of the layout (layout_record.hpp)
};
static_assert(std::is_trivially_copyable_v<SharedState> && std::is_standard_layout_v<SharedState>,
              "shared memory holds plain data only");
static_assert(sizeof(SharedState) <= 1024, "the generator's shared memory stays small (docs/performance.md has its size)");

// The shared state once this process attached to it; nullptr before, and always without preloading.
// Hidden, so that the check before every ID loads it directly rather than through the symbol table.
extern SharedState *shared_state __attribute__((visibility("hidden")));

// Raises the ERROR of a function that needs the shared state when snowflake is not preloaded.
[[noreturn]] void refuse_unpreloaded();

// The shared state, or an ERROR saying snowflake must be preloaded; inline, so that the check
// before every ID is a load, a test and a branch.
inline SharedState &preloaded() {
	if (unlikely(shared_state == nullptr))
		refuse_unpreloaded();
	return *shared_state;
}

// The node word the hot path reads: the node in effect, or -1 (none), or a node with kNodeHeld
// set (node.hpp).
inline int32_t node_in_effect(SharedState &state) noexcept {
	return static_cast<int32_t>(pg_atomic_read_u32(&state.node));
}

// The offset a test injected into the generator's clock, in ms (0 unless snowflake.fault_injection).
inline int64_t clock_offset_ms(SharedState &state) noexcept {
	return static_cast<int64_t>(pg_atomic_read_u64(&state.clock_offset_ms));
}

// The generator's clock: the system clock in Unix µs, moved by the offset a test injected.
inline int64_t generator_clock_us(SharedState &state) noexcept {
	return unix_now_us() + clock_offset_ms(state) * 1000;
}

// Microseconds on a clock no one can set, to time writes and bound waits.
int64_t monotonic_us() noexcept;

// Records that a call or a snapshot saw state r; true when that is a change (r is new since then).
bool note_state(SharedState &state, Readiness r) noexcept;

// Publishes the node check's status and report under the sequence lock over `report`, with the time,
// and wakes the calls waiting for its first pass when wake is true. One writer at a time: the node
// check's worker while one is registered (`check_registered`), else the renewal worker.
void publish_node_check(SharedState &state, NodeCheck status, const char *report, bool wake) noexcept;

// The node check's status and its report (the other server on this node, or the error), read whole.
NodeCheck node_check_report(SharedState &state, char (&report)[192]) noexcept;

// What snowflake waits for. wait_event() names each in pg_stat_activity on PostgreSQL 17 and later
// (registered by the first such wait of each process): SnowflakeClock (a call waits for the clock),
// SnowflakeReservation (for another process's reservation write), SnowflakeReservationWrite (it
// writes one), SnowflakeRenewer (the renewal worker idles) and SnowflakeNodeCheck (a call waits for
// the node check's first pass; the node check idles); the generic Extension before 17.
enum class WaitFor { Clock, Reservation, ReservationWrite, Renewer, NodeCheck };
uint32 wait_event(WaitFor what);

// What the postmaster does with a state it created (fill it in from what is on disk) and at its exit
// (its last word on disk, given the exit code).
using OnCreate = void (*)(SharedState &state);
using OnExit = void (*)(SharedState &state, int exit_code);

// Hooks the shared state into server start, with what to do when it is created and at the
// postmaster's exit; call from _PG_init while preloading only.
void install_shmem_hooks(OnCreate on_create, OnExit on_exit);

} // namespace snowflake
