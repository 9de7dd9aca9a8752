// pg_dump / pg_restore round trip: a database whose tables take their IDs from
// snowflake_nextval() and index snowflake_timestamp(id) is dumped in custom
// format and restored into a fresh server on the same node. The restore must
// succeed without a message, keep every row and give valid indexes (amcheck),
// and the restored server's new IDs must be above every restored one.
#include "server.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// Both servers: node 4. The wait policy keeps IDs from running ahead of the
// clock, so every dumped ID is older than the dump, and a server started later
// on the same node issues above them; with the default policy that holds once
// its clock passes the last ID's time (at most max_clock_drift after the dump).
const std::vector<std::string> kConf = {"shared_preload_libraries = 'snowflake'", "snowflake.node = 4",
                                        "snowflake.clock_policy = wait"};

// The text of a file; empty if there is none.
std::string file_text(const std::string &path) {
	std::ifstream in(path);
	std::stringstream text;
	text << in.rdbuf();
	return text.str();
}

// The first column of the first row of query, as text.
std::string query_text(pqxx::connection &conn, const std::string &query) {
	pqxx::work tx{conn};
	const std::string value = one_value<std::string>(tx, query);
	tx.commit();
	return value;
}

// The definitions of every index in the public schema, sorted, one per line.
const std::string kIndexes = "SELECT string_agg(d, E'\\n' ORDER BY d) FROM (SELECT pg_get_indexdef(i.indexrelid) AS d "
                             "FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
                             "WHERE c.relnamespace = 'public'::regnamespace) AS defs";

// The orders up to the time of the middle one, found through snowflake_timestamp(id).
const std::string kByTime = "SELECT count(*) FROM orders WHERE snowflake_timestamp(id) <= (SELECT "
                            "snowflake_timestamp(id) FROM orders ORDER BY id OFFSET 9999 LIMIT 1)";

// The largest ID in both tables.
const std::string kMaxId = "SELECT greatest((SELECT max(id) FROM orders), (SELECT max(id) FROM events))";

TEST(DumpRestore, RoundTripIntoAFreshServerOnTheSameNode) {
	const std::string dump = work_dir() + "/snowflake.dump";
	Server source("dump_source", kConf);
	ASSERT_TRUE(source.start());
	pqxx::connection src = source.connect();
	exec(src, {"CREATE EXTENSION snowflake",
	           "CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text NOT NULL)",
	           "CREATE INDEX orders_time ON orders (snowflake_timestamp(id))",
	           "CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), order_id bigint "
	           "REFERENCES orders, kind text NOT NULL)",
	           "CREATE INDEX events_time_kind ON events (snowflake_timestamp(id), kind)",
	           "CREATE INDEX events_node ON events (((snowflake_parse(id)).node))",
	           "INSERT INTO orders (item) SELECT 'item ' || n FROM generate_series(1, 20000) n",
	           "INSERT INTO events (order_id, kind) SELECT id, 'placed' FROM orders",
	           "INSERT INTO events (order_id, kind) SELECT id, 'shipped' FROM orders WHERE id % 3 = 0"});
	const long long orders = query_int(src, "SELECT count(*) FROM orders");
	const long long events = query_int(src, "SELECT count(*) FROM events");
	const long long last_id = query_int(src, kMaxId);
	const std::string indexes = query_text(src, kIndexes);
	const long long orders_by_time = query_int(src, kByTime);

	ASSERT_EQ(run(pg_bin() + "/pg_dump -Fc -h " + source.socket_dir() + " -U postgres -d postgres -f " + dump +
	              " 2>" + dump + ".dump_err"),
	          0)
	    << file_text(dump + ".dump_err");
	EXPECT_EQ(file_text(dump + ".dump_err"), "");
	source.stop();

	Server target("dump_target", kConf);
	ASSERT_TRUE(target.start());
	const int status = run(pg_bin() + "/pg_restore --exit-on-error -h " + target.socket_dir() +
	                       " -U postgres -d postgres " + dump + " 2>" + dump + ".restore_err");
	const std::string restore_err = file_text(dump + ".restore_err");
	EXPECT_EQ(status, 0) << restore_err;
	EXPECT_EQ(restore_err, "");

	pqxx::connection dst = target.connect();
	EXPECT_EQ(query_int(dst, "SELECT count(*) FROM orders"), orders);
	EXPECT_EQ(query_int(dst, "SELECT count(*) FROM events"), events);
	EXPECT_EQ(query_int(dst, kMaxId), last_id);
	EXPECT_EQ(query_text(dst, kIndexes), indexes);
	EXPECT_EQ(query_int(dst, "SELECT count(*) FROM pg_index WHERE NOT (indisvalid AND indisready AND indislive)"), 0);
	// Each B-tree index against its table: every row indexed, under the key its expression gives now.
	exec(dst, {"CREATE EXTENSION amcheck"});
	EXPECT_EQ(query_int(dst, "SELECT count(*) FROM (SELECT bt_index_check(i.indexrelid, true) FROM pg_index i JOIN "
	                         "pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = 'public'::regnamespace AND NOT "
	                         "EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e')) AS c"),
	          5);
	// The expression index answers a time query, with the rows the source counted.
	EXPECT_EQ(query_int(dst, kByTime), orders_by_time);
	{
		pqxx::work tx{dst};
		tx.exec("SET LOCAL enable_seqscan = off");
		std::string plan;
		for (const auto &row : tx.exec("EXPLAIN " + kByTime))
			plan += row[0].as<std::string>() + "\n";
		EXPECT_NE(plan.find("orders_time"), std::string::npos) << plan;
		EXPECT_EQ(one_value<long long>(tx, kByTime), orders_by_time);
	}

	// New rows on the restored server take IDs above every restored one.
	exec(dst, {"INSERT INTO orders (item) SELECT 'after restore ' || n FROM generate_series(1, 1000) n",
	           "INSERT INTO events (order_id, kind) SELECT id, 'placed' FROM orders WHERE item LIKE 'after restore%'"});
	const long long first_new =
	    query_int(dst, "SELECT least(min(o.id), min(e.id)) FROM orders o JOIN events e ON e.order_id = o.id "
	                   "WHERE o.item LIKE 'after restore%'");
	EXPECT_EQ(query_int(dst, "SELECT count(*) FROM events"), events + 1000);
	EXPECT_GT(first_new, last_id);
	std::cout << "  restored " << orders << " orders and " << events << " events, 5 indexes valid; first new ID is "
	          << (first_new - last_id) / (1LL << 22) << " ms above the last restored one\n";
}

} // namespace
} // namespace snowflake::test
