// Integration tests of a node check that cannot run, or stopped running
// (issue 34, items 12 and 13): each change of its state is logged once; a
// misspelt snowflake.database reads 'cannot connect' at once, and the first
// call does not wait for a pass that cannot come; a stopped worker reads
// 'stale', not 'ok'; DROP, RENAME and TEMPLATE of the check's database work,
// and leave 'cannot connect' behind them.
#include "server.hpp"

#include <gtest/gtest.h>

#include <signal.h>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// A text value of one row and column, as postgres in database dbname.
std::string text_in(const Server &server, const std::string &dbname, const std::string &query) {
	pqxx::connection conn{server.conninfo() + " dbname=" + dbname};
	pqxx::work tx{conn};
	return one_value<std::string>(tx, query);
}

// The SQLSTATE query fails with on conn outside a transaction block (as CREATE and DROP DATABASE
// must run), or "" when it succeeds.
std::string sqlstate_outside(pqxx::connection &conn, const std::string &query) {
	try {
		pqxx::nontransaction outside{conn};
		outside.exec(query);
		return "";
	} catch (const pqxx::insufficient_privilege &e) {
		return e.sqlstate().empty() ? std::string("42501") : std::string(e.sqlstate());
	} catch (const pqxx::sql_error &e) {
		return std::string(e.sqlstate());
	}
}

// What snowflake_node_status().node_check says, read in database dbname.
std::string node_check_in(const Server &server, const std::string &dbname) {
	return text_in(server, dbname, "SELECT node_check FROM snowflake_node_status()");
}

// Waits up to timeout until node_check, read in dbname, is expected; false if it never was.
bool node_check_becomes(const Server &server, const std::string &dbname, const std::string &expected,
                        std::chrono::milliseconds timeout) {
	return wait_until([&] { return node_check_in(server, dbname) == expected; }, timeout);
}

// Waits until passes have gone on for 3 s more, read in dbname (checked_at past now + 3 s); false if
// they did not within 20 s.
bool three_more_seconds_of_passes(const Server &server, const std::string &dbname) {
	const std::string until = text_in(server, dbname, "SELECT (clock_timestamp() + interval '3 s')::text");
	return wait_until([&] { return text_in(server, dbname, "SELECT coalesce(checked_at > '" + until + "', false)::text FROM "
	                                                       "snowflake_node_status()") == "true"; },
	                  20s);
}

// The README's set-up: the extension created in the application's database, snowflake.database left
// at postgres. The check says 'no extension' and logs why once, with the way out; once the
// extension is there too, it logs that it is ok, once.
TEST(NodeCheck, LogsEachChangeOfItsStateOnce) {
	Server server("check_logged", {kPreload, "snowflake.node = 3", "snowflake.node_check_interval = 1"});
	ASSERT_TRUE(server.start());
	pqxx::connection admin = server.connect();
	ASSERT_EQ(sqlstate_outside(admin, "CREATE DATABASE app"), "");
	pqxx::connection app{server.conninfo() + " dbname=app"};
	exec(app, {"CREATE EXTENSION snowflake"});
	ASSERT_TRUE(node_check_becomes(server, "app", "no extension", 10s)) << server.log();
	const std::string missing = "the node check is not checking: no snowflake extension in database \"postgres\"";
	ASSERT_TRUE(server.wait_for_log(missing, 5s)) << server.log();
	ASSERT_TRUE(three_more_seconds_of_passes(server, "app")); // each still 'no extension'
	EXPECT_EQ(occurrences(server.log(), missing), 1) << server.log();
	EXPECT_NE(server.log().find("HINT:  Run CREATE EXTENSION snowflake in database \"postgres\", or set "
	                            "snowflake.database"),
	          std::string::npos)
	    << server.log();
	exec(admin, {"CREATE EXTENSION snowflake"});
	ASSERT_TRUE(node_check_becomes(server, "app", "ok", 10s)) << server.log();
	const std::string ok = "the node check in database \"postgres\" is ok: no other server claims node 3";
	ASSERT_TRUE(server.wait_for_log(ok, 5s)) << server.log();
	ASSERT_TRUE(three_more_seconds_of_passes(server, "app"));
	EXPECT_EQ(occurrences(server.log(), ok), 1) << server.log();
	EXPECT_EQ(occurrences(server.log(), missing), 1) << server.log();
}

// A misspelt snowflake.database: the worker dies in its connection every 10 s. The check reads
// 'cannot connect' naming the database, a WARNING says so once, and the first call after the
// start issues without waiting for a first pass (before, it waited until 10 s after the start:
// the 5 s statement_timeout is a bound on that wait, not a speed test).
TEST(NodeCheck, AMisspeltDatabaseIsReportedAndNotWaitedFor) {
	Server server("check_misspelt", {kPreload, "snowflake.node = 3", "snowflake.node_check_interval = 1",
	                                 "snowflake.database = 'postgress'"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	EXPECT_EQ(sqlstate_of(conn, "SET statement_timeout = '5s'; SELECT snowflake_nextval()"), "") << server.log();
	EXPECT_TRUE(node_check_becomes(server, "postgres", "cannot connect to database \"postgress\"", 5s))
	    << server.log();
	const std::string warning = "WARNING:  snowflake: the node check could not connect to database \"postgress\"";
	ASSERT_TRUE(server.wait_for_log(warning, 5s)) << server.log();
	// The renewal worker starts it again 10 s later; that attempt fails too, and says nothing new.
	ASSERT_TRUE(wait_until([&] { return occurrences(server.log(), "database \"postgress\" does not exist") >= 2; },
	                       25s))
	    << server.log();
	EXPECT_EQ(occurrences(server.log(), warning), 1) << server.log();
	EXPECT_EQ(node_check_in(server, "postgres"), "cannot connect to database \"postgress\"");
}

// Resumes a stopped process when the test ends, whatever it asserted.
struct Resume {
	pid_t pid;
	~Resume() {
		kill(pid, SIGCONT);
	}
};

// A worker that stops passing (here SIGSTOPped, as a hung connection or a stuck query would leave
// it) leaves its last 'ok' behind: after three intervals and 10 s the check reads 'stale'.
TEST(NodeCheck, AStoppedCheckReadsStaleNotOk) {
	Server server("check_stale", {kPreload, "snowflake.node = 3", "snowflake.node_check_interval = 1"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	ASSERT_TRUE(node_check_becomes(server, "postgres", "ok", 10s)) << server.log();
	const auto pid = static_cast<pid_t>(
	    query_int(conn, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'snowflake node check'"));
	ASSERT_EQ(kill(pid, SIGSTOP), 0);
	Resume resume{pid};
	EXPECT_TRUE(node_check_becomes(server, "postgres", "stale", 30s)) << server.log();
	ASSERT_EQ(kill(pid, SIGCONT), 0);
	EXPECT_TRUE(node_check_becomes(server, "postgres", "ok", 10s)) << server.log();
}

// CREATE DATABASE ... TEMPLATE, ALTER DATABASE ... RENAME and DROP DATABASE of snowflake.database
// run while the worker is connected there (they failed with 55006): the worker leaves first and
// comes back when it can. After a RENAME or a DROP the check reads 'cannot connect', not 'ok'. A role
// that may not run them leaves the worker where it is.
TEST(NodeCheck, DatabaseCommandsOnItsDatabaseWork) {
	Server server("check_database_commands", {kPreload, "snowflake.node = 3", "snowflake.node_check_interval = 1",
	                                          "snowflake.database = 'app'"});
	ASSERT_TRUE(server.start());
	pqxx::connection admin = server.connect();
	exec(admin, {"CREATE EXTENSION snowflake"});
	ASSERT_EQ(sqlstate_outside(admin, "CREATE DATABASE app"), "");
	{
		pqxx::connection app{server.conninfo() + " dbname=app"};
		exec(app, {"CREATE EXTENSION snowflake"});
	}
	const std::string cannot = "cannot connect to database \"app\"";
	ASSERT_TRUE(node_check_becomes(server, "postgres", "ok", 30s)) << server.log();
	// A role that does not own the database cannot run them, and cannot stop the check by trying.
	const std::string worker = "SELECT pid FROM pg_stat_activity WHERE backend_type = 'snowflake node check'";
	const long long pid = query_int(admin, worker);
	exec(admin, {"CREATE ROLE eve LOGIN CREATEDB"});
	pqxx::connection eve{server.conninfo() + " user=eve"};
	EXPECT_EQ(sqlstate_outside(eve, "DROP DATABASE app"), "42501");
	EXPECT_EQ(sqlstate_outside(eve, "ALTER DATABASE app RENAME TO app_eve"), "42501");
	EXPECT_EQ(query_int(admin, worker), pid);
	EXPECT_EQ(node_check_in(server, "postgres"), "ok");
	EXPECT_EQ(sqlstate_outside(admin, "CREATE DATABASE app_copy TEMPLATE app"), "") << server.log();
	EXPECT_EQ(node_check_in(server, "postgres"), cannot); // it left, for the moment
	ASSERT_TRUE(node_check_becomes(server, "postgres", "ok", 30s)) << server.log();
	const int failed = occurrences(server.log(), "database \"app\" does not exist"); // at its start, before CREATE
	EXPECT_EQ(sqlstate_outside(admin, "ALTER DATABASE app RENAME TO app_old"), "") << server.log();
	EXPECT_EQ(node_check_in(server, "postgres"), cannot);
	// Its next attempt, 10 s later, on a name no database has now.
	ASSERT_TRUE(wait_until([&] { return occurrences(server.log(), "database \"app\" does not exist") > failed; }, 20s))
	    << server.log();
	EXPECT_EQ(node_check_in(server, "postgres"), cannot) << server.log();
	EXPECT_EQ(sqlstate_outside(admin, "ALTER DATABASE app_old RENAME TO app"), "") << server.log();
	ASSERT_TRUE(node_check_becomes(server, "postgres", "ok", 30s)) << server.log();
	EXPECT_EQ(sqlstate_outside(admin, "DROP DATABASE app"), "") << server.log();
	EXPECT_EQ(node_check_in(server, "postgres"), cannot);
	EXPECT_NE(server.log().find("snowflake: the node check leaves database \"app\" for DROP DATABASE"),
	          std::string::npos)
	    << server.log();
}

} // namespace
} // namespace snowflake::test
