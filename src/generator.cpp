// The next-ID step and epoch validation of the pure core (see generator.hpp).
// Plain integer arithmetic on a caller-locked GeneratorState; no PostgreSQL,
// no allocation, no clock reads, no exceptions.
#include "generator.hpp"

#include <algorithm>
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

namespace {

// a / b rounded down and up, for any sign of a (b > 0).
constexpr int64_t floor_div(int64_t a, int64_t b) noexcept {
	return a / b - (a % b != 0 && a < 0);
}
constexpr int64_t ceil_div(int64_t a, int64_t b) noexcept {
	return a / b + (a % b != 0 && a > 0);
}

// Whether a finite bound lies where IDs can be: from the epoch to the end of the last millisecond.
BoundStatus check_bound(const TimeBound &bound, int64_t epoch_ms) noexcept {
	if (bound.infinite)
		return BoundStatus::Ok;
	const int64_t us = bound.unix_us - epoch_ms * 1000;
	if (us < 0)
		return BoundStatus::BeforeEpoch;
	if (us >= (kMaxTime + 1) * 1000)
		return BoundStatus::AfterEnd;
	return BoundStatus::Ok;
}

} // namespace

BoundStatus id_span(TimeBound lower, TimeBound upper, int64_t epoch_ms, IdSpan &span) noexcept {
	for (const TimeBound &bound : {lower, upper})
		if (const BoundStatus status = check_bound(bound, epoch_ms); status != BoundStatus::Ok)
			return status;
	// The first and last millisecond inside the range; times of IDs are whole milliseconds.
	int64_t first_ms = 0, last_ms = kMaxTime;
	if (!lower.infinite) {
		const int64_t us = lower.unix_us - epoch_ms * 1000;
		first_ms = lower.inclusive ? ceil_div(us, 1000) : floor_div(us, 1000) + 1;
	}
	if (!upper.infinite) {
		const int64_t us = upper.unix_us - epoch_ms * 1000;
		last_ms = upper.inclusive ? floor_div(us, 1000) : ceil_div(us, 1000) - 1;
	}
	if (first_ms > last_ms || first_ms > kMaxTime || last_ms < 0)
		span = IdSpan{1, 0};
	else
		span = IdSpan{first_id_of(first_ms), last_id_of(last_ms)};
	return BoundStatus::Ok;
}

void GeneratorState::reset() noexcept {
	last_id = -1;
	last_clock_ms = std::numeric_limits<int64_t>::min();
	floor_ms = std::numeric_limits<int64_t>::min();
	reserved_ms = -1;
	counters = Counters{};
}

void GeneratorState::resume_above(int64_t time_ms) noexcept {
	floor_ms = std::max(floor_ms, time_ms);
	reserved_ms = std::max(reserved_ms, time_ms);
}

void GeneratorState::reserved(int64_t until_ms) noexcept {
	reserved_ms = std::max(reserved_ms, until_ms);
	++counters.reservations;
}

Step GeneratorState::next(int64_t now_unix_ms, int32_t node, const Policy &policy) noexcept {
	const int64_t now = now_unix_ms - policy.epoch_ms;
	Step step{Status::Issued, -1, 0, 0, 0, 0, -1};
	if (node < 0 || node > kMaxNode || node == policy.reserved_node) {
		step.status = Status::NodeInvalid;
		return step;
	}
	if (now < last_clock_ms) {
		step.regressed_ms = last_clock_ms - now;
		++counters.regressions;
	}
	last_clock_ms = now;

	// The smallest (time, seq) for this node that still sorts after the last ID and the floor.
	int64_t time = now;
	int32_t seq = 0;
	bool exhausted = false;
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
				exhausted = last.node == node;
			}
		}
	}
	int64_t floor_drift = 0;
	if (time <= floor_ms) {
		time = floor_ms + 1;
		seq = 0;
		exhausted = false;
		floor_drift = floor_ms - now;
	}
	const int64_t last_drift = step.drift_ms;
	step.drift_ms = std::max(last_drift, floor_drift);
	counters.max_drift_ms = std::max(counters.max_drift_ms, step.drift_ms);

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
		// A floor from the state file may lie one reservation step past IDs that borrowed the
		// whole bound: that much is waited out, not taken for a clock that went back.
		if (last_drift > policy.max_drift_ms || floor_drift > policy.max_drift_ms + reservation_step_ms(policy)) {
			step.status = Status::ClockBehind;
		} else {
			step.status = Status::Wait;
			step.wait_ms = ahead - may_borrow;
		}
		return step;
	}
	if (time > reserved_ms) {
		step.status = Status::Reserve;
		step.reserve_ms = std::min(time + reservation_step_ms(policy), kMaxTime);
		return step;
	}

	last_id = compose(Parts{time, node, seq});
	step.id = last_id;
	++counters.issued;
	counters.exhaustions += exhausted;
	return step;
}

} // namespace snowflake
