// Integration tests of a change of snowflake.epoch or snowflake.layout on a
// server that has issued IDs: the start refuses, and its HINT is followed as
// written, through snowflake_adopt_layout() (layout_record.hpp). 0.4.0's hint said to
// remove snowflake.state; with an epoch 60 s later that gave IDs below the
// ones issued before. Now every ID after the change is above every ID before,
// after pg_upgrade into a new epoch too (the epoch on record in the catalog).
#include "generator.hpp"
#include "server.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <iostream>
#include <regex>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// The message of the ERROR query fails with on conn (DETAIL and HINT included), "" when it succeeds.
std::string error_of(pqxx::connection &conn, const std::string &query) {
	try {
		exec(conn, {query});
		return "";
	} catch (const pqxx::sql_error &e) {
		return e.what();
	}
}

// A server on node 26 with a table of n IDs and an index on their time; the largest ID.
long long issue_into_a_table(Server &server, int n) {
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake",
	            "CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), n int)",
	            "CREATE INDEX orders_time ON orders (snowflake_timestamp(id))",
	            "INSERT INTO orders (n) SELECT g FROM generate_series(1, " + std::to_string(n) + ") AS g"});
	return query_int(conn, "SELECT max(id) FROM orders");
}

// Follows the hint of a refused adoption: restarts server with the latest epoch it names.
void restart_with_the_named_epoch(Server &server, const std::string &hint) {
	std::smatch latest;
	ASSERT_TRUE(std::regex_search(hint, latest, std::regex("Set snowflake.epoch to ([0-9]+) or earlier"))) << hint;
	server.stop();
	server.append_conf("snowflake.epoch = '" + latest[1].str() + "'");
	ASSERT_TRUE(server.start());
}

// After the adopting restart: the hint's REINDEX, then n more rows; every new ID must be above high.
void check_ids_after_adopting(Server &server, long long high, int n) {
	pqxx::connection conn = server.connect();
	exec(conn, {"REINDEX INDEX orders_time",
	            "INSERT INTO orders (n) SELECT g FROM generate_series(1, " + std::to_string(n) + ") AS g"});
	EXPECT_EQ(query_int(conn, "SELECT count(*) FROM orders WHERE id > " + std::to_string(high)), n)
	    << "an ID after the change is not above every ID before it";
	EXPECT_EQ(query_int(conn, "SELECT count(DISTINCT id) FROM orders"), 2 * n);
	// The reindexed index answers as the decoding does now.
	exec(conn, {"SET enable_seqscan = off"});
	EXPECT_EQ(query_int(conn, "SELECT count(*) FROM orders WHERE snowflake_timestamp(id) >= (SELECT "
	                          "min(snowflake_timestamp(id)) FROM orders)"),
	          2 * n);
}

// Whether the database of conn has the epoch in effect on record (snowflake_layout_on_record()).
bool records_the_epoch_in_effect(pqxx::connection &conn) {
	return query_int(conn, "SELECT (epoch_ms = current_setting('snowflake.epoch')::bigint)::int "
	                       "FROM snowflake_layout_on_record()") == 1;
}

TEST(AdoptLayout, AnEpochMovedLaterIsRefusedThenAdoptedWhereNewIdsStayAbove) {
	Server server("adopt_later_epoch", {kPreload, "snowflake.node = 26"});
	ASSERT_TRUE(server.start());
	const long long high = issue_into_a_table(server, 20000);
	server.stop();
	server.append_conf("snowflake.epoch = '" + std::to_string(kTwitterEpochMs + 60000) + "'");
	ASSERT_TRUE(server.start());
	std::string hint;
	{
		pqxx::connection conn = server.connect();
		const std::string refused = error_of(conn, "SELECT snowflake_nextval()");
		EXPECT_NE(refused.find("run SELECT snowflake_adopt_layout() as a superuser, restart the server, and REINDEX"),
		          std::string::npos)
		    << refused;
		// Following it: adopting an epoch 60 s later would put new IDs below old ones, so it is refused,
		// and the hint names the latest epoch that works.
		hint = error_of(conn, "SELECT snowflake_adopt_layout()");
		std::cout << "  adopting an epoch 60 s later: " << hint << "\n";
	}
	restart_with_the_named_epoch(server, hint);
	if (::testing::Test::HasFatalFailure())
		return;
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_adopt_layout()"), "");
	}
	server.stop();
	ASSERT_TRUE(server.start());
	check_ids_after_adopting(server, high, 20000);
}

TEST(AdoptLayout, AnEarlierEpochIsAdoptedAtOnce) {
	Server server("adopt_earlier_epoch", {kPreload, "snowflake.node = 26"});
	ASSERT_TRUE(server.start());
	const long long high = issue_into_a_table(server, 20000);
	server.stop();
	server.append_conf("snowflake.epoch = '" + std::to_string(kTwitterEpochMs - 86400000) + "'");
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(1)"), "55000"); // decoding refuses too
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_adopt_layout()"), "");
		// Adopted already: a second call only says so.
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_adopt_layout()"), "");
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000"); // until the restart
	}
	server.stop();
	ASSERT_TRUE(server.start());
	check_ids_after_adopting(server, high, 20000);
	pqxx::connection conn = server.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_adopt_layout()"), "55000"); // nothing left to adopt
}

TEST(AdoptLayout, ALayoutWhoseIdsAreSmallerIsRefusedAndTheHintSaysToGoBack) {
	Server server("adopt_js53", {kPreload, "snowflake.node = 26"});
	ASSERT_TRUE(server.start());
	const long long high = issue_into_a_table(server, 1000);
	server.stop();
	server.append_conf("snowflake.layout = 'js53'");
	server.append_conf("snowflake.node = 6");
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		const std::string hint = error_of(conn, "SELECT snowflake_adopt_layout()");
		EXPECT_NE(hint.find("No epoch makes this layout's IDs larger"), std::string::npos) << hint;
		// A plain role may not adopt anything.
		exec(conn, {"CREATE ROLE plain LOGIN"});
	}
	{
		pqxx::connection plain{server.conninfo() + " user=plain"};
		EXPECT_EQ(sqlstate_of(plain, "SELECT snowflake_adopt_layout()"), "42501");
	}
	server.stop();
	server.append_conf("snowflake.layout = 'twitter'");
	server.append_conf("snowflake.node = 26");
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_GT(query_int(conn, "SELECT snowflake_nextval()"), high);
}

TEST(AdoptLayout, AnOlderFilePutBackBeforeAdoptingStillPutsNewIdsAboveEveryOldOne) {
	// 0.5.0 judged only the file: an older copy put back, the epoch changed and adopted as the hint
	// said, and 100,000 of 100,000 new IDs were values handed out before. The copy lacks the mark of
	// the latest clean shutdown, so the adoption takes pg_control's floor too, as a start does.
	Server server("adopt_stale_copy", {kPreload, "snowflake.node = 27", "snowflake.fault_injection = on",
	                                   "snowflake.max_clock_drift = '30s'"});
	ASSERT_TRUE(server.start());
	issue_into_a_table(server, 1000);
	const std::string copy = keep_a_copy_of_the_state_file(server);
	long long high = 0;
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"SELECT snowflake_inject_clock_offset(20000)", // IDs 20 s ahead of the copy's reservation
		            "INSERT INTO orders (n) SELECT g FROM generate_series(1, 100000) AS g"});
		high = query_int(conn, "SELECT max(id) FROM orders");
	}
	server.stop();
	std::filesystem::copy_file(copy, server.data_file("snowflake.state"), std::filesystem::copy_options::overwrite_existing);
	server.append_conf("snowflake.epoch = '" + std::to_string(kTwitterEpochMs + 60000) + "'");
	ASSERT_TRUE(server.start());
	std::string hint;
	{
		pqxx::connection conn = server.connect();
		hint = error_of(conn, "SELECT snowflake_adopt_layout()");
	}
	restart_with_the_named_epoch(server, hint);
	if (::testing::Test::HasFatalFailure())
		return;
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"SELECT snowflake_adopt_layout()"});
	}
	server.stop();
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"REINDEX INDEX orders_time", "INSERT INTO orders (n) SELECT -g FROM generate_series(1, 20000) AS g"});
	EXPECT_EQ(query_int(conn, "SELECT count(*) FROM orders WHERE n < 0 AND id <= " + std::to_string(high)), 0)
	    << "an ID after the adoption is not above every ID before it";
}

TEST(AdoptLayout, ASlowAdoptionWriteHoldsUpNoOtherCall) {
	// 0.5.0 held the generator's lock through the write: with it slowed to 20 s, snowflake_state()
	// and snowflake_nextval() took 18 s each, whatever statement_timeout said.
	Server server("adopt_slow_write", {kPreload, "snowflake.node = 28", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	issue_into_a_table(server, 1000);
	server.stop();
	server.append_conf("snowflake.epoch = '" + std::to_string(kTwitterEpochMs - 60000) + "'"); // adopted at once
	ASSERT_TRUE(server.start());
	pqxx::connection adopter = server.connect();
	exec(adopter, {"SELECT snowflake_inject_write_delay(5000)"});
	auto adoption = std::async(std::launch::async, [&] { return error_of(adopter, "SELECT snowflake_adopt_layout()"); });
	pqxx::connection other = server.connect();
	ASSERT_TRUE(wait_until([&] { return query_int(other, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
	                                                     "'SELECT snowflake_adopt_layout()%' AND state = 'active'") == 1; },
	                       5s));
	// A call that waited for the lock would end in 57014 (the timeout, once it had the lock) or wait 5 s.
	exec(other, {"SET statement_timeout = '1s'"});
	EXPECT_EQ(sqlstate_of(other, "SELECT state FROM snowflake_state()"), "") << "snowflake_state() waited for the write";
	EXPECT_EQ(query_int(other, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT snowflake_adopt_layout()%' "
	                           "AND state = 'active'"),
	          1)
	    << "the adoption's write was over before the other call: nothing was shown";
	// A second adoption meanwhile is refused, and its HINT followed as written (wait, then restart)
	// gives a server that issues IDs.
	EXPECT_EQ(sqlstate_of(other, "SELECT snowflake_adopt_layout()"), "55006");
	EXPECT_EQ(adoption.get(), "");
	server.stop();
	ASSERT_TRUE(server.start());
	pqxx::connection after = server.connect();
	EXPECT_EQ(sqlstate_of(after, "SELECT snowflake_nextval()"), "");
}

TEST(AdoptLayout, PgUpgradeIntoALaterEpochIsRefusedThenAdoptedWhereNewIdsStayAbove) {
	// snowflake.state and the WAL stay behind in pg_upgrade. 0.5.0 took the new cluster's epoch, 300 s
	// later, with no refusal: every new ID was below the old ones, and every old one decoded 300 s
	// later. The epoch on record in the catalog goes along, and the first call compares it.
	const std::string later = std::to_string(kTwitterEpochMs + 300000);
	Server old_cluster("upgrade_epoch_old", {kPreload, "snowflake.node = 26"});
	Server new_cluster("upgrade_epoch_new", {kPreload, "snowflake.node = 26", "snowflake.epoch = '" + later + "'"});
	ASSERT_TRUE(old_cluster.start());
	const long long high = issue_into_a_table(old_cluster, 20000);
	{
		pqxx::connection conn = old_cluster.connect();
		pqxx::nontransaction outside{conn}; // CREATE DATABASE: no transaction block
		outside.exec("CREATE DATABASE app");
	}
	{
		pqxx::connection app(old_cluster.conninfo() + " dbname=app");
		exec(app, {"CREATE EXTENSION snowflake"});
	}
	old_cluster.stop();
	pg_upgrade(old_cluster, new_cluster);
	// A restart before the first call: a start that has not compared the record writes no state file,
	// which the next start would take for the layout on record.
	ASSERT_TRUE(new_cluster.start());
	new_cluster.stop();
	ASSERT_TRUE(new_cluster.start());
	{
		pqxx::connection conn = new_cluster.connect();
		EXPECT_EQ(query_int(conn, "SELECT epoch_ms FROM snowflake_layout_on_record()"), kTwitterEpochMs);
		const std::string refused = error_of(conn, "SELECT snowflake_nextval()");
		EXPECT_NE(refused.find("snowflake.epoch changed from " + std::to_string(kTwitterEpochMs) + " to " + later),
		          std::string::npos)
		    << refused;
		EXPECT_EQ(query_int(conn, "SELECT (state = 'epoch changed')::int FROM snowflake_state()"), 1);
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(1)"), "55000"); // decoding refuses too
	}
	EXPECT_TRUE(new_cluster.wait_for_log("database \"postgres\" records that its IDs were issued with snowflake.epoch", 1s));
	// The refusal outlasts a restart, and its HINT is followed as written: the later epoch is refused
	// with the latest that works, which is adopted.
	new_cluster.stop();
	ASSERT_TRUE(new_cluster.start());
	std::string hint;
	{
		pqxx::connection conn = new_cluster.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
		hint = error_of(conn, "SELECT snowflake_adopt_layout()");
	}
	restart_with_the_named_epoch(new_cluster, hint);
	if (::testing::Test::HasFatalFailure())
		return;
	{
		pqxx::connection conn = new_cluster.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_adopt_layout()"), "");
		// The WARNING's hint: the same in every other database, which puts the epoch on record there.
		pqxx::connection app(new_cluster.conninfo() + " dbname=app");
		EXPECT_EQ(sqlstate_of(app, "SELECT snowflake_adopt_layout()"), "");
		EXPECT_TRUE(records_the_epoch_in_effect(app));
	}
	new_cluster.stop();
	ASSERT_TRUE(new_cluster.start());
	check_ids_after_adopting(new_cluster, high, 20000);
	pqxx::connection conn = new_cluster.connect();
	EXPECT_TRUE(records_the_epoch_in_effect(conn));
}

TEST(AdoptLayout, AfterPgUpgradeADatabaseWithARecordIsToldWhenOneWithoutIssuedFirst) {
	// A database without a record (one still at 0.5.0: here its record emptied) confirms the settings
	// for the server; a later first call in a database whose record differs then fails with 55000, and
	// its HINT (the record is stale: adopt here) is followed.
	Server old_cluster("upgrade_mixed_old", {kPreload, "snowflake.node = 27"});
	Server new_cluster("upgrade_mixed_new", {kPreload, "snowflake.node = 27",
	                                         "snowflake.epoch = '" + std::to_string(kTwitterEpochMs - 86400000) + "'"});
	ASSERT_TRUE(old_cluster.start());
	const long long high = issue_into_a_table(old_cluster, 1000);
	{
		pqxx::connection conn = old_cluster.connect();
		pqxx::nontransaction outside{conn};
		outside.exec("CREATE DATABASE legacy");
	}
	{
		pqxx::connection legacy(old_cluster.conninfo() + " dbname=legacy");
		exec(legacy, {"CREATE EXTENSION snowflake",
		              "CREATE OR REPLACE FUNCTION snowflake_layout_on_record(OUT epoch_ms bigint, OUT layout text) "
		              "LANGUAGE sql IMMUTABLE AS $$SELECT NULL::bigint, NULL::text$$"});
	}
	old_cluster.stop();
	pg_upgrade(old_cluster, new_cluster);
	ASSERT_TRUE(new_cluster.start());
	pqxx::connection legacy(new_cluster.conninfo() + " dbname=legacy");
	EXPECT_EQ(sqlstate_of(legacy, "SELECT snowflake_nextval()"), "");
	pqxx::connection conn = new_cluster.connect();
	const std::string refused = error_of(conn, "SELECT snowflake_nextval()");
	EXPECT_NE(refused.find("run SELECT snowflake_adopt_layout() here to put them on record"), std::string::npos)
	    << refused;
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_adopt_layout()"), "");
	EXPECT_TRUE(records_the_epoch_in_effect(conn));
	exec(conn, {"INSERT INTO orders (n) SELECT g FROM generate_series(1, 1000) AS g"});
	EXPECT_EQ(query_int(conn, "SELECT count(*) FROM orders WHERE id > " + std::to_string(high)), 1000);
}

} // namespace
} // namespace snowflake::test
