// The path every snowflake_nextval() takes (issuing.hpp): the fast path under
// the lock, and the slow one that takes one core step at a time and turns its
// outcome into an ID, a sleep, a reservation write or wait, a log line or an
// ERROR.
#include "issuing.hpp"

#include "claims.hpp"
#include "layout_record.hpp"
#include "node.hpp"
#include "reservation.hpp"
#include "restart.hpp"

#include <algorithm>

namespace snowflake {
namespace {

// Waits with no lock held until the generator's clock reads until_us (plan_clock_wait: a long
// wait on the latch, a short one slept, then spun on that same clock, so it ends in the tick it
// waits for and not a µs before), then honours cancel and timeouts; a signal cuts it short. It never
// lasts much longer than planned, nor past give_up_at_us on the monotonic clock (the call's bound on
// waiting for the clock): should the clock step back meanwhile, the spin ends on the monotonic clock,
// and the caller's next step sees the step back.
void wait_for_clock(SharedState &state, int64_t until_us, int64_t give_up_at_us) {
	const int64_t remaining_us =
	    std::min(until_us - generator_clock_us(state), std::max<int64_t>(give_up_at_us - monotonic_us(), 0));
	const int64_t spin_until = monotonic_us() + remaining_us + kClockSpinUs;
	const ClockWait plan = plan_clock_wait(remaining_us);
	const uint32 event = wait_event(WaitFor::Clock);
	if (plan.on_latch) {
		(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
		                static_cast<long>((plan.sleep_us + 999) / 1000), event);
		ResetLatch(MyLatch);
	} else {
		pgstat_report_wait_start(event);
		if (plan.sleep_us > 0)
			pg_usleep(static_cast<long>(plan.sleep_us));
		while (!InterruptPending && generator_clock_us(state) < until_us && monotonic_us() < spin_until)
			; // the last kClockSpinUs at most: a sleep would overshoot the tick
		pgstat_report_wait_end();
	}
	CHECK_FOR_INTERRUPTS();
}

// Raises the ERROR of a step whose clock lags the last ID or the floor of this run by more than allowed.
[[noreturn]] void raise_clock_behind(const Step &step, const Policy &policy, int64_t resume_ms, StartFloor floor_from) {
	const long long behind_ms = step.drift_ticks * policy.layout.unit_ms;
	const long long in_s = std::max<int64_t>(0, (resume_ms - unix_now_ms() + 999) / 1000);
	const char *resume = timestamptz_to_str(unix_ms_to_timestamptz(resume_ms));
	if (!step.behind_floor)
		ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR),
		                errmsg("system clock is %lld ms behind the last snowflake ID issued", behind_ms),
		                errdetail("snowflake.max_clock_drift allows %lld ms.",
		                          static_cast<long long>(policy.max_drift_ms)),
		                errhint("IDs resume by themselves at about %s (in %lld s), once the clock catches up. "
		                        "If the clock is wrong, correct it; snowflake.max_clock_drift sets how large a "
		                        "step is ridden out.",
		                        resume, in_s)));
	ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR),
	                errmsg("system clock is %lld ms behind the time snowflake IDs must start above", behind_ms),
	                errdetail("That floor is %s; snowflake.max_clock_drift allows %lld ms.",
	                          floor_origin(floor_from),
	                          static_cast<long long>(policy.max_drift_ms)),
	                errhint("IDs resume by themselves at about %s (in %lld s), once the clock catches up. If the "
	                        "clock is wrong, correct it.",
	                        resume, in_s)));
	pg_unreachable();
}

// Raises the ERROR for a step that can neither issue nor wait; resume_ms says when a ClockBehind
// step's refusals end (resume_unix_ms), floor_from where the floor it lags came from.
[[noreturn]] void raise_step_error(const Step &step, const Policy &policy, int64_t resume_ms, StartFloor floor_from) {
	switch (step.status) {
	case Status::ClockBehind:
		raise_clock_behind(step, policy, resume_ms, floor_from);
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
	case Status::NodeInvalid: // raise_node_error()'s
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
	const uint32_t current = GetWALInsertionTimeLine();
	const bool owed = state.timeline != current && (state.timeline != 0 || current > 1);
	state.timeline = current;
	if (!owed)
		return -1;
	const int64_t floor_tick = policy.layout.tick_of(clock, policy.epoch_ms) + policy.max_drift_ticks();
	if (floor_tick > state.generator.floor_tick)
		state.floor_from = StartFloor::NewTimeline;
	state.generator.resume_above(floor_tick);
	return floor_tick;
}

// What one locked step saw and decided.
struct LockedStep {
	Step step;
	int32_t node;           // the node it used
	int64_t clock_us;       // the clock reading, in Unix microseconds
	int64_t promoted_floor; // the floor (a tick) it set after a change of timeline, or -1
	int64_t resume_ms;      // ClockBehind: when its refusals end by themselves (resume_unix_ms)
	StartFloor floor_from;  // where the generator's floor came from
};

// One generator step for count IDs under the lock. While the node check owes the node a pass (after a
// start or a move of the node), this call waits for it without the lock; when the reservation is spent,
// it writes the next one or waits for the process writing it (reserve_or_wait, without the lock, within
// the call's one deadline for reservations); then steps again.
LockedStep locked_step(SharedState &state, Policy policy, int32_t count, ReservationWait &wait) {
	int64_t promoted_floor = -1;
	int64_t regressed = 0;
	for (;;) {
		CHECK_FOR_INTERRUPTS(); // no lock held: a cancel ends a call that keeps finding the reservation spent
		LWLockAcquire(state.lock, LW_EXCLUSIVE);
		if (unlikely(state.blocked != Blocked::No)) { // a database's record blocked it since the call began
			LWLockRelease(state.lock);
			check_not_blocked(state);
		}
		bool check_owed = false;
		const int32_t node = node_to_step_under(state, check_owed);
		if (unlikely(check_owed)) { // the first calls after a start or a move of the node (claims.hpp)
			LWLockRelease(state.lock);
			await_node_check(state);
			continue;
		}
		policy.lead_ms = reservation_lead_ms(static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us)));
		const int64_t clock_us = generator_clock_us(state);
		const int64_t clock = clock_us / 1000;
		if (const int64_t floor = settle_timeline(state, policy, clock); floor >= 0)
			promoted_floor = floor;
		Step step = state.generator.next(clock, node, policy, count);
		regressed = std::max(regressed, step.regressed_ticks);
		step.regressed_ticks = regressed;
		if (step.status != Status::Reserve) {
			const int64_t resume_ms =
			    step.status == Status::ClockBehind ? resume_unix_ms(state.generator, step, policy, clock_offset_ms(state)) : -1;
			const StartFloor floor_from = state.floor_from;
			LWLockRelease(state.lock);
			return LockedStep{step, node, clock_us, promoted_floor, resume_ms, floor_from};
		}
		reserve_or_wait(state, step.reserve_tick, wait); // releases the lock
	}
}

// The next count IDs the long way: every check, every step kind, waits, logging and errors; it sizes
// the reservation lead itself, off the fast path.
int64_t next_ids_slowly(SharedState &state, int32_t count) {
	const Policy policy = policy_now(state);
	if (RecoveryInProgress()) {
		note_state(state, Readiness::Recovery);
		ereport(ERROR,
		        (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION), errmsg("cannot generate snowflake IDs during recovery"),
		         errdetail("A standby shares its primary's node ID, so IDs it made could repeat the primary's."),
		         errhint("Generate IDs on the primary. After promotion, give this server a snowflake.node "
		                 "of its own.")));
	}
	check_not_blocked(state);
	if (layout_check_due(state))
		confirm_layout_on_record(state);
	int64_t give_up_at = -1;
	ReservationWait wait; // one bound on waiting for reservations for the whole call, clock waits or not
	for (;;) {
		const auto [step, node, clock_us, promoted_floor, resume_ms, floor_from] =
		    locked_step(state, policy, count, wait);

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
		if (step.status != Status::Wait) {
			const Readiness refusal = readiness_of(state, step, node, policy);
			if (note_state(state, refusal) && refusal == Readiness::ClockBehind)
				ereport(LOG, (errmsg("snowflake: refusing IDs until about %s (for %lld s): the clock is %lld ms "
				                     "behind %s",
				                     timestamptz_to_str(unix_ms_to_timestamptz(resume_ms)),
				                     static_cast<long long>(std::max<int64_t>(0, (resume_ms - unix_now_ms()) / 1000)),
				                     static_cast<long long>(step.drift_ticks * policy.layout.unit_ms),
				                     step.behind_floor ? "the floor of this run" : "the last ID issued")));
			if (step.status == Status::NodeInvalid)
				raise_node_error(state, node, policy);
			raise_step_error(step, policy, resume_ms, floor_from);
		}
		const int64_t started = monotonic_us();
		if (give_up_at < 0)
			give_up_at = started + max_wait_ms(policy) * 1000;
		if (started >= give_up_at) {
			note_state(state, Readiness::ClockBehind);
			ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR),
			                errmsg("system clock did not advance past the last snowflake ID in %lld ms",
			                       static_cast<long long>(max_wait_ms(policy))),
			                errhint("Check the system clock: it may be stopped or stepping backwards.")));
		}
		// Until the clock reaches the tick the step waits for.
		const int64_t now_tick = policy.layout.tick_of(clock_us / 1000, policy.epoch_ms);
		wait_for_clock(state, policy.layout.unix_ms_of(now_tick + step.wait_ticks, policy.epoch_ms) * 1000, give_up_at);
		pg_atomic_fetch_add_u64(&state.waits, 1);
		pg_atomic_fetch_add_u64(&state.wait_us, static_cast<uint64>(monotonic_us() - started));
	}
}

} // namespace

// How long one call may wait for the clock in all before it gives up: the longest legitimate wait
// (a floor as far ahead as is waited out, in whole ticks, and the tick in progress) and a second of
// grace. A call told to wait longer sees a clock that is stuck or keeps stepping back.
int64_t max_wait_ms(const Policy &policy) noexcept {
	return (policy.floor_reach_ticks() + 1) * policy.layout.unit_ms + 1000;
}

Readiness readiness_of(SharedState &state, const Step &step, int32_t node, const Policy &policy) noexcept {
	switch (step.status) {
	case Status::NodeInvalid:
		return node_readiness(state, node, policy);
	case Status::ClockBehind:
		return Readiness::ClockBehind;
	case Status::BeforeEpoch:
		return Readiness::ClockBeforeEpoch;
	case Status::TimeExhausted:
		return Readiness::TimeRunOut;
	case Status::Issued:
	case Status::Reserve:
	case Status::Wait:
		break;
	}
	return Readiness::Ok;
}

int64_t resume_unix_ms(const GeneratorState &generator, const Step &step, const Policy &policy,
                       int64_t offset_ms) noexcept {
	const Layout &layout = policy.layout;
	const int64_t tick =
	    step.behind_floor
	        ? generator.floor_tick + 1 - (policy.clock == ClockPolicy::Borrow ? policy.max_drift_ticks() : 0)
	        : (generator.last_id >> layout.time_shift()) - policy.max_lag_ticks();
	return layout.unix_ms_of(tick, policy.epoch_ms) - offset_ms;
}

int64_t next_id() {
	SharedState &state = preloaded();
	const Policy policy = current_policy();
	if (layout_check_due(state)) // after a start without a state file (layout_record.hpp)
		return next_ids_slowly(state, 1);
	// The common case under the lock, and nothing else: once this server has issued an ID (so it
	// is not a standby, not blocked, and has settled its timeline), one more in the same or a
	// later millisecond needs no Step, no logging and no reservation.
	LWLockAcquire(state.lock, LW_EXCLUSIVE);
	int64_t id;
	const bool issued =
	    state.generator.issue_fast(unix_now_ms() + clock_offset_ms(state), node_in_effect(state), policy, id);
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

} // namespace snowflake
