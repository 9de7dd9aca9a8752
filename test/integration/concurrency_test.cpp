// Integration tests of many callers at once against a real server: eight
// connections selecting and inserting IDs together, and the workers of a
// parallel plan sharing the one generator. No ID is shared, none goes
// backwards within a caller, and each decodes to the server's node and to the
// time of the run.
#include "generator.hpp"
#include "server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <thread>

namespace snowflake::test {
namespace {

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
			wrong_node += kTwitter.decompose(id).node != 7;
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

} // namespace
} // namespace snowflake::test
