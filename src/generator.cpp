// The next-ID step and epoch validation of the pure core (see generator.hpp).
// Plain integer arithmetic on a caller-locked GeneratorState; no PostgreSQL,
// no allocation, no clock reads, no exceptions.
#include "generator.hpp"

#include <charconv>
#include <limits>

#ifdef POSTGRES_H
#error "the core must stay free of PostgreSQL headers"
#endif

namespace snowflake {

bool parse_epoch(std::string_view text, int64_t &epoch_ms) noexcept {
	const char *end = text.data() + text.size();
	auto [ptr, ec] = std::from_chars(text.data(), end, epoch_ms);
	return !text.empty() && ec == std::errc() && ptr == end;
}

const char *epoch_problem(int64_t epoch_ms, int64_t now_unix_ms) noexcept {
	if (epoch_ms < 0)
		return "The epoch must not be before 1970-01-01.";
	if (epoch_ms > now_unix_ms)
		return "The epoch must not be in the future.";
	if (now_unix_ms - epoch_ms > kMaxTime)
		return "The 41-bit time field counted from this epoch has already run out.";
	return nullptr;
}

void GeneratorState::reset() noexcept {
	last_id = -1;
	last_clock_ms = std::numeric_limits<int64_t>::min();
}

Step GeneratorState::next(int64_t now_unix_ms, int32_t node, const Policy &policy) noexcept {
	const int64_t now = now_unix_ms - policy.epoch_ms;
	Step step{Status::Issued, -1, 0, 0, 0, -1};
	if (node < 0 || node > kMaxNode) {
		step.status = Status::NodeInvalid;
		return step;
	}
	if (now < last_clock_ms)
		step.regressed_ms = last_clock_ms - now;
	last_clock_ms = now;

	// The smallest (time, seq) for this node that still sorts after the last ID.
	int64_t time = now;
	int32_t seq = 0;
	if (last_id >= 0) {
		const Parts last = decompose(last_id);
		step.previous_node = last.node;
		if (now <= last.time_ms) {
			step.drift_ms = last.time_ms - now;
			// A new node sorts below the old one within a millisecond, so it starts the next one.
			if (last.node == node && last.seq < kMaxSeq) {
				time = last.time_ms;
				seq = last.seq + 1;
			} else {
				time = last.time_ms + 1;
			}
		}
	}

	if (time < 0) {
		step.status = Status::BeforeEpoch;
		return step;
	}
	if (time > kMaxTime) {
		step.status = Status::TimeExhausted;
		return step;
	}
	const int64_t ahead = time - now;
	const int64_t may_borrow = policy.clock == ClockPolicy::Borrow ? policy.max_drift_ms : 0;
	if (ahead > may_borrow) {
		if (step.drift_ms > policy.max_drift_ms) {
			step.status = Status::ClockBehind;
		} else {
			step.status = Status::Wait;
			step.wait_ms = ahead - may_borrow;
		}
		return step;
	}

	last_id = compose(Parts{time, node, seq});
	step.id = last_id;
	return step;
}

} // namespace snowflake
