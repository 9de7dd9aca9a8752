// Many servers, one ID space: writers with their own snowflake.node, merged
// into an aggregator by PostgreSQL's logical replication (publications and
// subscriptions). The aggregator must end with every row, no conflict, every
// row's node matching its writer, unique IDs, and ID order matching creation
// order; and two writers given the same node must be caught by
// snowflake_node_origins() before they collide, and then collide for real.
#include "generator.hpp"
#include "server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// The replicated table; writer and created_at are filled in on the writer.
const std::string kItems = "CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), "
                           "writer text NOT NULL DEFAULT current_setting('cluster_name'), "
                           "created_at timestamptz NOT NULL DEFAULT clock_timestamp(), payload text)";

// A writer: its own node, logical WAL, and a publication of items.
std::unique_ptr<Server> start_writer(const std::string &name, int node) {
	auto server = std::make_unique<Server>(
	    name, std::vector<std::string>{kPreload, "snowflake.node = " + std::to_string(node), "wal_level = logical",
	                                   "cluster_name = '" + name + "'"});
	EXPECT_TRUE(server->start()) << name;
	pqxx::connection conn = server->connect();
	exec(conn, {"CREATE EXTENSION snowflake", kItems, "CREATE PUBLICATION items_pub FOR TABLE items"});
	return server;
}

// An aggregator: generates nothing (no node), records each transaction's origin.
std::unique_ptr<Server> start_aggregator(const std::string &name) {
	auto server = std::make_unique<Server>(name, std::vector<std::string>{kPreload, "track_commit_timestamp = on"});
	EXPECT_TRUE(server->start()) << name;
	pqxx::connection conn = server->connect();
	exec(conn, {"CREATE EXTENSION snowflake", kItems});
	return server;
}

// Subscribes the aggregator to a writer and waits for the initial sync to finish.
void subscribe(Server &aggregator, Server &writer, const std::string &name) {
	pqxx::connection conn = aggregator.connect();
	{
		pqxx::nontransaction outside{conn}; // CREATE SUBSCRIPTION makes a slot: no transaction block
		outside.exec("CREATE SUBSCRIPTION sub_" + name + " CONNECTION '" + writer.conninfo() +
		             "' PUBLICATION items_pub");
	}
	ASSERT_TRUE(wait_until(
	    [&] {
		    return query_int(conn, "SELECT count(*) FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = "
		                           "r.srsubid WHERE s.subname = 'sub_" +
		                               name + "' AND r.srsubstate = 'r'") == 1;
	    },
	    60s))
	    << name;
}

// Waits until the aggregator has applied all of writer's WAL written so far (by LSN); the seconds it took.
double wait_for_catch_up(Server &writer, const std::string &name) {
	pqxx::connection conn = writer.connect();
	pqxx::work tx{conn};
	const std::string target = one_value<std::string>(tx, "SELECT pg_current_wal_lsn()::text");
	tx.commit();
	const auto started = std::chrono::steady_clock::now();
	const bool caught_up = wait_until(
	    [&] {
		    return query_int(conn, "SELECT count(*) FROM pg_stat_replication WHERE application_name = 'sub_" + name +
		                               "' AND replay_lsn >= '" + target + "'") == 1;
	    },
	    180s);
	EXPECT_TRUE(caught_up) << name;
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

// Apply and sync errors of all subscriptions on the aggregator: every *_error_count column, since
// PostgreSQL 19 split sync_error_count by what is synchronised.
long long subscription_errors(pqxx::connection &conn) {
	return query_int(conn, "SELECT coalesce(sum(e.value::bigint), 0) FROM pg_stat_subscription_stats s, "
	                       "jsonb_each_text(to_jsonb(s)) e WHERE e.key LIKE '%error_count'");
}

TEST(MultiNode, ThreeWritersMergeIntoOneAggregatorWithoutConflicts) {
	const std::vector<std::pair<std::string, int>> specs = {{"writer_a", 1}, {"writer_b", 2}, {"writer_c", 3}};
	std::vector<std::unique_ptr<Server>> writers;
	for (const auto &[name, node] : specs)
		writers.push_back(start_writer(name, node));
	std::unique_ptr<Server> aggregator = start_aggregator("aggregator");
	for (size_t w = 0; w < writers.size(); ++w)
		subscribe(*aggregator, *writers[w], specs[w].first);

	// Three connections per writer, 35 transactions of 1,000 rows each: 315,000 rows in all.
	constexpr int kConnections = 3, kBatches = 35, kBatch = 1000;
	std::vector<double> seconds(writers.size());
	std::vector<std::string> errors;
	std::mutex errors_lock;
	std::vector<std::thread> threads;
	const auto started = std::chrono::steady_clock::now();
	for (size_t w = 0; w < writers.size(); ++w)
		for (int c = 0; c < kConnections; ++c)
			threads.emplace_back([&, w] {
				try {
					pqxx::connection conn = writers[w]->connect();
					for (int b = 0; b < kBatches; ++b)
						exec(conn, {"INSERT INTO items (payload) SELECT 'row ' || g FROM generate_series(1, " +
						            std::to_string(kBatch) + ") AS g"});
				} catch (const std::exception &e) {
					std::lock_guard<std::mutex> guard(errors_lock);
					errors.push_back(e.what());
				}
				std::lock_guard<std::mutex> guard(errors_lock);
				seconds[w] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
			});
	for (std::thread &t : threads)
		t.join();
	EXPECT_TRUE(errors.empty()) << errors.front();

	const long long per_writer = static_cast<long long>(kConnections) * kBatches * kBatch;
	double lag = 0;
	for (size_t w = 0; w < writers.size(); ++w) {
		const double catch_up = wait_for_catch_up(*writers[w], specs[w].first);
		lag = std::max(lag, catch_up);
		std::cout << "  " << specs[w].first << " (node " << specs[w].second << "): " << per_writer << " rows at "
		          << static_cast<long long>(per_writer / seconds[w]) << " rows/s\n";
	}

	pqxx::connection conn = aggregator->connect();
	const long long rows = query_int(conn, "SELECT count(*) FROM items");
	const long long distinct = query_int(conn, "SELECT count(DISTINCT id) FROM items");
	const long long conflicts = subscription_errors(conn);
	const long long wrong_node =
	    query_int(conn, "SELECT count(*) FROM items WHERE (snowflake_parse(id)).node <> "
	                    "CASE writer WHEN 'writer_a' THEN 1 WHEN 'writer_b' THEN 2 WHEN 'writer_c' THEN 3 END");
	// Ordered by ID, how far back in creation time does a row ever go? (0 if never.)
	const long long inversion_us =
	    query_int(conn, "SELECT coalesce(max(extract(epoch FROM previous - created_at) * 1000000), 0)::bigint FROM "
	                    "(SELECT created_at, lag(created_at) OVER (ORDER BY id) AS previous FROM items) AS s");
	const long long shared_nodes =
	    query_int(conn, "SELECT count(*) FROM snowflake_node_origins('items') WHERE shared_node");
	const long long origins = query_int(conn, "SELECT count(*) FROM snowflake_node_origins('items')");
	const bool log_has_errors = aggregator->log().find("ERROR:") != std::string::npos;
	std::cout << "  aggregator: " << rows << " rows (" << distinct << " distinct IDs), " << conflicts
	          << " conflicts, caught up " << lag << " s after the writers finished; largest ID-order inversion "
	          << inversion_us / 1000.0 << " ms\n";

	EXPECT_EQ(rows, per_writer * 3);
	EXPECT_EQ(distinct, rows);
	EXPECT_EQ(conflicts, 0);
	EXPECT_FALSE(log_has_errors) << aggregator->log();
	EXPECT_EQ(wrong_node, 0);
	// One clock for all servers here: an inversion can only come from IDs borrowing ahead (1 s at most).
	EXPECT_LE(inversion_us, 1000000);
	EXPECT_EQ(origins, 3);
	EXPECT_EQ(shared_nodes, 0);
}

TEST(MultiNode, TwoWritersWithTheSameNodeAreFlaggedThenCollide) {
	std::unique_ptr<Server> writer_e = start_writer("writer_e", 9);
	std::unique_ptr<Server> writer_f = start_writer("writer_f", 9); // the mistake
	std::unique_ptr<Server> aggregator = start_aggregator("aggregator_g");
	subscribe(*aggregator, *writer_e, "writer_e");
	subscribe(*aggregator, *writer_f, "writer_f");

	// One after the other, the two writers' IDs do not collide yet, but the detector sees node 9 twice.
	for (Server *writer : {writer_e.get(), writer_f.get()}) {
		pqxx::connection conn = writer->connect();
		exec(conn, {"INSERT INTO items (payload) SELECT 'row' FROM generate_series(1, 1000)"});
	}
	wait_for_catch_up(*writer_e, "writer_e");
	wait_for_catch_up(*writer_f, "writer_f");
	pqxx::connection conn = aggregator->connect();
	const long long flagged =
	    query_int(conn, "SELECT count(*) FROM snowflake_node_origins('items') WHERE node = 9 AND shared_node");
	std::cout << "  snowflake_node_origins() on the aggregator flags node 9 from " << flagged << " origins\n";
	EXPECT_EQ(flagged, 2);

	// Writing at the same time, the two issue the same IDs, and the aggregator hits duplicate keys.
	std::atomic<bool> stop{false};
	std::vector<std::thread> threads;
	for (Server *writer : {writer_e.get(), writer_f.get()})
		threads.emplace_back([&, writer] {
			pqxx::connection writing = writer->connect();
			while (!stop)
				exec(writing, {"INSERT INTO items (payload) VALUES ('row')"});
		});
	const auto started = std::chrono::steady_clock::now();
	const bool collided = wait_until([&] { return subscription_errors(conn) > 0; }, 30s);
	stop = true;
	for (std::thread &t : threads)
		t.join();
	std::cout << "  the same node on two writers: " << subscription_errors(conn) << " apply conflicts after "
	          << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() << " s\n";
	EXPECT_TRUE(collided);
	// PG 18 logs the apply conflict by its kind and names the index in the detail.
	const std::string duplicate_key = query_int(conn, "SELECT current_setting('server_version_num')::int") >= 180000
	                                      ? "Key already exists in unique index \"items_pkey\""
	                                      : "duplicate key value violates unique constraint \"items_pkey\"";
	EXPECT_TRUE(aggregator->wait_for_log(duplicate_key, 5s));
}

TEST(MultiNode, ShardsBehindPostgresFdwAnswerTimeRangesShardByShard) {
	// Two shards write their own IDs; a coordinator sees them as one table, partitioned by node, and a
	// time-range query becomes an ID range that each shard answers from its own primary key.
	std::unique_ptr<Server> shard_4 = start_writer("shard_4", 4);
	std::unique_ptr<Server> shard_5 = start_writer("shard_5", 5);
	// Shard 4 writes inside [from, to); shard 5 writes after it.
	std::string from, to;
	for (Server *shard : {shard_4.get(), shard_5.get()}) {
		pqxx::connection conn = shard->connect();
		pqxx::work tx{conn};
		const std::string before = one_value<std::string>(tx, "SELECT clock_timestamp()::text");
		tx.exec("INSERT INTO items (payload) SELECT 'row' FROM generate_series(1, 20000)");
		const std::string after = one_value<std::string>(tx, "SELECT (clock_timestamp() + interval '1 ms')::text");
		tx.commit();
		if (from.empty()) {
			from = before;
			to = after;
		}
	}
	Server coordinator("coordinator", {kPreload});
	ASSERT_TRUE(coordinator.start());
	pqxx::connection conn = coordinator.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "CREATE EXTENSION postgres_fdw",
	            "CREATE TABLE items (id bigint NOT NULL, writer text, created_at timestamptz, payload text) "
	            "PARTITION BY LIST (((id >> 12) & 1023))"});
	for (const auto &[node, shard] : {std::pair{4, shard_4.get()}, std::pair{5, shard_5.get()}}) {
		const std::string n = std::to_string(node);
		exec(conn, {"CREATE SERVER shard_" + n + " FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '" +
		                shard->socket_dir() + "', dbname 'postgres')",
		            "CREATE USER MAPPING FOR postgres SERVER shard_" + n + " OPTIONS (user 'postgres')",
		            "CREATE FOREIGN TABLE items_" + n + " PARTITION OF items FOR VALUES IN (" + n + ") SERVER shard_" +
		                n + " OPTIONS (table_name 'items')"});
	}
	// A literal range: its ID bounds are constants, which postgres_fdw sends to the shards.
	const std::string range = "tstzrange('" + from + "', '" + to + "')";
	long long expected = 0;
	for (Server *shard : {shard_4.get(), shard_5.get()}) {
		pqxx::connection on_shard = shard->connect();
		expected += query_int(on_shard, "SELECT count(*) FROM items WHERE snowflake_timestamp(id) <@ " + range);
	}
	pqxx::work tx{conn};
	const long long across = one_value<long long>(tx, "SELECT count(*) FROM items WHERE id <@ " + range);
	const long long ids = one_value<long long>(tx, "SELECT count(DISTINCT id) FROM items");
	std::string plan;
	for (const auto &row : tx.exec("EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM items WHERE id <@ " + range))
		plan += row[0].as<std::string>() + "\n";
	tx.commit();
	size_t pushed_down = 0;
	for (size_t at = plan.find("Remote SQL:"); at != std::string::npos; at = plan.find("Remote SQL:", at + 1))
		pushed_down += plan.find("((id >= ", at) < plan.find('\n', at);
	std::cout << "  coordinator over 2 shards: " << ids << " distinct IDs of 40000; " << across
	          << " rows in the time range (shards say " << expected << "), the ID range pushed down to " << pushed_down
	          << " shards\n";
	EXPECT_EQ(ids, 40000);
	EXPECT_EQ(across, expected);
	EXPECT_EQ(across, 20000);
	EXPECT_EQ(pushed_down, 2u) << plan;
}

} // namespace
} // namespace snowflake::test
