// Integration test of a clock that steps back while calls wait a few hundred
// microseconds for the next tick (issuing.cpp's wait_for_clock): blocks of a
// whole tick run at the drift bound, so nearly every call waits for the clock,
// and the clock steps back 30 s. 0.4.0 spun on the wall clock until it came
// back: the call ended with no error about 46 s later, a core busy all along.
#include "server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <thread>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

TEST(ClockFaults, AStepBackDuringAShortWaitEndsTheCallAtOnce) {
	Server server("short_wait_step", {kPreload, "snowflake.node = 27", "snowflake.fault_injection = on"});
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
	std::this_thread::sleep_for(3s); // the statement is at the drift bound by then, for about 17 s more
	pqxx::connection conn = server.connect();
	const auto stepped_at = std::chrono::steady_clock::now();
	exec(conn, {"SELECT snowflake_inject_clock_offset(-30000)"});
	const bool still_running = !ended;
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
