// Integration tests of a clock that steps back, injected with
// snowflake_inject_clock_offset(): steps of 10 ms, 900 ms and 10 s while four
// connections generate (no duplicate or decrease, 58000 beyond the drift
// bound), a clock held behind the last ID while a call waits (it gives up with
// 58000 instead of spinning), a step back of 30 s while calls wait a few
// hundred microseconds for the next tick (0.4.0 spun on the wall clock until
// it came back, about 46 s: the call now ends at once), and a waiting call
// cancelled by the client.
#include "server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <thread>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

TEST(ClockFaults, ClockSteppingBackWhileWaitingGivesUpInsteadOfSpinning) {
	Server server("stuck_clock", {kPreload, "snowflake.node = 4", "snowflake.fault_injection = on",
	                              "snowflake.clock_policy = wait", "snowflake.max_clock_drift = 1000"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_nextval()"});

	// Hold the generator's clock 900 ms behind the last ID (within the 1 s bound, so the
	// call waits) by stepping it back as fast as real time moves it forward.
	std::atomic<bool> done{false};
	std::string sqlstate = "none";
	const auto started = std::chrono::steady_clock::now();
	// Behind before the waiter's call starts, or that call could be issued at once.
	exec(conn, {"SELECT snowflake_inject_clock_offset(-900)"});
	std::thread waiter([&] {
		try {
			pqxx::connection waiting = server.connect();
			query_int(waiting, "SELECT snowflake_nextval()");
		} catch (const pqxx::sql_error &e) {
			sqlstate = e.sqlstate();
		}
		done = true;
	});
	while (!done) {
		const auto elapsed =
		    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
		exec(conn, {"SELECT snowflake_inject_clock_offset(" + std::to_string(-900 - elapsed.count()) + ")"});
		std::this_thread::sleep_for(20ms);
	}
	waiter.join();
	const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
	std::cout << "  the waiting call gave up after " << seconds << " s with SQLSTATE " << sqlstate << "\n";
	EXPECT_EQ(sqlstate, "58000");
	EXPECT_TRUE(server.wait_for_log("did not advance past the last snowflake ID", 5s));
	EXPECT_TRUE(server.wait_for_log("snowflake: system clock moved backwards by", 5s));
}

TEST(ClockFaults, TwoStepsBackDuringOneWaitEndWithinTheBound) {
	// 0.5.0, clock_policy = wait with a 10 s bound: a step back of 9.9 s, then another while the call
	// waited, which it met when it woke within the bound and slept again; it took 18.8 s and returned
	// an ID, past its own bound of 12.2 s. The bound now caps every sleep: the call ends in 58000.
	Server server("two_steps", {kPreload, "snowflake.node = 4", "snowflake.fault_injection = on",
	                            "snowflake.clock_policy = wait", "snowflake.max_clock_drift = '10s'"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_nextval()", "SELECT snowflake_inject_clock_offset(-9900)"});
	pqxx::connection waiting = server.connect();
	const int pid = waiting.backendpid();
	std::string sqlstate = "none";
	std::thread waiter([&] { sqlstate = sqlstate_of(waiting, "SELECT snowflake_nextval()"); });
	ASSERT_TRUE(wait_until(
	    [&] {
		    return query_int(conn, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(pid) +
		                               " AND wait_event_type = 'Extension'") == 1;
	    },
	    5s));
	exec(conn, {"SELECT snowflake_inject_clock_offset(-17900)"}); // 8 s further back: 8 s more to wait on waking
	waiter.join();
	EXPECT_EQ(sqlstate, "58000") << "the call outlasted its bound and issued an ID";
}

TEST(ClockFaults, AWaitingCallAnswersQueryCancel) {
	Server server("cancel",
	              {kPreload, "snowflake.node = 4", "snowflake.fault_injection = on", "snowflake.clock_policy = wait"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_nextval()",
	            "SELECT snowflake_inject_clock_offset(-900)"}); // the next call waits about 900 ms
	pqxx::connection waiting = server.connect();
	const int pid = waiting.backendpid();
	std::string sqlstate = "none";
	std::thread waiter([&] { sqlstate = sqlstate_of(waiting, "SELECT snowflake_nextval()"); });
	// Cancel once the call is seen sleeping on snowflake's wait event: its own name on PG 17 and
	// later, the generic Extension before.
	const std::string event =
	    query_int(conn, "SELECT current_setting('server_version_num')::int") >= 170000 ? "SnowflakeClock" : "Extension";
	const auto deadline = std::chrono::steady_clock::now() + 5s;
	bool seen_waiting = false;
	while (!seen_waiting && std::chrono::steady_clock::now() < deadline)
		seen_waiting = query_int(conn, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(pid) +
		                                   " AND wait_event_type = 'Extension' AND wait_event = '" + event + "'") == 1;
	exec(conn, {"SELECT pg_cancel_backend(" + std::to_string(pid) + ")"});
	waiter.join();
	std::cout << "  a call waiting for the clock was " << (seen_waiting ? "seen waiting (" + event + ") and " : "")
	          << "cancelled with SQLSTATE " << sqlstate << "\n";
	EXPECT_TRUE(seen_waiting);
	EXPECT_EQ(sqlstate, "57014");
}

TEST(ClockFaults, StepsBackWhileFourConnectionsGenerate) {
	Server server("clock_steps", {kPreload, "snowflake.node = 9", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	pqxx::connection control = server.connect();
	exec(control, {"CREATE EXTENSION snowflake"});

	// Each batch records the phase it started and ended in, and its IDs or its SQLSTATE.
	struct Batch {
		int phase_start, phase_end;
		std::vector<long long> ids;
		std::string sqlstate;
	};
	const std::vector<int> offsets = {0, -10, -900, -10000, 0}; // ms; the drift bound is 1 s
	constexpr int kChanging = -1;
	std::atomic<int> phase{kChanging};
	std::atomic<bool> stop{false};
	constexpr int kThreads = 4;
	std::vector<std::vector<Batch>> batches(kThreads);
	std::vector<std::atomic<int>> done_in_phase(kThreads);
	std::vector<std::thread> threads;
	for (int t = 0; t < kThreads; ++t)
		threads.emplace_back([&, t] {
			pqxx::connection conn = server.connect();
			while (!stop) {
				Batch batch{phase, 0, {}, ""};
				try {
					pqxx::work tx{conn};
					for (const auto &row : tx.exec("SELECT snowflake_nextval() FROM generate_series(1, 2000)"))
						batch.ids.push_back(row[0].as<long long>());
					tx.commit();
				} catch (const pqxx::sql_error &e) {
					batch.sqlstate = e.sqlstate();
				}
				batch.phase_end = phase;
				batches[t].push_back(std::move(batch));
				++done_in_phase[t];
			}
		});
	for (size_t p = 0; p < offsets.size(); ++p) {
		phase = kChanging; // batches that overlap the change of clock count for no phase
		exec(control, {"SELECT snowflake_inject_clock_offset(" + std::to_string(offsets[p]) + ")"});
		for (auto &done : done_in_phase)
			done = 0;
		phase = static_cast<int>(p);
		// Let every connection finish at least five batches wholly inside this phase.
		const auto deadline = std::chrono::steady_clock::now() + 30s;
		while (std::any_of(done_in_phase.begin(), done_in_phase.end(), [](auto &d) { return d < 6; }) &&
		       std::chrono::steady_clock::now() < deadline)
			std::this_thread::sleep_for(5ms);
	}
	stop = true;
	for (std::thread &t : threads)
		t.join();

	std::vector<long long> all;
	std::vector<int> ok(offsets.size()), errors(offsets.size());
	int wrong_errors = 0, out_of_order = 0;
	for (const auto &per_thread : batches) {
		long long last = -1;
		for (const Batch &batch : per_thread) {
			for (long long id : batch.ids) {
				out_of_order += id <= last;
				last = id;
			}
			all.insert(all.end(), batch.ids.begin(), batch.ids.end());
			if (batch.phase_start != batch.phase_end || batch.phase_start == kChanging)
				continue; // overlaps a change of clock: either outcome is right
			(batch.sqlstate.empty() ? ok : errors)[batch.phase_start]++;
			wrong_errors += !batch.sqlstate.empty() && batch.sqlstate != "58000";
		}
	}
	std::sort(all.begin(), all.end());
	const long long duplicates = all.size() - (std::unique(all.begin(), all.end()) - all.begin());
	for (size_t p = 0; p < offsets.size(); ++p)
		std::cout << "  clock offset " << offsets[p] << " ms: " << ok[p] << " batches issued, " << errors[p]
		          << " refused\n";
	std::cout << "  " << all.size() << " IDs in all; duplicates " << duplicates << ", out of order " << out_of_order
	          << "\n";
	EXPECT_EQ(duplicates, 0);
	EXPECT_EQ(out_of_order, 0);
	EXPECT_EQ(wrong_errors, 0);
	for (size_t p = 0; p < offsets.size(); ++p) {
		const bool beyond_bound = offsets[p] == -10000;
		EXPECT_EQ(errors[p] > 0, beyond_bound) << "offset " << offsets[p];
		EXPECT_EQ(ok[p] > 0, !beyond_bound) << "offset " << offsets[p];
	}
}

TEST(ClockFaults, AStepBackDuringAShortWaitEndsTheCallAtOnce) {
	// No borrowing: every block after the first of a tick waits for the next tick, less than a
	// millisecond, and nearly all the statement's time is such waits (with borrowing, 0.4.0 spent it
	// writing a reservation a tick instead, and the step back fell between writes).
	Server server("short_wait_step", {kPreload, "snowflake.node = 27", "snowflake.fault_injection = on",
	                                  "snowflake.max_clock_drift = 0"});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
	}
	std::string sqlstate = "none";
	std::atomic<bool> ended{false};
	std::chrono::steady_clock::time_point ended_at;
	std::thread caller([&] {
		pqxx::connection conn = server.connect();
		sqlstate = sqlstate_of(conn, "SELECT count(snowflake_nextval_block(4096)) FROM generate_series(1, 20000)");
		ended_at = std::chrono::steady_clock::now();
		ended = true;
	});
	std::this_thread::sleep_for(3s); // the statement takes a tick a block: about 17 s more
	pqxx::connection conn = server.connect();
	const bool still_running = !ended;
	const auto stepped_at = std::chrono::steady_clock::now();
	exec(conn, {"SELECT snowflake_inject_clock_offset(-30000)"});
	caller.join();
	const double after_s = std::chrono::duration<double>(ended_at - stepped_at).count();
	std::cout << "  clock stepped back 30 s under a loop of whole-tick blocks: the call ended " << after_s
	          << " s later with SQLSTATE " << (sqlstate.empty() ? "none" : sqlstate) << "\n";
	ASSERT_TRUE(still_running) << "the statement ended before the clock stepped back";
	EXPECT_EQ(sqlstate, "58000");
	EXPECT_LT(after_s, 5.0) << "the call went on long after the step";
	EXPECT_TRUE(server.wait_for_log("system clock is", 5s));
}

} // namespace
} // namespace snowflake::test
