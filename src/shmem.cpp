// The shared generator (see shmem.hpp for the locking protocol): the request
// and startup hooks that create it from the state file (and record the epoch
// and layout there), the postmaster's publication of the node and its last
// word at shutdown, the test-only faults, the one-writer reservation write
// that the renewal worker and callers share, the worker's loop, and
// next_id(), which takes the lock for one core step and then turns the step's
// outcome into an ID, a sleep, a log line or an ERROR.
#include "shmem.hpp"

#include "pg_boundary.hpp"
#include "state_file.hpp"

#include <algorithm>

extern "C" {
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/condition_variable.h"
#include "tcop/tcopprot.h"
}

namespace snowflake {
namespace {

constexpr const char *kName = "snowflake"; // shared struct and LWLock tranche

struct SharedState {
	LWLock *lock;
	int32_t node;              // node in effect; -1 when unset
	Blocked blocked;           // set at start only
	int64_t recorded_epoch_ms; // the state file's epoch, when blocked is LayoutChanged
	Layout recorded_layout;    // the state file's layout, when blocked is LayoutChanged
	int32_t state_errno;       // why the state file could not be read, when blocked is StateUnreadable
	int64_t clock_offset_ms;   // added to the system clock; 0 unless a test injected a fault
	uint32_t timeline;         // the WAL timeline the state file records (0: no file); then the current one
	int32_t timeline_checked;  // 1 once a backend has compared timeline with the current one
	int64_t waits;             // times a call slept for the clock
	int64_t wait_us;           // total time slept
	GeneratorState generator;
	uint64_t system_identifier;  // this cluster's (pg_control), recorded with every reservation
	ConditionVariable reserved_cv; // broadcast when a reservation write ends
	int32_t writing;             // 1 while one process writes a reservation (see the protocol)
	int64_t write_latency_us;    // the write latency estimate the lead is sized from
	int64_t write_delay_ms;      // added to every reservation write; 0 unless a test injected a fault
	Latch *renewer_latch;        // the renewal worker's latch while it runs, else nullptr
	int64_t renewals;            // reservations the worker made
	int64_t caller_writes;       // reservations callers made
	int64_t caller_waits;        // callers that slept on reserved_cv
};
static_assert(std::is_trivially_copyable_v<SharedState> && std::is_standard_layout_v<SharedState>,
              "shared memory holds plain data only");
static_assert(sizeof(SharedState) <= 320, "the generator's shared memory stays tiny (it is about 250 bytes)");

SharedState *shared = nullptr;

#if SNOWFLAKE_SHMEM_REQUEST_HOOK
shmem_request_hook_type prev_shmem_request_hook = nullptr;
#endif
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;

// How long one call may wait in all before it gives up: the longest legitimate wait
// (the drift bound plus one lead past a restart's floor) and a second of grace. A
// call told to wait longer sees a clock that is stuck or keeps stepping back.
int64_t max_wait_ms(const Policy &policy) noexcept {
	return policy.max_drift_ms + policy.lead_ms + 1000;
}

// The largest clock offset a test may inject, either way: 100 years; and the longest write delay: a minute.
constexpr int64_t kMaxClockOffsetMs = int64_t{100} * 36525 * 24 * 3600 * 10;
constexpr int64_t kMaxWriteDelayMs = 60000;

// Microseconds on a clock no one can set, to time writes and bound the waits of one call.
int64_t monotonic_us() noexcept {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

// The policy the settings describe, with the lead the write latency estimate sizes now.
Policy policy_now(const SharedState &state) noexcept {
	Policy policy = current_policy();
	policy.lead_ms = reservation_lead_ms(__atomic_load_n(&state.write_latency_us, __ATOMIC_RELAXED));
	return policy;
}

// The state file's record of this server: its layout, a reservation up to reserved_tick made on timeline.
StateRecord record_for(const SharedState &state, int64_t reserved_tick, uint32_t timeline) noexcept {
	return StateRecord{epoch_ms,
	                   layout_setting.layout,
	                   reserved_tick,
	                   timeline,
	                   state.system_identifier,
	                   __atomic_load_n(&state.write_latency_us, __ATOMIC_RELAXED),
	                   kStateVersion};
}

// Reserves the struct and the tranche; only valid while preloading.
void request_shmem() {
	RequestAddinShmemSpace(MAXALIGN(sizeof(SharedState)));
	RequestNamedLWLockTranche(kName, 1);
}

// Sets up a new state: the state file's reservation as a floor and its timeline; or, if the file
// disagrees or cannot be read, why the generator must refuse. Puts this server on record in the
// file when it has none, one of an older version, or another cluster's (see state_file.hpp).
void initialise(SharedState &state) {
	state.lock = &GetNamedLWLockTranche(kName)->lock;
	state.node = node_setting;
	state.blocked = Blocked::No;
	state.recorded_epoch_ms = epoch_ms;
	state.recorded_layout = layout_setting.layout;
	state.state_errno = 0;
	state.clock_offset_ms = 0;
	state.timeline = 0;
	state.timeline_checked = 0;
	state.waits = 0;
	state.wait_us = 0;
	state.generator.reset();
	state.system_identifier = GetSystemIdentifier();
	ConditionVariableInit(&state.reserved_cv);
	state.writing = 0;
	state.write_latency_us = 0;
	state.write_delay_ms = 0;
	state.renewer_latch = nullptr;
	state.renewals = 0;
	state.caller_writes = 0;
	state.caller_waits = 0;

	StateRecord record{};
	bool put_on_record = false;
	switch (read_state(record)) {
	case StateRead::Missing:
		put_on_record = true; // no reservation yet: the epoch and layout only
		break;
	case StateRead::Corrupt:
		state.blocked = Blocked::StateDamaged;
		break;
	case StateRead::Unreadable:
		state.blocked = Blocked::StateUnreadable;
		state.state_errno = errno;
		break;
	case StateRead::Loaded:
		if (record.system_identifier != 0 && record.system_identifier != state.system_identifier) {
			// Another cluster's reservation says nothing of this one's IDs: begin above the clock plus the
			// drift bound, as after a promotion, and put this cluster on record with that floor.
			const Policy policy = current_policy();
			const int64_t floor_tick = std::clamp<int64_t>(
			    policy.layout.tick_of(unix_now_ms(), epoch_ms) + policy.max_drift_ticks(), 0, policy.layout.max_time());
			state.generator.resume_above(floor_tick);
			ereport(LOG, (errmsg("snowflake: \"%s\" was written by another database system (identifier %llu, this "
			                     "one is %llu); IDs start above %s, the clock plus snowflake.max_clock_drift",
			                     kStateFile, static_cast<unsigned long long>(record.system_identifier),
			                     static_cast<unsigned long long>(state.system_identifier),
			                     timestamptz_to_str(unix_ms_to_timestamptz(
			                         policy.layout.unix_ms_of(floor_tick, epoch_ms))))));
			(void)write_state(record_for(state, floor_tick, 0), LOG);
		} else if (record.epoch_ms != epoch_ms || record.layout != layout_setting.layout) {
			state.blocked = Blocked::LayoutChanged;
			state.recorded_epoch_ms = record.epoch_ms;
			state.recorded_layout = record.layout;
			char was[64], now[64];
			format_layout(record.layout, was);
			format_layout(layout_setting.layout, now);
			ereport(LOG, (errmsg("snowflake: IDs were issued or decoded here with snowflake.epoch %lld and layout %s; "
			                     "they are now %lld and %s, so snowflake refuses to generate or decode IDs",
			                     static_cast<long long>(record.epoch_ms), was, static_cast<long long>(epoch_ms),
			                     now)));
		} else {
			state.generator.resume_above(record.reserved_tick);
			state.timeline = record.timeline;
			state.write_latency_us = record.write_latency_us;
			put_on_record = record.version < kStateVersion;
		}
		break;
	}
	if (put_on_record) {
		// This write also measures the disk, so that the first reservation is sized for it.
		const int64_t started = monotonic_us();
		if (write_state(record_for(state, std::max<int64_t>(state.generator.reserved_tick, 0), state.timeline), LOG))
			state.write_latency_us = next_write_latency_us(state.write_latency_us, monotonic_us() - started);
	}
}

extern "C" {

#if SNOWFLAKE_SHMEM_REQUEST_HOOK
// shmem_request_hook: chains, then reserves our space.
static void snowflake_shmem_request(void) {
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	request_shmem();
}
#endif

// on_shmem_exit in the postmaster: after a clean shutdown (as pg_control records it), lowers the
// reservation on disk to the exact last ID. An immediate stop also exits with code 0, but PostgreSQL
// treats its shared memory as crashed: the reservation on disk is left as it is.
static void snowflake_shmem_exit(int code, Datum) {
	if (shared == nullptr)
		return;
	const GeneratorState &generator = shared->generator;
	// After a crash, shared memory is suspect and the reservation on disk covers every ID anyway.
	// Nothing issued since start leaves the file as it is; a blocked state is not ours to overwrite.
	const int64_t last_tick = generator.last_id >> layout_setting.layout.time_shift();
	if (code == 0 && generator.last_id >= 0 && shared->blocked == Blocked::No && last_tick <= generator.reserved_tick &&
	    cluster_shut_down_cleanly())
		(void)write_state(record_for(*shared, last_tick, shared->timeline), LOG);
	shared = nullptr;
}

// shmem_startup_hook: attaches to the state, creating it if new.
static void snowflake_shmem_startup(void) {
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	shared = nullptr;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bool found = false;
	auto *state = static_cast<SharedState *>(ShmemInitStruct(kName, sizeof(SharedState), &found));
	if (!found)
		initialise(*state);
	LWLockRelease(AddinShmemInitLock);
	shared = state;
	if (!IsUnderPostmaster)
		on_shmem_exit(snowflake_shmem_exit, 0);
}

} // extern "C"

// The shared state, or an ERROR saying snowflake must be preloaded.
SharedState &preloaded() {
	if (shared == nullptr)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake must be loaded via shared_preload_libraries"),
		                errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart the "
		                        "server.")));
	return *shared;
}

// Raises the ERROR for a generator that refuses to run since start.
void check_not_blocked(const SharedState &state) {
	switch (state.blocked) {
	case Blocked::No:
		return;
	case Blocked::StateUnreadable:
		errno = state.state_errno;
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("snowflake cannot generate IDs: \"%s\" in the data directory could not be read at "
		                "server start: %m",
		                kStateFile),
		         errhint("Make the file readable by the server (do not remove it: it holds the high-water mark), "
		                 "then restart the server.")));
	case Blocked::StateDamaged:
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake cannot generate IDs: \"%s\" in the data directory is damaged", kStateFile),
		                errdetail("It records the highest time this server's IDs have reached; without it a new ID "
		                          "could repeat an old one."),
		                errhint("If the system clock is certainly past every ID this server issued, stop the server, "
		                        "remove the file, and start the server again.")));
	case Blocked::LayoutChanged:
		if (state.recorded_epoch_ms != epoch_ms)
			ereport(ERROR,
			        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			         errmsg("snowflake.epoch changed from %lld to %lld since this server last issued IDs",
			                static_cast<long long>(state.recorded_epoch_ms), static_cast<long long>(epoch_ms)),
			         errdetail("Under the new epoch its IDs decode to other times, and new IDs could repeat them."),
			         errhint("Set snowflake.epoch back to %lld and restart. To adopt the new epoch anyway, stop "
			                 "the server, remove \"%s\" from the data directory, start it, and REINDEX every "
			                 "index that uses snowflake_timestamp() or snowflake_parse().",
			                 static_cast<long long>(state.recorded_epoch_ms), kStateFile)));
		char was[64], now[64];
		format_layout(state.recorded_layout, was);
		format_layout(layout_setting.layout, now);
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake.layout changed from %s to %s since this server last issued IDs", was, now),
		                errdetail("Under the new layout its IDs decode to other times and nodes, and new IDs could "
		                          "repeat them."),
		                errhint("Set snowflake.layout back to '%s' and restart. A new layout needs a new data "
		                        "directory, or the removal of \"%s\" and a REINDEX of every index that uses "
		                        "snowflake_timestamp() or snowflake_parse(), with care that no new ID repeats an "
		                        "old one.",
		                        was, kStateFile)));
	}
}

// The wait events of snowflake's waits in pg_stat_activity, registered by the first wait of each
// process on PG 17 and later: SnowflakeClock (a call waits for the clock), SnowflakeReservation (it
// waits for another process's reservation write), SnowflakeReservationWrite (it writes one) and
// SnowflakeRenewer (the renewal worker idles); the generic Extension before 17.
enum class WaitFor { Clock, Reservation, ReservationWrite, Renewer };
uint32 wait_event(WaitFor what) {
#if SNOWFLAKE_NAMED_WAIT_EVENTS
	static uint32 events[4] = {};
	static const char *const names[4] = {"SnowflakeClock", "SnowflakeReservation", "SnowflakeReservationWrite",
	                                     "SnowflakeRenewer"};
	const int i = static_cast<int>(what);
	if (events[i] == 0)
		events[i] = WaitEventExtensionNew(names[i]);
	return events[i];
#else
	(void)what;
	return PG_WAIT_EXTENSION;
#endif
}

// The generator's clock: the system clock in Unix µs, moved by the offset a test injected.
int64_t generator_clock_us(const SharedState &state) noexcept {
	return unix_now_us() + __atomic_load_n(&state.clock_offset_ms, __ATOMIC_RELAXED) * 1000;
}

// Waits with no lock held until the generator's clock reads until_us (plan_clock_wait: a long
// wait on the latch, a short one slept, then spun on that same clock, so it ends in the tick it
// waits for and not a µs before), then honours cancel and timeouts; a signal cuts it short.
void wait_for_clock(const SharedState &state, int64_t until_us) {
	const ClockWait plan = plan_clock_wait(until_us - generator_clock_us(state));
	const uint32 event = wait_event(WaitFor::Clock);
	if (plan.on_latch) {
		(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
		                static_cast<long>((plan.sleep_us + 999) / 1000), event);
		ResetLatch(MyLatch);
	} else {
		pgstat_report_wait_start(event);
		if (plan.sleep_us > 0)
			pg_usleep(static_cast<long>(plan.sleep_us));
		while (!InterruptPending && generator_clock_us(state) < until_us)
			; // the last kClockSpinUs at most: a sleep would overshoot the tick
		pgstat_report_wait_end();
	}
	CHECK_FOR_INTERRUPTS();
}

// Raises the ERROR for a step that can neither issue nor wait.
[[noreturn]] void raise_step_error(const Step &step, int32_t node, const Policy &policy) {
	switch (step.status) {
	case Status::NodeInvalid:
		if (node < 0)
			ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("snowflake.node is not set"),
			                errdetail("Every server that generates snowflake IDs needs a node ID of its own."),
			                errhint("Add \"snowflake.node = N\" to postgresql.conf, with an N from 0 to %d that no "
			                        "other server uses, then reload the configuration.",
			                        policy.layout.max_node())));
		if (node == policy.reserved_node)
			ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			                errmsg("snowflake.node %d is reserved for backfilled IDs by snowflake.backfill_node", node),
			                errhint("Give this server another node, or reserve another node for backfill.")));
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake.node %d is out of range for snowflake.layout \"%s\"", node,
		                       layout_setting.name),
		                errhint("Set snowflake.node to a value from 0 to %d.", policy.layout.max_node())));
	case Status::ClockBehind:
		ereport(ERROR,
		        (errcode(ERRCODE_SYSTEM_ERROR),
		         errmsg("system clock is %lld ms behind the last snowflake ID issued",
		                static_cast<long long>(step.drift_ticks * policy.layout.unit_ms)),
		         errdetail("snowflake.max_clock_drift allows %lld ms.", static_cast<long long>(policy.max_drift_ms)),
		         errhint("Correct the system clock, or raise snowflake.max_clock_drift to ride out larger "
		                 "steps. IDs resume by themselves once the clock catches up.")));
	case Status::BeforeEpoch:
		ereport(ERROR,
		        (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
		         errmsg("system clock reads a time before snowflake.epoch"),
		         errdetail("snowflake.epoch is %lld ms after 1970-01-01 UTC.", static_cast<long long>(policy.epoch_ms)),
		         errhint("Correct the system clock.")));
	case Status::TimeExhausted:
		ereport(ERROR,
		        (errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED), errmsg("snowflake IDs have run out of time"),
		         errdetail("The %d-bit time field counted from snowflake.epoch ends at %s.", policy.layout.time_bits,
		                   timestamptz_to_str(unix_ms_to_timestamptz(
		                       policy.layout.unix_ms_of(policy.layout.max_time(), policy.epoch_ms)))),
		         errhint("Check the system clock; if it is right, this ID space is used up.")));
	case Status::Issued:
	case Status::Reserve:
	case Status::Wait:
		break;
	}
	elog(ERROR, "snowflake: unexpected generator status %d", static_cast<int>(step.status));
}

// On the first step since start: if the state file was written on another WAL timeline (this server
// was promoted, or restored with PITR, since) or there is no file on a timeline past the first, an
// old primary with this node may have issued IDs the file does not cover, up to max_clock_drift
// ahead of its clock; sets a floor above that and returns it, else -1. The next reservation
// records the current timeline, so a restart before it owes the floor again.
int64_t settle_timeline(SharedState &state, const Policy &policy, int64_t clock) {
	if (state.timeline_checked)
		return -1;
	state.timeline_checked = 1;
	const uint32_t current = current_timeline();
	const bool owed = state.timeline != current && (state.timeline != 0 || current > 1);
	state.timeline = current;
	if (!owed)
		return -1;
	const int64_t floor_tick = policy.layout.tick_of(clock, policy.epoch_ms) + policy.max_drift_ticks();
	state.generator.resume_above(floor_tick);
	return floor_tick;
}

// What one locked step saw and decided.
struct LockedStep {
	Step step;
	int32_t node;              // the node it used
	int64_t clock_us;          // the clock reading, in Unix microseconds
	int64_t promoted_floor;    // the floor (a tick) it set after a change of timeline, or -1
};

extern "C" {
// Ends a reservation writer's claim and wakes every caller waiting for it; also runs when the
// writer's write raises an ERROR or its process exits mid-write.
static void release_writer(int, Datum arg) {
	auto *state = reinterpret_cast<SharedState *>(DatumGetPointer(arg));
	__atomic_store_n(&state->writing, 0, __ATOMIC_RELEASE);
	ConditionVariableBroadcast(&state->reserved_cv);
}
}

// Makes a reservation up to target_tick on timeline durable, as the one writer (the caller claimed
// `writing` under the lock), without holding the lock; then records it and the write's latency, and
// releases the claim. On failure reports at elevel (an ERROR releases the claim too) and returns false.
bool write_reservation(SharedState &state, int64_t target_tick, uint32_t timeline, int elevel) {
	const int64_t delay_ms = __atomic_load_n(&state.write_delay_ms, __ATOMIC_RELAXED);
	const StateRecord record = record_for(state, target_tick, timeline);
	const int64_t started = monotonic_us();
	volatile bool written = false;
	PG_ENSURE_ERROR_CLEANUP(release_writer, PointerGetDatum(&state));
	{
		pgstat_report_wait_start(wait_event(WaitFor::ReservationWrite));
		if (delay_ms > 0)
			pg_usleep(delay_ms * 1000);
		written = write_state(record, elevel);
		pgstat_report_wait_end();
	}
	PG_END_ENSURE_ERROR_CLEANUP(release_writer, PointerGetDatum(&state));
	if (written) {
		const int64_t took_us = monotonic_us() - started;
		LWLockAcquire(state.lock, LW_EXCLUSIVE);
		state.generator.reserved(target_tick);
		__atomic_store_n(&state.write_latency_us, next_write_latency_us(state.write_latency_us, took_us),
		                 __ATOMIC_RELAXED);
		LWLockRelease(state.lock);
	}
	release_writer(0, PointerGetDatum(&state));
	return written;
}

// Wakes the renewal worker, if it runs, so that it renews ahead of need from now on.
void wake_renewer(const SharedState &state) {
	if (Latch *latch = __atomic_load_n(&state.renewer_latch, __ATOMIC_ACQUIRE))
		SetLatch(latch);
}

// How many of its reservation writes one call lets run out before they are on disk (the clock past
// what they reserve) before it gives up: the first may be sized for a disk that has since slowed
// down; the next is sized from that write. Writes whose ticks other calls took do not count.
constexpr int kMaxExpiredWrites = 3;

// One generator step for count IDs under the lock. When the reservation is spent, this caller writes
// the next one (without the lock) or, if another process is writing, waits for it; then steps again.
LockedStep locked_step(SharedState &state, Policy policy, int32_t count) {
	int64_t promoted_floor = -1;
	int64_t regressed = 0;
	int expired_writes = 0;
	for (;;) {
		CHECK_FOR_INTERRUPTS(); // no lock held: a cancel ends a call that keeps finding the reservation spent
		LWLockAcquire(state.lock, LW_EXCLUSIVE);
		policy.lead_ms = reservation_lead_ms(state.write_latency_us);
		const int32_t node = __atomic_load_n(&state.node, __ATOMIC_RELAXED);
		const int64_t clock_us = generator_clock_us(state);
		const int64_t clock = clock_us / 1000;
		if (const int64_t floor = settle_timeline(state, policy, clock); floor >= 0)
			promoted_floor = floor;
		Step step = state.generator.next(clock, node, policy, count);
		regressed = std::max(regressed, step.regressed_ticks);
		step.regressed_ticks = regressed;
		if (step.status != Status::Reserve) {
			LWLockRelease(state.lock);
			return LockedStep{step, node, clock_us, promoted_floor};
		}
		if (__atomic_load_n(&state.writing, __ATOMIC_ACQUIRE) == 0) {
			if (expired_writes == kMaxExpiredWrites) {
				const int64_t latency_us = state.write_latency_us;
				LWLockRelease(state.lock);
				ereport(ERROR, (errcode(ERRCODE_IO_ERROR),
				                errmsg("snowflake: writing \"%s\" takes longer than the reservation it writes lasts",
				                       kStateFile),
				                errdetail("%d reservations this call wrote ran out before they were on disk; a write "
				                          "takes about %lld ms, and a reservation reaches at most %lld ms ahead.",
				                          kMaxExpiredWrites, static_cast<long long>(latency_us / 1000),
				                          static_cast<long long>(kMaxLeadMs)),
				                errhint("Check the storage under the data directory.")));
			}
			__atomic_store_n(&state.writing, 1, __ATOMIC_RELAXED);
			const uint32_t timeline = state.timeline;
			LWLockRelease(state.lock);
			__atomic_fetch_add(&state.caller_writes, 1, __ATOMIC_RELAXED);
			(void)write_reservation(state, step.reserve_tick, timeline, ERROR);
			wake_renewer(state);
			if (policy.layout.tick_of(generator_clock_us(state) / 1000, policy.epoch_ms) > step.reserve_tick)
				++expired_writes;
			continue;
		}
		ConditionVariablePrepareToSleep(&state.reserved_cv);
		LWLockRelease(state.lock);
		__atomic_fetch_add(&state.caller_waits, 1, __ATOMIC_RELAXED);
		while (__atomic_load_n(&state.writing, __ATOMIC_ACQUIRE) != 0)
			ConditionVariableSleep(&state.reserved_cv, wait_event(WaitFor::Reservation));
		ConditionVariableCancelSleep();
	}
}

// The next count IDs the long way: every check, every step kind, waits, logging and errors; it sizes
// the reservation lead itself, off the fast path.
int64_t next_ids_slowly(SharedState &state, int32_t count);

} // namespace

void install_shmem_hooks() {
#if SNOWFLAKE_SHMEM_REQUEST_HOOK
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = snowflake_shmem_request;
#else
	request_shmem();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = snowflake_shmem_startup;
}

void publish_node(int node) noexcept {
	if (shared != nullptr && !IsUnderPostmaster)
		__atomic_store_n(&shared->node, node, __ATOMIC_RELAXED);
}

namespace {
// ERROR unless fault injection is on (a test server) and the caller is a superuser.
void check_fault_injection() {
	if (!fault_injection_enabled)
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("snowflake fault injection is disabled"),
		         errhint("Only a test server may set snowflake.fault_injection = on, and it takes a restart.")));
	if (!superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("only a superuser may inject faults into the snowflake generator")));
}
} // namespace

void inject_clock_offset(int64_t offset_ms) {
	check_fault_injection();
	if (offset_ms < -kMaxClockOffsetMs || offset_ms > kMaxClockOffsetMs)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("clock offset %lld ms is out of range", static_cast<long long>(offset_ms)),
		                errhint("Use an offset within 100 years (%lld ms) either way.",
		                        static_cast<long long>(kMaxClockOffsetMs))));
	SharedState &state = preloaded(); // fault_injection is defined only while preloading
	__atomic_store_n(&state.clock_offset_ms, offset_ms, __ATOMIC_RELAXED);
	ereport(WARNING, (errmsg("snowflake: fault injected: the ID generator's clock is now offset by %lld ms",
	                         static_cast<long long>(offset_ms)),
	                  errdetail("Every backend of this server generates IDs with the moved clock.")));
}

void inject_write_delay(int64_t delay_ms) {
	check_fault_injection();
	if (delay_ms < 0 || delay_ms > kMaxWriteDelayMs)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("write delay %lld ms is out of range", static_cast<long long>(delay_ms)),
		                errhint("Use a delay from 0 to %lld ms.", static_cast<long long>(kMaxWriteDelayMs))));
	SharedState &state = preloaded();
	__atomic_store_n(&state.write_delay_ms, delay_ms, __ATOMIC_RELAXED);
	ereport(WARNING, (errmsg("snowflake: fault injected: every reservation write now takes %lld ms longer",
	                         static_cast<long long>(delay_ms))));
}

int64_t next_id() {
	SharedState &state = preloaded();
	const Policy policy = current_policy();
	// The common case under the lock, and nothing else: once this server has issued an ID (so it
	// is not a standby, not blocked, and has settled its timeline), one more in the same or a
	// later millisecond needs no Step, no logging and no reservation.
	LWLockAcquire(state.lock, LW_EXCLUSIVE);
	int64_t id;
	const bool issued =
	    state.generator.issue_fast(unix_now_ms() + __atomic_load_n(&state.clock_offset_ms, __ATOMIC_RELAXED),
	                               __atomic_load_n(&state.node, __ATOMIC_RELAXED), policy, id);
	LWLockRelease(state.lock);
	return issued ? id : next_ids_slowly(state, 1);
}

IdBlock next_block(int64_t count) {
	SharedState &state = preloaded();
	const Policy policy = current_policy();
	const int32_t most = policy.layout.max_seq() + 1;
	if (count < 1 || count > most)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		         errmsg("a block of snowflake IDs must hold 1 to %d IDs, not %lld", most,
		                static_cast<long long>(count)),
		         errdetail("A block is consecutive sequence numbers of one tick, and snowflake.layout \"%s\" has "
		                   "%d of them.",
		                   layout_setting.name, most),
		         errhint("Ask for at most %d IDs per call, and call again for more.", most)));
	const int64_t first = next_ids_slowly(state, static_cast<int32_t>(count));
	return IdBlock{first, first + count - 1};
}

namespace {

int64_t next_ids_slowly(SharedState &state, int32_t count) {
	const Policy policy = policy_now(state);
	if (RecoveryInProgress())
		ereport(ERROR,
		        (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION), errmsg("cannot generate snowflake IDs during recovery"),
		         errdetail("A standby shares its primary's node ID, so IDs it made could repeat the primary's."),
		         errhint("Generate IDs on the primary. After promotion, give this server a snowflake.node "
		                 "of its own.")));
	check_not_blocked(state);
	int64_t give_up_at = -1;
	for (;;) {
		const auto [step, node, clock_us, promoted_floor] = locked_step(state, policy, count);

		if (promoted_floor >= 0)
			ereport(LOG, (errmsg("snowflake: first ID on a new timeline (after promotion or point-in-time recovery); "
			                     "IDs start above %s, clear of any an old primary issued ahead of its clock",
			                     timestamptz_to_str(unix_ms_to_timestamptz(
			                         policy.layout.unix_ms_of(promoted_floor, policy.epoch_ms))))));
		if (step.regressed_ticks > 0)
			ereport(LOG, (errmsg("snowflake: system clock moved backwards by %lld ms",
			                     static_cast<long long>(step.regressed_ticks * policy.layout.unit_ms))));
		if (step.status == Status::Issued) {
			if (step.previous_node >= 0 && step.previous_node != node)
				ereport(LOG, (errmsg("snowflake: node changed from %d to %d", step.previous_node, node)));
			return step.id;
		}
		if (step.status != Status::Wait)
			raise_step_error(step, node, policy);
		const int64_t started = monotonic_us();
		if (give_up_at < 0)
			give_up_at = started + max_wait_ms(policy) * 1000;
		if (started >= give_up_at)
			ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR),
			                errmsg("system clock did not advance past the last snowflake ID in %lld ms",
			                       static_cast<long long>(max_wait_ms(policy))),
			                errhint("Check the system clock: it may be stopped or stepping backwards.")));
		// Until the clock reaches the tick the step waits for.
		const int64_t now_tick = policy.layout.tick_of(clock_us / 1000, policy.epoch_ms);
		wait_for_clock(state, policy.layout.unix_ms_of(now_tick + step.wait_ticks, policy.epoch_ms) * 1000);
		__atomic_fetch_add(&state.waits, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&state.wait_us, monotonic_us() - started, __ATOMIC_RELAXED);
	}
}

} // namespace

LayoutSpec decoding_layout() {
	if (shared != nullptr && shared->blocked == Blocked::LayoutChanged)
		check_not_blocked(*shared);
	if (epoch_ms < 0)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake.epoch or snowflake.layout is set, but snowflake is not loaded via "
		                       "shared_preload_libraries"),
		                errdetail("Without preloading, nothing keeps them fixed, so only the default epoch "
		                          "(1288834974657) and layout (twitter) can be decoded."),
		                errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart the "
		                        "server, or decode with an explicit layout: snowflake_parse(id, 'layout').")));
	return LayoutSpec{layout_setting.layout, epoch_ms, true, layout_setting.name};
}

Stats read_stats() {
	SharedState &state = preloaded();
	Stats snap;
	LWLockAcquire(state.lock, LW_SHARED);
	snap.node = __atomic_load_n(&state.node, __ATOMIC_RELAXED);
	snap.blocked = state.blocked;
	snap.recorded_epoch_ms = state.recorded_epoch_ms;
	snap.generator = state.generator;
	snap.clock_offset_ms = __atomic_load_n(&state.clock_offset_ms, __ATOMIC_RELAXED);
	snap.write_latency_us = state.write_latency_us;
	LWLockRelease(state.lock);
	snap.lead_ms = reservation_lead_ms(snap.write_latency_us);
	snap.waits = __atomic_load_n(&state.waits, __ATOMIC_RELAXED);
	snap.wait_ms = __atomic_load_n(&state.wait_us, __ATOMIC_RELAXED) / 1000;
	snap.renewals = __atomic_load_n(&state.renewals, __ATOMIC_RELAXED);
	snap.caller_writes = __atomic_load_n(&state.caller_writes, __ATOMIC_RELAXED);
	snap.caller_waits = __atomic_load_n(&state.caller_waits, __ATOMIC_RELAXED);
	return snap;
}

namespace {
extern "C" {
// on_shmem_exit in the renewal worker: callers stop waking it.
static void forget_renewer(int, Datum) {
	if (shared != nullptr)
		__atomic_store_n(&shared->renewer_latch, static_cast<Latch *>(nullptr), __ATOMIC_RELEASE);
}
}
} // namespace

void renew_reservations() {
	SharedState &state = *shared; // inherited from the postmaster, which created it
	on_shmem_exit(forget_renewer, 0);
	__atomic_store_n(&state.renewer_latch, MyLatch, __ATOMIC_RELEASE);
	for (;;) {
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending) {
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		const Policy policy = policy_now(state);
		LWLockAcquire(state.lock, LW_EXCLUSIVE);
		const int64_t now_ms = generator_clock_us(state) / 1000;
		const Renewal renewal =
		    state.blocked == Blocked::No ? state.generator.renewal(now_ms, policy) : Renewal{-1, -1};
		const bool claimed = renewal.target_tick >= 0 && __atomic_load_n(&state.writing, __ATOMIC_ACQUIRE) == 0;
		if (claimed)
			__atomic_store_n(&state.writing, 1, __ATOMIC_RELAXED);
		const uint32_t timeline = state.timeline;
		LWLockRelease(state.lock);
		// Idle, or another process writing (it wakes this one when done): look again within a second.
		int64_t sleep_ms = 1000;
		if (claimed) {
			if (write_reservation(state, renewal.target_tick, timeline, LOG)) {
				__atomic_fetch_add(&state.renewals, 1, __ATOMIC_RELAXED);
				continue;
			}
			// A failed write was logged; the next try comes a second later, or from a caller that needs it.
		} else if (renewal.due_unix_ms >= 0) {
			sleep_ms = std::clamp<int64_t>(renewal.due_unix_ms - now_ms, 1, 1000);
		}
		(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, static_cast<long>(sleep_ms),
		                wait_event(WaitFor::Renewer));
		ResetLatch(MyLatch);
	}
}

} // namespace snowflake
