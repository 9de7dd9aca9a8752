// Unit tests of layouts other than the default and of blocks of IDs, with an
// injected clock: the presets' widths and limits (sequence exhaustion at their
// width, the end of their time field, their node range, ticks of 10 ms),
// layout specs and their refusals, epoch validation per layout, time spans in
// ticks, and blocks that never leave their tick or their node.
#include "generator.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace snowflake {
namespace {

constexpr int64_t kT0 = 1700000000000; // an arbitrary Unix ms inside every preset's lifetime

Policy policy_for(const Layout &layout, int64_t epoch_ms, ClockPolicy clock = ClockPolicy::Borrow,
                  int64_t max_drift_ms = 1000) {
	return Policy{epoch_ms, max_drift_ms, clock, -1, layout};
}

GeneratorState fresh() {
	GeneratorState state{};
	state.reset();
	return state;
}

// One step as the server takes it: a Reserve is made "durable" and the step taken again.
Step step_at(GeneratorState &state, int64_t now, const Policy &policy, int32_t node, int32_t count = 1) {
	Step step = state.next(now, node, policy, count);
	if (step.status == Status::Reserve) {
		state.reserved(step.reserve_tick);
		step = state.next(now, node, policy, count);
	}
	return step;
}

struct Preset {
	const char *name;
	Layout layout;
	int64_t epoch_ms;
};
const Preset kPresets[] = {
    {"twitter", kTwitter, kTwitterEpochMs},
    {"sonyflake", kSonyflake, kSonyflakeEpochMs},
    {"js53", kJs53, kTwitterEpochMs},
};

TEST(Presets, WidthsCapacityAndLifetime) {
	EXPECT_EQ(kTwitter.ids_per_second(), 4096000);
	EXPECT_EQ(kTwitter.max_node(), 1023);
	EXPECT_EQ(kSonyflake.ids_per_second(), 25600);
	EXPECT_EQ(kSonyflake.max_node(), 65535);
	EXPECT_EQ(kSonyflake.max_seq(), 255);
	EXPECT_EQ(kJs53.ids_per_second(), 128000);
	EXPECT_EQ(kJs53.max_node(), 31);
	EXPECT_EQ(kJs53.max_seq(), 127);
	// The last tick of each: twitter and js53 2080-07-10 17:30:30.208 UTC, sonyflake 2188-11-16.
	EXPECT_EQ(kTwitter.unix_ms_of(kTwitter.max_time(), kTwitterEpochMs), 3487858230208);
	EXPECT_EQ(kJs53.unix_ms_of(kJs53.max_time(), kTwitterEpochMs), 3487858230208);
	EXPECT_EQ(kSonyflake.unix_ms_of(kSonyflake.max_time(), kSonyflakeEpochMs), 6907087738870);
	for (const Preset &preset : kPresets)
		EXPECT_EQ(layout_problem(preset.layout), nullptr) << preset.name;
}

TEST(Presets, Js53IdsStayBelowTwoToThe53) {
	const int64_t largest = kJs53.compose(Parts{kJs53.max_time(), kJs53.max_node(), kJs53.max_seq()});
	EXPECT_EQ(largest, (int64_t{1} << 53) - 1);
	EXPECT_EQ(kSonyflake.compose(Parts{kSonyflake.max_time(), kSonyflake.max_node(), kSonyflake.max_seq()}),
	          INT64_MAX);
}

TEST(Presets, RoundTrips) {
	std::mt19937_64 rng(3);
	for (const Preset &preset : kPresets) {
		const Layout &l = preset.layout;
		for (int i = 0; i < 10000; ++i) {
			const Parts p{static_cast<int64_t>(rng() & l.max_time()), static_cast<int32_t>(rng() & l.max_node()),
			              static_cast<int32_t>(rng() & l.max_seq())};
			const Parts q = l.decompose(l.compose(p));
			ASSERT_EQ(q.time, p.time);
			ASSERT_EQ(q.node, p.node);
			ASSERT_EQ(q.seq, p.seq);
		}
	}
}

// A tick's sequence runs out at the layout's width, and the next ID borrows the next tick.
TEST(Presets, SequenceExhaustionAtTheirWidth) {
	for (const Preset &preset : kPresets) {
		const Policy policy = policy_for(preset.layout, preset.epoch_ms);
		GeneratorState state = fresh();
		const int64_t tick = preset.layout.tick_of(kT0, preset.epoch_ms);
		for (int32_t i = 0; i <= preset.layout.max_seq(); ++i) {
			const Step step = step_at(state, kT0, policy, 3);
			ASSERT_EQ(step.status, Status::Issued) << preset.name;
			ASSERT_EQ(preset.layout.decompose(step.id).seq, i) << preset.name;
			ASSERT_EQ(preset.layout.decompose(step.id).time, tick) << preset.name;
		}
		const Step next = step_at(state, kT0, policy, 3);
		ASSERT_EQ(next.status, Status::Issued) << preset.name;
		const Parts p = preset.layout.decompose(next.id);
		EXPECT_EQ(p.time, tick + 1) << preset.name;
		EXPECT_EQ(p.seq, 0) << preset.name;
		EXPECT_EQ(p.node, 3) << preset.name;
		EXPECT_EQ(state.counters.exhaustions, 1) << preset.name;
	}
}

TEST(Presets, EndOfTime) {
	for (const Preset &preset : kPresets) {
		const Layout &l = preset.layout;
		const Policy policy = policy_for(l, preset.epoch_ms);
		const int64_t last_tick_ms = l.unix_ms_of(l.max_time(), preset.epoch_ms);
		GeneratorState state = fresh();
		const Step last = step_at(state, last_tick_ms, policy, l.max_node());
		ASSERT_EQ(last.status, Status::Issued) << preset.name;
		EXPECT_EQ(l.decompose(last.id).time, l.max_time()) << preset.name;
		state.last_id = l.compose(Parts{l.max_time(), l.max_node(), l.max_seq()}); // the tick used up
		EXPECT_EQ(step_at(state, last_tick_ms, policy, l.max_node()).status, Status::TimeExhausted) << preset.name;
		GeneratorState later = fresh();
		EXPECT_EQ(step_at(later, last_tick_ms + l.unit_ms, policy, 0).status, Status::TimeExhausted) << preset.name;
		EXPECT_NE(epoch_problem(l, preset.epoch_ms, last_tick_ms + l.unit_ms), nullptr) << preset.name;
		EXPECT_EQ(epoch_problem(l, preset.epoch_ms, last_tick_ms + l.unit_ms - 1), nullptr) << preset.name;
	}
}

TEST(Presets, NodeRange) {
	for (const Preset &preset : kPresets) {
		const Policy policy = policy_for(preset.layout, preset.epoch_ms);
		GeneratorState state = fresh();
		const Step top = step_at(state, kT0, policy, preset.layout.max_node());
		ASSERT_EQ(top.status, Status::Issued) << preset.name;
		EXPECT_EQ(preset.layout.decompose(top.id).node, preset.layout.max_node()) << preset.name;
		EXPECT_EQ(step_at(state, kT0, policy, preset.layout.max_node() + 1).status, Status::NodeInvalid)
		    << preset.name;
		EXPECT_EQ(step_at(state, kT0, policy, -1).status, Status::NodeInvalid) << preset.name;
	}
}

// Sonyflake counts ticks of 10 ms: the clock moving within one tick continues its sequence,
// the next tick restarts it, and an ID decodes to the start of its tick.
TEST(Units, TenMillisecondTicks) {
	const Policy policy = policy_for(kSonyflake, kSonyflakeEpochMs);
	const int64_t start = kSonyflakeEpochMs + 10 * 1000; // the start of tick 1000
	GeneratorState state = fresh();
	const Step a = step_at(state, start, policy, 9);
	const Step b = step_at(state, start + 9, policy, 9);
	const Step c = step_at(state, start + 10, policy, 9);
	ASSERT_EQ(a.status, Status::Issued);
	ASSERT_EQ(b.status, Status::Issued);
	ASSERT_EQ(c.status, Status::Issued);
	EXPECT_EQ(kSonyflake.decompose(a.id).time, 1000);
	EXPECT_EQ(b.id, a.id + 1);
	EXPECT_EQ(kSonyflake.decompose(c.id).time, 1001);
	EXPECT_EQ(kSonyflake.decompose(c.id).seq, 0);
	EXPECT_EQ(kSonyflake.unix_ms_of(1001, kSonyflakeEpochMs), start + 10);
	// Ticks round down, also before the epoch.
	EXPECT_EQ(kSonyflake.tick_of(kSonyflakeEpochMs - 1, kSonyflakeEpochMs), -1);
	EXPECT_EQ(kSonyflake.tick_of(kSonyflakeEpochMs + 19, kSonyflakeEpochMs), 1);
}

TEST(Renewal, CoarseTicksRenewOncePerTickNotInALoop) {
	// One-second ticks: the lead is one tick. A renewal reaches the next tick, and the next one is
	// due only when the clock enters it, never again in the same tick.
	LayoutSpec spec{};
	ASSERT_EQ(parse_layout("time=32,unit=1s,node=21,seq=10", spec), nullptr);
	const Policy policy = policy_for(spec.layout, kTwitterEpochMs);
	ASSERT_EQ(policy.lead_ticks(), 1);
	GeneratorState state = fresh();
	const int64_t second = kT0 - kT0 % 1000 + (kTwitterEpochMs % 1000); // a tick's start
	ASSERT_EQ(step_at(state, second, policy, 1).status, Status::Issued);
	const int64_t tick = spec.layout.tick_of(second, kTwitterEpochMs);
	EXPECT_EQ(state.reserved_tick, tick + 1);
	const Renewal within = state.renewal(second + 500, policy);
	EXPECT_EQ(within.target_tick, -1);
	EXPECT_EQ(within.due_unix_ms, second + 1000);
	const Renewal next = state.renewal(second + 1000, policy);
	EXPECT_EQ(next.target_tick, tick + 2);
	state.reserved(next.target_tick);
	EXPECT_EQ(state.renewal(second + 1000, policy).target_tick, -1);
}

// In seconds, a full tick waits (or borrows) whole seconds; the drift bound counts whole ticks.
TEST(Units, SecondTicksWaitWholeSeconds) {
	LayoutSpec spec{};
	ASSERT_EQ(parse_layout("time=32,unit=1s,node=21,seq=10", spec), nullptr);
	const Policy policy = policy_for(spec.layout, kTwitterEpochMs, ClockPolicy::Wait);
	EXPECT_EQ(policy.max_drift_ticks(), 1);
	EXPECT_EQ(policy.lead_ticks(), 1); // 200 ms rounds up to one tick
	GeneratorState state = fresh();
	const int64_t second = kT0 - kT0 % 1000 + (kTwitterEpochMs % 1000); // a tick's start
	for (int32_t i = 0; i <= spec.layout.max_seq(); ++i)
		ASSERT_EQ(step_at(state, second + 999, policy, 1).status, Status::Issued);
	const Step full = step_at(state, second + 999, policy, 1);
	EXPECT_EQ(full.status, Status::Wait);
	EXPECT_EQ(full.wait_ticks, 1);
	EXPECT_EQ(step_at(state, second + 1000, policy, 1).status, Status::Issued);
	EXPECT_EQ(epoch_problem(spec.layout, kTwitterEpochMs, kT0), nullptr); // 136 years of seconds
}

// A drift bound shorter than a tick still tolerates a clock that steps back inside the bound:
// it is one tick behind the last ID, so the step waits instead of failing.
TEST(Units, ASmallStepBackInsideALongTickWaits) {
	LayoutSpec spec{};
	ASSERT_EQ(parse_layout("time=33,unit=1s,node=10,seq=20", spec), nullptr);
	const Policy policy = policy_for(spec.layout, kTwitterEpochMs, ClockPolicy::Wait, 500);
	EXPECT_EQ(policy.max_drift_ticks(), 0);
	EXPECT_EQ(policy.max_lag_ticks(), 1);
	GeneratorState state = fresh();
	const int64_t second = kT0 - kT0 % 1000 + (kTwitterEpochMs % 1000); // a tick's start
	ASSERT_EQ(step_at(state, second, policy, 1).status, Status::Issued);
	const Step back = step_at(state, second - 2, policy, 1);
	EXPECT_EQ(back.status, Status::Wait);
	EXPECT_EQ(step_at(state, second - 2000, policy, 1).status, Status::ClockBehind); // two ticks: past the bound
}

// A spec's name and its default epoch always agree: a preset's widths written out are that preset,
// with its epoch; a preset changed by items is custom, counting from Twitter's epoch.
TEST(Specs, TheDefaultEpochFollowsTheName) {
	LayoutSpec spec{};
	ASSERT_EQ(parse_layout("time=39,unit=10ms,node=16,seq=8", spec), nullptr);
	EXPECT_STREQ(spec.name, "sonyflake");
	EXPECT_EQ(spec.epoch_ms, kSonyflakeEpochMs);
	ASSERT_EQ(parse_layout("sonyflake,time=40,node=15", spec), nullptr);
	EXPECT_STREQ(spec.name, "custom");
	EXPECT_EQ(spec.epoch_ms, kTwitterEpochMs);
	ASSERT_EQ(parse_layout("sonyflake,time=40,node=15,epoch=1000", spec), nullptr);
	EXPECT_EQ(spec.epoch_ms, 1000);
}

TEST(Specs, PresetsAndCustomLayouts) {
	LayoutSpec spec{};
	ASSERT_EQ(parse_layout("twitter", spec), nullptr);
	EXPECT_TRUE(spec.layout == kTwitter);
	EXPECT_EQ(spec.epoch_ms, kTwitterEpochMs);
	EXPECT_FALSE(spec.epoch_given);
	EXPECT_STREQ(spec.name, "twitter");
	ASSERT_EQ(parse_layout("sonyflake", spec), nullptr);
	EXPECT_TRUE(spec.layout == kSonyflake);
	EXPECT_EQ(spec.epoch_ms, kSonyflakeEpochMs);
	ASSERT_EQ(parse_layout(" js53 , epoch=1500000000000 ", spec), nullptr);
	EXPECT_TRUE(spec.layout == kJs53);
	EXPECT_EQ(spec.epoch_ms, 1500000000000);
	EXPECT_TRUE(spec.epoch_given);
	EXPECT_STREQ(spec.name, "js53");
	// Explicit widths equal to a preset's are that preset; others are custom.
	ASSERT_EQ(parse_layout("time=39,unit=10ms,node=16,seq=8", spec), nullptr);
	EXPECT_STREQ(spec.name, "sonyflake");
	EXPECT_EQ(spec.epoch_ms, kSonyflakeEpochMs); // that preset's epoch too, unless one is given
	ASSERT_EQ(parse_layout("twitter,node=12,seq=10", spec), nullptr);
	EXPECT_STREQ(spec.name, "custom");
	EXPECT_TRUE((spec.layout == Layout{41, 12, 10, 1}));
	ASSERT_EQ(parse_layout("seq=8,node=5,unit=10ms,time=40", spec), nullptr);
	EXPECT_TRUE((spec.layout == Layout{40, 5, 8, 10}));
	char text[64];
	for (const Layout &layout : {kTwitter, kSonyflake, kJs53, Layout{40, 5, 8, 10}}) {
		format_layout(layout, text);
		ASSERT_EQ(parse_layout(text, spec), nullptr) << text;
		EXPECT_TRUE(spec.layout == layout) << text;
	}
	format_layout(kSonyflake, text);
	EXPECT_STREQ(text, "time=39,unit=10ms,node=16,seq=8");
}

// The Sonyflake library's own order puts the sequence above the machine ID; decoding follows it.
TEST(Specs, SeqAboveNodeDecodesSonyflakeLibraryIds) {
	LayoutSpec spec{};
	ASSERT_EQ(parse_layout("sonyflake,order=seq-node", spec), nullptr);
	EXPECT_STREQ(spec.name, "sonyflake");
	EXPECT_TRUE(spec.seq_above_node);
	const int64_t id = (int64_t{1000} << 24) | (int64_t{5} << 16) | 40000; // tick 1000, sequence 5, machine 40000
	const Parts p = spec.decode(id);
	EXPECT_EQ(p.time, 1000);
	EXPECT_EQ(p.seq, 5);
	EXPECT_EQ(p.node, 40000);
	ASSERT_EQ(parse_layout("sonyflake,order=node-seq", spec), nullptr);
	EXPECT_FALSE(spec.seq_above_node);
	EXPECT_EQ(spec.decode(id).node, (5 << 8) | (40000 >> 8));
	EXPECT_NE(parse_layout("sonyflake,order=seq", spec), nullptr);
}

TEST(Specs, NonsenseIsRefused) {
	LayoutSpec spec{};
	const char *bad[] = {
	    "",                                           // nothing
	    "snowflake",                                  // no such preset
	    "Twitter",                                    // names are lower case
	    "twitter,js53",                               // two presets
	    "time=41,node=10,seq=12",                     // no unit
	    "time=41,unit=1ms,node=10,seq=11",            // 62 bits
	    "time=42,unit=1ms,node=10,seq=12",            // 64 bits
	    "time=40,unit=1ms,node=5,seq=7",              // 52 bits
	    "time=63,unit=1ms,node=0,seq=0",              // zero widths
	    "time=52,unit=1ms,node=0,seq=11",             // a zero-width node field
	    "time=1,unit=1ms,node=31,seq=31",             // more than 30 bits of node
	    "time=51,unit=1ms,node=1,seq=11",             // more than 10,000 years
	    "time=39,unit=1s,node=12,seq=12",             // 17,000 years of seconds
	    "time=39,unit=5ms,node=16,seq=8",             // unknown unit
	    "time=39,unit=10 ms,node=16,seq=8",           // unknown unit
	    "twitter,colour=blue",                        // unknown key
	    "twitter,node=ten",                           // not a number
	    "twitter,node=-1",                            // negative
	    "twitter,epoch=-1",                           // an epoch before 1970
	    "twitter,epoch=253402300800000",              // an epoch after 9999
	    "twitter,",                                   // an empty item
	    "time=41,unit=1ms,node=10,seq=12,node=",      // an empty value
	};
	for (const char *text : bad)
		EXPECT_NE(parse_layout(text, spec), nullptr) << '"' << text << '"';
}

// An epoch in the future, or one whose lifetime in this layout is over, is refused
// (uid-generator issue #100: its default 28-bit field of seconds ran out after 8.5 years).
TEST(Specs, EpochsThatDoNotSuitTheLayout) {
	LayoutSpec spec{};
	ASSERT_EQ(parse_layout("time=28,unit=1s,node=22,seq=13", spec), nullptr); // 8.5 years of seconds
	EXPECT_NE(epoch_problem(spec.layout, kTwitterEpochMs, kT0), nullptr);           // ran out in 2019
	EXPECT_EQ(epoch_problem(spec.layout, kT0 - 1000, kT0), nullptr);                // from now it lasts
	EXPECT_NE(epoch_problem(kSonyflake, kT0 + 1, kT0), nullptr);                    // the future
	EXPECT_NE(epoch_problem(kJs53, -1, kT0), nullptr);
	EXPECT_EQ(epoch_problem(kSonyflake, kSonyflakeEpochMs, kT0), nullptr);
}

// Time ranges in ticks: a bound inside a 10 ms tick rounds inward to whole ticks.
TEST(Spans, TenMillisecondTicksRoundInward) {
	const int64_t e = kSonyflakeEpochMs;
	IdSpan span{};
	const TimeBound from{false, true, (e + 1005) * 1000}; // inside tick 100
	const TimeBound to{false, false, (e + 1030) * 1000};  // the start of tick 103, excluded
	ASSERT_EQ(id_span(from, to, kSonyflake, e, span), BoundStatus::Ok);
	EXPECT_EQ(span.first, kSonyflake.first_id_of(101));
	EXPECT_EQ(span.last, kSonyflake.last_id_of(102));
	const TimeBound end{false, true, kSonyflake.unix_ms_of(kSonyflake.max_time() + 1, e) * 1000};
	EXPECT_EQ(id_span(end, TimeBound{true, false, 0}, kSonyflake, e, span), BoundStatus::AfterEnd);
	const TimeBound before{false, true, (e - 1) * 1000};
	EXPECT_EQ(id_span(before, TimeBound{true, false, 0}, kSonyflake, e, span), BoundStatus::BeforeEpoch);
}

TEST(Blocks, ConsecutiveIdsOfOneTick) {
	const Policy policy = policy_for(kTwitter, kTwitterEpochMs);
	GeneratorState state = fresh();
	const Step first = step_at(state, kT0, policy, 5, 100);
	ASSERT_EQ(first.status, Status::Issued);
	EXPECT_EQ(kTwitter.decompose(first.id).seq, 0);
	EXPECT_EQ(state.last_id, first.id + 99);
	EXPECT_EQ(state.counters.issued, 100);
	const Step single = step_at(state, kT0, policy, 5);
	EXPECT_EQ(single.id, first.id + 100); // the next ID follows the block
	// A block that does not fit in the rest of the tick starts the next one.
	const Step big = step_at(state, kT0, policy, 5, 4000);
	EXPECT_EQ(kTwitter.decompose(big.id).time, kTwitter.decompose(first.id).time + 1);
	EXPECT_EQ(kTwitter.decompose(big.id).seq, 0);
	// A whole tick's worth fits exactly, and ends at the last sequence number of the node.
	GeneratorState whole = fresh();
	const Step all = step_at(whole, kT0, policy, 5, 4096);
	ASSERT_EQ(all.status, Status::Issued);
	EXPECT_EQ(kTwitter.decompose(whole.last_id).seq, 4095);
	EXPECT_EQ(kTwitter.decompose(whole.last_id).node, 5);
}

TEST(Blocks, WaitWhenTheBorrowBoundIsReached) {
	const Policy policy = policy_for(kJs53, kTwitterEpochMs, ClockPolicy::Wait);
	GeneratorState state = fresh();
	ASSERT_EQ(step_at(state, kT0, policy, 1, 100).status, Status::Issued);
	const Step full = step_at(state, kT0, policy, 1, 28 + 1); // 28 left in this millisecond
	EXPECT_EQ(full.status, Status::Wait);
	EXPECT_EQ(full.wait_ticks, 1);
	EXPECT_EQ(state.counters.issued, 100);
}

// Mixed blocks and single IDs on every preset: strictly rising, never outside the node or the
// tick, and never a duplicate, whatever the block sizes and the clock do.
TEST(Blocks, NeverLeaveTheirNodeOrTick) {
	std::mt19937_64 rng(11);
	for (const Preset &preset : kPresets) {
		const Layout &l = preset.layout;
		const Policy policy = policy_for(l, preset.epoch_ms, ClockPolicy::Borrow, 200);
		GeneratorState state = fresh();
		int64_t clock = kT0;
		int64_t prev = -1;
		const int32_t node = l.max_node(); // the node bits are all ones: an overflow would show
		for (int i = 0; i < 20000; ++i) {
			clock += static_cast<int64_t>(rng() % 3);
			const int32_t count = rng() % 4 == 0 ? 1 : static_cast<int32_t>(1 + rng() % (l.max_seq() + 1));
			const Step step = step_at(state, clock, policy, node, count);
			if (step.status == Status::Wait) {
				clock += step.wait_ticks * l.unit_ms;
				continue;
			}
			ASSERT_EQ(step.status, Status::Issued) << preset.name;
			const Parts first = l.decompose(step.id);
			const Parts last = l.decompose(step.id + count - 1);
			ASSERT_GT(step.id, prev) << preset.name;
			ASSERT_EQ(first.node, node) << preset.name;
			ASSERT_EQ(last.node, node) << preset.name;
			ASSERT_EQ(first.time, last.time) << preset.name;
			ASSERT_EQ(last.seq - first.seq, count - 1) << preset.name;
			ASSERT_EQ(state.last_id, step.id + count - 1) << preset.name;
			prev = state.last_id;
		}
	}
}

} // namespace
} // namespace snowflake
