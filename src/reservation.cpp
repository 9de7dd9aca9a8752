// The durable reservation (see reservation.hpp for the protocol): recovering
// it from snowflake.state at start and recording the exact last ID at a clean
// shutdown, sizing its lead, the one-writer write that the renewal worker and
// callers share, the waits of callers on that writer with the rule that ends
// a call whose writes keep expiring, and the renewal worker's loop.
#include "reservation.hpp"

#include "state_file.hpp"

#include <algorithm>

extern "C" {
#include "postmaster/interrupt.h"
}

namespace snowflake {
namespace {

// The state file's record of this server: its layout, a reservation up to reserved_tick made on timeline.
StateRecord record_for(SharedState &state, int64_t reserved_tick, uint32_t timeline) noexcept {
	return StateRecord{epoch_ms,
	                   layout_setting.layout,
	                   reserved_tick,
	                   timeline,
	                   state.system_identifier,
	                   static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us)),
	                   kStateVersion};
}

// Logs, at every start, which floor the first ID of this run must lie above and why, and what that
// means for the first calls when the clock is behind it: how long they wait, or are refused.
void log_start_floor(const SharedState &state, bool after_crash) {
	if (state.blocked != Blocked::No)
		return; // read_state() and recover_reservation() logged why generation is refused
	if (state.start_floor == StartFloor::None) {
		ereport(LOG, (errmsg("snowflake: no \"%s\", and no object was ever created in this cluster, so no ID can "
		                     "have been issued here: IDs start at the clock",
		                     kStateFile)));
		return;
	}
	const Policy policy = policy_now(const_cast<SharedState &>(state));
	const Layout &layout = policy.layout;
	const int64_t floor_ms = layout.unix_ms_of(state.start_floor_tick + 1, epoch_ms);
	const int64_t ahead_ms = floor_ms - unix_now_ms();
	const int64_t refused_ms = ahead_ms - (policy.max_lag_ticks() + policy.lead_ticks()) * layout.unit_ms;
	const int64_t waited_ms = ahead_ms - (policy.clock == ClockPolicy::Borrow ? policy.max_drift_ms : 0);
	char when[64] = "the clock is past it";
	if (ahead_ms > 0)
		snprintf(when, sizeof(when), "the clock is %lld ms behind it", static_cast<long long>(ahead_ms));
	ereport(after_crash ? WARNING : LOG,
	        (errmsg("snowflake: IDs start above %s, from %s; %s", timestamptz_to_str(unix_ms_to_timestamptz(floor_ms)),
	                floor_origin(state.start_floor), when),
	         refused_ms > 0
	             ? errdetail("That is more than snowflake.max_clock_drift and one lead allow: calls are refused with "
	                         "58000 for about %lld s, until the clock is within them, then wait for it.",
	                         static_cast<long long>((refused_ms + 999) / 1000))
	         : waited_ms > 0 ? errdetail("The first calls wait up to %lld ms for the clock.",
	                                     static_cast<long long>(waited_ms))
	                         : 0,
	         after_crash ? errhint("pg_control records no clean shutdown, so IDs issued after its latest checkpoint "
	                               "are above new ones only if the clock has not gone back since; restore \"%s\" "
	                               "from a backup taken after them if you have one.",
	                               kStateFile)
	                     : 0));
}

// Claims the writer's role for this process; call with the generator's lock held and `writing` 0.
void claim_writer(SharedState &state) {
	pg_atomic_write_u32(&state.writing, 1);
	pg_atomic_write_u32(&state.writer_pid, static_cast<uint32>(MyProcPid));
	pg_atomic_write_u64(&state.write_started_us, static_cast<uint64>(monotonic_us()));
}

// One write under way, for release_writer(): the shared state and why the write failed (0: it did not).
struct Write {
	SharedState *state;
	int failed_errno;
};

extern "C" {
// Records how a write ended, ends the writer's claim and wakes every caller waiting for it; also
// runs when the write raises an ERROR or its process exits mid-write.
static void release_writer(int, Datum arg) {
	const Write &write = *reinterpret_cast<Write *>(DatumGetPointer(arg));
	SharedState &state = *write.state;
	pg_atomic_write_u32(&state.write_errno, static_cast<uint32>(write.failed_errno));
	if (write.failed_errno == 0)
		pg_atomic_write_u64(&state.write_failed_at_us, 0);
	else if (pg_atomic_read_u64(&state.write_failed_at_us) == 0)
		pg_atomic_write_u64(&state.write_failed_at_us, static_cast<uint64>(unix_now_us()));
	pg_atomic_write_u32(&state.writing, 0);
	ConditionVariableBroadcast(&state.reserved_cv); // its spinlock orders the stores before any wake-up
}

// on_shmem_exit in the renewal worker: callers stop waking it.
static void forget_renewer(int, Datum arg) {
	pg_atomic_write_u64(&reinterpret_cast<SharedState *>(DatumGetPointer(arg))->renewer_latch, 0);
}
}

// Makes a reservation up to target_tick on timeline durable, as the one writer (the caller claimed
// the role under the lock), without holding the lock; then records it and the write's latency, and
// releases the claim. On failure reports at elevel (an ERROR releases the claim too) and returns
// false. A write that outlasted the reservation it renews, while calls waited, is logged.
bool write_reservation(SharedState &state, int64_t target_tick, uint32_t timeline, int elevel) {
	const int64_t delay_ms = static_cast<int64_t>(pg_atomic_read_u64(&state.write_delay_ms));
	const StateRecord record = record_for(state, target_tick, timeline);
	const uint64 waits_before = pg_atomic_read_u64(&state.caller_waits);
	const int64_t started = monotonic_us();
	Write write{&state, EIO}; // a failure whose errno is not known (an ERROR from deep inside) counts as EIO
	volatile bool written = false;
	PG_ENSURE_ERROR_CLEANUP(release_writer, PointerGetDatum(&write));
	{
		pgstat_report_wait_start(wait_event(WaitFor::ReservationWrite));
		if (delay_ms > 0)
			pg_usleep(delay_ms * 1000);
		written = write_state(record, elevel, &write.failed_errno);
		if (written)
			write.failed_errno = 0;
		pgstat_report_wait_end();
	}
	PG_END_ENSURE_ERROR_CLEANUP(release_writer, PointerGetDatum(&write));
	if (written) {
		const int64_t took_us = monotonic_us() - started;
		LWLockAcquire(state.lock, LW_EXCLUSIVE);
		const int64_t renewed_tick = state.generator.reserved_tick;
		state.generator.reserved(target_tick);
		const int64_t estimate = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us));
		pg_atomic_write_u64(&state.write_latency_us, next_write_latency_us(estimate, took_us));
		LWLockRelease(state.lock);
		const Layout &layout = layout_setting.layout;
		const int64_t gap_ms = generator_clock_us(state) / 1000 - layout.unix_ms_of(renewed_tick + 1, epoch_ms);
		if (renewed_tick >= 0 && gap_ms > 0 && pg_atomic_read_u64(&state.caller_waits) != waits_before)
			ereport(LOG, (errmsg("snowflake: a reservation write took %lld ms and ended %lld ms after the reservation "
			                     "it renewed ran out; calls waited for it",
			                     static_cast<long long>(took_us / 1000), static_cast<long long>(gap_ms)),
			              errdetail("The lead is sized from the writes: it is now %lld ms.",
			                        static_cast<long long>(reservation_lead_ms(
			                            static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us)))))));
	}
	release_writer(0, PointerGetDatum(&write));
	return written;
}

// Wakes the renewal worker, if it runs, so that it renews ahead of need from now on.
void wake_renewer(SharedState &state) {
	if (const uint64 latch = pg_atomic_read_u64(&state.renewer_latch))
		SetLatch(reinterpret_cast<Latch *>(latch));
}

} // namespace

const char *floor_origin(StartFloor floor) noexcept {
	switch (floor) {
	case StartFloor::Reservation:
		return "the reservation recorded in \"snowflake.state\"";
	case StartFloor::ForeignFile:
		return "the clock at start plus snowflake.max_clock_drift (\"snowflake.state\" was another cluster's)";
	case StartFloor::LastCheckpoint:
		return "pg_control's latest checkpoint plus 1 s and snowflake.max_clock_drift (there was no "
		       "\"snowflake.state\")";
	case StartFloor::None:
		break;
	}
	return "none";
}

Policy policy_now(SharedState &state) noexcept {
	Policy policy = current_policy();
	policy.lead_ms = reservation_lead_ms(static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us)));
	return policy;
}

void recover_reservation(SharedState &state) {
	const Policy policy = current_policy();
	const Layout &layout = policy.layout;
	StateRecord record{};
	bool put_on_record = false;
	bool after_crash = false;
	switch (read_state(record)) {
	case StateRead::Missing: {
		put_on_record = true; // no reservation yet: the epoch and layout, and the floor below if any
		ControlFacts control{};
		if (!read_control(control) || !control.objects_created)
			break; // a new cluster: no ID can have been issued here
		// Every ID's time is at most its clock plus the drift bound, and after a clean shutdown none was
		// issued after the shutdown checkpoint, whose time pg_control keeps in whole seconds.
		const int64_t bound_ms = (control.checkpoint_unix_s + 1) * 1000 + policy.max_drift_ms;
		state.start_floor = StartFloor::LastCheckpoint;
		state.start_floor_tick = std::clamp<int64_t>(layout.tick_of(bound_ms, epoch_ms), 0, layout.max_time());
		after_crash = !control.clean_shutdown;
		break;
	}
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
			state.start_floor = StartFloor::ForeignFile;
			state.start_floor_tick = std::clamp<int64_t>(
			    layout.tick_of(unix_now_ms(), epoch_ms) + policy.max_drift_ticks(), 0, layout.max_time());
			ereport(LOG, (errmsg("snowflake: \"%s\" was written by another database system (identifier %llu, this "
			                     "one is %llu), so its reservation is not this server's",
			                     kStateFile, static_cast<unsigned long long>(record.system_identifier),
			                     static_cast<unsigned long long>(state.system_identifier))));
			put_on_record = true;
			state.timeline = 0;
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
			state.start_floor = StartFloor::Reservation;
			state.start_floor_tick = record.reserved_tick;
			state.timeline = record.timeline;
			pg_atomic_write_u64(&state.write_latency_us, static_cast<uint64>(record.write_latency_us));
			put_on_record = record.version < kStateVersion;
		}
		break;
	}
	if (state.start_floor != StartFloor::None)
		state.generator.resume_above(state.start_floor_tick);
	if (put_on_record) {
		// This write also measures the disk, so that the first reservation is sized for it.
		const int64_t started = monotonic_us();
		if (write_state(record_for(state, std::max<int64_t>(state.generator.reserved_tick, 0), state.timeline), LOG)) {
			const int64_t estimate = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us));
			pg_atomic_write_u64(&state.write_latency_us, next_write_latency_us(estimate, monotonic_us() - started));
		}
	}
	log_start_floor(state, after_crash);
}

void check_not_blocked(const SharedState &state) {
	char target[1024];
	switch (state.blocked) {
	case Blocked::No:
		return;
	case Blocked::StateUnreadable:
		if (state.state_errno == ENOENT && state_file_link(target))
			ereport(ERROR,
			        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			         errmsg("snowflake cannot generate IDs: \"%s\" in the data directory is a symbolic link to "
			                "\"%s\", which did not exist at server start",
			                kStateFile, target),
			         errdetail("It holds the highest time this server's IDs have reached; a link to nothing (a volume "
			                   "that is not mounted) is not taken for a missing file."),
			         errhint("Mount or restore what the link points to, then restart the server. If the file is lost "
			                 "for good, stop the server cleanly and remove the link: the next start begins above "
			                 "pg_control's latest checkpoint plus 1 s and snowflake.max_clock_drift.")));
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
		                errhint("Restore the file from a backup if you can. Otherwise stop the server cleanly, remove "
		                        "the file and start the server: IDs then begin above pg_control's latest checkpoint "
		                        "plus 1 s and snowflake.max_clock_drift.")));
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

void record_last_id_at_exit(SharedState &state, int exit_code) {
	const GeneratorState &generator = state.generator;
	// After a crash, shared memory is suspect and the reservation on disk covers every ID anyway.
	// Nothing issued since start leaves the file as it is; a blocked state is not ours to overwrite.
	const int64_t last_tick = generator.last_id >> layout_setting.layout.time_shift();
	if (exit_code == 0 && generator.last_id >= 0 && state.blocked == Blocked::No &&
	    last_tick <= generator.reserved_tick && cluster_shut_down_cleanly())
		(void)write_state(record_for(state, last_tick, state.timeline), LOG);
}

void reserve_or_wait(SharedState &state, int64_t reserve_tick, ReservationWait &wait) {
	const int64_t now_us = monotonic_us();
	if (wait.deadline_us < 0)
		wait.deadline_us = now_us + kReservationWaitMs * 1000;
	const bool other_writing = pg_atomic_read_u32(&state.writing) != 0;
	if (now_us >= wait.deadline_us) {
		const int64_t write_ms = (now_us - static_cast<int64_t>(pg_atomic_read_u64(&state.write_started_us))) / 1000;
		const int writer = static_cast<int>(pg_atomic_read_u32(&state.writer_pid));
		const int64_t latency_ms = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us)) / 1000;
		LWLockRelease(state.lock);
		note_state(state, Readiness::WriteStalled);
		if (other_writing)
			ereport(ERROR, (errcode(ERRCODE_IO_ERROR),
			                errmsg("snowflake: no reservation reached \"%s\" within %lld ms", kStateFile,
			                       static_cast<long long>(kReservationWaitMs)),
			                errdetail("Process %d has been writing one for %lld ms; a call waits at most %lld ms "
			                          "for a reservation.",
			                          writer, static_cast<long long>(write_ms),
			                          static_cast<long long>(kReservationWaitMs)),
			                errhint("Check the storage under the data directory: a write that does not end points "
			                        "at hung storage.")));
		ereport(ERROR, (errcode(ERRCODE_IO_ERROR),
		                errmsg("snowflake: writing \"%s\" takes longer than the reservation it writes lasts",
		                       kStateFile),
		                errdetail("This call's reservations ran out before they were on disk for %lld ms; a write "
		                          "takes about %lld ms, and a reservation reaches at most %lld ms ahead.",
		                          static_cast<long long>(kReservationWaitMs), static_cast<long long>(latency_ms),
		                          static_cast<long long>(kMaxLeadMs)),
		                errhint("Check the storage under the data directory.")));
	}
	if (!other_writing) {
		claim_writer(state);
		const uint32_t timeline = state.timeline;
		LWLockRelease(state.lock);
		pg_atomic_fetch_add_u64(&state.caller_writes, 1);
		(void)write_reservation(state, reserve_tick, timeline, ERROR);
		wake_renewer(state);
		return;
	}
	ConditionVariablePrepareToSleep(&state.reserved_cv);
	LWLockRelease(state.lock);
	pg_atomic_fetch_add_u64(&state.caller_waits, 1);
	for (int64_t left_us; pg_atomic_read_u32(&state.writing) != 0 && (left_us = wait.deadline_us - monotonic_us()) > 0;)
		(void)ConditionVariableTimedSleep(&state.reserved_cv, static_cast<long>((left_us + 999) / 1000),
		                                  wait_event(WaitFor::Reservation));
	ConditionVariableCancelSleep();
}

void renew_reservations() {
	SharedState &state = preloaded(); // inherited from the postmaster, which created it
	on_shmem_exit(forget_renewer, PointerGetDatum(&state));
	pg_atomic_write_u64(&state.renewer_latch, reinterpret_cast<uint64>(MyLatch));
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
		const bool claimed = renewal.target_tick >= 0 && pg_atomic_read_u32(&state.writing) == 0;
		if (claimed)
			claim_writer(state);
		const uint32_t timeline = state.timeline;
		LWLockRelease(state.lock);
		// Idle, or another process writing (it wakes this one when done): look again within a second.
		int64_t sleep_ms = 1000;
		if (claimed) {
			if (write_reservation(state, renewal.target_tick, timeline, LOG)) {
				pg_atomic_fetch_add_u64(&state.renewals, 1);
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
