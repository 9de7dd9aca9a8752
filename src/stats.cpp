// What snowflake_stats() and snowflake_state() report (stats.hpp): a
// consistent copy of the generator and its counters, the step a call would
// take now (taken on the copy), and the words for each state.
#include "stats.hpp"

#include "issuing.hpp"
#include "node.hpp"
#include "reservation.hpp"
#include "restart.hpp"
#include "state_file.hpp"

namespace snowflake {

const char *state_text(Readiness r) noexcept {
	switch (r) {
	case Readiness::Ok:
		return "ok";
	case Readiness::StateDamaged:
		return "state file damaged";
	case Readiness::StateUnreadable:
		return "state file unreadable";
	case Readiness::StateLost:
		return "state file lost";
	case Readiness::EpochChanged:
		return "epoch changed";
	case Readiness::LayoutChanged:
		return "layout changed";
	case Readiness::Recovery:
		return "recovery";
	case Readiness::NodeUnset:
		return "node unset";
	case Readiness::NodeSetTwice:
		return "node set twice";
	case Readiness::NoNodeInHostName:
		return "no node in host name";
	case Readiness::NodeVariableUnset:
		return "node variable unset";
	case Readiness::NodeVariableInvalid:
		return "node variable invalid";
	case Readiness::NodeOutOfRange:
		return "node out of range";
	case Readiness::CitusGroupUnknown:
		return "citus group unknown";
	case Readiness::NodeConflict:
		return "node conflict";
	case Readiness::NodeReserved:
		return "node reserved";
	case Readiness::ClockBeforeEpoch:
		return "clock before epoch";
	case Readiness::TimeRunOut:
		return "time run out";
	case Readiness::ClockBehind:
		return "clock behind";
	case Readiness::WriteStalled:
		return "reservation write stalled";
	case Readiness::WriteFailing:
		return "reservation write failing";
	}
	return "unknown";
}

Stats read_stats() {
	SharedState &state = preloaded();
	Stats snap{};
	Policy policy = current_policy();
	LWLockAcquire(state.lock, LW_SHARED);
	snap.node = node_for_readers(state);
	snap.blocked = state.blocked;
	snap.foreign_file = state.foreign_file != 0;
	snap.recorded_epoch_ms = state.recorded_epoch_ms;
	snap.generator = state.generator;
	snap.floor_from = state.floor_from;
	snap.clock_offset_ms = clock_offset_ms(state);
	snap.write_latency_us = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us));
	const int64_t clock_ms = generator_clock_us(state) / 1000;
	LWLockRelease(state.lock);
	snap.lead_ms = reservation_lead_ms(snap.write_latency_us);
	snap.waits = static_cast<int64_t>(pg_atomic_read_u64(&state.waits));
	snap.wait_ms = static_cast<int64_t>(pg_atomic_read_u64(&state.wait_us)) / 1000;
	snap.renewals = static_cast<int64_t>(pg_atomic_read_u64(&state.renewals));
	snap.caller_writes = static_cast<int64_t>(pg_atomic_read_u64(&state.caller_writes));
	snap.caller_waits = static_cast<int64_t>(pg_atomic_read_u64(&state.caller_waits));
	snap.configured = configured_node(state);
	snap.check = node_check_report(state, snap.check_report);
	if (RecoveryInProgress()) // no worker runs during recovery: a standby claims nothing
		snap.check = NodeCheck::Standby;
	snap.check_at_us = static_cast<int64_t>(pg_atomic_read_u64(&state.check_at_us));
	snap.check_conflict =
	    snap.check == NodeCheck::Refusing || snap.check == NodeCheck::Warning || snap.check == NodeCheck::OthersShare;
	snap.check = node_check_as_read(snap.check, snap.check_at_us); // a stuck worker's last word is not 'ok'

	// Whether a call could issue an ID now: the checks it makes first, then the step it would take,
	// taken on a copy of the generator, and for a step that needs a reservation, how writing goes.
	policy.lead_ms = snap.lead_ms;
	snap.resumes_unix_ms = -1;
	// A server in recovery refuses for that first, as a call does (redo may yet lift a 'state file lost').
	snap.state = RecoveryInProgress() ? Readiness::Recovery : blocked_readiness(state);
	snap.write_errno = state.state_errno;
	if (snap.state == Readiness::Ok) {
		GeneratorState copy = snap.generator;
		const Step step = copy.next(clock_ms, snap.node, policy, 1);
		snap.state = readiness_of(state, step, snap.node, policy);
		if (step.status == Status::Wait && step.wait_ticks * policy.layout.unit_ms > max_wait_ms(policy))
			snap.state = Readiness::ClockBehind; // a call would give up waiting
		if (snap.state == Readiness::ClockBehind) {
			snap.behind_ms = step.drift_ticks * policy.layout.unit_ms;
			snap.behind_floor = step.behind_floor || step.status == Status::Wait;
			snap.resumes_unix_ms = resume_unix_ms(snap.generator, step, policy, snap.clock_offset_ms);
		}
		// The writer's claim: `writing` first, then (after a read barrier) what its writer stored before it.
		const bool writing = pg_atomic_read_u32(&state.writing) != 0;
		pg_read_barrier();
		const int64_t write_ms = (monotonic_us() - static_cast<int64_t>(pg_atomic_read_u64(&state.write_started_us))) / 1000;
		const int32_t writer_pid = static_cast<int32_t>(pg_atomic_read_u32(&state.writer_pid));
		const int32_t write_errno = static_cast<int32_t>(pg_atomic_read_u32(&state.write_errno));
		if (step.status == Status::Reserve && writing && write_ms > kStalledAfterMs) {
			snap.state = Readiness::WriteStalled; // calls are waiting for this write
			snap.writer_pid = writer_pid;
			snap.state_since_us = unix_now_us() - write_ms * 1000;
		} else if (step.status == Status::Reserve && snap.write_latency_us >= kReservationWaitMs * 1000) {
			snap.state = Readiness::WriteStalled; // writes end, but later than a call waits for one
		} else if (step.status == Status::Reserve && !writing && write_errno != 0) {
			snap.state = Readiness::WriteFailing;
			snap.write_errno = write_errno;
			snap.state_since_us = static_cast<int64_t>(pg_atomic_read_u64(&state.write_failed_at_us));
		}
	}
	note_state(state, snap.state);
	if (snap.state_since_us == 0)
		snap.state_since_us = static_cast<int64_t>(pg_atomic_read_u64(&state.seen_since_us));
	return snap;
}

const char *state_detail(const Stats &snap) {
	const Layout &layout = layout_setting.layout;
	switch (snap.state) {
	case Readiness::Ok:
		return nullptr;
	case Readiness::StateDamaged:
		return "snowflake.state in the data directory is not a valid record";
	case Readiness::StateLost:
		return snap.foreign_file ? "snowflake.state is another cluster's, and the server stopped without a clean shutdown"
		                         : "snowflake.state is missing, and the server stopped without a clean shutdown";
	case Readiness::StateUnreadable: {
		char target[1024];
		if (snap.write_errno == ENOENT && state_file_link(target))
			return psprintf("snowflake.state is a symbolic link to \"%s\", which did not exist at server start", target);
		errno = snap.write_errno;
		return psprintf("snowflake.state could not be read at server start: %m");
	}
	case Readiness::EpochChanged:
		return psprintf("snowflake.epoch is %lld; the IDs on record were issued with %lld",
		                static_cast<long long>(epoch_ms), static_cast<long long>(snap.recorded_epoch_ms));
	case Readiness::LayoutChanged:
		return "snowflake.layout differs from the layout the IDs on record were issued with";
	case Readiness::Recovery:
		return "the server is in recovery (a standby)";
	case Readiness::NodeUnset:
		return "snowflake.node is not set";
	case Readiness::NodeSetTwice:
	case Readiness::NoNodeInHostName:
	case Readiness::NodeVariableUnset:
	case Readiness::NodeVariableInvalid:
	case Readiness::CitusGroupUnknown:
		return node_problem_text(snap.configured.problem);
	case Readiness::NodeOutOfRange:
		return psprintf("%lld, the number snowflake.node_source gives, plus snowflake.node_offset %d is outside 0 to %d",
		                static_cast<long long>(snap.configured.number), node_offset_setting, layout.max_node());
	case Readiness::NodeConflict:
		return psprintf("another server claimed node %d first: %s", snap.configured.node, snap.check_report);
	case Readiness::NodeReserved:
		return psprintf("snowflake.node %d is the node snowflake.backfill_node reserves", snap.node);
	case Readiness::ClockBeforeEpoch:
		return "the system clock reads a time before snowflake.epoch";
	case Readiness::TimeRunOut:
		return psprintf("the next ID would need a time past the end of the time field, %s",
		                timestamptz_to_str(unix_ms_to_timestamptz(layout.unix_ms_of(layout.max_time(), epoch_ms))));
	case Readiness::ClockBehind:
		if (!snap.behind_floor)
			return psprintf("the clock is %lld ms behind the last ID issued; snowflake.max_clock_drift allows %d ms",
			                static_cast<long long>(snap.behind_ms), max_clock_drift_ms);
		return psprintf("the clock is %lld ms behind the time IDs must start above, %s; snowflake.max_clock_drift "
		                "allows %d ms",
		                static_cast<long long>(snap.behind_ms), floor_origin(snap.floor_from), max_clock_drift_ms);
	case Readiness::WriteStalled:
		if (snap.writer_pid == 0)
			return psprintf("a reservation write to snowflake.state takes about %lld ms; a call waits at most %lld ms",
			                static_cast<long long>(snap.write_latency_us / 1000),
			                static_cast<long long>(kReservationWaitMs));
		return psprintf("process %d has been writing a reservation to snowflake.state for %lld ms; a call waits at "
		                "most %lld ms",
		                snap.writer_pid, static_cast<long long>((unix_now_us() - snap.state_since_us) / 1000),
		                static_cast<long long>(kReservationWaitMs));
	case Readiness::WriteFailing:
		errno = snap.write_errno;
		return psprintf("the last reservation write to snowflake.state failed: %m");
	}
	return nullptr;
}

} // namespace snowflake
