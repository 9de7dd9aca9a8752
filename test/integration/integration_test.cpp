// Integration tests against real PostgreSQL servers, through libpqxx: many
// connections at once, a crash restart after IDs borrowed time, a clock that
// keeps stepping back while a call waits, node changes on reload, and bad
// settings at start and on reload. Each scenario starts its own server and
// prints its figures; IDs are decoded with the extension's own core.
#include "generator.hpp"
#include "server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <iostream>
#include <thread>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// The node an ID decodes to.
int32_t node_of(long long id) {
	return kTwitter.decompose(id).node;
}

// Polls new connections until SHOW name gives value: the postmaster has then reloaded.
bool wait_for_setting(const Server &server, const std::string &name, const std::string &value) {
	return wait_until(
	    [&] {
		    pqxx::connection conn = server.connect();
		    pqxx::work tx{conn};
		    return one_value<std::string>(tx, "SHOW " + name) == value;
	    },
	    10s);
}

TEST(Concurrency, EightConnectionsNeverShareAnId) {
	Server server("concurrency", {kPreload, "snowflake.node = 7"});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake",
		            "CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), payload text)"});
	}
	constexpr int kConnections = 8, kBatches = 50, kBatch = 5000;
	std::vector<std::vector<long long>> ids(kConnections);
	std::vector<std::string> errors(kConnections);
	const int64_t first_ms = unix_ms();
	const auto started = std::chrono::steady_clock::now();
	std::vector<std::thread> threads;
	for (int c = 0; c < kConnections; ++c)
		threads.emplace_back([&, c] {
			// Even connections select IDs in batches; odd ones insert rows that take them as a default.
			const std::string batch = std::to_string(kBatch);
			const std::string query = c % 2 == 0 ? "SELECT snowflake_nextval() FROM generate_series(1, " + batch + ")"
			                                     : "INSERT INTO items (payload) SELECT 'row' FROM generate_series(1, " +
			                                           batch + ") RETURNING id";
			try {
				pqxx::connection conn = server.connect();
				for (int b = 0; b < kBatches; ++b) {
					pqxx::work tx{conn};
					for (const auto &row : tx.exec(query))
						ids[c].push_back(row[0].as<long long>());
					tx.commit();
				}
			} catch (const std::exception &e) {
				errors[c] = e.what();
			}
		});
	for (std::thread &t : threads)
		t.join();
	const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
	const int64_t last_ms = unix_ms();

	std::vector<long long> all;
	long long out_of_order = 0, wrong_node = 0, outside_run = 0;
	for (int c = 0; c < kConnections; ++c) {
		EXPECT_EQ(errors[c], "") << "connection " << c;
		ASSERT_EQ(ids[c].size(), size_t{kBatches} * kBatch) << "connection " << c;
		for (size_t i = 1; i < ids[c].size(); ++i) {
			// Within a statement, a SELECT's rows keep generate_series order; RETURNING's order is
			// unspecified, so inserting connections are checked batch against batch.
			if (c % 2 == 0) {
				out_of_order += ids[c][i] <= ids[c][i - 1];
			} else if (i % kBatch == 0) {
				const auto prev = ids[c].begin() + (i - kBatch), cur = ids[c].begin() + i;
				out_of_order += *std::min_element(cur, cur + kBatch) <= *std::max_element(prev, cur);
			}
		}
		for (long long id : ids[c]) {
			wrong_node += node_of(id) != 7;
			const int64_t ms = kTwitter.decompose(id).time + kTwitterEpochMs;
			// Borrowing may put an ID up to max_clock_drift (1 s) ahead of the clock.
			outside_run += ms < first_ms - 1 || ms > last_ms + 1000;
		}
		all.insert(all.end(), ids[c].begin(), ids[c].end());
	}
	std::sort(all.begin(), all.end());
	const long long duplicates = all.size() - (std::unique(all.begin(), all.end()) - all.begin());
	pqxx::connection conn = server.connect();
	const long long rows = query_int(conn, "SELECT count(*) FROM items");

	std::cout << "  " << all.size() << " IDs from " << kConnections << " connections in " << seconds << " s ("
	          << static_cast<long long>(all.size() / seconds) << " IDs/s); duplicates " << duplicates
	          << ", out of order " << out_of_order << ", wrong node " << wrong_node << ", outside the run "
	          << outside_run << "\n";
	EXPECT_EQ(duplicates, 0);
	EXPECT_EQ(out_of_order, 0);
	EXPECT_EQ(wrong_node, 0);
	EXPECT_EQ(outside_run, 0);
	EXPECT_EQ(rows, kConnections / 2 * kBatches * kBatch);
}

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

TEST(Settings, NodeChangeOnReloadTakesEffectForTheNextId) {
	Server server("reload", {kPreload, "snowflake.node = 7"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	const long long before = query_int(conn, "SELECT snowflake_nextval()");
	EXPECT_EQ(node_of(before), 7);

	server.append_conf("snowflake.node = 8");
	server.reload();
	ASSERT_TRUE(wait_for_setting(server, "snowflake.node", "8"));
	// conn has not reloaded yet, but the node lives in shared memory: its next ID uses node 8.
	const long long after = query_int(conn, "SELECT snowflake_nextval()");
	EXPECT_EQ(node_of(after), 8);
	EXPECT_GT(after, before);
	EXPECT_TRUE(server.wait_for_log("snowflake: node changed from 7 to 8", 5s));
}

TEST(Settings, ReloadWithAnOutOfRangeNodeKeepsTheOldOne) {
	Server server("bad_reload", {kPreload, "snowflake.node = 7"});
	ASSERT_TRUE(server.start());
	server.append_conf("snowflake.node = 5000");
	server.reload();
	ASSERT_TRUE(server.wait_for_log("5000 is outside the valid range for parameter \"snowflake.node\" (-1 .. 1023)", 10s));
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	EXPECT_EQ(node_of(query_int(conn, "SELECT snowflake_nextval()")), 7);
}

TEST(Settings, OutOfRangeOrMalformedSettingsStopTheServerFromStarting) {
	const std::vector<std::pair<std::string, std::string>> cases = {
	    {"snowflake.node = 1024", "1024 is outside the valid range for parameter \"snowflake.node\" (-1 .. 1023)"},
	    {"snowflake.node = 2000000000", "outside the valid range for parameter \"snowflake.node\" (-1 .. 1023)"},
	    {"snowflake.epoch = 'yesterday'", "invalid value for parameter \"snowflake.epoch\": \"yesterday\""},
	    {"snowflake.max_clock_drift = '2h'", "outside the valid range for parameter \"snowflake.max_clock_drift\""},
	    {"snowflake.clock_policy = 'sometimes'", "invalid value for parameter \"snowflake.clock_policy\""},
	};
	for (const auto &[line, message] : cases) {
		Server server("bad_start", {kPreload, line});
		EXPECT_FALSE(server.start()) << line;
		EXPECT_NE(server.log().find(message), std::string::npos) << line << "\n" << server.log();
	}
}

TEST(Parallel, WorkersOfAParallelPlanShareTheGenerator) {
	Server server("parallel", {kPreload, "snowflake.node = 11"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "CREATE TABLE rows AS SELECT g FROM generate_series(1, 300000) AS g",
	            "ANALYZE rows"});
	pqxx::work tx{conn};
	for (const char *setting : {"parallel_setup_cost = 0", "parallel_tuple_cost = 0",
	                            "min_parallel_table_scan_size = 0", "max_parallel_workers_per_gather = 2"})
		tx.exec(std::string("SET LOCAL ") + setting);
	const std::string query = "SELECT snowflake_nextval() FROM rows";
	const std::string plan = one_value<std::string>(tx, "EXPLAIN (ANALYZE, FORMAT JSON) " + query);
	const auto launched = plan.find("\"Workers Launched\": ");
	ASSERT_NE(launched, std::string::npos) << plan;
	const int workers = std::stoi(plan.substr(launched + 20));
	std::vector<long long> ids;
	for (const auto &row : tx.exec(query))
		ids.push_back(row[0].as<long long>());
	tx.commit();
	std::sort(ids.begin(), ids.end());
	const auto distinct = std::unique(ids.begin(), ids.end()) - ids.begin();
	std::cout << "  " << ids.size() << " IDs from a Gather with " << workers << " workers launched; " << distinct
	          << " distinct\n";
	EXPECT_GE(workers, 1);
	EXPECT_EQ(distinct, 300000);
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
		EXPECT_EQ(node_of(first), 6);
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

TEST(Settings, MisconfigurationsGiveTheirDocumentedErrors) {
	Server not_preloaded("not_preloaded", {"snowflake.node = 1"});
	ASSERT_TRUE(not_preloaded.start());
	pqxx::connection conn = not_preloaded.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");

	Server no_node("no_node", {kPreload, "snowflake.fault_injection = on"});
	ASSERT_TRUE(no_node.start());
	pqxx::connection conn2 = no_node.connect();
	exec(conn2, {"CREATE EXTENSION snowflake", "CREATE ROLE app LOGIN"});
	EXPECT_EQ(sqlstate_of(conn2, "SELECT snowflake_nextval()"), "55000");
	exec(conn2, {"SET ROLE app"});
	EXPECT_EQ(sqlstate_of(conn2, "SELECT snowflake_inject_clock_offset(-1000)"), "42501");

	Server clash("backfill_clash", {kPreload, "snowflake.node = 1023", "snowflake.backfill_node = 1023"});
	ASSERT_TRUE(clash.start());
	pqxx::connection conn3 = clash.connect();
	exec(conn3, {"CREATE EXTENSION snowflake"});
	EXPECT_EQ(sqlstate_of(conn3, "SELECT snowflake_nextval()"), "55000");
	EXPECT_TRUE(clash.wait_for_log("snowflake.node 1023 is reserved for backfilled IDs", 5s));
}

} // namespace
} // namespace snowflake::test
