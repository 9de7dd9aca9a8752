// Integration tests of the reservation in the WAL (wal.hpp) against real
// servers: each follows the steps that made 0.5.0 repeat or lower IDs after a
// promotion, a stop during crash recovery, a young cluster's crash, a standby
// taken over by hand, a standby's state file copied over the primary's, and a
// drift bound removed after a crash, and shows the first IDs after them above
// every ID issued before (or a refusal that names the WAL's floor while the
// clock is behind it). Then what the WAL costs a server: a synchronous standby
// that is down stalls no ID, and a server without snowflake preloaded starts
// after a clean stop but not with reservations left to replay, nor a standby
// whose primary logs them.
#include "generator.hpp"
#include "server.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The table the tests insert into: a primary key of IDs, and era 1 for rows before the event, 2 after.
const std::string kItems = "CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), era int)";

// Inserts n rows of era on conn (an error, such as 23505 or 58000, throws) and returns the largest ID.
long long insert_era(pqxx::connection &conn, int era, int n) {
	exec(conn, {"INSERT INTO items (era) SELECT " + std::to_string(era) + " FROM generate_series(1, " +
	            std::to_string(n) + ")"});
	return query_int(conn, "SELECT max(id) FROM items WHERE era = " + std::to_string(era));
}

// Waits (up to 30 s) until server's first ID is no longer refused for the clock, then inserts 20,000
// rows of era 2 and returns how many of them are at or below high.
long long new_ids_at_or_below(const Server &server, long long high) {
	pqxx::connection conn = server.connect();
	EXPECT_TRUE(wait_until([&] { return sqlstate_of(conn, "SELECT snowflake_nextval()").empty(); }, 30s))
	    << "the refusal for the clock did not end";
	insert_era(conn, 2, 20000);
	return query_int(conn, "SELECT count(*) FROM items WHERE era = 2 AND id <= " + std::to_string(high));
}

// Waits (up to 10 s) until standby has replayed everything the primary (on conn) has written so far.
bool caught_up(pqxx::connection &conn, const Server &standby) {
	std::string sent;
	{
		pqxx::work tx{conn};
		sent = one_value<std::string>(tx, "SELECT pg_current_wal_lsn()::text");
	}
	pqxx::connection on_standby = standby.connect();
	return wait_until(
	    [&] { return query_int(on_standby, "SELECT (pg_last_wal_replay_lsn() >= '" + sent + "')::int") == 1; }, 10s);
}

// Whether server's state says its clock is behind the floor, and (with wal) that the WAL carried that floor.
bool behind_the_floor(const Server &server, bool wal) {
	pqxx::connection conn = server.connect();
	return query_int(conn, std::string("SELECT (state = 'clock behind'") +
	                           (wal ? " AND detail LIKE '%the last reservation the WAL carried here%'" : "") +
	                           ")::int FROM snowflake_state()") == 1;
}

TEST(WalReservation, APromotedStandbyStartsAboveBorrowedIdsWhateverItsOwnDrift) {
	// 0.5.0: the primary's 10 s bound came from ALTER SYSTEM, which a standby does not replay; the
	// promoted standby's floor was its clock + its own 1 s, and 62,000 of 119,000 IDs repeated or
	// fell below the old primary's borrowed ones.
	Server primary("wal_borrow_primary", {kPreload, "snowflake.node = 31", "snowflake.fault_injection = on"});
	ASSERT_TRUE(primary.start());
	pqxx::connection conn = primary.connect();
	exec(conn, {"CREATE EXTENSION snowflake", kItems});
	Server standby("wal_borrow_standby", Server::StandbyOf{primary});
	ASSERT_TRUE(standby.start());
	{
		pqxx::nontransaction outside{conn};
		outside.exec("ALTER SYSTEM SET snowflake.max_clock_drift = '10s'");
		outside.exec("SELECT pg_reload_conf()");
	}
	ASSERT_TRUE(primary.wait_for_setting("snowflake.max_clock_drift", "10s"));
	exec(conn, {"SELECT snowflake_inject_clock_offset(6000)"}); // the primary's IDs 6 s ahead of the clock
	const long long high = insert_era(conn, 1, 100000);
	primary.stop();
	ASSERT_TRUE(standby.promote());
	pqxx::connection promoted = standby.connect();
	EXPECT_EQ(query_int(promoted, "SELECT (current_setting('snowflake.max_clock_drift') = '1s')::int"), 1);
	EXPECT_EQ(sqlstate_of(promoted, "SELECT snowflake_nextval()"), "58000") << "IDs 5 s under the old primary's";
	EXPECT_TRUE(behind_the_floor(standby, true));
	EXPECT_EQ(new_ids_at_or_below(standby, high), 0);
}

TEST(WalReservation, APromotedStandbyStartsAboveAPrimaryWhoseClockRanAhead) {
	// The same arithmetic with no borrowing: the primary's clock 5 s ahead of the standby's.
	Server primary("wal_clock_primary", {kPreload, "snowflake.node = 32"});
	ASSERT_TRUE(primary.start_with_clock(5));
	pqxx::connection conn = primary.connect();
	exec(conn, {"CREATE EXTENSION snowflake", kItems});
	Server standby("wal_clock_standby", Server::StandbyOf{primary});
	ASSERT_TRUE(standby.start());
	const long long high = insert_era(conn, 1, 100000);
	primary.stop();
	ASSERT_TRUE(standby.promote());
	EXPECT_EQ(new_ids_at_or_below(standby, high), 0);
}

TEST(WalReservation, AStopDuringCrashRecoveryWithTheFileLostKeepsTheFloor) {
	// 0.5.0: a crash after a checkpoint, the file lost, a stop while the startup process replayed
	// (pg_control: "shut down in recovery"), and a start: taken for a clean stop, the floor was the
	// checkpoint + 1 s + the drift bound, 20 s below the last IDs, and the state read 'ok' (here 8 s
	// ahead of the clock, a floor a call cannot wait out under the 1 s bound). Here the
	// start in recovery is a start with standby.signal and no primary: it replays the local WAL and
	// stays in recovery until stopped.
	Server server("wal_stop_in_recovery", {kPreload, "snowflake.node = 33", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	long long high = 0;
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake", kItems, "CHECKPOINT", "SELECT snowflake_inject_clock_offset(8000)"});
		high = insert_era(conn, 1, 20000);
	}
	server.stop("immediate");
	ASSERT_EQ(std::remove(server.data_file("snowflake.state").c_str()), 0);
	std::ofstream(server.data_file("standby.signal")).close();
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(query_int(conn, "SELECT (state = 'recovery')::int FROM snowflake_state()"), 1)
		    << "a server in recovery says so first";
	}
	server.stop(); // "shut down in recovery"
	fs::remove(server.data_file("standby.signal"));
	ASSERT_TRUE(server.start());
	EXPECT_TRUE(behind_the_floor(server, false)); // the file the recovery wrote, or the WAL itself
	EXPECT_EQ(new_ids_at_or_below(server, high), 0);
}

TEST(WalReservation, AYoungClustersCrashWithTheFileLostIsNotANewCluster) {
	// 0.5.0: before the first checkpoint after CREATE EXTENSION, pg_control's OID counter still said
	// "nothing was ever created": a crash with the file lost started at the clock, 20 s below the
	// last IDs, and every one of 255,000 IDs repeated or fell below (here 8 s).
	Server server("wal_young", {kPreload, "snowflake.node = 34", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	long long high = 0;
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake", kItems, "SELECT snowflake_inject_clock_offset(8000)"});
		high = insert_era(conn, 1, 20000);
	}
	server.stop("immediate");
	ASSERT_EQ(std::remove(server.data_file("snowflake.state").c_str()), 0);
	ASSERT_TRUE(server.start());
	EXPECT_TRUE(behind_the_floor(server, true));
	EXPECT_EQ(new_ids_at_or_below(server, high), 0);
}

TEST(WalReservation, AStandbyTakenOverByRemovingStandbySignalStartsAboveThePrimary) {
	// 0.5.0: the standby's file held the base backup's reservation, re-marked at its clean stop; with
	// standby.signal removed it started on the same timeline with no new-timeline floor, and 62,000 of
	// 118,000 IDs repeated or fell below the old primary's.
	Server primary("wal_takeover_primary", {kPreload, "snowflake.node = 35", "snowflake.fault_injection = on"});
	ASSERT_TRUE(primary.start());
	pqxx::connection conn = primary.connect();
	exec(conn, {"CREATE EXTENSION snowflake", kItems});
	Server standby("wal_takeover_standby", Server::StandbyOf{primary});
	ASSERT_TRUE(standby.start());
	exec(conn, {"SELECT snowflake_inject_clock_offset(8000)"});
	const long long high = insert_era(conn, 1, 100000);
	primary.stop();
	standby.stop();
	fs::remove(standby.data_file("standby.signal"));
	ASSERT_TRUE(standby.start());
	{
		pqxx::connection on_it = standby.connect();
		EXPECT_EQ(query_int(on_it, "SELECT (NOT pg_is_in_recovery() AND timeline_id = 1)::int FROM pg_control_checkpoint()"),
		          1);
	}
	EXPECT_EQ(new_ids_at_or_below(standby, high), 0);
}

TEST(WalReservation, AStandbysFileCopiedOverThePrimarysGivesNoLowerFloor) {
	// 0.5.0: at its clean stop a standby wrote its old reservation with the mark of the primary's
	// shutdown checkpoint; copied over the primary's file, it was taken for the primary's last word,
	// and the next ID was 29.4 s below the last.
	Server primary("wal_copy_primary", {kPreload, "snowflake.node = 36", "snowflake.fault_injection = on",
	                                    "snowflake.max_clock_drift = '1min'"});
	ASSERT_TRUE(primary.start());
	pqxx::connection conn = primary.connect();
	exec(conn, {"CREATE EXTENSION snowflake", kItems});
	Server standby("wal_copy_standby", Server::StandbyOf{primary});
	ASSERT_TRUE(standby.start());
	exec(conn, {"SELECT snowflake_inject_clock_offset(30000)"});
	const long long high = insert_era(conn, 1, 20000);
	primary.stop();
	standby.stop();
	fs::copy_file(standby.data_file("snowflake.state"), primary.data_file("snowflake.state"),
	              fs::copy_options::overwrite_existing);
	ASSERT_TRUE(primary.start());
	pqxx::connection again = primary.connect();
	EXPECT_GT(lowest_after_raising_the_bound(primary, again, 20000), high);
}

TEST(WalReservation, ADriftBoundRemovedAfterACrashWithAnOldFileBackRefusesRatherThanRepeats) {
	// 0.5.0: 2,000 IDs 30 min ahead under a 1 h bound, a crash, the bound's line removed and an older
	// copy of the file put back: 2,000 of 2,000 new IDs were at or below the earlier ones, state 'ok'.
	Server server("wal_drift_removed", {kPreload, "snowflake.node = 37", "snowflake.fault_injection = on",
	                                    "snowflake.max_clock_drift = '1h'"});
	ASSERT_TRUE(server.start());
	create_and_issue(server, 10);
	const std::string copy = keep_a_copy_of_the_state_file(server);
	long long high = 0;
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"SELECT snowflake_inject_clock_offset(1800000)"});
		high = max_of(conn, 2000);
	}
	server.stop("immediate");
	server.append_conf("snowflake.max_clock_drift = '1s'");
	fs::copy_file(copy, server.data_file("snowflake.state"), fs::copy_options::overwrite_existing);
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "58000");
	EXPECT_TRUE(behind_the_floor(server, true));
	exec(conn, {"SELECT snowflake_inject_clock_offset(1800000)"}); // the clock where the IDs were
	EXPECT_GT(query_int(conn, "SELECT min(snowflake_nextval()) FROM generate_series(1, 2000)"), high);
}

TEST(WalReservation, ALaggingStandbyPromotedKnowsTheReservationsThatReachedItAndTheClockCoversTheRest) {
	// An asynchronous standby cut off from its primary (its primary_conninfo emptied: the walreceiver
	// stops) while the primary goes on issuing for 3 s, then promoted: it knows the reservations that
	// reached it, and the new timeline's floor (its clock + max_clock_drift) covers what did not.
	Server primary("wal_lag_primary", {kPreload, "snowflake.node = 41"});
	ASSERT_TRUE(primary.start());
	pqxx::connection conn = primary.connect();
	exec(conn, {"CREATE EXTENSION snowflake", kItems});
	Server standby("wal_lag_standby", Server::StandbyOf{primary});
	ASSERT_TRUE(standby.start());
	insert_era(conn, 1, 20000);
	ASSERT_TRUE(caught_up(conn, standby));
	{
		pqxx::connection on_standby = standby.connect();
		pqxx::nontransaction outside{on_standby};
		outside.exec("ALTER SYSTEM SET primary_conninfo = ''");
		outside.exec("SELECT pg_reload_conf()");
	}
	ASSERT_TRUE(wait_until([&] { return query_int(conn, "SELECT count(*) FROM pg_stat_replication") == 0; }, 10s));
	const long long cut_at = query_int(conn, "SELECT max(id) FROM items");
	long long high = 0;
	for (int i = 0; i < 30; ++i) { // 3 s of IDs the standby never receives
		high = insert_era(conn, 1, 2000);
		std::this_thread::sleep_for(100ms);
	}
	primary.stop();
	ASSERT_TRUE(standby.promote());
	pqxx::connection promoted = standby.connect();
	const long long known = query_int(promoted, "SELECT max(id) FROM items");
	std::cout << "  the standby missed " << (kTwitter.decompose(high).time - kTwitter.decompose(known).time)
	          << " ms of the primary's IDs\n";
	EXPECT_EQ(known, cut_at) << "the standby received rows after it was cut off";
	EXPECT_EQ(new_ids_at_or_below(standby, high), 0) << "the new timeline's floor did not cover the lag";
}

TEST(WalReservation, ASynchronousStandbyThatIsDownStallsNoId) {
	// The record is not a transaction's: its flush never waits for synchronous replication.
	Server server("wal_sync_down", {kPreload, "snowflake.node = 38"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	{
		pqxx::nontransaction outside{conn};
		outside.exec("ALTER SYSTEM SET synchronous_standby_names = 'nobody_is_here'");
		outside.exec("SELECT pg_reload_conf()");
	}
	ASSERT_TRUE(server.wait_for_setting("synchronous_standby_names", "nobody_is_here"));
	exec(conn, {"SET statement_timeout = '20s'"});
	const long long before = query_int(conn, "SELECT reservations FROM snowflake_stats()");
	EXPECT_EQ(query_int(conn, "SELECT count(DISTINCT snowflake_nextval()) FROM generate_series(1, 200000)"), 200000);
	EXPECT_GT(query_int(conn, "SELECT reservations FROM snowflake_stats()"), before) << "no reservation was made";
}

TEST(WalReservation, WithoutThePreloadAServerStartsAfterACleanStopButNotWithReservationsToReplay) {
	Server server("wal_no_preload", {kPreload, "snowflake.node = 39"});
	ASSERT_TRUE(server.start());
	create_and_issue(server, 20000);
	server.stop("immediate"); // a crash: the reservations since the last checkpoint are to replay
	server.append_conf("shared_preload_libraries = ''");
	EXPECT_FALSE(server.start()) << "replayed the WAL without snowflake's resource manager";
	EXPECT_TRUE(server.wait_for_log("resource manager with ID 163 not registered", 1s));
	server.append_conf(kPreload); // the documented way out: the preload back, a clean stop, then remove it
	ASSERT_TRUE(server.start());
	server.stop();
	server.append_conf("shared_preload_libraries = ''");
	ASSERT_TRUE(server.start()) << "a clean stop leaves nothing to replay";
	pqxx::connection conn = server.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
}

TEST(WalReservation, AStandbyWithoutThePreloadStopsUntilItIsBack) {
	// A standby replays its primary's reservations as they come: without the preload it cannot.
	Server primary("wal_standby_preload_primary", {kPreload, "snowflake.node = 40"});
	ASSERT_TRUE(primary.start());
	pqxx::connection conn = primary.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	Server standby("wal_standby_preload", Server::StandbyOf{primary});
	ASSERT_TRUE(standby.start());
	max_of(conn, 20000);
	ASSERT_TRUE(caught_up(conn, standby));
	standby.stop();
	standby.append_conf("shared_preload_libraries = ''");
	EXPECT_FALSE(standby.start()) << "the standby replayed snowflake's records without its resource manager";
	EXPECT_TRUE(standby.wait_for_log("resource manager with ID 163 not registered", 1s));
	standby.append_conf(kPreload);
	ASSERT_TRUE(standby.start());
	pqxx::connection again = standby.connect();
	EXPECT_EQ(query_int(again, "SELECT pg_is_in_recovery()::int"), 1);
}

} // namespace
} // namespace snowflake::test
