// Integration tests of the settings against real servers: a node changed on
// reload (taking effect for the next ID, logged), a bad node on reload keeping
// the old one, bad values stopping the server at start, and the errors of a
// server that is not preloaded, has no node, or gives backfill the live node.
#include "generator.hpp"
#include "server.hpp"

#include <gtest/gtest.h>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

TEST(Settings, NodeChangeOnReloadTakesEffectForTheNextId) {
	Server server("reload", {kPreload, "snowflake.node = 7"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	const long long before = query_int(conn, "SELECT snowflake_nextval()");
	EXPECT_EQ(kTwitter.decompose(before).node, 7);

	server.append_conf("snowflake.node = 8");
	server.reload();
	ASSERT_TRUE(server.wait_for_setting("snowflake.node", "8"));
	// conn has not reloaded yet, but the node lives in shared memory: its next ID uses node 8.
	const long long after = query_int(conn, "SELECT snowflake_nextval()");
	EXPECT_EQ(kTwitter.decompose(after).node, 8);
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
	EXPECT_EQ(kTwitter.decompose(query_int(conn, "SELECT snowflake_nextval()")).node, 7);
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
