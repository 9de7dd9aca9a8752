// Integration tests of the node check's background worker slot (issue 34,
// item 13): with snowflake.node_check_interval = 0 no node check worker
// exists and none holds a max_worker_processes slot, so other background
// workers (here a parallel query's) can have it; a reload to a positive
// interval starts the check without a restart, and back to 0 stops it and
// frees the slot. When every slot is taken, the check says 'no worker slot',
// a WARNING names max_worker_processes once, and the check starts as soon as
// a slot is free.
#include "server.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// The conf lines of a server with slots background workers in all and no logical replication
// launcher (which would take one): the renewal worker takes one, the node check one while it runs.
std::vector<std::string> few_slots(int slots, int interval_s) {
	return {kPreload, "snowflake.node = 3", "snowflake.node_check_interval = " + std::to_string(interval_s),
	        "max_worker_processes = " + std::to_string(slots), "max_logical_replication_workers = 0"};
}

// What snowflake_node_status().node_check says.
std::string node_check(const Server &server) {
	pqxx::connection conn = server.connect();
	pqxx::work tx{conn};
	return one_value<std::string>(tx, "SELECT node_check FROM snowflake_node_status()");
}

// Waits up to timeout until node_check is expected; false if it never was.
bool node_check_becomes(const Server &server, const std::string &expected, std::chrono::milliseconds timeout) {
	return wait_until([&] { return node_check(server) == expected; }, timeout);
}

// How many node check workers pg_stat_activity shows.
long long node_check_workers(const Server &server) {
	pqxx::connection conn = server.connect();
	return query_int(conn, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'snowflake node check'");
}

// Sets snowflake.node_check_interval in postgresql.conf and reloads; false if the reload was not seen.
bool reload_interval(Server &server, int interval_s) {
	server.append_conf("snowflake.node_check_interval = " + std::to_string(interval_s));
	server.reload();
	return server.wait_for_setting("snowflake.node_check_interval", interval_s == 0 ? "0" : std::to_string(interval_s) + "s");
}

// Makes the table a parallel query scans with two workers planned.
void make_parallel_table(const Server &server) {
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE TABLE spread AS SELECT g FROM generate_series(1, 100000) g",
	            "ALTER TABLE spread SET (parallel_workers = 2)", "ANALYZE spread"});
}

// How many of the two parallel workers planned for a scan of spread started: one a free slot.
int workers_launched(const Server &server) {
	pqxx::connection conn = server.connect();
	pqxx::nontransaction tx{conn};
	tx.exec("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
	        "SET min_parallel_table_scan_size = 0");
	const std::string marker = "Workers Launched: ";
	for (const auto &row : tx.exec("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM spread")) {
		const std::string line = row[0].as<std::string>();
		const auto at = line.find(marker);
		if (at != std::string::npos)
			return std::stoi(line.substr(at + marker.size()));
	}
	return -1; // no parallel plan
}

// Waits up to 10 s until a scan of spread launches expected workers (the slots of a scan just ended
// are free once the postmaster has seen its workers exit); false if none did.
bool launches(const Server &server, int expected) {
	return wait_until([&] { return workers_launched(server) == expected; }, 10s);
}

// A parallel query whose one worker sleeps, holding a background worker slot until release().
class SlotHolder {
public:
	// Starts the query on a connection of its own, and waits until its worker runs; held() says whether.
	explicit SlotHolder(const Server &server) : server_(server), conn_(server.connect()) {
		pid_ = query_int(conn_, "SELECT pg_backend_pid()");
		const bool debug = query_int(conn_, "SELECT current_setting('server_version_num')::int") >= 160000;
		const std::string force = debug ? "debug_parallel_query" : "force_parallel_mode"; // renamed in 16
		thread_ = std::thread([this, force] {
			try {
				pqxx::nontransaction tx{conn_};
				tx.exec("SET " + force + " = on; SELECT pg_sleep(300)");
			} catch (const std::exception &) { // cancelled by release()
			}
		});
		pqxx::connection watch = server.connect();
		held_ = wait_until(
		    [&] { return query_int(watch, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'parallel "
		                                  "worker'") == 1; },
		    10s);
	}
	~SlotHolder() {
		release();
	}
	SlotHolder(const SlotHolder &) = delete;
	SlotHolder &operator=(const SlotHolder &) = delete;

	// Whether the worker started, and holds a slot.
	bool held() const {
		return held_;
	}
	// Cancels the query, which ends its worker, and waits for it.
	void release() {
		if (!thread_.joinable())
			return;
		pqxx::connection admin = server_.connect();
		exec(admin, {"SELECT pg_cancel_backend(" + std::to_string(pid_) + ")"});
		thread_.join();
	}

private:
	const Server &server_;
	pqxx::connection conn_;
	long long pid_ = 0;
	bool held_ = false;
	std::thread thread_;
};

// Three slots: with the interval at 0 only the renewal worker takes one, so a parallel query gets the
// other two (it got one while an idle node check worker sat in the third). A reload to 1 s starts the
// check, whose worker takes a slot; a reload back to 0 ends it and gives the slot back.
TEST(NodeCheckSlot, AnIntervalOfZeroTakesNoWorkerSlot) {
	Server server("check_slot_zero", few_slots(3, 0));
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	make_parallel_table(server);
	EXPECT_TRUE(node_check_becomes(server, "off", 5s)) << server.log(); // 'starting' until the renewer's first round
	EXPECT_EQ(node_check_workers(server), 0);
	EXPECT_TRUE(launches(server, 2)) << "workers launched: " << workers_launched(server);
	EXPECT_TRUE(server.wait_for_log("snowflake: the node check is off (snowflake.node_check_interval = 0)", 5s))
	    << server.log();

	ASSERT_TRUE(reload_interval(server, 1));
	ASSERT_TRUE(node_check_becomes(server, "ok", 15s)) << server.log();
	EXPECT_EQ(node_check_workers(server), 1);
	EXPECT_TRUE(launches(server, 1)) << "workers launched: " << workers_launched(server);

	ASSERT_TRUE(reload_interval(server, 0));
	EXPECT_TRUE(wait_until([&] { return node_check_workers(server) == 0; }, 10s)) << server.log();
	EXPECT_EQ(node_check(server), "off");
	EXPECT_TRUE(launches(server, 2)) << "workers launched: " << workers_launched(server);
	EXPECT_EQ(occurrences(server.log(), "snowflake: the node check is off"), 2) << server.log();
}

// Two slots, one the renewal worker's and one a parallel query's: a reload to a positive interval finds
// no slot for the check, which says 'no worker slot' and why, once, while it tries again every second;
// once the query ends, the check starts by itself.
TEST(NodeCheckSlot, NoFreeSlotIsReportedAndTriedAgain) {
	Server server("check_slot_none", few_slots(2, 0));
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	ASSERT_TRUE(node_check_becomes(server, "off", 5s)) << server.log();
	SlotHolder holder(server);
	ASSERT_TRUE(holder.held()) << server.log();

	ASSERT_TRUE(reload_interval(server, 1));
	ASSERT_TRUE(node_check_becomes(server, "no worker slot", 10s)) << server.log();
	const std::string warning =
	    "WARNING:  snowflake: the node check cannot start: every background worker slot is taken "
	    "(max_worker_processes = 2)";
	ASSERT_TRUE(server.wait_for_log(warning, 5s)) << server.log();
	EXPECT_NE(server.log().find("HINT:  Raise max_worker_processes"), std::string::npos) << server.log();
	EXPECT_EQ(node_check_workers(server), 0);
	// Each second's new attempt stamps checked_at; 3 s of them say nothing more.
	const std::string until = [&] {
		pqxx::work tx{conn};
		return one_value<std::string>(tx, "SELECT (clock_timestamp() + interval '3 s')::text");
	}();
	EXPECT_TRUE(wait_until(
	    [&] {
		    pqxx::work tx{conn};
		    return one_value<bool>(tx, "SELECT coalesce(checked_at > '" + until + "', false) FROM snowflake_node_status()");
	    },
	    10s));
	EXPECT_EQ(node_check(server), "no worker slot");
	EXPECT_EQ(occurrences(server.log(), warning), 1) << server.log();

	holder.release();
	EXPECT_TRUE(node_check_becomes(server, "ok", 15s)) << server.log();
	EXPECT_EQ(node_check_workers(server), 1);
}

} // namespace
} // namespace snowflake::test
