// Integration tests of the edges of issue 13 that need a server's start or its
// log: the settings in effect logged once at start, a single-user backend's
// node check (off), a misspelt snowflake.* line in postgresql.conf stopping
// the start, and snowflake_stats().state naming a node reserved for backfill
// after a reload.
#include "server.hpp"

#include <gtest/gtest.h>


namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

TEST(StartUp, LogsTheSettingsInEffectOnce) {
	Server server("startup_log", {kPreload, "snowflake.node = 3", "snowflake.layout = 'js53'",
	                              "snowflake.max_clock_drift = '2s'"});
	ASSERT_TRUE(server.start());
	const std::string line =
	    "snowflake: node 3 from snowflake.node, layout js53 (time=41,unit=1ms,node=5,seq=7), epoch 1288834974657 (";
	ASSERT_TRUE(server.wait_for_log(line, 5s)) << server.log();
	// Backends and a crash restart do not log it again: the postmaster loads the library once.
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_nextval()"});
	ASSERT_TRUE(server.crash_a_backend());
	pqxx::connection again = server.connect();
	exec(again, {"SELECT snowflake_nextval()"});
	EXPECT_NE(server.log().find("max_clock_drift 2000 ms, clock_policy borrow"), std::string::npos);
	EXPECT_EQ(occurrences(server.log(), "snowflake: node "), 1) << server.log();
}

// A single-user backend (postgres --single, the DBA's emergency room) runs no background worker:
// its node check is off, so its first call does not wait 10 s for a pass that never comes.
TEST(StartUp, ASingleUserBackendHasNoNodeCheckToWaitFor) {
	Server server("single_user", {kPreload, "snowflake.node = 3"});
	const std::string out = server.single_user(
	    "CREATE EXTENSION snowflake;\nSELECT node_check FROM snowflake_node_status();\n"
	    "SELECT (snowflake_parse(snowflake_nextval())).node;");
	EXPECT_NE(out.find("node_check = \"off\""), std::string::npos) << out;
	EXPECT_NE(out.find("node = \"3\""), std::string::npos) << out;
	EXPECT_EQ(out.find("ERROR"), std::string::npos) << out;
}

TEST(StartUp, AMisspeltSettingStopsTheStartNamingIt) {
	Server server("misspelt", {kPreload, "snowflake.nod = 3"});
	EXPECT_FALSE(server.start());
	const std::string log = server.log();
	EXPECT_NE(log.find("unrecognized configuration parameter \"snowflake.nod\""), std::string::npos) << log;
	EXPECT_NE(log.find("line "), std::string::npos) << log;
	EXPECT_NE(log.find("snowflake's settings are snowflake.layout, snowflake.epoch, snowflake.node,"), std::string::npos)
	    << log;
}

TEST(Stats, StateNamesANodeReservedForBackfill) {
	Server server("reserved", {kPreload, "snowflake.node = 5"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_nextval()"});
	server.append_conf("snowflake.backfill_node = 5");
	server.reload();
	ASSERT_TRUE(server.wait_for_setting("snowflake.backfill_node", "5"));
	pqxx::connection after = server.connect();
	pqxx::work tx{after};
	EXPECT_EQ(one_value<std::string>(tx, "SELECT state FROM snowflake_stats()"), "node reserved");
	tx.commit();
	EXPECT_EQ(sqlstate_of(after, "SELECT snowflake_nextval()"), "55000");
}

} // namespace
} // namespace snowflake::test
