// The next-ID step and epoch validation of the pure core (see generator.hpp).
// Plain integer arithmetic on a caller-locked GeneratorState; no PostgreSQL,
// no allocation, no clock reads, no exceptions.
#include "generator.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
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

const char *epoch_problem(const Layout &layout, int64_t epoch_ms, int64_t now_unix_ms) noexcept {
	if (epoch_ms < 0)
		return "The epoch must not be before 1970-01-01.";
	if (epoch_ms > now_unix_ms)
		return "The epoch must not be in the future.";
	if (layout.tick_of(now_unix_ms, epoch_ms) > layout.max_time())
		return "The layout's time field counted from this epoch has already run out.";
	return nullptr;
}

const char *layout_problem(const Layout &layout) noexcept {
	if (layout.time_bits < 1 || layout.node_bits < 1 || layout.seq_bits < 1)
		return "Every field needs at least 1 bit.";
	if (layout.node_bits > 30 || layout.seq_bits > 30)
		return "The node and sequence fields may have at most 30 bits each.";
	const int total = layout.time_bits + layout.node_bits + layout.seq_bits;
	if (total != 63 && total != 53)
		return "time + node + seq must be 63 bits (a whole non-negative bigint) or 53 bits (IDs below 2^53).";
	if (layout.unit_ms != 1 && layout.unit_ms != 10 && layout.unit_ms != 1000)
		return "The unit must be 1ms, 10ms or 1s.";
	if (layout.time_bits > 50 || (layout.max_time() + 1) * layout.unit_ms > kMaxLifetimeMs)
		return "The time field may last at most 10,000 years.";
	return nullptr;
}

namespace {

// text without leading and trailing spaces.
std::string_view trimmed(std::string_view text) noexcept {
	while (!text.empty() && text.front() == ' ')
		text.remove_prefix(1);
	while (!text.empty() && text.back() == ' ')
		text.remove_suffix(1);
	return text;
}

// A decimal number that is all of text, within lo..hi.
bool parse_number(std::string_view text, int64_t lo, int64_t hi, int64_t &value) noexcept {
	return parse_epoch(text, value) && value >= lo && value <= hi;
}

// The preset called name, with its epoch; false when there is none.
bool preset(std::string_view name, LayoutSpec &spec) noexcept {
	if (name == "twitter")
		spec = LayoutSpec{kTwitter, kTwitterEpochMs, false, "twitter"};
	else if (name == "sonyflake")
		spec = LayoutSpec{kSonyflake, kSonyflakeEpochMs, false, "sonyflake"};
	else if (name == "js53")
		spec = LayoutSpec{kJs53, kTwitterEpochMs, false, "js53"};
	else
		return false;
	return true;
}

} // namespace

const char *parse_layout(std::string_view text, LayoutSpec &spec) noexcept {
	LayoutSpec parsed{Layout{-1, -1, -1, 0}, kTwitterEpochMs, false, "custom"}; // -1 and 0: not given
	bool first = true;
	while (true) {
		const size_t comma = text.find(',');
		const std::string_view item = trimmed(text.substr(0, comma));
		const size_t equals = item.find('=');
		if (equals == std::string_view::npos) {
			if (!first || !preset(item, parsed))
				return "A layout is twitter, sonyflake or js53, optionally followed by key=value items, or only "
				       "items naming time, unit, node and seq, such as time=39,unit=10ms,node=16,seq=8.";
		} else {
			const std::string_view key = trimmed(item.substr(0, equals));
			const std::string_view value = trimmed(item.substr(equals + 1));
			int64_t number = 0;
			if (key == "time" || key == "node" || key == "seq") {
				if (!parse_number(value, 0, 63, number))
					return "time, node and seq take a number of bits, such as node=16.";
				(key == "time" ? parsed.layout.time_bits : key == "node" ? parsed.layout.node_bits
				                                                          : parsed.layout.seq_bits) =
				    static_cast<int32_t>(number);
			} else if (key == "unit") {
				if (value != "1ms" && value != "10ms" && value != "1s")
					return "The unit must be 1ms, 10ms or 1s.";
				parsed.layout.unit_ms = value == "1ms" ? 1 : value == "10ms" ? 10 : 1000;
			} else if (key == "order") {
				if (value != "node-seq" && value != "seq-node")
					return "The order is node-seq (the default: node above sequence) or seq-node (Sonyflake's).";
				parsed.seq_above_node = value == "seq-node";
			} else if (key == "epoch") {
				if (!parse_number(value, 0, kMaxEpochMs, number))
					return "epoch takes Unix milliseconds from 0 to 253402300799999 (9999-12-31).";
				parsed.epoch_ms = number;
				parsed.epoch_given = true;
			} else {
				return "The keys of a layout are time, unit, node, seq, epoch and order.";
			}
			if (key != "epoch" && key != "order")
				parsed.name = "custom"; // until the widths turn out to be a preset's (below)
		}
		first = false;
		if (comma == std::string_view::npos)
			break;
		text.remove_prefix(comma + 1);
	}
	if (parsed.layout.time_bits < 0 || parsed.layout.node_bits < 0 || parsed.layout.seq_bits < 0 ||
	    parsed.layout.unit_ms == 0)
		return "A layout without a preset must name all of time, unit, node and seq.";
	if (const char *problem = layout_problem(parsed.layout))
		return problem;
	// Widths equal to a preset's are that preset (order aside), whatever way they were written, and
	// count from its epoch unless one is given; other widths are custom and count from Twitter's.
	if (!parsed.epoch_given)
		parsed.epoch_ms = kTwitterEpochMs;
	LayoutSpec named{};
	for (const char *name : {"twitter", "sonyflake", "js53"})
		if (preset(name, named) && named.layout == parsed.layout) {
			parsed.name = named.name;
			if (!parsed.epoch_given)
				parsed.epoch_ms = named.epoch_ms;
		}
	spec = parsed;
	return nullptr;
}

void format_layout(const Layout &layout, char (&out)[64]) noexcept {
	const char *unit = layout.unit_ms == 1 ? "1ms" : layout.unit_ms == 10 ? "10ms" : "1s";
	std::snprintf(out, sizeof(out), "time=%d,unit=%s,node=%d,seq=%d", layout.time_bits, unit, layout.node_bits,
	              layout.seq_bits);
}

namespace {

// a / b rounded down and up, for any sign of a (b > 0).
constexpr int64_t floor_div(int64_t a, int64_t b) noexcept {
	return a / b - (a % b != 0 && a < 0);
}
constexpr int64_t ceil_div(int64_t a, int64_t b) noexcept {
	return a / b + (a % b != 0 && a > 0);
}

// Whether a finite bound lies where IDs can be: from the epoch to the end of the last tick.
BoundStatus check_bound(const TimeBound &bound, const Layout &layout, int64_t epoch_ms) noexcept {
	if (bound.infinite)
		return BoundStatus::Ok;
	const int64_t us = bound.unix_us - epoch_ms * 1000;
	if (us < 0)
		return BoundStatus::BeforeEpoch;
	if (us >= (layout.max_time() + 1) * layout.unit_ms * 1000)
		return BoundStatus::AfterEnd;
	return BoundStatus::Ok;
}

} // namespace

bool clamp_to_layout(TimeBound &lower, TimeBound &upper, const Layout &layout, int64_t epoch_ms) noexcept {
	constexpr TimeBound kUnbounded{true, false, 0};
	switch (check_bound(lower, layout, epoch_ms)) {
	case BoundStatus::Ok:
		break;
	case BoundStatus::BeforeEpoch:
		lower = kUnbounded;
		break;
	case BoundStatus::AfterEnd:
		return false;
	}
	switch (check_bound(upper, layout, epoch_ms)) {
	case BoundStatus::Ok:
		break;
	case BoundStatus::BeforeEpoch:
		return false;
	case BoundStatus::AfterEnd:
		upper = kUnbounded;
		break;
	}
	return true;
}

BoundStatus id_span(TimeBound lower, TimeBound upper, const Layout &layout, int64_t epoch_ms, IdSpan &span) noexcept {
	for (const TimeBound &bound : {lower, upper})
		if (const BoundStatus status = check_bound(bound, layout, epoch_ms); status != BoundStatus::Ok)
			return status;
	// The first and last tick whose start lies inside the range; an ID's time is its tick's start.
	const int64_t tick_us = int64_t{layout.unit_ms} * 1000;
	int64_t first = 0, last = layout.max_time();
	if (!lower.infinite) {
		const int64_t us = lower.unix_us - epoch_ms * 1000;
		first = lower.inclusive ? ceil_div(us, tick_us) : floor_div(us, tick_us) + 1;
	}
	if (!upper.infinite) {
		const int64_t us = upper.unix_us - epoch_ms * 1000;
		last = upper.inclusive ? floor_div(us, tick_us) : ceil_div(us, tick_us) - 1;
	}
	if (first > last || first > layout.max_time() || last < 0)
		span = IdSpan{1, 0};
	else
		span = IdSpan{layout.first_id_of(first), layout.last_id_of(last)};
	return BoundStatus::Ok;
}

void GeneratorState::reset() noexcept {
	last_id = -1;
	last_clock_tick = std::numeric_limits<int64_t>::min();
	floor_tick = std::numeric_limits<int64_t>::min();
	reserved_tick = -1;
	counters = Counters{};
}

void GeneratorState::resume_above(int64_t tick) noexcept {
	floor_tick = std::max(floor_tick, tick);
	reserved_tick = std::max(reserved_tick, tick);
}

void GeneratorState::reserved(int64_t until_tick) noexcept {
	reserved_tick = std::max(reserved_tick, until_tick);
	++counters.reservations;
}

Renewal GeneratorState::renewal(int64_t now_unix_ms, const Policy &policy) const noexcept {
	const Layout &layout = policy.layout;
	const int64_t now = layout.tick_of(now_unix_ms, policy.epoch_ms);
	const int64_t lead = policy.lead_ticks();
	const int64_t half = (lead + 1) / 2; // at least one tick
	const int64_t left = reserved_tick - now;
	const bool active = last_id >= 0 && (last_id >> layout.time_shift()) >= now - lead;
	const int64_t target = std::min(now + lead, layout.max_time());
	if (active && left < half && target > reserved_tick)
		return Renewal{target, -1};
	if (left >= half) // due once less than half a lead is left
		return Renewal{-1, layout.unix_ms_of(reserved_tick - half + 1, policy.epoch_ms)};
	return Renewal{-1, -1};
}

Step GeneratorState::next(int64_t now_unix_ms, int32_t node, const Policy &policy, int32_t count) noexcept {
	const Layout &layout = policy.layout;
	const int64_t now = layout.tick_of(now_unix_ms, policy.epoch_ms);
	Step step{Status::Issued, -1, 0, 0, 0, 0, -1, false};
	if (node < 0 || node > layout.max_node() || node == policy.reserved_node) {
		step.status = Status::NodeInvalid;
		return step;
	}
	if (now < last_clock_tick) {
		step.regressed_ticks = last_clock_tick - now;
		++counters.regressions;
	}
	last_clock_tick = now;

	// The smallest (time, seq) for this node that leaves room for count IDs and still sorts after
	// the last ID and the floor.
	int64_t time = now;
	int32_t seq = 0;
	bool exhausted = false;
	if (last_id >= 0) {
		const Parts last = layout.decompose(last_id);
		step.previous_node = last.node;
		if (now <= last.time) {
			step.drift_ticks = last.time - now;
			// A new node sorts below the old one within a tick, so it starts the next one.
			if (last.node == node && last.seq + count <= layout.max_seq()) {
				time = last.time;
				seq = last.seq + 1;
			} else {
				time = last.time + 1;
				exhausted = last.node == node;
			}
		}
	}
	int64_t floor_drift = 0;
	if (time <= floor_tick) {
		time = floor_tick + 1;
		seq = 0;
		exhausted = false;
		floor_drift = floor_tick - now;
	}
	const int64_t last_drift = step.drift_ticks;
	step.drift_ticks = std::max(last_drift, floor_drift);
	counters.max_drift_ticks = std::max(counters.max_drift_ticks, step.drift_ticks);

	if (time < 0) {
		step.status = Status::BeforeEpoch;
		return step;
	}
	if (time > layout.max_time()) {
		step.status = Status::TimeExhausted;
		return step;
	}
	const int64_t ahead = time - now;
	// A block borrows only its share of the bound: a loop of them, a tick a call, would otherwise hold
	// IDs at the bound and make every caller wait for the clock (issue 33 item 10).
	const int64_t may_borrow = policy.clock != ClockPolicy::Borrow ? 0
	                           : count > 1                         ? policy.block_borrow_ticks()
	                                                               : policy.max_drift_ticks();
	if (ahead > may_borrow) {
		// A floor may lie one lead past IDs that borrowed the whole bound, and pg_control's a second
		// more: that much is waited out, not taken for a clock that went back.
		if (last_drift > policy.max_lag_ticks()) {
			step.status = Status::ClockBehind;
		} else if (floor_drift > policy.floor_reach_ticks()) {
			step.status = Status::ClockBehind;
			step.behind_floor = true;
		} else {
			step.status = Status::Wait;
			step.wait_ticks = ahead - may_borrow;
		}
		return step;
	}
	if (time > reserved_tick) {
		// One lead past the clock; once this run has reserved, one lead past an ID borrowed ahead of it,
		// so that IDs running at the drift bound need one write a lead, not one a tick. The first
		// reservation of a run never reaches past the clock by more than a lead or the tick it needs,
		// so crash restarts in a row do not push the floor a lead further each time.
		const int64_t from = counters.reservations > 0 ? time : now;
		step.status = Status::Reserve;
		step.reserve_tick = std::min(std::max(time, from + policy.lead_ticks()), layout.max_time());
		return step;
	}

	step.id = layout.compose(Parts{time, node, seq});
	last_id = step.id + (count - 1);
	counters.issued += count;
	counters.exhaustions += exhausted;
	return step;
}

} // namespace snowflake
