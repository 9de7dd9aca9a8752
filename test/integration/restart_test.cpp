// Integration tests of restarts and promotion against real servers: a crash
// restart after IDs borrowed time (twitter and sonyflake), a clean stop, an
// immediate stop and a kill -9 of the postmaster, each followed by a start with
// the clock 30 s behind, and a streaming standby that refuses IDs in recovery
// and, once promoted, starts above the old primary's last ID. Killing processes
// cannot show a missing fsync (the page cache survives a process crash): that
// the reservation is durable rests on pg_fsync and durable_rename, on reading
// the code, and on the slow-disk benchmark (test/bench/slow_disk.sh).
#include "generator.hpp"
#include "server.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <iostream>
#include <thread>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// IDs borrowed 800 ms ahead of the true clock (as a burst or a corrected clock leaves them), then a
// crash restart (a backend killed: shared memory is rebuilt from the state file, which gets no exact
// last ID): the first ID is above all of them, on the layout's node. The reservation is kept in ticks
// of the layout: 1 ms on twitter, 10 ms on sonyflake.
void crash_restart_resumes_above_borrowed_ids(const std::string &layout, const Layout &core, int node) {
	Server server("crash_" + layout, {kPreload, "snowflake.layout = '" + layout + "'",
	                                  "snowflake.node = " + std::to_string(node), "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_inject_clock_offset(800)"});
	const long long before = max_of(conn, 10000);
	ASSERT_TRUE(server.crash_a_backend());
	pqxx::connection again = server.connect();
	const long long after = query_int(again, "SELECT snowflake_nextval()");
	std::cout << "  " << layout << ": the first ID after the crash restart is "
	          << core.decompose(after).time - core.decompose(before).time << " ticks above the last before it\n";
	EXPECT_GT(after, before);
	EXPECT_EQ(core.decompose(after).node, node);
}

TEST(Restart, CrashRestartResumesAboveBorrowedIds) {
	crash_restart_resumes_above_borrowed_ids("twitter", kTwitter, 5);
	crash_restart_resumes_above_borrowed_ids("sonyflake", kSonyflake, 50000);
}

TEST(Restart, ImmediateStopAndPostmasterKillResumeAboveEveryOldIdWithTheClock30sBehind) {
	// A 1-minute drift bound lets IDs continue above the old ones while the clock is 30 s behind.
	Server server("restart", {kPreload, "snowflake.node = 6", "snowflake.fault_injection = on",
	                          "snowflake.max_clock_drift = '1min'"});
	ASSERT_TRUE(server.start());
	long long high = create_and_issue(server, 20000);
	// A clean stop records the exact last ID: the next start resumes right above it.
	server.stop("fast");
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(query_int(conn, "SELECT (reserved_until = snowflake_timestamp(" + std::to_string(high) +
		                              "))::int FROM snowflake_stats()"),
		          1);
		high = max_of(conn, 20000);
	}
	for (const std::string how : {"pg_ctl stop -m immediate", "kill -9 of the postmaster"}) {
		if (how == "pg_ctl stop -m immediate") {
			// An immediate stop exits with code 0, but leaves the reservation on disk as it was.
			const std::string reserved_ms =
			    "SELECT (extract(epoch FROM reserved_until) * 1000)::bigint FROM snowflake_stats()";
			long long reserved = 0;
			{
				// Once the last ID is two leads old, the renewal worker has nothing more to renew.
				pqxx::connection before = server.connect();
				ASSERT_TRUE(wait_until(
				    [&] {
					    return query_int(before, "SELECT (s.last_id_time < clock_timestamp() - 2 * r.lead_ms * "
					                             "interval '1 ms')::int FROM snowflake_stats() s, snowflake_reservation() r") == 1;
				    },
				    10s));
				reserved = query_int(before, reserved_ms);
			}
			server.stop("immediate");
			ASSERT_TRUE(server.start());
			{
				pqxx::connection after = server.connect();
				EXPECT_EQ(query_int(after, reserved_ms), reserved) << "the reservation was rewritten at an immediate stop";
			}
			server.stop("immediate");
		} else {
			ASSERT_EQ(::kill(server.postmaster_pid(), SIGKILL), 0);
			server.stop("immediate"); // marks it stopped; its backends exit when they see the postmaster gone
		}
		// A new postmaster starts once the old one's processes have left shared memory.
		const auto deadline = std::chrono::steady_clock::now() + 30s;
		bool started = false;
		while (!(started = server.start()) && std::chrono::steady_clock::now() < deadline)
			std::this_thread::sleep_for(100ms);
		ASSERT_TRUE(started) << how;
		pqxx::connection conn = server.connect();
		exec(conn, {"SELECT snowflake_inject_clock_offset(-30000)"});
		const long long first = query_int(conn, "SELECT snowflake_nextval()");
		std::cout << "  after " << how << ", with the clock 30 s behind: first ID is "
		          << (kTwitter.decompose(first).time - kTwitter.decompose(high).time) << " ms above the last before\n";
		EXPECT_GT(first, high) << how;
		EXPECT_EQ(kTwitter.decompose(first).node, 6);
		high = max_of(conn, 20000);
	}
	// With the default 1 s bound, the same clock is an error that names the drift, not a duplicate.
	server.append_conf("snowflake.max_clock_drift = '1s'");
	server.stop("immediate");
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"SELECT snowflake_inject_clock_offset(-30000)"});
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "58000");
}

TEST(Standby, RefusesDuringRecoveryAndStartsAboveThePrimaryOncePromoted) {
	// The primary's last IDs borrow 8 s ahead of its clock (within its 10 s bound); the promoted
	// standby must start above them, even when it restarts before issuing anything.
	Server primary("primary", {kPreload, "snowflake.node = 2", "snowflake.fault_injection = on",
	                           "snowflake.max_clock_drift = '10s'"});
	ASSERT_TRUE(primary.start());
	pqxx::connection conn = primary.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	max_of(conn, 10000);
	Server standby("standby", Server::StandbyOf{primary});
	ASSERT_TRUE(standby.start());
	exec(conn, {"SELECT snowflake_inject_clock_offset(8000)"});
	const long long high = max_of(conn, 10000); // after the base backup, 8 s ahead

	pqxx::connection on_standby = standby.connect();
	EXPECT_EQ(query_int(on_standby, "SELECT pg_is_in_recovery()::int"), 1);
	EXPECT_EQ(sqlstate_of(on_standby, "SELECT snowflake_nextval()"), "25006");
	EXPECT_EQ(query_int(on_standby, "SELECT (state = 'recovery')::int FROM snowflake_stats()"), 1);

	primary.stop("fast");
	ASSERT_TRUE(standby.promote());
	standby.stop("fast"); // a restart before the first ID must not lose the floor
	ASSERT_TRUE(standby.start());
	pqxx::connection promoted = standby.connect();
	const long long first = query_int(promoted, "SELECT snowflake_nextval()");
	std::cout << "  first ID on the promoted standby (restarted before it) is "
	          << (kTwitter.decompose(first).time - kTwitter.decompose(high).time) << " ms above the old primary's last\n";
	EXPECT_GT(first, high);
	EXPECT_TRUE(standby.wait_for_log("snowflake: first ID on a new timeline", 5s));
}

} // namespace
} // namespace snowflake::test
