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

const std::string kPreload = "shared_preload_libraries = 'snowflake'";

// Wall-clock Unix milliseconds, to bracket the times IDs decode to.
int64_t unix_ms() {
	return std::chrono::duration_cast<std::chrono::milliseconds>(
	           std::chrono::system_clock::now().time_since_epoch())
	    .count();
}

// Runs statements, each in its own transaction.
void exec(pqxx::connection &conn, std::initializer_list<std::string> statements) {
	for (const std::string &sql : statements) {
		pqxx::work tx{conn};
		tx.exec(sql);
		tx.commit();
	}
}

// The node an ID decodes to.
int32_t node_of(long long id) {
	return decompose(id).node;
}

// Polls new connections until SHOW name gives value: the postmaster has then reloaded.
bool wait_for_setting(const Server &server, const std::string &name, const std::string &value) {
	const auto deadline = std::chrono::steady_clock::now() + 10s;
	do {
		pqxx::connection conn = server.connect();
		pqxx::work tx{conn};
		if (tx.exec1("SHOW " + name)[0].as<std::string>() == value)
			return true;
		std::this_thread::sleep_for(20ms);
	} while (std::chrono::steady_clock::now() < deadline);
	return false;
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
			const std::string query =
			    c % 2 == 0 ? "SELECT snowflake_nextval() FROM generate_series(1, " + batch + ")"
			               : "INSERT INTO items (payload) SELECT 'row' FROM generate_series(1, " + batch + ") RETURNING id";
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
			const int64_t ms = decompose(id).time_ms + kTwitterEpochMs;
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

TEST(Restart, CrashRestartResumesAboveBorrowedIds) {
	Server server("crash", {kPreload, "snowflake.node = 5", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	// IDs 800 ms ahead of the true clock, as a burst or a corrected clock would leave them.
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_inject_clock_offset(800)"});
	const long long before = query_int(conn, "SELECT max(snowflake_nextval()) FROM generate_series(1, 10000)");

	pqxx::connection victim = server.connect();
	ASSERT_EQ(::kill(victim.backendpid(), SIGKILL), 0);
	ASSERT_TRUE(server.wait_for_log("all server processes terminated; reinitializing", 10s));
	ASSERT_TRUE(server.wait_until_accepting(30s));

	pqxx::connection again = server.connect();
	const long long after = query_int(again, "SELECT snowflake_nextval()");
	std::cout << "  first ID after the crash restart is " << after - before << " above the last before it\n";
	EXPECT_GT(after, before);
	EXPECT_EQ(node_of(after), 5);
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
		const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
		                                                                           started);
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
	ASSERT_TRUE(server.wait_for_log("5000 is outside the valid range for parameter \"snowflake.node\"", 10s));
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	EXPECT_EQ(node_of(query_int(conn, "SELECT snowflake_nextval()")), 7);
}

TEST(Settings, OutOfRangeOrMalformedSettingsStopTheServerFromStarting) {
	const std::vector<std::pair<std::string, std::string>> cases = {
	    {"snowflake.node = 1024", "1024 is outside the valid range for parameter \"snowflake.node\" (-1 .. 1023)"},
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

} // namespace
} // namespace snowflake::test
