// The durable reservation (see reservation.hpp for the protocol): sizing its
// lead, the one-writer write that the renewal worker and callers share, the
// waits of callers on that writer with the rule that ends a call whose writes
// keep expiring, and the renewal worker's loop.
#include "reservation.hpp"

#include "state_file.hpp"
#include "wal.hpp"

#include <algorithm>

namespace snowflake {
namespace {

// How often the renewal worker tries a disk again that failed, or was slower than a call waits.
constexpr int64_t kProbeIntervalMs = 5000;

// Claims the writer's role for this process; call with the generator's lock held and `writing` 0.
// Who writes and since when are stored before `writing`, so a reader that sees it set (and then
// takes a read barrier) sees them too.
void claim_writer(SharedState &state) {
	pg_atomic_write_u32(&state.writer_pid, static_cast<uint32>(MyProcPid));
	pg_atomic_write_u64(&state.write_started_us, static_cast<uint64>(monotonic_us()));
	pg_write_barrier();
	pg_atomic_write_u32(&state.writing, 1);
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
	pg_write_barrier(); // how it ended, before the claim ends: a reader that sees `writing` 0 sees it
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
// false. A write that outlasted a reservation made in this run, while calls waited, is logged (one
// that renews the floor a start recovered would only measure the restart). A write of the
// reservation as it stands (a probe of the disk) re-measures it and extends nothing. A reservation
// past extends_above (the one in effect when the writer claimed its role) goes to the WAL first.
bool write_reservation(SharedState &state, int64_t target_tick, uint32_t timeline, int elevel, int64_t extends_above) {
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
		// The WAL first (it travels to standbys and through crash recovery), then the file; a record
		// of the reservation as it stands (a probe of the disk) would add nothing.
		if (target_tick > extends_above)
			log_reservation(state, target_tick, timeline);
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
		const bool renewed_this_run = state.generator.counters.reservations > 0;
		if (target_tick > renewed_tick)
			state.generator.reserved(target_tick);
		const int64_t estimate = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us));
		pg_atomic_write_u64(&state.write_latency_us, next_write_latency_us(estimate, took_us));
		LWLockRelease(state.lock);
		const Layout &layout = layout_setting.layout;
		const int64_t gap_ms = generator_clock_us(state) / 1000 - layout.unix_ms_of(renewed_tick + 1, epoch_ms);
		if (renewed_this_run && gap_ms > 0 && pg_atomic_read_u64(&state.caller_waits) != waits_before)
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

// The state file's record of this server: its layout, a reservation up to reserved_tick made on timeline.
StateRecord record_for(SharedState &state, int64_t reserved_tick, uint32_t timeline) noexcept {
	return StateRecord{epoch_ms,
	                   layout_setting.layout,
	                   reserved_tick,
	                   timeline,
	                   state.system_identifier,
	                   static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us)),
	                   kStateVersion,
	                   0};
}

Policy policy_now(SharedState &state) noexcept {
	Policy policy = current_policy();
	policy.lead_ms = reservation_lead_ms(static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us)));
	return policy;
}

void reserve_or_wait(SharedState &state, int64_t reserve_tick, ReservationWait &wait) {
	const int64_t now_us = monotonic_us();
	if (wait.deadline_us < 0)
		wait.deadline_us = now_us + kReservationWaitMs * 1000;
	const bool other_writing = pg_atomic_read_u32(&state.writing) != 0;
	pg_read_barrier(); // the claim's fields after `writing` (claim_writer stores them before it)
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
		const int64_t reserved = state.generator.reserved_tick;
		LWLockRelease(state.lock);
		pg_atomic_fetch_add_u64(&state.caller_writes, 1);
		(void)write_reservation(state, reserve_tick, timeline, ERROR, reserved);
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

void renew_reservations(EachRound each_round) {
	SharedState &state = preloaded(); // inherited from the postmaster, which created it
	on_shmem_exit(forget_renewer, PointerGetDatum(&state));
	pg_atomic_write_u64(&state.renewer_latch, reinterpret_cast<uint64>(MyLatch));
	int64_t next_probe_us = 0; // on the monotonic clock
	for (;;) {
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending) {
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (RecoveryInProgress()) { // a standby issues nothing; redo alone writes the file (wal.hpp)
			(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000L, wait_event(WaitFor::Renewer));
			ResetLatch(MyLatch);
			continue;
		}
		each_round(state);
		const Policy policy = policy_now(state);
		LWLockAcquire(state.lock, LW_EXCLUSIVE);
		const int64_t now_ms = generator_clock_us(state) / 1000;
		const Renewal renewal =
		    state.blocked == Blocked::No ? state.generator.renewal(now_ms, policy) : Renewal{-1, -1};
		// No write at all before a call has compared the databases' record of the layout while nothing is
		// issued (layout_record.hpp): a file of the settings' layout would pass for the record at the next start.
		const bool unconfirmed = pg_atomic_read_u32(&state.layout_unconfirmed) != 0 && state.generator.last_id < 0;
		// With nothing to renew, a disk last seen failing, or slower than a call waits, is tried again every
		// few seconds by writing the reservation as it stands, so that the state says how it is now, not
		// how one write once went (an idle server makes no other write).
		const bool probe = renewal.target_tick < 0 && !unconfirmed && state.blocked == Blocked::No &&
		                   monotonic_us() >= next_probe_us &&
		                   (pg_atomic_read_u32(&state.write_errno) != 0 ||
		                    static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us)) >= kMaxWriteLatencyUs);
		// A reservation still ahead of the clock whose record a checkpoint has passed (crash recovery
		// would start after it) is logged again, so that the WAL replayed after a crash always holds the
		// latest; one past, or no ID at all since, needs nothing (wal.hpp).
		const bool relog = renewal.target_tick < 0 && !probe && !unconfirmed && state.blocked == Blocked::No &&
		                   state.generator.reserved_tick > policy.layout.tick_of(now_ms, epoch_ms) &&
		                   wal_record_passed(state);
		const int64_t target_tick =
		    probe || relog ? std::max<int64_t>(state.generator.reserved_tick, 0) : renewal.target_tick;
		const bool claimed = target_tick >= 0 && pg_atomic_read_u32(&state.writing) == 0;
		if (claimed)
			claim_writer(state);
		const uint32_t timeline = state.timeline;
		const int64_t reserved = state.generator.reserved_tick;
		LWLockRelease(state.lock);
		// Idle, or another process writing (it wakes this one when done): look again within a second.
		int64_t sleep_ms = 1000;
		if (claimed && probe) {
			(void)write_reservation(state, target_tick, timeline, LOG, target_tick);
			next_probe_us = monotonic_us() + kProbeIntervalMs * 1000;
		} else if (claimed && relog) {
			(void)write_reservation(state, target_tick, timeline, LOG, target_tick - 1);
		} else if (claimed) {
			if (write_reservation(state, target_tick, timeline, LOG, reserved)) {
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
