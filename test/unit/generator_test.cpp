// Unit tests of the pure core (src/generator.*), with an injected clock: the
// layout and its limits, round trips, the Twitter worked example, sequence
// exhaustion, clock steps back under both policies, node changes, the end of
// the 41-bit time field, epoch validation, the fast path against the general
// step (in every preset), and a random clock walk. Other layouts and blocks of
// IDs: layout_test.cpp.
#include "generator.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace snowflake {
namespace {

constexpr int64_t kEpoch = kTwitterEpochMs;
constexpr int64_t kT0 = 1700000000000; // an arbitrary Unix ms well inside the layout
constexpr int32_t kNode = 7;

Policy borrow(int64_t max_drift_ms = 1000) {
	return Policy{kEpoch, max_drift_ms, ClockPolicy::Borrow, -1};
}
Policy wait(int64_t max_drift_ms = 1000) {
	return Policy{kEpoch, max_drift_ms, ClockPolicy::Wait, -1};
}

GeneratorState fresh() {
	GeneratorState state{};
	state.reset();
	return state;
}

// One step as the server takes it: a Reserve is made "durable" (recorded) and the step taken again.
Step step_at(GeneratorState &state, int64_t now, const Policy &policy, int32_t node = kNode) {
	Step step = state.next(now, node, policy);
	if (step.status != Status::Reserve)
		return step;
	const int64_t regressed = step.regressed_ticks;
	state.reserved(step.reserve_tick);
	step = state.next(now, node, policy);
	step.regressed_ticks = std::max(step.regressed_ticks, regressed);
	return step;
}

// Issues one ID and fails the test unless the step issued.
int64_t issue(GeneratorState &state, int64_t now, const Policy &policy, int32_t node = kNode) {
	const Step step = step_at(state, now, policy, node);
	EXPECT_EQ(step.status, Status::Issued);
	return step.id;
}

TEST(Layout, WidthsAndLimits) {
	EXPECT_EQ(kTwitter.max_time(), 2199023255551);
	EXPECT_EQ(kTwitter.max_node(), 1023);
	EXPECT_EQ(kTwitter.max_seq(), 4095);
	EXPECT_EQ(kTwitter.compose({0, 0, 0}), 0);
	EXPECT_EQ(kTwitter.compose({kTwitter.max_time(), kTwitter.max_node(), kTwitter.max_seq()}), INT64_MAX);
	EXPECT_EQ(kTwitter.compose({0, 0, 1}), 1);
	EXPECT_EQ(kTwitter.compose({0, 1, 0}), int64_t{1} << 12);
	EXPECT_EQ(kTwitter.compose({1, 0, 0}), int64_t{1} << 22);
}

TEST(Layout, TwitterWorkedExample) {
	// 2017-09-20 13:43:08.849 UTC, datacenter 17, worker 25, sequence 0.
	const Parts parts{1505914988849 - kTwitterEpochMs, 17 * 32 + 25, 0};
	EXPECT_EQ(kTwitter.compose(parts), 910499571847892992);
	const Parts back = kTwitter.decompose(910499571847892992);
	EXPECT_EQ(back.time + kTwitterEpochMs, 1505914988849);
	EXPECT_EQ(back.node, 569);
	EXPECT_EQ(back.seq, 0);
}

TEST(Layout, RoundTrips) {
	std::mt19937_64 rng(42);
	for (int i = 0; i < 100000; ++i) {
		const int64_t id = static_cast<int64_t>(rng() >> 1);
		EXPECT_EQ(kTwitter.compose(kTwitter.decompose(id)), id);
		const Parts p{static_cast<int64_t>(rng() & kTwitter.max_time()), static_cast<int32_t>(rng() & kTwitter.max_node()),
		              static_cast<int32_t>(rng() & kTwitter.max_seq())};
		const Parts q = kTwitter.decompose(kTwitter.compose(p));
		EXPECT_EQ(q.time, p.time);
		EXPECT_EQ(q.node, p.node);
		EXPECT_EQ(q.seq, p.seq);
	}
}

TEST(Next, FirstIdCarriesClockNodeAndZeroSequence) {
	GeneratorState state = fresh();
	const Parts p = kTwitter.decompose(issue(state, kT0, borrow()));
	EXPECT_EQ(p.time, kT0 - kEpoch);
	EXPECT_EQ(p.node, kNode);
	EXPECT_EQ(p.seq, 0);
}

TEST(Next, NewMillisecondRestartsSequence) {
	GeneratorState state = fresh();
	issue(state, kT0, borrow());
	issue(state, kT0, borrow());
	const Parts p = kTwitter.decompose(issue(state, kT0 + 5, borrow()));
	EXPECT_EQ(p.time, kT0 + 5 - kEpoch);
	EXPECT_EQ(p.seq, 0);
}

TEST(Next, TheReservedBackfillNodeIssuesNothing) {
	GeneratorState state = fresh();
	Policy policy = borrow();
	policy.reserved_node = 1023;
	EXPECT_EQ(step_at(state, kT0, policy, 1023).status, Status::NodeInvalid);
	EXPECT_EQ(kTwitter.decompose(issue(state, kT0, policy, 1022)).node, 1022);
}

TEST(Next, InvalidNodeIssuesNothing) {
	GeneratorState state = fresh();
	EXPECT_EQ(step_at(state, kT0, borrow(), -1).status, Status::NodeInvalid);
	EXPECT_EQ(step_at(state, kT0, borrow(), kTwitter.max_node() + 1).status, Status::NodeInvalid);
	EXPECT_EQ(state.last_id, -1);
	EXPECT_EQ(kTwitter.decompose(issue(state, kT0, borrow(), kTwitter.max_node())).node, kTwitter.max_node());
}

TEST(Exhaustion, FullMillisecondBorrowsTheNext) {
	GeneratorState state = fresh();
	int64_t prev = -1;
	for (int32_t i = 0; i <= kTwitter.max_seq(); ++i) {
		const int64_t id = issue(state, kT0, borrow());
		EXPECT_EQ(kTwitter.decompose(id).seq, i);
		EXPECT_GT(id, prev);
		prev = id;
	}
	const Parts p = kTwitter.decompose(issue(state, kT0, borrow()));
	EXPECT_EQ(p.time, kT0 + 1 - kEpoch);
	EXPECT_EQ(p.seq, 0);
}

TEST(Exhaustion, BorrowingStopsAtTheDriftBoundThenWaits) {
	GeneratorState state = fresh();
	const Policy policy = borrow(3);
	// Four borrowed milliseconds (now .. now+3) of 4,096 IDs each, all at one clock reading.
	for (int i = 0; i < 4 * (kTwitter.max_seq() + 1); ++i)
		issue(state, kT0, policy);
	EXPECT_EQ(kTwitter.decompose(state.last_id).time, kT0 + 3 - kEpoch);
	const Step step = state.next(kT0, kNode, policy);
	EXPECT_EQ(step.status, Status::Wait);
	EXPECT_EQ(step.wait_ticks, 1);
	// Once the clock moves on, it continues.
	EXPECT_EQ(kTwitter.decompose(issue(state, kT0 + 1, policy)).time, kT0 + 4 - kEpoch);
}

TEST(Exhaustion, WaitPolicyWaitsForTheNextMillisecond) {
	GeneratorState state = fresh();
	for (int32_t i = 0; i <= kTwitter.max_seq(); ++i)
		issue(state, kT0, wait());
	const Step step = step_at(state, kT0, wait(), kNode);
	EXPECT_EQ(step.status, Status::Wait);
	EXPECT_EQ(step.wait_ticks, 1);
	EXPECT_EQ(kTwitter.decompose(issue(state, kT0 + 1, wait())).seq, 0);
}

// The last ID before the clock steps back by `back` ms, and the step taken right after.
struct StepBack {
	int64_t before;
	Step after;
};
StepBack step_back(GeneratorState &state, int64_t back, const Policy &policy) {
	const int64_t before = issue(state, kT0, policy);
	return StepBack{before, step_at(state, kT0 - back, policy)};
}

TEST(ClockBack, OneMillisecondBorrowContinuesUpward) {
	GeneratorState state = fresh();
	const auto [before, step] = step_back(state, 1, borrow());
	ASSERT_EQ(step.status, Status::Issued);
	EXPECT_GT(step.id, before);
	EXPECT_EQ(step.regressed_ticks, 1);
	EXPECT_EQ(step.drift_ticks, 1);
	const Parts p = kTwitter.decompose(step.id);
	EXPECT_EQ(p.time, kT0 - kEpoch); // stays on the last issued millisecond
	EXPECT_EQ(p.seq, 1);
}

TEST(ClockBack, OneSecondIsWithinTheDefaultBound) {
	GeneratorState state = fresh();
	const auto [before, step] = step_back(state, 1000, borrow());
	ASSERT_EQ(step.status, Status::Issued);
	EXPECT_GT(step.id, before);
	EXPECT_EQ(step.drift_ticks, 1000);
	EXPECT_EQ(step.regressed_ticks, 1000);
	// Only the first reading after the step reports the regression.
	const Step later = step_at(state, kT0 - 999, borrow(), kNode);
	EXPECT_EQ(later.status, Status::Issued);
	EXPECT_EQ(later.regressed_ticks, 0);
	EXPECT_GT(later.id, step.id);
}

TEST(ClockBack, OneSecondPastASmallerBoundIsAnError) {
	GeneratorState state = fresh();
	const int64_t last = issue(state, kT0, borrow(999));
	const Step step = step_at(state, kT0 - 1000, borrow(999), kNode);
	EXPECT_EQ(step.status, Status::ClockBehind);
	EXPECT_EQ(step.drift_ticks, 1000);
	EXPECT_FALSE(step.behind_floor); // the last ID is what the clock lags
	EXPECT_EQ(state.last_id, last);
}

TEST(ClockBack, OneHourIsAnErrorUntilTheClockCatchesUp) {
	GeneratorState state = fresh();
	const Step step = step_back(state, 3600 * 1000, borrow()).after;
	EXPECT_EQ(step.status, Status::ClockBehind);
	EXPECT_EQ(step.drift_ticks, 3600 * 1000);
	EXPECT_EQ(step.regressed_ticks, 3600 * 1000);
	const int64_t last = state.last_id;
	// Still an error while the lag exceeds the bound...
	EXPECT_EQ(step_at(state, kT0 - 1001, borrow(), kNode).status, Status::ClockBehind);
	EXPECT_EQ(state.last_id, last);
	// ...and fine within it again, above the last ID.
	EXPECT_GT(issue(state, kT0 - 1000, borrow()), last);
}

TEST(ClockBack, WaitPolicyWaitsOutStepsOfOneMillisecondToOneSecond) {
	for (const int64_t back : {1, 250, 1000}) {
		GeneratorState state = fresh();
		const auto [before, step] = step_back(state, back, wait());
		EXPECT_EQ(step.status, Status::Wait);
		EXPECT_EQ(step.wait_ticks, back);
		EXPECT_EQ(step.regressed_ticks, back);
		// Once the clock is back at the last issued millisecond, the sequence continues there.
		const int64_t id = issue(state, kT0, wait());
		EXPECT_GT(id, before);
		EXPECT_EQ(kTwitter.decompose(id).time, kT0 - kEpoch);
		EXPECT_EQ(kTwitter.decompose(id).seq, 1);
	}
}

TEST(ClockBack, WaitPolicyErrorsPastTheBound) {
	GeneratorState state = fresh();
	EXPECT_EQ(step_back(state, 3600 * 1000, wait()).after.status, Status::ClockBehind);
}

TEST(ClockBack, ZeroBoundRefusesAnyStepButWaitsOnExhaustion) {
	GeneratorState state = fresh();
	EXPECT_EQ(step_back(state, 1, borrow(0)).after.status, Status::ClockBehind);
	for (int32_t i = 0; i < kTwitter.max_seq(); ++i)
		issue(state, kT0, borrow(0));
	EXPECT_EQ(step_at(state, kT0, borrow(0), kNode).status, Status::Wait);
}

TEST(NodeChange, MovesToTheNextMillisecondSoIdsKeepRising) {
	GeneratorState state = fresh();
	issue(state, kT0, borrow(), 9);
	const int64_t before = state.last_id;
	const Step step = step_at(state, kT0, borrow(), 3);
	ASSERT_EQ(step.status, Status::Issued);
	EXPECT_EQ(step.previous_node, 9);
	EXPECT_GT(step.id, before);
	const Parts p = kTwitter.decompose(step.id);
	EXPECT_EQ(p.node, 3);
	EXPECT_EQ(p.time, kT0 + 1 - kEpoch);
	EXPECT_EQ(p.seq, 0);
}

TEST(EndOfTime, LastMillisecondWorksThenTheFieldIsExhausted) {
	GeneratorState state = fresh();
	const int64_t last_ms = kEpoch + kTwitter.max_time();
	const Parts p = kTwitter.decompose(issue(state, last_ms, borrow(), kTwitter.max_node()));
	EXPECT_EQ(p.time, kTwitter.max_time());
	for (int32_t i = 0; i < kTwitter.max_seq(); ++i)
		issue(state, last_ms, borrow(), kTwitter.max_node());
	EXPECT_EQ(state.last_id, INT64_MAX); // the largest ID there is
	EXPECT_EQ(step_at(state, last_ms, borrow(), kTwitter.max_node()).status, Status::TimeExhausted);
	GeneratorState later = fresh();
	EXPECT_EQ(step_at(later, last_ms + 1, borrow(), kNode).status, Status::TimeExhausted);
	EXPECT_EQ(later.last_id, -1);
}

TEST(Epoch, ClockBeforeTheEpochIssuesNothing) {
	GeneratorState state = fresh();
	EXPECT_EQ(step_at(state, kEpoch - 1, borrow(), kNode).status, Status::BeforeEpoch);
	EXPECT_EQ(kTwitter.decompose(issue(state, kEpoch, borrow())).time, 0);
}

TEST(Epoch, Parsing) {
	int64_t v = 0;
	EXPECT_TRUE(parse_epoch("1288834974657", v));
	EXPECT_EQ(v, kTwitterEpochMs);
	EXPECT_TRUE(parse_epoch("0", v));
	EXPECT_EQ(v, 0);
	EXPECT_TRUE(parse_epoch("-5", v)); // parses; epoch_problem rejects it
	for (const char *bad : {"", " 1", "1 ", "12a", "1.5", "+1", "2010-11-04", "99999999999999999999"})
		EXPECT_FALSE(parse_epoch(bad, v)) << bad;
}

TEST(Epoch, Validation) {
	EXPECT_EQ(epoch_problem(kTwitter, kTwitterEpochMs, kT0), nullptr);
	EXPECT_EQ(epoch_problem(kTwitter, kT0, kT0), nullptr);
	EXPECT_NE(epoch_problem(kTwitter, -1, kT0), nullptr);
	EXPECT_NE(epoch_problem(kTwitter, kT0 + 1, kT0), nullptr);
	const int64_t end_of_time = kTwitterEpochMs + kTwitter.max_time(); // 2080-07-10 17:30:30.208 UTC
	EXPECT_EQ(epoch_problem(kTwitter, kTwitterEpochMs, end_of_time), nullptr);
	EXPECT_NE(epoch_problem(kTwitter, kTwitterEpochMs, end_of_time + 1), nullptr);
}

TEST(Reservation, FirstIdAsksForOneLeadThenIdsWithinItDoNot) {
	GeneratorState state = fresh();
	const Step first = state.next(kT0, kNode, borrow());
	ASSERT_EQ(first.status, Status::Reserve);
	EXPECT_EQ(first.reserve_tick, kT0 - kEpoch + kMinLeadMs); // one lead, whatever the drift bound
	EXPECT_EQ(state.next(kT0, kNode, borrow(3600000)).reserve_tick, kT0 - kEpoch + kMinLeadMs);
	EXPECT_EQ(state.last_id, -1);
	state.reserved(first.reserve_tick);
	for (int64_t ms = 0; ms <= kMinLeadMs; ms += 50)
		EXPECT_EQ(state.next(kT0 + ms, kNode, borrow()).status, Status::Issued) << ms;
	const Step past = state.next(kT0 + kMinLeadMs + 1, kNode, borrow());
	ASSERT_EQ(past.status, Status::Reserve);
	EXPECT_EQ(past.reserve_tick, kT0 + kMinLeadMs + 1 - kEpoch + kMinLeadMs);
	EXPECT_EQ(state.counters.reservations, 1);
}

TEST(Reservation, LeadIsFourWritesBetweenItsBounds) {
	EXPECT_EQ(reservation_lead_ms(0), kMinLeadMs);
	EXPECT_EQ(reservation_lead_ms(50000), kMinLeadMs); // 4 x 50 ms = 200 ms
	EXPECT_EQ(reservation_lead_ms(300000), 1200);      // an fsync delayed 300 ms
	EXPECT_EQ(reservation_lead_ms(300001), 1201);      // rounded up
	EXPECT_EQ(reservation_lead_ms(60000000), kMaxLeadMs);
	Policy slow = borrow();
	slow.lead_ms = reservation_lead_ms(300000);
	GeneratorState state = fresh();
	EXPECT_EQ(state.next(kT0, kNode, slow).reserve_tick, kT0 - kEpoch + 1200);
}

TEST(Reservation, LatencyEstimateRisesAtOnceAndFallsSlowly) {
	EXPECT_EQ(next_write_latency_us(0, 300000), 300000);
	EXPECT_EQ(next_write_latency_us(1000, 300000), 300000);
	EXPECT_EQ(next_write_latency_us(300000, 0), 262500); // an eighth of the way down
	int64_t estimate = 300000;
	for (int i = 0; i < 200; ++i)
		estimate = next_write_latency_us(estimate, 100);
	EXPECT_EQ(estimate, 100); // reaches a steady fast disk
	EXPECT_EQ(next_write_latency_us(100, -5), 87);
	// A stall longer than the longest lead counts as that long, so the estimate stays a valid record.
	EXPECT_EQ(next_write_latency_us(0, 60000000), kMaxWriteLatencyUs);
	EXPECT_EQ(reservation_lead_ms(next_write_latency_us(0, 60000000)), kMaxLeadMs);
}

TEST(Reservation, AnIdBorrowedPastTheLeadReservesALeadPastItsTick) {
	// The clock stepped back 500 ms, and blocks of a whole tick each use up the ticks up to the
	// reservation (one lead past the last ID). The next tick, borrowed, is reserved with a lead past
	// it: 0.4.0 reserved that tick alone, so blocks at the drift bound forced one write a tick. A
	// 16 s bound lets blocks borrow their 700 ms (a sixteenth of it: 1 s).
	GeneratorState state = fresh();
	const Policy policy = borrow(16000);
	issue(state, kT0 + 500, policy);
	ASSERT_EQ(state.reserved_tick, kT0 + 700 - kEpoch);
	for (int64_t tick = 501; tick <= 700; ++tick)
		ASSERT_EQ(state.next(kT0, kNode, policy, kTwitter.max_seq() + 1).status, Status::Issued) << tick;
	const Step next = state.next(kT0, kNode, policy, kTwitter.max_seq() + 1);
	ASSERT_EQ(next.status, Status::Reserve);
	EXPECT_EQ(next.reserve_tick, kT0 + 701 - kEpoch + kMinLeadMs);
}

TEST(Reservation, BlocksAtTheirBorrowBoundWriteOnceALead) {
	// Whole-tick blocks as fast as they come, the clock moving 1 ms a step: IDs reach the blocks'
	// share of the drift bound (1 s of a 16 s bound) and stay there. Reservations then come one a
	// lead (200 ticks), not one a tick.
	GeneratorState state = fresh();
	const Policy policy = borrow(16000);
	int64_t writes = 0;
	for (int64_t ms = 0; ms < 5000; ++ms)
		for (int block = 0; block < 20; ++block) {
			Step step = state.next(kT0 + ms, kNode, policy, kTwitter.max_seq() + 1);
			if (step.status == Status::Reserve) {
				state.reserved(step.reserve_tick);
				++writes;
				step = state.next(kT0 + ms, kNode, policy, kTwitter.max_seq() + 1);
			}
			if (step.status == Status::Wait)
				break;
			ASSERT_EQ(step.status, Status::Issued);
		}
	EXPECT_EQ(state.last_id >> kTwitter.time_shift(), kT0 + 4999 + 1000 - kEpoch); // at the bound
	EXPECT_LE(writes, (5000 + 1000) / kMinLeadMs + 2);
}

TEST(Reservation, RepeatedCrashRestartsNeverLeadTheClockByMoreThanOneLead) {
	// Each cycle: restart above what the file holds, issue, "crash". With the clock standing
	// still, the reservation creeps up one tick per cycle at most; it never compounds leads.
	int64_t on_disk = -1;
	for (int cycle = 0; cycle < 50; ++cycle) {
		GeneratorState state = fresh();
		if (on_disk >= 0)
			state.resume_above(on_disk);
		issue(state, kT0, borrow(60000));
		on_disk = state.reserved_tick;
	}
	EXPECT_LE(on_disk, kT0 - kEpoch + kMinLeadMs + 50);
	// A clock then set back 10 s, well within the 60 s bound, still issues.
	GeneratorState state = fresh();
	state.resume_above(on_disk);
	EXPECT_EQ(step_at(state, kT0 - 10000, borrow(60000)).status, Status::Issued);
}

TEST(Renewal, RenewsHalfALeadBeforeTheEndWhileIdsFlow) {
	const Policy policy = borrow();
	GeneratorState state = fresh();
	issue(state, kT0, policy); // reserved up to kT0 + 200
	EXPECT_EQ(state.reserved_tick, kT0 - kEpoch + 200);
	const Renewal early = state.renewal(kT0, policy);
	EXPECT_EQ(early.target_tick, -1);
	EXPECT_EQ(early.due_unix_ms, kT0 + 101); // when less than 100 ms is left
	issue(state, kT0 + 100, policy);
	EXPECT_EQ(state.renewal(kT0 + 100, policy).target_tick, -1); // exactly half left: not yet
	issue(state, kT0 + 101, policy);
	const Renewal due = state.renewal(kT0 + 101, policy);
	EXPECT_EQ(due.target_tick, kT0 + 101 - kEpoch + 200);
	state.reserved(due.target_tick);
	EXPECT_EQ(state.renewal(kT0 + 101, policy).due_unix_ms, kT0 + 202);
}

TEST(Renewal, AnIdleServerIsNotRenewedUntilWoken) {
	const Policy policy = borrow();
	GeneratorState idle = fresh();
	EXPECT_EQ(idle.renewal(kT0, policy).target_tick, -1); // nothing issued since start
	EXPECT_EQ(idle.renewal(kT0, policy).due_unix_ms, -1);
	issue(idle, kT0, policy);
	const Renewal later = idle.renewal(kT0 + 5000, policy); // the last ID is 5 s old
	EXPECT_EQ(later.target_tick, -1);
	EXPECT_EQ(later.due_unix_ms, -1);
}

TEST(Floor, RestartResumesAboveTheRecordedReservation) {
	GeneratorState state = fresh();
	const int64_t floor = kT0 - kEpoch + 300; // a reservation 300 ms ahead of the clock
	state.resume_above(floor);
	const Step step = step_at(state, kT0, borrow());
	ASSERT_EQ(step.status, Status::Issued);
	EXPECT_EQ(kTwitter.decompose(step.id).time, floor + 1);
	EXPECT_EQ(step.drift_ticks, 300);
	EXPECT_EQ(step.previous_node, -1);         // a floor is not an ID: no node change to report
	EXPECT_EQ(state.counters.reservations, 1); // the floor itself was durable up to 300 ms
}

TEST(Floor, WaitPolicyWaitsOutTheFloor) {
	GeneratorState state = fresh();
	state.resume_above(kT0 - kEpoch + 300);
	const Step step = step_at(state, kT0, wait());
	EXPECT_EQ(step.status, Status::Wait);
	EXPECT_EQ(step.wait_ticks, 301);
}

TEST(Floor, AClockFarBehindTheFloorIsAnError) {
	GeneratorState state = fresh();
	state.resume_above(kT0 - kEpoch);
	const Step step = step_at(state, kT0 - 30000, borrow());
	EXPECT_EQ(step.status, Status::ClockBehind);
	EXPECT_EQ(step.drift_ticks, 30000);
	EXPECT_TRUE(step.behind_floor); // no ID issued yet: the floor is what the clock lags
	// With a bound that covers it, IDs continue above the floor.
	const Step wide = step_at(state, kT0 - 30000, borrow(60000));
	ASSERT_EQ(wide.status, Status::Issued);
	EXPECT_EQ(kTwitter.decompose(wide.id).time, kT0 - kEpoch + 1);
}

TEST(Floor, OneLeadAndASecondBeyondTheBoundAreWaitedOutNotAnError) {
	// IDs borrowed the whole 1 s bound and the reservation reached one lead (200 ms) further:
	// after a crash the floor is 1.2 s ahead of the clock.
	GeneratorState state = fresh();
	state.resume_above(kT0 - kEpoch + 1200);
	const Step step = step_at(state, kT0, borrow());
	EXPECT_EQ(step.status, Status::Wait);
	EXPECT_EQ(step.wait_ticks, 201);
	// pg_control's floor rounds its checkpoint's time up to the next second: one more is waited out.
	GeneratorState rounded = fresh();
	rounded.resume_above(kT0 - kEpoch + 2200);
	EXPECT_EQ(step_at(rounded, kT0, borrow()).status, Status::Wait);
	GeneratorState further = fresh();
	further.resume_above(kT0 - kEpoch + 2201);
	EXPECT_EQ(step_at(further, kT0, borrow()).status, Status::ClockBehind);
}

TEST(Floor, IssuedIdsAboveTheFloorKeepTheirOwnOrder) {
	GeneratorState state = fresh();
	const int64_t before = issue(state, kT0 + 50, borrow());
	state.resume_above(kT0 - kEpoch); // a floor below the last ID changes nothing
	EXPECT_GT(issue(state, kT0 + 50, borrow()), before);
	EXPECT_EQ(kTwitter.decompose(state.last_id).seq, 1);
}

TEST(Counters, CountIssuedExhaustionsRegressionsDriftAndReservations) {
	GeneratorState state = fresh();
	for (int32_t i = 0; i <= kTwitter.max_seq() + 1; ++i) // one full millisecond and one more ID
		issue(state, kT0, borrow());
	issue(state, kT0 - 40, borrow()); // a step back of 40 ms
	issue(state, kT0 - 45, borrow()); // and another of 5 ms
	EXPECT_EQ(state.counters.issued, kTwitter.max_seq() + 4);
	EXPECT_EQ(state.counters.exhaustions, 1);
	EXPECT_EQ(state.counters.regressions, 2);
	EXPECT_EQ(state.counters.max_drift_ticks, 46); // the last ID is at kT0 + 1, the clock at kT0 - 45
	EXPECT_EQ(state.counters.reservations, 1);
}

// --- Time ranges to ID ranges.

constexpr int64_t kUs0 = kT0 * 1000; // a Unix microsecond on a millisecond boundary
constexpr int64_t kMs0 = kT0 - kEpoch;

TimeBound at(int64_t unix_us, bool inclusive) {
	return TimeBound{false, inclusive, unix_us};
}
constexpr TimeBound kNone{true, false, 0};

IdSpan span_of(TimeBound lower, TimeBound upper) {
	IdSpan span{};
	EXPECT_EQ(id_span(lower, upper, kTwitter, kEpoch, span), BoundStatus::Ok);
	return span;
}

TEST(IdSpan, InclusiveAndExclusiveEndsOnWholeMilliseconds) {
	IdSpan s = span_of(at(kUs0, true), at(kUs0 + 5000, false)); // [t, t+5ms)
	EXPECT_EQ(s.first, kTwitter.first_id_of(kMs0));
	EXPECT_EQ(s.last, kTwitter.last_id_of(kMs0 + 4));
	s = span_of(at(kUs0, false), at(kUs0 + 5000, true)); // (t, t+5ms]
	EXPECT_EQ(s.first, kTwitter.first_id_of(kMs0 + 1));
	EXPECT_EQ(s.last, kTwitter.last_id_of(kMs0 + 5));
}

TEST(IdSpan, SubMillisecondEndsRoundInward) {
	IdSpan s = span_of(at(kUs0 + 500, true), at(kUs0 + 5500, true)); // [t+0.5ms, t+5.5ms]
	EXPECT_EQ(s.first, kTwitter.first_id_of(kMs0 + 1));
	EXPECT_EQ(s.last, kTwitter.last_id_of(kMs0 + 5));
	s = span_of(at(kUs0 + 500, false), at(kUs0 + 5500, false)); // (t+0.5ms, t+5.5ms)
	EXPECT_EQ(s.first, kTwitter.first_id_of(kMs0 + 1));
	EXPECT_EQ(s.last, kTwitter.last_id_of(kMs0 + 5));
	s = span_of(at(kUs0 + 200, true), at(kUs0 + 700, true)); // no whole millisecond inside
	EXPECT_GT(s.first, s.last);
}

TEST(IdSpan, InfiniteAndEmptyRanges) {
	IdSpan s = span_of(kNone, kNone);
	EXPECT_EQ(s.first, 0);
	EXPECT_EQ(s.last, INT64_MAX);
	s = span_of(kNone, at(kUs0, false));
	EXPECT_EQ(s.first, 0);
	EXPECT_EQ(s.last, kTwitter.last_id_of(kMs0 - 1));
	s = span_of(at(kUs0, true), kNone);
	EXPECT_EQ(s.first, kTwitter.first_id_of(kMs0));
	EXPECT_EQ(s.last, INT64_MAX);
	EXPECT_GT(span_of(at(kUs0, true), at(kUs0, false)).first, span_of(at(kUs0, true), at(kUs0, false)).last);
	const IdSpan point = span_of(at(kUs0, true), at(kUs0, true)); // [t, t]: one millisecond
	EXPECT_EQ(point.first, kTwitter.first_id_of(kMs0));
	EXPECT_EQ(point.last, kTwitter.last_id_of(kMs0));
}

TEST(IdSpan, BoundsOutsideTheLayoutAreRefused) {
	IdSpan s{};
	const int64_t epoch_us = kEpoch * 1000, end_us = (kEpoch + kTwitter.max_time() + 1) * 1000;
	EXPECT_EQ(id_span(at(epoch_us - 1, true), kNone, kTwitter, kEpoch, s), BoundStatus::BeforeEpoch);
	EXPECT_EQ(id_span(kNone, at(epoch_us - 1, true), kTwitter, kEpoch, s), BoundStatus::BeforeEpoch);
	EXPECT_EQ(id_span(kNone, at(end_us, false), kTwitter, kEpoch, s), BoundStatus::AfterEnd);
	ASSERT_EQ(id_span(at(epoch_us, true), at(end_us - 1, true), kTwitter, kEpoch, s), BoundStatus::Ok);
	EXPECT_EQ(s.first, 0);
	EXPECT_EQ(s.last, INT64_MAX);
	ASSERT_EQ(id_span(at(epoch_us, false), at(epoch_us, false), kTwitter, kEpoch, s), BoundStatus::Ok);
	EXPECT_GT(s.first, s.last);
}

TEST(IdSpan, AFilterClampsEndsBeyondTheLayout) {
	const int64_t epoch_us = kEpoch * 1000, end_us = (kEpoch + kTwitter.max_time() + 1) * 1000;
	const TimeBound before = at(epoch_us - 1, true), after = at(end_us, true), inside = at(kUs0, true);
	// An end beyond the layout on its own side excludes nothing: it becomes unbounded.
	TimeBound lower = before, upper = after;
	ASSERT_TRUE(clamp_to_layout(lower, upper, kTwitter, kEpoch));
	EXPECT_TRUE(lower.infinite);
	EXPECT_TRUE(upper.infinite);
	IdSpan s{};
	ASSERT_EQ(id_span(lower, upper, kTwitter, kEpoch, s), BoundStatus::Ok);
	EXPECT_EQ(s.first, 0);
	EXPECT_EQ(s.last, INT64_MAX);
	// A finite end inside the layout is kept as it is.
	lower = before, upper = inside;
	ASSERT_TRUE(clamp_to_layout(lower, upper, kTwitter, kEpoch));
	EXPECT_TRUE(lower.infinite);
	EXPECT_FALSE(upper.infinite);
	EXPECT_EQ(upper.unix_us, kUs0);
	// An end beyond the layout on the other side leaves no ID in the range.
	lower = after, upper = TimeBound{true, false, 0};
	EXPECT_FALSE(clamp_to_layout(lower, upper, kTwitter, kEpoch));
	lower = TimeBound{true, false, 0}, upper = before;
	EXPECT_FALSE(clamp_to_layout(lower, upper, kTwitter, kEpoch));
	// The edges: the epoch itself and the last microsecond of the last tick are inside.
	lower = at(epoch_us, true), upper = at(end_us - 1, true);
	ASSERT_TRUE(clamp_to_layout(lower, upper, kTwitter, kEpoch));
	EXPECT_FALSE(lower.infinite);
	EXPECT_FALSE(upper.infinite);
}

// For random IDs and ranges: an ID is in the span exactly when its time satisfies the range.
TEST(IdSpan, MatchesTheTimePredicateExactly) {
	std::mt19937_64 rng(11);
	std::uniform_int_distribution<int64_t> offset_us(-3000, 3000);
	for (int i = 0; i < 200000; ++i) {
		const TimeBound lower{rng() % 8 == 0, rng() % 2 == 0, kUs0 + offset_us(rng)};
		const TimeBound upper{rng() % 8 == 0, rng() % 2 == 0, kUs0 + offset_us(rng)};
		const int64_t id = kTwitter.compose(Parts{kMs0 + offset_us(rng) / 1000,
		                                          static_cast<int32_t>(rng() & kTwitter.max_node()),
		                                          static_cast<int32_t>(rng() & kTwitter.max_seq())});
		const int64_t t = (kTwitter.decompose(id).time + kEpoch) * 1000;
		const bool above = lower.infinite || (lower.inclusive ? t >= lower.unix_us : t > lower.unix_us);
		const bool below = upper.infinite || (upper.inclusive ? t <= upper.unix_us : t < upper.unix_us);
		const IdSpan s = span_of(lower, upper);
		ASSERT_EQ(s.first <= id && id <= s.last, above && below) << i;
	}
}

// On every step of a random clock walk, the fast path either declines without touching the
// state, or issues the ID the general step issues and leaves the state exactly as it would.
TEST(FastPath, MatchesTheGeneralStepExactly) {
	std::mt19937_64 rng(5);
	Policy sonyflake = borrow(50), js53 = wait(50);
	sonyflake.layout = kSonyflake;
	js53.layout = kJs53;
	for (Policy policy : {borrow(50), wait(50), borrow(0), sonyflake, js53}) {
		policy.reserved_node = policy.layout.max_node() - 23;
		GeneratorState state = fresh();
		int64_t clock = kT0;
		int fast = 0;
		std::uniform_int_distribution<int> move(-40, 4);
		for (int i = 0; i < 300000; ++i) {
			const int r = move(rng);
			clock += r < -36 ? (r + 36) * 20 : (r > 0 ? r : 0); // mostly still or forward, sometimes 20-80 ms back
			const int32_t node = i % 50000 == 0 ? static_cast<int32_t>(rng() % (policy.layout.max_node() + 1))
			                                    : 7 + (i / 100000);
			if (i == 150001) // not on a node change, where the fast path declines anyway
				state.resume_above(policy.layout.decompose(std::max<int64_t>(state.last_id, 0)).time + 3); // a floor
			GeneratorState general = state;
			int64_t id = -1;
			if (state.issue_fast(clock, node, policy, id)) {
				++fast;
				const Step step = general.next(clock, node, policy);
				ASSERT_EQ(step.status, Status::Issued) << i;
				ASSERT_EQ(step.id, id) << i;
				ASSERT_EQ(std::memcmp(&state, &general, sizeof(state)), 0) << i;
				// Nothing the general step would have reported is lost.
				ASSERT_EQ(step.previous_node, node) << i;
				ASSERT_EQ(step.regressed_ticks, 0) << i;
			} else {
				ASSERT_EQ(std::memcmp(&state, &general, sizeof(state)), 0)
				    << "a declined fast path changed the state " << i;
				const Step step = step_at(state, clock, policy, node);
				if (step.status == Status::Wait)
					clock += step.wait_ticks * policy.layout.unit_ms;
				else if (step.status == Status::ClockBehind)
					clock += step.drift_ticks * policy.layout.unit_ms;
			}
		}
		EXPECT_GT(fast, 100000); // the common cases really are common
	}
}

// A clock that jitters, steps back and forward, and stalls: whatever it does,
// every issued ID is greater than the one before and covered by a reservation,
// and waits and errors happen only when the clock lags the last ID.
TEST(Property, RandomClockWalkNeverRepeatsOrDecreases) {
	std::mt19937_64 rng(7);
	for (const Policy &policy : {borrow(50), wait(50), borrow(0)}) {
		GeneratorState state = fresh();
		int64_t clock = kT0;
		int64_t prev = -1;
		std::uniform_int_distribution<int> move(-120, 3);
		for (int i = 0; i < 300000; ++i) {
			const int r = move(rng);
			if (r < -100)
				clock -= (r + 100) * -5; // a step back of 5..100 ms
			else if (r >= 0)
				clock += r;
			const Step step = state.next(clock, static_cast<int32_t>(i / 100000), policy);
			switch (step.status) {
			case Status::Reserve:
				ASSERT_GT(step.reserve_tick, state.reserved_tick);
				state.reserved(step.reserve_tick);
				break;
			case Status::Issued:
				ASSERT_GT(step.id, prev);
				ASSERT_LE(kTwitter.decompose(step.id).time, state.reserved_tick);
				ASSERT_LE(kTwitter.decompose(step.id).time,
				          clock - kEpoch + (policy.clock == ClockPolicy::Borrow ? policy.max_drift_ms : 0));
				prev = step.id;
				break;
			case Status::Wait:
				ASSERT_GT(step.wait_ticks, 0);
				clock += step.wait_ticks;
				break;
			case Status::ClockBehind:
				ASSERT_GT(step.drift_ticks, policy.max_drift_ms);
				clock += step.drift_ticks;
				break;
			default:
				FAIL() << "unexpected status " << static_cast<int>(step.status);
			}
		}
	}
}

// --- Waiting for the clock: short waits sleep, then spin the last kClockSpinUs; long ones sleep on the latch.

TEST(ClockWait, NothingToWaitForMeansNoSleepAndNoSpin) {
	for (int64_t remaining : {int64_t{0}, int64_t{-1}, int64_t{-5000}}) {
		const ClockWait plan = plan_clock_wait(remaining);
		EXPECT_FALSE(plan.on_latch);
		EXPECT_EQ(plan.sleep_us, 0);
	}
}

TEST(ClockWait, TheRestOfAMillisecondSleepsThenSpinsToTheTick) {
	// At the ceiling a backend fills a tick in about 0.5 ms and waits out the rest.
	const ClockWait plan = plan_clock_wait(600);
	EXPECT_FALSE(plan.on_latch);
	EXPECT_EQ(plan.sleep_us, 600 - kClockSpinUs); // the spin on the clock ends the wait at the tick
}

TEST(ClockWait, AWaitShorterThanTheSpinIsAllSpin) {
	const ClockWait plan = plan_clock_wait(kClockSpinUs / 2);
	EXPECT_FALSE(plan.on_latch);
	EXPECT_EQ(plan.sleep_us, 0);
}

TEST(ClockWait, LongWaitsSleepOnTheLatchWithoutSpinning) {
	for (int64_t remaining : {kLongClockWaitUs, int64_t{999999}}) {
		const ClockWait plan = plan_clock_wait(remaining);
		EXPECT_TRUE(plan.on_latch);
		EXPECT_EQ(plan.sleep_us, remaining);
	}
	EXPECT_FALSE(plan_clock_wait(kLongClockWaitUs - 1).on_latch);
}

// Drives the generator through a few ticks at its ceiling with an injected clock that advances
// exactly as the wait plan says: every Wait lands on the next tick, so no tick is skipped and
// each holds max_seq + 1 IDs.
TEST(ClockWait, WaitingAsPlannedFillsEveryTickAtTheCeiling) {
	GeneratorState state = fresh();
	const Policy policy = wait();
	int64_t now_us = kT0 * 1000 + 400; // 0.4 ms into a tick
	int64_t issued = 0, waits = 0;
	const int64_t first_tick = now_us / 1000;
	while (now_us / 1000 < first_tick + 3) {
		Step step = state.next(now_us / 1000, 1, policy);
		if (step.status == Status::Reserve) {
			state.reserved(step.reserve_tick);
			continue;
		}
		if (step.status == Status::Wait) {
			const int64_t tick_start_us = (now_us / 1000 + step.wait_ticks) * 1000;
			const ClockWait plan = plan_clock_wait(tick_start_us - now_us);
			EXPECT_LE(now_us + plan.sleep_us, tick_start_us); // the sleep never overshoots the tick
			now_us = tick_start_us;                            // the spin on the clock ends at it
			++waits;
			continue;
		}
		ASSERT_EQ(step.status, Status::Issued);
		++issued; // issuing takes no time on this clock
	}
	EXPECT_EQ(waits, 3);
	EXPECT_EQ(issued, 3 * (kTwitter.max_seq() + 1));
}

} // namespace
} // namespace snowflake
