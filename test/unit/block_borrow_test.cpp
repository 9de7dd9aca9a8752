// Unit tests of how far ahead of the clock a block of IDs may borrow, with an
// injected clock (issue 33 item 10): a loop of whole-tick blocks takes a tick a
// call, so it stops at a sixteenth of the drift bound (at least one tick, at
// most the bound) and waits for the clock there, leaving single calls the rest
// of the bound to borrow in; every block still sorts above every ID before it,
// and every wait it is told to make is bounded as the others are.
#include "generator.hpp"

#include <gtest/gtest.h>

#include <random>

namespace snowflake {
namespace {

constexpr int64_t kEpoch = kTwitterEpochMs;
constexpr int64_t kT0 = 1700000000000; // an arbitrary Unix ms well inside the layout
constexpr int32_t kNode = 7;
constexpr int32_t kWholeTick = kTwitter.max_seq() + 1;

// The default policy (borrow) with a drift bound of max_drift_ms, on the twitter layout.
Policy borrow(int64_t max_drift_ms = 1000) {
	return Policy{kEpoch, max_drift_ms, ClockPolicy::Borrow, -1};
}

// A state with nothing issued, no floor and no reservation.
GeneratorState fresh() {
	GeneratorState state{};
	state.reset();
	return state;
}

// One step as the server takes it: a Reserve is made "durable" (recorded) and the step taken again.
Step step_at(GeneratorState &state, int64_t now, const Policy &policy, int32_t count = 1) {
	Step step = state.next(now, kNode, policy, count);
	if (step.status == Status::Reserve) {
		state.reserved(step.reserve_tick);
		step = state.next(now, kNode, policy, count);
	}
	return step;
}

// The tick of an ID, as ticks since the epoch.
int64_t tick_of_id(int64_t id) {
	return id >> kTwitter.time_shift();
}

TEST(BlockBorrowing, TheShareIsASixteenthOfTheBoundAtLeastATickAtMostTheBound) {
	EXPECT_EQ(borrow(1000).block_borrow_ticks(), 62);
	EXPECT_EQ(borrow(10000).block_borrow_ticks(), 625);
	EXPECT_EQ(borrow(16).block_borrow_ticks(), 1);
	EXPECT_EQ(borrow(15).block_borrow_ticks(), 1);
	EXPECT_EQ(borrow(1).block_borrow_ticks(), 1);
	EXPECT_EQ(borrow(0).block_borrow_ticks(), 0);
	// Ticks of 10 ms: a second of drift is 100 ticks, 6 of them for blocks.
	const Policy sonyflake{kSonyflakeEpochMs, 1000, ClockPolicy::Borrow, -1, kSonyflake};
	EXPECT_EQ(sonyflake.block_borrow_ticks(), 6);
}

TEST(BlockBorrowing, ALoopOfWholeTickBlocksStopsAtItsShareAndWaitsATick) {
	// At one clock reading, whole-tick blocks borrow tick after tick: 0.5.0 went on to the drift
	// bound (1,000 ticks), after which every caller waited for the clock.
	GeneratorState state = fresh();
	const Policy policy = borrow();
	const int64_t now = kT0 - kEpoch;
	int64_t blocks = 0;
	Step step{};
	while ((step = step_at(state, kT0, policy, kWholeTick)).status == Status::Issued) {
		ASSERT_LE(tick_of_id(step.id), now + policy.block_borrow_ticks());
		++blocks;
	}
	ASSERT_EQ(step.status, Status::Wait);
	EXPECT_EQ(step.wait_ticks, 1);
	EXPECT_EQ(blocks, policy.block_borrow_ticks() + 1); // the clock's own tick and 62 borrowed
	EXPECT_EQ(tick_of_id(state.last_id), now + 62);
	// One tick later, one more block.
	const Step later = step_at(state, kT0 + 1, policy, kWholeTick);
	ASSERT_EQ(later.status, Status::Issued);
	EXPECT_EQ(tick_of_id(later.id), now + 63);
}

TEST(BlockBorrowing, SingleCallsNeverWaitBesideALoopOfBlocks) {
	// The bench's case on the injected clock: each millisecond, blocks as fast as they come (20 a
	// ms, each told to wait gives up until the next ms) and 70 single calls. The singles borrow
	// past the blocks and never wait; in 0.5.0, once the blocks reached the drift bound, a single
	// call after a block found its tick full and the next one beyond the bound.
	GeneratorState state = fresh();
	const Policy policy = borrow();
	int64_t single_waits = 0, singles = 0, blocks = 0, prev = -1;
	for (int64_t ms = 0; ms < 3000; ++ms) {
		bool blocks_wait = false;
		for (int i = 0; i < 90; ++i) {
			const bool block = i % 4 == 0 && i < 80;
			if (block && blocks_wait)
				continue;
			int64_t id = -1;
			if (!block && state.issue_fast(kT0 + ms, kNode, policy, id)) {
				ASSERT_GT(id, prev);
				prev = id;
				++singles;
				continue;
			}
			const Step step = step_at(state, kT0 + ms, policy, block ? kWholeTick : 1);
			if (step.status == Status::Wait) {
				ASSERT_LE(step.wait_ticks, 2);
				if (block)
					blocks_wait = true; // the loopers wait for the next millisecond
				else
					++single_waits;
				continue;
			}
			ASSERT_EQ(step.status, Status::Issued);
			ASSERT_GT(step.id, prev);
			ASSERT_LE(tick_of_id(step.id), kT0 + ms - kEpoch + (block ? policy.block_borrow_ticks() : 1000));
			prev = state.last_id;
			++(block ? blocks : singles);
		}
	}
	EXPECT_EQ(single_waits, 0);
	EXPECT_EQ(singles, 3000 * 70);
	// The blocks keep a tick every two milliseconds (the singles open the other): not starved either.
	EXPECT_GE(blocks, 1500);
	EXPECT_LE(tick_of_id(state.last_id), kT0 + 2999 - kEpoch + policy.block_borrow_ticks() + 1);
}

TEST(BlockBorrowing, ABlockBehindSinglesThatBorrowedTheWholeBoundWaitsWithinTheBound) {
	// Single calls above capacity borrowed to the drift bound; a block then waits until its tick is
	// within its share, and that wait is shorter than the longest the server allows a call.
	GeneratorState state = fresh();
	const Policy policy = borrow();
	while (tick_of_id(state.last_id < 0 ? 0 : state.last_id) < kT0 - kEpoch + 1000 ||
	       (state.last_id & kTwitter.max_seq()) != kTwitter.max_seq())
		ASSERT_EQ(step_at(state, kT0, policy).status, Status::Issued);
	const Step block = step_at(state, kT0, policy, 2);
	ASSERT_EQ(block.status, Status::Wait);
	EXPECT_EQ(block.wait_ticks, 1001 - policy.block_borrow_ticks());
	EXPECT_LT(block.wait_ticks, policy.floor_reach_ticks() + 1);
	const Step after = step_at(state, kT0 + block.wait_ticks, policy, 2);
	ASSERT_EQ(after.status, Status::Issued);
	EXPECT_EQ(tick_of_id(after.id), kT0 - kEpoch + 1001);
}

TEST(BlockBorrowing, AClockStepBackWithinTheBoundMakesBlocksWaitNotFail) {
	// Singles ride out a step back of 500 ms; a block waits until the clock is within its share of
	// the last ID, then continues above it.
	GeneratorState state = fresh();
	const Policy policy = borrow();
	ASSERT_EQ(step_at(state, kT0, policy).status, Status::Issued);
	const int64_t last = state.last_id;
	const Step single = step_at(state, kT0 - 500, policy);
	ASSERT_EQ(single.status, Status::Issued);
	EXPECT_EQ(single.id, last + 1);
	const Step block = step_at(state, kT0 - 500, policy, 100);
	ASSERT_EQ(block.status, Status::Wait);
	EXPECT_EQ(block.wait_ticks, 500 - policy.block_borrow_ticks());
	const Step after = step_at(state, kT0 - 500 + block.wait_ticks, policy, 100);
	ASSERT_EQ(after.status, Status::Issued);
	EXPECT_EQ(after.id, last + 2);
	// Past the bound it is the same refusal as for single calls.
	EXPECT_EQ(step_at(state, kT0 - 1500, policy, 100).status, Status::ClockBehind);
}

TEST(BlockBorrowing, AFloorAheadIsWaitedOutToTheBlocksShare) {
	// A floor the drift bound ahead (less a tick): singles borrow over it at once, a block waits
	// until the floor is within its share, and is never refused.
	GeneratorState state = fresh();
	const Policy policy = borrow();
	state.resume_above(kT0 - kEpoch + 999);
	const Step block = step_at(state, kT0, policy, kWholeTick);
	ASSERT_EQ(block.status, Status::Wait);
	EXPECT_EQ(block.wait_ticks, 1000 - policy.block_borrow_ticks());
	EXPECT_EQ(step_at(state, kT0, policy).status, Status::Issued);
}

TEST(BlockBorrowing, WaitPolicyAndABoundOfZeroNeverBorrowForBlocks) {
	for (const Policy &policy : {Policy{kEpoch, 1000, ClockPolicy::Wait, -1}, borrow(0)}) {
		GeneratorState state = fresh();
		ASSERT_EQ(step_at(state, kT0, policy, kWholeTick).status, Status::Issued);
		const Step next = step_at(state, kT0, policy, kWholeTick);
		ASSERT_EQ(next.status, Status::Wait);
		EXPECT_EQ(next.wait_ticks, 1);
	}
}

TEST(BlockBorrowing, RandomClockWalkKeepsBlocksWithinTheirShareAndIdsRising) {
	// Blocks of every size and single calls under a clock that jitters and steps back within the
	// bound: IDs strictly rise, a block is never more than its share ahead of the clock, a single
	// never more than the bound, and no wait is longer than the longest a call may make.
	std::mt19937_64 rng(33);
	for (const int64_t drift : {1, 15, 16, 200, 1000}) {
		const Policy policy = borrow(drift);
		GeneratorState state = fresh();
		int64_t clock = kT0, prev = -1;
		for (int i = 0; i < 50000; ++i) {
			clock += static_cast<int64_t>(rng() % 3);
			if (rng() % 500 == 0)
				clock -= static_cast<int64_t>(rng() % (drift + 1));
			const int32_t count = rng() % 3 == 0 ? 1 : static_cast<int32_t>(1 + rng() % kWholeTick);
			const Step step = step_at(state, clock, policy, count);
			if (step.status == Status::ClockBehind) { // a step back past the bound: refused, as for singles
				ASSERT_GT(step.drift_ticks, policy.max_lag_ticks()) << drift;
				++clock;
				continue;
			}
			if (step.status == Status::Wait) {
				ASSERT_GE(step.wait_ticks, 1);
				ASSERT_LE(step.wait_ticks, policy.floor_reach_ticks() + 1);
				clock += step.wait_ticks;
				continue;
			}
			ASSERT_EQ(step.status, Status::Issued) << drift;
			ASSERT_GT(step.id, prev) << drift;
			const int64_t ahead = tick_of_id(step.id) - (clock - kEpoch);
			ASSERT_LE(ahead, count > 1 ? policy.block_borrow_ticks() : drift) << drift;
			prev = state.last_id;
		}
	}
}

} // namespace
} // namespace snowflake
