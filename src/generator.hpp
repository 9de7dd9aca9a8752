// The pure C++ core of snowflake: the bit layout, the next-ID step and the
// clock policy. Nothing here includes a PostgreSQL header, allocates, throws
// or reads a clock: the caller passes the time in, so unit tests drive it
// with an injected clock and the server glue drives it with the system clock
// under its lock. Every function is noexcept and works on plain integers,
// which is what lets GeneratorState live in shared memory.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace snowflake {

// --- Layout: bit 63 = 0 | 41 bits ms since epoch | 10 bits node | 12 bits sequence.

constexpr int kTimeBits = 41;
constexpr int kNodeBits = 10;
constexpr int kSeqBits = 12;
static_assert(kTimeBits + kNodeBits + kSeqBits == 63, "the layout must leave exactly the sign bit free");

constexpr int64_t kMaxTime = (int64_t{1} << kTimeBits) - 1; // last millisecond after the epoch
constexpr int32_t kMaxNode = (1 << kNodeBits) - 1;          // 1023
constexpr int32_t kMaxSeq = (1 << kSeqBits) - 1;            // 4095
constexpr int kNodeShift = kSeqBits;
constexpr int kTimeShift = kSeqBits + kNodeBits;

// Twitter's epoch, 2010-11-04 01:42:54.657 UTC, in Unix milliseconds.
constexpr int64_t kTwitterEpochMs = 1288834974657;

// The three fields of an ID; time_ms counts milliseconds since the epoch.
struct Parts {
	int64_t time_ms;
	int32_t node;
	int32_t seq;
};

// Packs in-range parts into an ID; the result is never negative.
constexpr int64_t compose(Parts p) noexcept {
	return (p.time_ms << kTimeShift) | (int64_t{p.node} << kNodeShift) | int64_t{p.seq};
}

// Splits a non-negative ID into its parts; compose(decompose(id)) == id.
constexpr Parts decompose(int64_t id) noexcept {
	return Parts{id >> kTimeShift, static_cast<int32_t>((id >> kNodeShift) & kMaxNode),
	             static_cast<int32_t>(id & kMaxSeq)};
}

// --- From times to IDs: the bounds that turn a time range into an ID range.

// The smallest ID of millisecond time_ms (node 0, sequence 0), and the largest (node 1023, sequence 4095).
constexpr int64_t first_id_of(int64_t time_ms) noexcept {
	return compose(Parts{time_ms, 0, 0});
}
constexpr int64_t last_id_of(int64_t time_ms) noexcept {
	return compose(Parts{time_ms, kMaxNode, kMaxSeq});
}

// One end of a time range, in Unix microseconds (PostgreSQL's precision).
struct TimeBound {
	bool infinite;  // no bound on this side
	bool inclusive; // the bound's own instant belongs to the range
	int64_t unix_us;
};

// The IDs whose time lies in a range: first..last inclusive, empty when first > last.
struct IdSpan {
	int64_t first;
	int64_t last;
};

enum class BoundStatus {
	Ok,
	BeforeEpoch, // a finite bound lies before the epoch
	AfterEnd,    // a finite bound lies past the last millisecond of the 41-bit field
};

// The IDs whose decoded time t satisfies lower <= t <= upper (each end inclusive or exclusive,
// finite or infinite), exactly: an ID's time is its millisecond, so sub-millisecond bounds round
// inward. Finite bounds must lie in [epoch, end of the layout), else the status says which side.
BoundStatus id_span(TimeBound lower, TimeBound upper, int64_t epoch_ms, IdSpan &span) noexcept;

// Parses snowflake.epoch: decimal Unix milliseconds, nothing else; false on any other text.
bool parse_epoch(std::string_view text, int64_t &epoch_ms) noexcept;

// Why an epoch is unusable at time now_unix_ms, or nullptr when it is fine:
// it must not be negative, in the future, or so old that the 41 bits ran out.
const char *epoch_problem(int64_t epoch_ms, int64_t now_unix_ms) noexcept;

// --- The clock policy, read from settings before each step.

enum class ClockPolicy : int32_t {
	Borrow, // a lagging clock or a full millisecond: issue up to max_drift_ms ahead of the clock
	Wait,   // never issue ahead of the clock: wait for it instead
};

struct Policy {
	int64_t epoch_ms;     // Unix ms of time 0
	int64_t max_drift_ms; // how far the clock may lag the last issued ID before it is an error
	ClockPolicy clock;
	int32_t reserved_node; // a node no generator may use (kept for backfilled IDs); -1 for none
};

// How far past an ID's time a new durable reservation reaches: half the drift bound, at least 10 ms.
// A restart after a hard crash resumes above the reservation, so this bounds how far ahead of the
// clock the first IDs after it may be.
constexpr int64_t reservation_step_ms(const Policy &policy) noexcept {
	return policy.max_drift_ms / 2 > 10 ? policy.max_drift_ms / 2 : 10;
}

// --- One step of the generator.

enum class Status : int32_t {
	Issued,       // id holds a new ID
	Reserve,      // nothing issued: make a reservation up to reserve_ms durable, call reserved(), step again
	NodeInvalid,  // the node is outside 0..kMaxNode (-1 when unset), or is the reserved node
	Wait,         // nothing issued: sleep wait_ms, then step again
	ClockBehind,  // the clock lags the last ID by more than max_drift_ms (or the floor by one step more)
	BeforeEpoch,  // the clock reads before the epoch and nothing was issued that is later
	TimeExhausted // the next ID would need a millisecond past the 41-bit field
};

struct Step {
	Status status;
	int64_t id;            // Issued: the ID
	int64_t wait_ms;       // Wait: how long to sleep before the next step
	int64_t reserve_ms;    // Reserve: the time (ms since the epoch) the new reservation must cover
	int64_t drift_ms;      // how far the clock lags the last issued ID or the floor (0 when it does not)
	int64_t regressed_ms;  // > 0 when this step saw the clock go back since the previous reading
	int32_t previous_node; // != node of the new ID when the node changed since the last ID; -1 at first
};

// What the generator has done since the server started; for snowflake_stats().
struct Counters {
	int64_t issued;       // IDs issued
	int64_t exhaustions;  // IDs pushed into a later millisecond because theirs had 4,096 already
	int64_t regressions;  // steps that saw the clock go back
	int64_t max_drift_ms; // the largest lag of the clock behind the last ID (or floor) seen
	int64_t reservations; // durable reservations made
};

// The generator state: plain integers only, so it may live in shared memory.
// Callers serialise every call on one state (the server holds an exclusive LWLock).
struct GeneratorState {
	int64_t last_id;       // last issued ID, -1 before the first
	int64_t last_clock_ms; // latest clock reading in ms since the epoch, to spot a step back
	int64_t floor_ms;      // every ID must have a time above this (ms since the epoch); INT64_MIN for none
	int64_t reserved_ms;   // IDs may be issued up to this time: a durable reservation covers it; -1 for none
	Counters counters;

	// Starts with nothing issued, no floor and no reservation.
	void reset() noexcept;

	// Makes every later ID have a time above time_ms (a restart's or promotion's floor);
	// a durable record of time_ms counts as a reservation up to it.
	void resume_above(int64_t time_ms) noexcept;

	// Records that a reservation up to until_ms is durable.
	void reserved(int64_t until_ms) noexcept;

	// The common cases of next(), without building a Step: the same node, with the clock in the
	// last ID's millisecond or past it (within the reservation), or borrowing within the bound.
	// Issues exactly the ID next() would, leaves the state exactly as next() would, and only
	// where next() would have nothing to report (tested); else returns false having changed
	// nothing, and the caller takes next().
	bool issue_fast(int64_t now_unix_ms, int32_t node, const Policy &policy, int64_t &id) noexcept {
		const int64_t now = now_unix_ms - policy.epoch_ms;
		if (last_id < 0 || now < last_clock_ms || node == policy.reserved_node)
			return false;
		const int64_t last_time = last_id >> kTimeShift;
		const bool same_node = ((last_id >> kNodeShift) & kMaxNode) == node;
		int64_t issued;
		if (!same_node) // a node change is reported by next()
			return false;
		if (now > last_time) {
			if (now > reserved_ms || now <= floor_ms)
				return false;
			issued = compose(Parts{now, node, 0});
		} else if ((last_id & kMaxSeq) != kMaxSeq && last_time > floor_ms &&
		           (now == last_time ||
		            (policy.clock == ClockPolicy::Borrow && last_time - now <= policy.max_drift_ms))) {
			issued = last_id + 1;
			if (last_time - now > counters.max_drift_ms)
				counters.max_drift_ms = last_time - now;
		} else {
			return false;
		}
		last_clock_ms = now;
		last_id = issued;
		++counters.issued;
		id = issued;
		return true;
	}

	// Issues the next ID for node at clock time now_unix_ms, or says why not.
	// Guarantees: every Issued ID is greater than every ID issued before from this
	// state, and has a time above the floor (so never a duplicate); it decodes to
	// node; its time is at most now + max_drift_ms (Borrow) or now (Wait), and at
	// most reserved_ms. Only Issued changes last_id. A floor up to one reservation
	// step beyond max_drift_ms ahead of the clock is waited out, not an error.
	Step next(int64_t now_unix_ms, int32_t node, const Policy &policy) noexcept;
};

static_assert(std::is_trivially_copyable_v<GeneratorState> && std::is_standard_layout_v<GeneratorState>,
              "GeneratorState lives in shared memory");

} // namespace snowflake
