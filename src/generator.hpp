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

// --- Layout: bit 63 = 0 | time ticks since the epoch | node | sequence, fixed at server start.
// The default (twitter) is 41 bits of milliseconds, 10 bits of node and 12 of sequence.

// The fields of an ID; time counts ticks (units of the layout) since the epoch.
struct Parts {
	int64_t time;
	int32_t node;
	int32_t seq;
};

// The widths of an ID's fields and the length of one time tick. Which combinations are valid is
// layout_problem()'s to say; every member function assumes a valid layout.
struct Layout {
	int32_t time_bits;
	int32_t node_bits;
	int32_t seq_bits;
	int32_t unit_ms; // one tick: 1, 10 or 1000 ms

	// Where the node field and the time field start.
	constexpr int node_shift() const noexcept { return seq_bits; }
	constexpr int time_shift() const noexcept { return seq_bits + node_bits; }
	// The last tick of the time field, the largest node and the largest sequence number.
	constexpr int64_t max_time() const noexcept { return (int64_t{1} << time_bits) - 1; }
	constexpr int32_t max_node() const noexcept { return static_cast<int32_t>((int64_t{1} << node_bits) - 1); }
	constexpr int32_t max_seq() const noexcept { return static_cast<int32_t>((int64_t{1} << seq_bits) - 1); }
	// IDs one node can issue per second at most.
	constexpr int64_t ids_per_second() const noexcept { return (int64_t{max_seq()} + 1) * 1000 / unit_ms; }

	// Packs in-range parts into an ID; the result is never negative.
	constexpr int64_t compose(Parts p) const noexcept {
		return (p.time << time_shift()) | (int64_t{p.node} << node_shift()) | int64_t{p.seq};
	}
	// Splits a non-negative ID into its parts; compose(decompose(id)) == id for IDs of this layout.
	constexpr Parts decompose(int64_t id) const noexcept {
		return Parts{id >> time_shift(), static_cast<int32_t>((id >> node_shift()) & max_node()),
		             static_cast<int32_t>(id & max_seq())};
	}
	// The smallest ID of a tick (node 0, sequence 0), and the largest (last node, last sequence).
	constexpr int64_t first_id_of(int64_t time) const noexcept { return compose(Parts{time, 0, 0}); }
	constexpr int64_t last_id_of(int64_t time) const noexcept { return compose(Parts{time, max_node(), max_seq()}); }

	// Unix ms of the start of a tick, and the tick that a Unix ms falls in (rounded down, any sign).
	constexpr int64_t unix_ms_of(int64_t time, int64_t epoch_ms) const noexcept { return epoch_ms + time * unit_ms; }
	constexpr int64_t tick_of(int64_t unix_ms, int64_t epoch_ms) const noexcept {
		const int64_t ms = unix_ms - epoch_ms;
		if (unit_ms == 1) // the default layout pays no division
			return ms;
		return ms / unit_ms - (ms % unit_ms != 0 && ms < 0);
	}

	// Same widths and unit.
	constexpr bool operator==(const Layout &other) const noexcept {
		return time_bits == other.time_bits && node_bits == other.node_bits && seq_bits == other.seq_bits &&
		       unit_ms == other.unit_ms;
	}
	constexpr bool operator!=(const Layout &other) const noexcept { return !(*this == other); }
};

// The presets. twitter: 69.7 years of ms, 1,024 nodes, 4,096,000 IDs/s per node. sonyflake: 174
// years of 10 ms, 65,536 machines, 25,600 IDs/s each. js53 (every ID below 2^53, exact in a
// JavaScript number): 69.7 years of ms, 32 nodes, 128,000 IDs/s each.
constexpr Layout kTwitter{41, 10, 12, 1};
constexpr Layout kSonyflake{39, 16, 8, 10};
constexpr Layout kJs53{41, 5, 7, 1};

// Twitter's epoch, 2010-11-04 01:42:54.657 UTC, and Sonyflake's, 2014-09-01 00:00:00 UTC, in Unix ms.
constexpr int64_t kTwitterEpochMs = 1288834974657;
constexpr int64_t kSonyflakeEpochMs = 1409529600000;

// The longest lifetime a layout may have, 10,000 years of ms: keeps every time in range of
// microsecond arithmetic and of timestamptz.
constexpr int64_t kMaxLifetimeMs = int64_t{10000} * 36525 * 24 * 3600 * 10;
// The latest epoch a layout spec may name: 9999-12-31 23:59:59.999 UTC.
constexpr int64_t kMaxEpochMs = 253402300799999;

// A layout as text names it: the widths, the epoch it names or implies, and its preset's name.
struct LayoutSpec {
	Layout layout;
	int64_t epoch_ms;  // from "epoch=", else the preset's epoch (Twitter's for a custom layout)
	bool epoch_given;  // the text said "epoch="
	const char *name;  // "twitter", "sonyflake", "js53" or "custom"
	bool seq_above_node = false; // "order=seq-node": the Sonyflake library's field order; for decoding only

	// The parts of a non-negative ID of this layout, in its field order.
	constexpr Parts decode(int64_t id) const noexcept {
		if (!seq_above_node)
			return layout.decompose(id);
		return Parts{id >> layout.time_shift(), static_cast<int32_t>(id & layout.max_node()),
		             static_cast<int32_t>((id >> layout.node_bits) & layout.max_seq())};
	}
};

// Why a layout is invalid, or nullptr: every width at least 1, node and sequence at most 30 bits,
// a unit of 1, 10 or 1000 ms, a lifetime of at most 10,000 years, and time + node + sequence
// equal to 63 (all of a non-negative bigint) or 53 (the integers exact in a JavaScript number).
const char *layout_problem(const Layout &layout) noexcept;

// Parses a layout spec: a preset name ("twitter", "sonyflake", "js53"), optionally followed by
// ",key=value" items that override it, or only items, then naming all of time, unit, node and
// seq. Keys: time, node, seq (bits), unit (1ms, 10ms or 1s), epoch (Unix ms, 0 to kMaxEpochMs) and
// order (node-seq, the default, or seq-node).
// Returns why the text is unusable (syntax or layout_problem()), or nullptr with spec filled in.
const char *parse_layout(std::string_view text, LayoutSpec &spec) noexcept;

// Writes the canonical spec of a layout ("time=41,unit=1ms,node=10,seq=12"), NUL-terminated.
void format_layout(const Layout &layout, char (&out)[64]) noexcept;

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
	AfterEnd,    // a finite bound lies past the last tick of the time field
};

// The IDs of a layout whose decoded time t (the start of its tick) satisfies lower <= t <= upper
// (each end inclusive or exclusive, finite or infinite), exactly: sub-tick bounds round inward.
// Finite bounds must lie in [epoch, end of the layout), else the status says which side.
BoundStatus id_span(TimeBound lower, TimeBound upper, const Layout &layout, int64_t epoch_ms, IdSpan &span) noexcept;

// Clamps the ends of a time range to the times a layout's IDs can have, as a filter needs: an end
// beyond the layout on its own side (a lower end before the epoch, an upper end past the last tick)
// excludes no ID and becomes unbounded; an end beyond it on the other side (an upper end before the
// epoch, a lower end past the last tick) leaves no ID in the range, and the result is false. Then
// id_span() accepts both ends, and finds the IDs whose time lies in the range.
bool clamp_to_layout(TimeBound &lower, TimeBound &upper, const Layout &layout, int64_t epoch_ms) noexcept;

// Parses snowflake.epoch: decimal Unix milliseconds, nothing else; false on any other text.
bool parse_epoch(std::string_view text, int64_t &epoch_ms) noexcept;

// Why an epoch is unusable for generating IDs of a layout at time now_unix_ms, or nullptr when it
// is fine: it must not be negative, in the future, or so old that the time field already ran out.
const char *epoch_problem(const Layout &layout, int64_t epoch_ms, int64_t now_unix_ms) noexcept;

// A floor a second further ahead than the drift bound and one lead is still waited out: pg_control,
// one of the floors' sources, keeps its checkpoint's time in whole seconds (restart.hpp).
constexpr int64_t kFloorGraceMs = 1000;

// --- The clock policy, read from settings before each step.

// Under Borrow, a block of IDs (more than one) may be at most this share of max_clock_drift ahead
// of the clock: a loop of whole-tick blocks takes a tick a call, so it stops there and waits for
// the clock, leaving single calls the rest of the bound to borrow in (issue 33 item 10).
constexpr int64_t kBlockBorrowShare = 16;

enum class ClockPolicy : int32_t {
	Borrow, // a lagging clock or a full tick: issue up to max_drift_ms ahead of the clock
	Wait,   // never issue ahead of the clock: wait for it instead
};

struct Policy {
	int64_t epoch_ms;     // Unix ms of tick 0
	int64_t max_drift_ms; // how far the clock may lag the last issued ID before it is an error
	ClockPolicy clock;
	int32_t reserved_node;     // a node no generator may use (kept for backfilled IDs); -1 for none
	Layout layout = kTwitter; // the layout IDs are issued in
	int64_t lead_ms = 200;    // how far past the clock a new reservation reaches (reservation_lead_ms)

	// max_drift_ms in whole ticks: how far ahead of the clock's tick an ID may be.
	constexpr int64_t max_drift_ticks() const noexcept {
		return layout.unit_ms == 1 ? max_drift_ms : max_drift_ms / layout.unit_ms;
	}

	// max_drift_ms rounded up to whole ticks: how many ticks a clock may fall behind the last ID before
	// it is an error. A clock 1 ms behind the start of a 1 s tick is one tick behind; that is not a fault.
	constexpr int64_t max_lag_ticks() const noexcept {
		return layout.unit_ms == 1 ? max_drift_ms : (max_drift_ms + layout.unit_ms - 1) / layout.unit_ms;
	}

	// How far ahead of the clock's tick a block of IDs may be under Borrow: max_drift_ticks() /
	// kBlockBorrowShare, at least one tick (so single calls that opened a tick never keep a block
	// waiting for long) and at most the bound (none for a bound of 0).
	constexpr int64_t block_borrow_ticks() const noexcept {
		const int64_t bound = max_drift_ticks();
		const int64_t share = bound / kBlockBorrowShare;
		return share >= 1 ? share : bound < 1 ? bound : 1;
	}

	// lead_ms rounded up to whole ticks, at least one.
	constexpr int64_t lead_ticks() const noexcept { return (lead_ms + layout.unit_ms - 1) / layout.unit_ms; }

	// How far ahead of the clock a floor is waited out rather than refused: the drift bound IDs may
	// have borrowed, one lead a reservation may reach past them, and kFloorGraceMs, in whole ticks.
	constexpr int64_t floor_reach_ticks() const noexcept {
		return max_lag_ticks() + lead_ticks() + (kFloorGraceMs + layout.unit_ms - 1) / layout.unit_ms;
	}
};

// --- The durable reservation's lead. No ID is issued past a durable reservation (a tick recorded
// in the state file), so a restart resumes above it. A reservation reaches one lead past the clock,
// or, once the run has made one, one lead past an ID borrowed ahead of the clock: far enough that a
// renewal, started when half of it is left, is durable before the IDs reach its end, and that IDs
// running at the drift bound need one write a lead (not one a tick); and short, so that a crash
// restart puts the first IDs at most one lead past the last ID issued, and crash restarts in a row
// (whose first reservation reaches only one lead past the clock, or the tick it needs) never add
// up leads. The lead
// is four writes' time as the last writes measured it, from kMinLeadMs (which bounds renewals to
// about 2 / kMinLeadMs a second under steady load) to kMaxLeadMs; the drift bound plays no part.
constexpr int64_t kMinLeadMs = 200;
constexpr int64_t kMaxLeadMs = 10000;
constexpr int64_t kLeadWrites = 4;

// The lead for a write latency estimate in microseconds (see above).
constexpr int64_t reservation_lead_ms(int64_t write_latency_us) noexcept {
	const int64_t ms = (write_latency_us * kLeadWrites + 999) / 1000;
	return ms < kMinLeadMs ? kMinLeadMs : ms > kMaxLeadMs ? kMaxLeadMs : ms;
}

// The longest write latency an estimate holds (what sizes the longest lead): 10 s.
constexpr int64_t kMaxWriteLatencyUs = kMaxLeadMs * 1000;

// The write latency estimate after a write that took sample_us: a slower write counts at once (the
// next lead must outlast it), a faster one lowers the estimate by an eighth of the difference;
// always within 0 to kMaxWriteLatencyUs.
constexpr int64_t next_write_latency_us(int64_t estimate_us, int64_t sample_us) noexcept {
	sample_us = sample_us < 0 ? 0 : sample_us > kMaxWriteLatencyUs ? kMaxWriteLatencyUs : sample_us;
	return sample_us >= estimate_us ? sample_us : estimate_us - (estimate_us - sample_us + 7) / 8;
}

// What a background renewal should do now: renew up to target_tick (>= 0), or else look again at
// due_unix_ms (-1: only when woken, the server being idle with its reservation spent).
struct Renewal {
	int64_t target_tick;
	int64_t due_unix_ms;
};

// --- Waiting for the clock.

// How one call waits for a tick remaining_us away. A sleep wakes up late, by about 0.1 to 0.2 ms;
// at the layout's ceiling (a full tick every few hundred µs) that lateness is lost throughput. So
// a short wait sleeps until kClockSpinUs before the tick and spins on the clock for the rest; a
// long one (kLongClockWaitUs or more: a lagging clock, a coarse tick) sleeps on the latch, whole.
struct ClockWait {
	bool on_latch;    // sleep on the latch (in whole ms, rounded up) and do not spin
	int64_t sleep_us; // sleep this long first (0: none), then spin on the clock until the tick
};
constexpr int64_t kLongClockWaitUs = 10000;
constexpr int64_t kClockSpinUs = 200;

// The plan for a wait of remaining_us; no wait at all when it is not positive.
constexpr ClockWait plan_clock_wait(int64_t remaining_us) noexcept {
	if (remaining_us <= 0)
		return ClockWait{false, 0};
	if (remaining_us >= kLongClockWaitUs)
		return ClockWait{true, remaining_us};
	return ClockWait{false, remaining_us < kClockSpinUs ? 0 : remaining_us - kClockSpinUs};
}

// --- One step of the generator. Times are ticks of the policy's layout since its epoch.

enum class Status : int32_t {
	Issued,       // id holds a new ID (the first of count consecutive ones)
	Reserve,      // nothing issued: make a reservation up to reserve_tick durable, call reserved(), step again
	NodeInvalid,  // the node is outside 0..max_node (-1 when unset), or is the reserved node
	Wait,         // nothing issued: sleep wait_ticks, then step again
	ClockBehind,  // the clock lags the last ID by more than max_drift_ms (or the floor by one step more)
	BeforeEpoch,  // the clock reads before the epoch and nothing was issued that is later
	TimeExhausted // the next ID would need a tick past the time field
};

struct Step {
	Status status;
	int64_t id;              // Issued: the (first) ID
	int64_t wait_ticks;      // Wait: how long to sleep before the next step
	int64_t reserve_tick;    // Reserve: the tick the new reservation must cover
	int64_t drift_ticks;     // how far the clock lags the last issued ID or the floor (0 when it does not)
	int64_t regressed_ticks; // > 0 when this step saw the clock go back since the previous reading
	int32_t previous_node;   // != node of the new ID when the node changed since the last ID; -1 at first
	bool behind_floor;       // ClockBehind: the lag that refused is behind the floor, not the last ID
};

// What the generator has done since the server started; for snowflake_stats().
struct Counters {
	int64_t issued;          // IDs issued
	int64_t exhaustions;     // steps pushed into a later tick because theirs had too few sequence numbers left
	int64_t regressions;     // steps that saw the clock go back
	int64_t max_drift_ticks; // the largest lag of the clock behind the last ID (or floor) seen
	int64_t reservations;    // durable reservations made
};

// The generator state: plain integers only, so it may live in shared memory.
// Callers serialise every call on one state (the server holds an exclusive LWLock),
// and always pass a policy with the same layout and epoch.
struct GeneratorState {
	int64_t last_id;         // last issued ID, -1 before the first
	int64_t last_clock_tick; // latest clock reading, to spot a step back
	int64_t floor_tick;      // every ID must have a time above this; INT64_MIN for none
	int64_t reserved_tick;   // IDs may be issued up to this tick: a durable reservation covers it; -1 for none
	Counters counters;

	// Starts with nothing issued, no floor and no reservation.
	void reset() noexcept;

	// Makes every later ID have a time above tick (a restart's or promotion's floor);
	// a durable record of tick counts as a reservation up to it.
	void resume_above(int64_t tick) noexcept;

	// Records that a reservation up to until_tick is durable.
	void reserved(int64_t until_tick) noexcept;

	// Whether to renew the reservation now, so that IDs issued at the pace of the clock never find it
	// spent: when an ID was issued within the last lead and less than half a lead is left past the
	// clock, renew up to one lead past it (always further than now); otherwise says when less than
	// half a lead will be left. At most one renewal per half lead, one per tick on coarse ticks.
	Renewal renewal(int64_t now_unix_ms, const Policy &policy) const noexcept;

	// The common cases of next() for one ID, without building a Step: the same node, with the
	// clock in the last ID's tick or past it (within the reservation), or borrowing within the
	// bound. Issues exactly the ID next() would, leaves the state exactly as next() would, and
	// only where next() would have nothing to report (tested); else returns false having changed
	// nothing, and the caller takes next().
	bool issue_fast(int64_t now_unix_ms, int32_t node, const Policy &policy, int64_t &id) noexcept {
		const Layout &layout = policy.layout;
		const int64_t now = layout.tick_of(now_unix_ms, policy.epoch_ms);
		if (last_id < 0 || now < last_clock_tick || node == policy.reserved_node)
			return false;
		const int64_t last_time = last_id >> layout.time_shift();
		const bool same_node = ((last_id >> layout.node_shift()) & layout.max_node()) == node;
		int64_t issued;
		if (!same_node) // a node change is reported by next()
			return false;
		if (now > last_time) {
			if (now > reserved_tick || now <= floor_tick)
				return false;
			issued = layout.compose(Parts{now, node, 0});
		} else if ((last_id & layout.max_seq()) != layout.max_seq() && last_time > floor_tick &&
		           (now == last_time ||
		            (policy.clock == ClockPolicy::Borrow && last_time - now <= policy.max_drift_ticks()))) {
			issued = last_id + 1;
			if (last_time - now > counters.max_drift_ticks)
				counters.max_drift_ticks = last_time - now;
		} else {
			return false;
		}
		last_clock_tick = now;
		last_id = issued;
		++counters.issued;
		id = issued;
		return true;
	}

	// Issues the next count IDs (1 to max_seq + 1) for node at clock time now_unix_ms, or says
	// why not. They are consecutive integers in one tick, so id..id + count - 1 all decode to node
	// and to that tick. Guarantees: every Issued ID is greater than every ID issued before from
	// this state, and has a time above the floor (so never a duplicate); its time is at most
	// now + max_drift_ms (Borrow; a block of more than one ID, now + block_borrow_ticks()) or now
	// (Wait), and at most reserved_tick; a step told to Wait waits at most floor_reach_ticks() + 1
	// ticks. Only Issued changes
	// last_id (to the last of the count). A floor up to floor_reach_ticks() ahead of the clock is
	// waited out, not an error. A Reserve asks for one lead past the clock, or past the
	// tick it needs when that lies ahead and the run has reserved before (else for that tick).
	Step next(int64_t now_unix_ms, int32_t node, const Policy &policy, int32_t count = 1) noexcept;
};

static_assert(std::is_trivially_copyable_v<GeneratorState> && std::is_standard_layout_v<GeneratorState>,
              "GeneratorState lives in shared memory");

} // namespace snowflake
