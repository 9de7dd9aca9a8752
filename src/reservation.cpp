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

extern "C" {
// Ends a reservation writer's claim and wakes every caller waiting for it; also runs when the
// writer's write raises an ERROR or its process exits mid-write.
static void release_writer(int, Datum arg) {
	auto *state = reinterpret_cast<SharedState *>(DatumGetPointer(arg));
	pg_atomic_write_u32(&state->writing, 0);
	ConditionVariableBroadcast(&state->reserved_cv); // its spinlock orders the store before any wake-up
}

// on_shmem_exit in the renewal worker: callers stop waking it.
static void forget_renewer(int, Datum arg) {
	pg_atomic_write_u64(&reinterpret_cast<SharedState *>(DatumGetPointer(arg))->renewer_latch, 0);
}
}

// Makes a reservation up to target_tick on timeline durable, as the one writer (the caller claimed
// `writing` under the lock), without holding the lock; then records it and the write's latency, and
// releases the claim. On failure reports at elevel (an ERROR releases the claim too) and returns false.
bool write_reservation(SharedState &state, int64_t target_tick, uint32_t timeline, int elevel) {
	const int64_t delay_ms = static_cast<int64_t>(pg_atomic_read_u64(&state.write_delay_ms));
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
		const int64_t estimate = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us));
		pg_atomic_write_u64(&state.write_latency_us, next_write_latency_us(estimate, took_us));
		LWLockRelease(state.lock);
	}
	release_writer(0, PointerGetDatum(&state));
	return written;
}

// Wakes the renewal worker, if it runs, so that it renews ahead of need from now on.
void wake_renewer(SharedState &state) {
	if (const uint64 latch = pg_atomic_read_u64(&state.renewer_latch))
		SetLatch(reinterpret_cast<Latch *>(latch));
}

// How many of its reservation writes one call lets run out before they are on disk (the clock past
// what they reserve) before it gives up: the first may be sized for a disk that has since slowed
// down; the next is sized from that write. Writes whose ticks other calls took do not count.
constexpr int kMaxExpiredWrites = 3;

} // namespace

Policy policy_now(SharedState &state) noexcept {
	Policy policy = current_policy();
	policy.lead_ms = reservation_lead_ms(static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us)));
	return policy;
}

void recover_reservation(SharedState &state) {
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
			pg_atomic_write_u64(&state.write_latency_us, static_cast<uint64>(record.write_latency_us));
			put_on_record = record.version < kStateVersion;
		}
		break;
	}
	if (put_on_record) {
		// This write also measures the disk, so that the first reservation is sized for it.
		const int64_t started = monotonic_us();
		if (write_state(record_for(state, std::max<int64_t>(state.generator.reserved_tick, 0), state.timeline), LOG)) {
			const int64_t estimate = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us));
			pg_atomic_write_u64(&state.write_latency_us, next_write_latency_us(estimate, monotonic_us() - started));
		}
	}
}

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

void record_last_id_at_exit(SharedState &state, int exit_code) {
	const GeneratorState &generator = state.generator;
	// After a crash, shared memory is suspect and the reservation on disk covers every ID anyway.
	// Nothing issued since start leaves the file as it is; a blocked state is not ours to overwrite.
	const int64_t last_tick = generator.last_id >> layout_setting.layout.time_shift();
	if (exit_code == 0 && generator.last_id >= 0 && state.blocked == Blocked::No &&
	    last_tick <= generator.reserved_tick && cluster_shut_down_cleanly())
		(void)write_state(record_for(state, last_tick, state.timeline), LOG);
}

void reserve_or_wait(SharedState &state, const Policy &policy, int64_t reserve_tick, ReservationAttempts &attempts) {
	if (pg_atomic_read_u32(&state.writing) == 0) {
		if (attempts.expired_writes == kMaxExpiredWrites) {
			const int64_t latency_us = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us));
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
		pg_atomic_write_u32(&state.writing, 1);
		const uint32_t timeline = state.timeline;
		LWLockRelease(state.lock);
		pg_atomic_fetch_add_u64(&state.caller_writes, 1);
		(void)write_reservation(state, reserve_tick, timeline, ERROR);
		wake_renewer(state);
		if (policy.layout.tick_of(generator_clock_us(state) / 1000, policy.epoch_ms) > reserve_tick)
			++attempts.expired_writes;
		return;
	}
	ConditionVariablePrepareToSleep(&state.reserved_cv);
	LWLockRelease(state.lock);
	pg_atomic_fetch_add_u64(&state.caller_waits, 1);
	while (pg_atomic_read_u32(&state.writing) != 0)
		ConditionVariableSleep(&state.reserved_cv, wait_event(WaitFor::Reservation));
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
			pg_atomic_write_u32(&state.writing, 1);
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
