// Integration tests of the durable reservation (reservation.hpp) against real
// servers: a slow disk stalls no caller (the renewal worker writes ahead of
// need, outside the generator's lock), a caller waiting for another's write
// can be cancelled, every wait for a reservation is bounded (writes slower
// than a lead, a renewal worker stopped mid-write), repeated crash restarts
// and a lowered drift bound keep IDs within one lead of the clock, and the
// transitions that stall or refuse calls (a disk that slows down at once, a
// crash on a slow disk, a bound lowered below borrowed time) log how long.
#include "generator.hpp"
#include "server.hpp"
#include "state_image.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sys/stat.h>
#include <thread>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// The reservation's counters and lead, as snowflake_reservation() reports them.
struct Reservation {
	long long lead_ms, renewals, caller_writes, caller_waits;
};

Reservation reservation(pqxx::connection &conn) {
	pqxx::work tx{conn};
	const pqxx::result rows = tx.exec("SELECT lead_ms, renewals, caller_writes, caller_waits FROM snowflake_reservation()");
	return Reservation{rows[0][0].as<long long>(), rows[0][1].as<long long>(), rows[0][2].as<long long>(),
	                   rows[0][3].as<long long>()};
}

// How far ahead of the clock, in ms, the next ID's time lies (negative: behind).
long long next_id_ahead_ms(pqxx::connection &conn) {
	return query_int(conn, "SELECT (extract(epoch FROM snowflake_timestamp(snowflake_nextval()) - clock_timestamp()) "
	                       "* 1000)::bigint");
}

// The wait event of the backend with pid, as "type:event" ("" when it waits for nothing).
std::string wait_of(pqxx::connection &conn, int pid) {
	pqxx::work tx{conn};
	const pqxx::result rows = tx.exec("SELECT coalesce(wait_event_type || ':' || wait_event, '') FROM pg_stat_activity "
	                                  "WHERE pid = " + std::to_string(pid));
	return rows.empty() ? "" : rows[0][0].as<std::string>();
}

TEST(SlowDisk, RenewalsAheadOfNeedStallNoCaller) {
	// Every reservation write takes 1 s longer. The first ID waits for the write of a reservation
	// (there is none yet), and for a second one: the first was sized for the disk as it was, and
	// ran out while it was written. From then on the lead is sized from the slow writes (4 writes'
	// time) and the renewal worker renews with half of it left, so 2 connections calling for 8 s
	// never find the reservation spent and never wait for a write. Before the redesign, every
	// renewal was written by a caller holding the generator's lock, and every other caller waited.
	Server server("slow_disk", {kPreload, "snowflake.node = 8", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_inject_write_delay(1000)"});
	query_int(conn, "SELECT snowflake_nextval()");
	const Reservation warm = reservation(conn);
	EXPECT_LE(warm.caller_writes, 2);
	EXPECT_GE(warm.lead_ms, 4000);
	std::atomic<long long> calls{0};
	std::vector<std::thread> clients;
	for (int c = 0; c < 2; ++c)
		clients.emplace_back([&] {
			pqxx::connection mine = server.connect();
			const auto until = std::chrono::steady_clock::now() + 8s;
			while (std::chrono::steady_clock::now() < until) {
				query_int(mine, "SELECT snowflake_nextval()");
				++calls;
			}
		});
	for (std::thread &t : clients)
		t.join();
	const Reservation after = reservation(conn);
	std::cout << "  writes delayed 1 s: " << calls << " calls in 8 s from 2 connections; lead " << after.lead_ms
	          << " ms; renewals " << after.renewals << ", caller writes " << after.caller_writes << ", caller waits "
	          << after.caller_waits << "\n";
	EXPECT_EQ(after.caller_writes, warm.caller_writes) << "a caller found the reservation spent";
	EXPECT_EQ(after.caller_waits, 0) << "a caller waited for a reservation write";
	EXPECT_GE(after.renewals, 2);
}

TEST(SlowDisk, ACallerWaitingForAnotherWriteCanBeCancelled) {
	// The clock jumps an hour: the reservation is spent, and the next caller writes a new one, which
	// takes 5 s. A second caller waits for that write on a condition variable, not in an LWLock
	// wait, so a cancel ends its wait at once while the write is still under way.
	Server server("cancel_wait", {kPreload, "snowflake.node = 8", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	query_int(conn, "SELECT snowflake_nextval()");
	exec(conn, {"SELECT snowflake_inject_write_delay(5000)", "SELECT snowflake_inject_clock_offset(3600000)"});
	const bool named = query_int(conn, "SELECT current_setting('server_version_num')::int") >= 170000;
	pqxx::connection writer_conn = server.connect(), waiter_conn = server.connect();
	const int writer_pid = writer_conn.backendpid(), waiter_pid = waiter_conn.backendpid();
	std::string writer_state, waiter_state;
	std::thread writer([&] { writer_state = sqlstate_of(writer_conn, "SELECT snowflake_nextval()"); });
	const std::string writing = named ? "Extension:SnowflakeReservationWrite" : "Extension:Extension";
	ASSERT_TRUE(wait_until([&] { return wait_of(conn, writer_pid) == writing; }, 5s)) << wait_of(conn, writer_pid);
	std::thread waiter([&] { waiter_state = sqlstate_of(waiter_conn, "SELECT snowflake_nextval()"); });
	const std::string waiting = named ? "Extension:SnowflakeReservation" : "Extension:Extension";
	EXPECT_TRUE(wait_until([&] { return wait_of(conn, waiter_pid) == waiting; }, 3s)) << wait_of(conn, waiter_pid);
	query_int(conn, "SELECT pg_cancel_backend(" + std::to_string(waiter_pid) + ")::int");
	waiter.join();
	EXPECT_EQ(waiter_state, "57014");
	EXPECT_EQ(wait_of(conn, writer_pid), writing) << "the write ended before the cancel was seen";
	writer.join();
	EXPECT_EQ(writer_state, "");
	EXPECT_EQ(reservation(conn).caller_waits, 1);
}

TEST(CrashLoop, RepeatedCrashRestartsKeepIdsWithinOneLeadOfTheClock) {
	// With a 1-minute drift bound, 0.2.0 reserved 30 s ahead, and each crash restart resumed
	// above the last reservation: 28.5 s, 56 s, then 60 s ahead, so a clock set back only 10 s
	// was an error. The lead no longer depends on the bound, and restarts do not compound it.
	Server server("crash_loop", {kPreload, "snowflake.node = 9", "snowflake.fault_injection = on",
	                             "snowflake.max_clock_drift = '1min'"});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
	}
	for (int cycle = 1; cycle <= 5; ++cycle) {
		{
			pqxx::connection conn = server.connect();
			max_of(conn, 20000);
		}
		ASSERT_TRUE(server.crash_a_backend()) << cycle;
		pqxx::connection conn = server.connect();
		const long long ahead = next_id_ahead_ms(conn);
		const long long lead = reservation(conn).lead_ms;
		std::cout << "  crash restart " << cycle << ": the first ID is " << ahead << " ms ahead of the clock (lead "
		          << lead << " ms)\n";
		EXPECT_LE(ahead, lead) << cycle;
	}
	pqxx::connection conn = server.connect();
	exec(conn, {"SELECT snowflake_inject_clock_offset(-10000)"});
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "") << "a clock 10 s back, within the 1 min bound";
}

TEST(CrashLoop, LoweringTheDriftBoundThenCrashingIsNoOutage) {
	// 0.2.0 with max_clock_drift = 1h reserved 30 min ahead; lowered to 1s and crashed, every call
	// failed with 58000 for about 29 minutes though no ID had been issued since.
	Server server("lowered_bound", {kPreload, "snowflake.node = 9", "snowflake.max_clock_drift = '1h'"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	max_of(conn, 1000);
	const long long reach_ms = query_int(conn, "SELECT (extract(epoch FROM r.reserved_until - clock_timestamp()) * "
	                                           "1000)::bigint FROM snowflake_reservation() r");
	EXPECT_LE(reach_ms, reservation(conn).lead_ms);
	{
		pqxx::nontransaction outside{conn}; // ALTER SYSTEM: no transaction block
		outside.exec("ALTER SYSTEM SET snowflake.max_clock_drift = '1s'");
	}
	exec(conn, {"SELECT pg_reload_conf()"});
	ASSERT_TRUE(server.crash_a_backend());
	pqxx::connection after = server.connect();
	EXPECT_EQ(sqlstate_of(after, "SELECT snowflake_nextval()"), "");
	std::cout << "  reservation reached " << reach_ms << " ms past the clock with a 1 h bound; after lowering it to "
	          << "1 s and a crash, the next ID is " << next_id_ahead_ms(after) << " ms ahead\n";
}

// The longest a call may take when it needs a reservation: the wait (10 s, kReservationWaitMs),
// plus one write of its own that was under way, plus scheduling slack.
std::chrono::milliseconds bound_with(std::chrono::milliseconds write) {
	return 10s + write + 3s;
}

// The outcome of one call: its SQLSTATE ("" for an ID) and how long it took.
struct Call {
	std::string sqlstate;
	std::chrono::milliseconds took;
	long long id;
};

// Calls snowflake_nextval() on conn once, timing it.
Call timed_call(pqxx::connection &conn) {
	const auto started = std::chrono::steady_clock::now();
	Call call{"", 0ms, -1};
	try {
		call.id = query_int(conn, "SELECT snowflake_nextval()");
	} catch (const pqxx::sql_error &e) {
		call.sqlstate = e.sqlstate();
	}
	call.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
	return call;
}

// Whether process pid sleeps in the kernel somewhere other than epoll, the wait of a latch: the renewal
// worker then sleeps in a write's injected delay (pg_usleep: select, or nanosleep). False where the
// kernel does not tell (/proc/PID/wchan reads 0).
bool asleep_outside_its_latch(int pid) {
	std::string channel;
	std::ifstream("/proc/" + std::to_string(pid) + "/wchan") >> channel;
	return !channel.empty() && channel != "0" && channel.find("epoll") == std::string::npos;
}

// The renewal worker's process ID.
int renewer_pid(pqxx::connection &conn) {
	return static_cast<int>(
	    query_int(conn, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'snowflake reservation renewer'"));
}

TEST(Waits, WritesSlowerThanALeadEndEveryCallWithin10s) {
	// Every write takes 12 s, longer than the longest lead: whatever a call reserves has run out by the
	// time it is on disk. With 4 calls at once, 0.3.0's calls took 60 to 155 s (8 calls: 179 to 299 s,
	// zero IDs in between). Now a call waits for reservations 10 s in all, then gives up with 58030.
	Server server("slow_writes", {kPreload, "snowflake.node = 14", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_nextval()", "SELECT snowflake_inject_write_delay(12000)",
	            "SELECT snowflake_inject_clock_offset(3600000)"}); // the reservation is spent: every call needs one
	std::vector<Call> calls(4);
	std::vector<std::thread> threads;
	for (Call &call : calls)
		threads.emplace_back([&] {
			pqxx::connection mine = server.connect();
			call = timed_call(mine);
		});
	// While the first write is under way past the wait, the state says that it is, and who writes.
	EXPECT_TRUE(wait_until([&] {
		return query_int(conn, "SELECT (state = 'reservation write stalled' AND detail LIKE 'process % has been writing "
		                       "a reservation to snowflake.state for % ms; a call waits at most 10000 ms')::int "
		                       "FROM snowflake_state()") == 1;
	}, 15s));
	for (std::thread &t : threads)
		t.join();
	std::chrono::milliseconds longest = 0ms;
	for (const Call &call : calls) {
		longest = std::max(longest, call.took);
		EXPECT_EQ(call.sqlstate, "58030");
		EXPECT_LE(call.took, bound_with(12s));
	}
	std::cout << "  writes of 12 s, 4 calls at once: each ended with 58030, the longest after " << longest.count()
	          << " ms\n";
	EXPECT_TRUE(server.wait_for_log("no reservation reached \"snowflake.state\" within 10000 ms", 5s));
}

// The renewal worker stopped mid-write (see below) under n callers at once, on a server called name.
void a_stopped_renewer_stalls_no_call_past_the_bound(const std::string &name, int node, int n) {
	// SIGSTOP of the renewal worker in the middle of a write stands in for storage that hangs in fsync.
	// 0.3.0's calls then waited until the write returned, with no error. Now a call gives up after
	// 10 s with 58030, the state says which process writes, and IDs flow again once it continues,
	// none repeated: the worker's claim is never taken from it, so no late write lowers the mark.
	Server server(name, {kPreload, "snowflake.node = " + std::to_string(node), "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	const int renewer = renewer_pid(conn);
	std::atomic<bool> done{false};
	std::mutex lock;
	std::vector<Call> calls;
	std::vector<std::thread> callers;
	for (int c = 0; c < n; ++c)
		callers.emplace_back([&] {
			pqxx::connection mine = server.connect();
			while (!done) {
				const Call call = timed_call(mine);
				std::lock_guard<std::mutex> guard(lock);
				calls.push_back(call);
			}
		});
	// Once the worker renews on the fast disk (a lead of 200 ms), writes take 5 s more. Stop the worker
	// while it sleeps in that delay, inside its write (its kernel wait channel says so; where the kernel
	// does not tell, stop it anyway and see whether a write was under way): the reservation runs out
	// at once.
	ASSERT_TRUE(wait_until([&] { return reservation(conn).renewals >= 1; }, 10s));
	exec(conn, {"SELECT snowflake_inject_write_delay(5000)"});
	bool stalled = false;
	for (int attempt = 0; attempt < 5 && !stalled; ++attempt) {
		wait_until([&] { return asleep_outside_its_latch(renewer); }, 15s);
		ASSERT_EQ(::kill(renewer, SIGSTOP), 0);
		stalled = wait_until([&] {
			return query_int(conn, "SELECT (state = 'reservation write stalled' AND detail LIKE 'process " +
			                           std::to_string(renewer) + " has been writing%')::int FROM snowflake_state()") == 1;
		}, 20s);
		if (!stalled) // it was stopped between two writes, and callers wrote instead: again
			::kill(renewer, SIGCONT);
	}
	ASSERT_TRUE(stalled);
	ASSERT_TRUE(wait_until([&] {
		std::lock_guard<std::mutex> guard(lock);
		return std::any_of(calls.begin(), calls.end(), [](const Call &c) { return c.sqlstate == "58030"; });
	}, 15s));
	exec(conn, {"SELECT snowflake_inject_write_delay(0)"}); // later writes are fast; the stopped one is in its sleep
	ASSERT_EQ(::kill(renewer, SIGCONT), 0);
	const size_t before = [&] {
		std::lock_guard<std::mutex> guard(lock);
		return calls.size();
	}();
	EXPECT_TRUE(wait_until([&] {
		std::lock_guard<std::mutex> guard(lock);
		return std::any_of(calls.begin() + static_cast<long>(before), calls.end(), [](const Call &c) { return c.id >= 0; });
	}, 20s)) << "no ID after the worker continued";
	done = true;
	for (std::thread &t : callers)
		t.join();
	std::chrono::milliseconds longest = 0ms;
	long long refused = 0;
	std::vector<long long> ids;
	for (const Call &call : calls) {
		longest = std::max(longest, call.took);
		// No call can write while the worker holds the claim: each waits 10 s in all, whatever else it
		// waits for (0.4.0 counted the 10 s afresh after every wait for the clock: 13.1 s, 8 callers).
		EXPECT_LE(call.took, 10s + 1500ms);
		EXPECT_TRUE(call.sqlstate.empty() || call.sqlstate == "58030") << call.sqlstate;
		refused += call.sqlstate == "58030";
		if (call.id >= 0)
			ids.push_back(call.id);
	}
	std::sort(ids.begin(), ids.end());
	EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "an ID was issued twice";
	const long long last = ids.empty() ? -1 : ids.back();
	std::cout << "  renewal worker stopped mid-write, " << n << " callers: " << calls.size() << " calls, " << refused
	          << " refused with 58030, the longest took " << longest.count() << " ms\n";
	// The mark on disk covers every ID: after a crash, the next one is above them all.
	ASSERT_TRUE(server.crash_a_backend());
	pqxx::connection after = server.connect();
	EXPECT_GT(query_int(after, "SELECT snowflake_nextval()"), last);
}

TEST(Waits, ARenewalWorkerStoppedMidWriteStallsNoCallPastTheBound) {
	a_stopped_renewer_stalls_no_call_past_the_bound("stopped_renewer", 15, 1);
}

TEST(Waits, EightCallersOfAStoppedRenewerEachWaitTheBoundInAll) {
	a_stopped_renewer_stalls_no_call_past_the_bound("stopped_renewer_8", 29, 8);
}

TEST(Transitions, ADiskThatSlowsAtOnceStallsCallsOnceAndTheLogSaysSo) {
	// Writes go from about a millisecond to 2 s at once. The renewal under way was sized for the fast
	// disk, so its reservation runs out mid-write, and so does the next one's, sized before the first
	// ended: calls wait for two writes. The lead then grows to four writes' time and nothing stalls.
	Server server("slows_at_once", {kPreload, "snowflake.node = 16", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	std::atomic<bool> done{false};
	std::mutex lock;
	std::vector<std::chrono::steady_clock::time_point> returns;
	std::vector<std::thread> callers;
	for (int c = 0; c < 2; ++c)
		callers.emplace_back([&] {
			pqxx::connection mine = server.connect();
			while (!done) {
				query_int(mine, "SELECT snowflake_nextval()");
				std::lock_guard<std::mutex> guard(lock);
				returns.push_back(std::chrono::steady_clock::now());
			}
		});
	std::this_thread::sleep_for(2s); // a steady state on the fast disk, measured by the gaps below
	exec(conn, {"SELECT snowflake_inject_write_delay(2000)"});
	std::this_thread::sleep_for(8s);
	done = true;
	for (std::thread &t : callers)
		t.join();
	std::sort(returns.begin(), returns.end());
	std::chrono::milliseconds longest = 0ms;
	for (size_t i = 1; i < returns.size(); ++i)
		longest = std::max(longest, std::chrono::duration_cast<std::chrono::milliseconds>(returns[i] - returns[i - 1]));
	std::cout << "  writes from ~1 ms to 2 s at once: the longest gap between IDs was " << longest.count() << " ms; lead "
	          << reservation(conn).lead_ms << " ms after\n";
	EXPECT_TRUE(server.wait_for_log("calls waited for it", 5s)) << "the stall was not logged";
}

TEST(Transitions, ACrashOnASlowDiskMakesTheFirstCallsWaitAsTheStartLogs) {
	// A crash while writes took 2.5 s leaves the reservation up to a 10 s lead ahead of the clock; the
	// restart (on a fast disk: the injected delay is gone) must start above it, so the first calls
	// wait for the clock. The start's log says how long; the first call waits no longer than that.
	Server server("crash_slow_disk", {kPreload, "snowflake.node = 17", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_inject_write_delay(2500)"});
		const auto until = std::chrono::steady_clock::now() + 7s; // two slow writes: the second with a 10 s lead
		while (std::chrono::steady_clock::now() < until)
			max_of(conn, 100);
		std::cout << "  lead before the crash: " << reservation(conn).lead_ms << " ms\n";
	}
	ASSERT_TRUE(server.crash_a_backend());
	pqxx::connection conn = server.connect();
	const Call first = timed_call(conn);
	EXPECT_EQ(first.sqlstate, "");
	const std::string log = server.log();
	const size_t at = log.rfind("The first calls wait up to ");
	ASSERT_NE(at, std::string::npos) << "the start did not log the wait";
	const long long logged = std::stoll(log.substr(at + std::string("The first calls wait up to ").size()));
	std::cout << "  after the crash: the start logged a wait of up to " << logged << " ms; the first call took "
	          << first.took.count() << " ms\n";
	EXPECT_LE(first.took.count(), logged + 1000);
}

TEST(Transitions, LoweringTheBoundBelowBorrowedTimeRefusesUntilTheClockCatchesUp) {
	// With a 10 min bound, IDs ran 2 min ahead of the clock; the bound is then lowered to 1 s. The IDs
	// already issued stay ahead, so every call is refused (58000) until the clock catches up: the
	// state says until when, and the log says for how long.
	Server server("lowered_live", {kPreload, "snowflake.node = 18", "snowflake.fault_injection = on",
	                               "snowflake.max_clock_drift = '10min'"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_inject_clock_offset(120000)"});
	max_of(conn, 1000);
	exec(conn, {"SELECT snowflake_inject_clock_offset(0)", "SELECT snowflake_nextval()"}); // borrowing: fine
	{
		pqxx::nontransaction outside{conn};
		outside.exec("ALTER SYSTEM SET snowflake.max_clock_drift = '1s'");
		outside.exec("SELECT pg_reload_conf()");
	}
	ASSERT_TRUE(wait_until([&] { return query_int(conn, "SELECT (current_setting('snowflake.max_clock_drift') = '1s')::int") == 1; },
	                       10s));
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "58000");
	EXPECT_EQ(query_int(conn, "SELECT (state = 'clock behind' AND resumes_at BETWEEN clock_timestamp() + interval '100 s' "
	                          "AND clock_timestamp() + interval '120 s')::int FROM snowflake_state()"),
	          1);
	EXPECT_TRUE(server.wait_for_log("snowflake: refusing IDs until about", 5s));
	std::cout << "  bound lowered from 10 min to 1 s with IDs 2 min ahead: calls refused for "
	          << query_int(conn, "SELECT extract(epoch FROM resumes_at - clock_timestamp())::bigint FROM snowflake_state()")
	          << " s more\n";
}

TEST(Transitions, OneFailedOrSlowWriteDoesNotLeaveTheStateStuck) {
	// One failed write, then the disk well again; one write of 11 s, then fast again; and a restart
	// with the 10 s estimate such a write leaves on disk. 0.4.0 kept saying 'reservation write failing',
	// and 'reservation write stalled' (its estimate capped at exactly the 10 s the state compares it
	// with, and saved at exit), for as long as the server stayed idle. Now the renewal worker tries the
	// disk again, and the state follows it.
	Server server("state_not_stuck", {kPreload, "snowflake.node = 28", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	const std::string file = server.data_file("snowflake.state");
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_nextval()"});
		const auto state_is = [&](const std::string &state) {
			return query_int(conn, "SELECT (state = '" + state + "')::int FROM snowflake_state()") == 1;
		};
		// An idle spell longer than the lead: the next call needs a reservation and writes it itself.
		const auto reservation_spent = [&] {
			return wait_until([&] { return query_int(conn, "SELECT (reserved_until < clock_timestamp())::int "
			                                               "FROM snowflake_reservation()") == 1; },
			                  15s);
		};
		ASSERT_EQ(::chmod(file.c_str(), 0400), 0);
		ASSERT_TRUE(reservation_spent());
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "42501");
		EXPECT_TRUE(state_is("reservation write failing"));
		ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
		EXPECT_TRUE(wait_until([&] { return state_is("ok"); }, 15s)) << "still failing, with the disk well again";
		// Spent first, with writes fast: a renewal worker still renewing ahead of need would have kept the
		// reservation ahead, so none is under way when the delay starts and the call writes itself.
		ASSERT_TRUE(reservation_spent());
		exec(conn, {"SELECT snowflake_inject_write_delay(11000)"});
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), ""); // its own write: 11 s
		exec(conn, {"SELECT snowflake_inject_write_delay(0)"});
		EXPECT_TRUE(wait_until([&] { return state_is("ok"); }, 15s)) << "still stalled, with writes fast again";
	}
	server.stop();
	StateImage image = read_state_image(file);
	image.write_latency_us = kMaxWriteLatencyUs; // what the exit write of 0.4.0 saved after such a write
	write_state_image(file, image);
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_TRUE(wait_until([&] { return query_int(conn, "SELECT (state = 'ok')::int FROM snowflake_state()") == 1; },
	                       15s))
	    << "stalled after a restart, on a fast disk";
}

} // namespace
} // namespace snowflake::test
