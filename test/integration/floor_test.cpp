// Integration tests of the floor a start puts under the first ID (restart.hpp)
// when snowflake.state is not simply the server's own latest word: a copy put
// back after a clean stop, a file lost after a crash, another cluster's file,
// the new data directory of pg_upgrade, and files of an older version kept
// behind a symbolic link or beside a link planted where the start writes. Each
// test follows the steps that gave 0.4.0 a smaller ID, with the clock moved by
// libfaketime (the whole server) or fault injection (the generator), and each
// hint on the way is followed as written.
#include "generator.hpp"
#include "server.hpp"
#include "state_image.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(Floors, ACopyPutBackAfterACleanStopNeverLowersTheFloor) {
	// The damaged-file hint of 0.4.0 said to restore the file from a backup. A copy taken early, put
	// back after 40 s more of IDs and a clean stop, became the floor: the next ID was below the last.
	Server server("copy_put_back", {kPreload, "snowflake.node = 21"});
	ASSERT_TRUE(server.start());
	create_and_issue(server, 1000);
	server.stop();
	const std::string file = server.data_file("snowflake.state");
	fs::copy_file(file, file + ".copy");
	ASSERT_TRUE(server.start_with_clock(40)); // 40 s later
	long long high = 0;
	{
		pqxx::connection conn = server.connect();
		high = max_of(conn, 20000);
	}
	server.stop();
	fs::copy_file(file + ".copy", file, fs::copy_options::overwrite_existing);
	ASSERT_TRUE(server.start()); // the clock 40 s behind the last IDs
	EXPECT_TRUE(server.wait_for_log("above the reservation in \"snowflake.state\", which the server did not write "
	                                "at its last clean shutdown",
	                                5s));
	pqxx::connection conn = server.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "58000");
	EXPECT_EQ(query_int(conn, "SELECT (state = 'clock behind' AND detail LIKE '%did not write at its last clean "
	                          "shutdown%')::int FROM snowflake_state()"),
	          1);
	const long long lowest = lowest_after_raising_the_bound(server, conn, 20000);
	EXPECT_GT(lowest, high) << "an ID repeats one issued after the copy was taken";
}

TEST(Floors, ALostFileAfterACrashIsCoveredByTheWal) {
	// CHECKPOINT, 40 s of IDs (the generator's clock moved 40 s on), a crash, the file removed, and a
	// start with the clock 20 s behind the last IDs: 0.4.0 started above the checkpoint + 1 s + drift,
	// below 38 s of IDs, and repeated them; 0.5.0 refused. Now the WAL replayed since the checkpoint
	// holds the reservation (wal.hpp): the start knows where IDs resume without the file.
	Server server("lost_after_crash", {kPreload, "snowflake.node = 22", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	long long high = 0;
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake", "CHECKPOINT", "SELECT snowflake_inject_clock_offset(40000)"});
		high = max_of(conn, 20000);
	}
	server.stop("immediate"); // no shutdown checkpoint: pg_control still says "in production"
	ASSERT_EQ(std::remove(server.data_file("snowflake.state").c_str()), 0);
	ASSERT_TRUE(server.start_with_clock(20));
	pqxx::connection conn = server.connect();
	EXPECT_EQ(query_int(conn, "SELECT (state = 'clock behind' AND detail LIKE '%the WAL carried%')::int "
	                          "FROM snowflake_state()"),
	          1);
	EXPECT_GT(lowest_after_raising_the_bound(server, conn, 20000), high) << "an ID repeats one issued before the crash";
}

TEST(Floors, ALostFileAfterACrashWithNoReservationSinceTheCheckpointRefusesUntilTheHintIsFollowed) {
	// The reservation passed, then a checkpoint: crash recovery replays no reservation, and only the
	// file knew the last one. Lost after a crash, the start refuses until the hint is followed.
	Server server("lost_no_record", {kPreload, "snowflake.node = 26"});
	ASSERT_TRUE(server.start());
	long long high = 0;
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
		high = max_of(conn, 20000);
		reservation_passed_then_checkpoint(conn);
	}
	server.stop("immediate"); // no shutdown checkpoint: pg_control still says "in production"
	ASSERT_EQ(std::remove(server.data_file("snowflake.state").c_str()), 0);
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
		EXPECT_EQ(query_int(conn, "SELECT (state = 'state file lost' AND detail LIKE '%missing, and the server stopped "
		                          "without a clean shutdown')::int FROM snowflake_state()"),
		          1);
	}
	// The hint: "make sure the system clock is right (later than the crash), stop the server cleanly
	// and start it".
	server.stop();
	ASSERT_TRUE(server.start());
	EXPECT_TRUE(server.wait_for_log("there was no \"snowflake.state\" of this cluster's", 5s));
	pqxx::connection conn = server.connect();
	const long long lowest = query_int(conn, "SELECT min(snowflake_nextval()) FROM generate_series(1, 20000)");
	EXPECT_GT(lowest, high) << "an ID repeats one issued before the crash";
}

TEST(Floors, AnotherClustersFileGivesNoLowerFloorThanNoFile) {
	// A's state file replaced by B's, and A started with its clock 20 s back. 0.4.0 started above the
	// clock + max_clock_drift, and 2,000 of 2,000 IDs were at or below A's earlier ones.
	Server a("foreign_floor_a", {kPreload, "snowflake.node = 24"});
	Server b("foreign_floor_b", {kPreload, "snowflake.node = 24"});
	ASSERT_TRUE(a.start());
	const long long high = create_and_issue(a, 20000);
	a.stop();
	ASSERT_TRUE(b.start());
	create_and_issue(b, 10);
	b.stop();
	fs::copy_file(b.data_file("snowflake.state"), a.data_file("snowflake.state"), fs::copy_options::overwrite_existing);
	ASSERT_TRUE(a.start_with_clock(-20));
	EXPECT_TRUE(a.wait_for_log("was written by another database system", 5s));
	{
		pqxx::connection conn = a.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "58000");
		const long long lowest = lowest_after_raising_the_bound(a, conn, 2000);
		EXPECT_GT(lowest, high) << "an ID repeats one A issued before B's file was copied in";
	}
	a.stop(); // then on the true clock, with no reservation in the WAL to replay: only a file could say
	ASSERT_TRUE(a.start());
	{
		pqxx::connection conn = a.connect();
		reservation_passed_then_checkpoint(conn);
	}
	a.stop("immediate");
	// After a crash, another cluster's file is as good as none: refused, as a lost file is.
	fs::copy_file(b.data_file("snowflake.state"), a.data_file("snowflake.state"), fs::copy_options::overwrite_existing);
	ASSERT_TRUE(a.start());
	pqxx::connection conn = a.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
	EXPECT_EQ(query_int(conn, "SELECT (state = 'state file lost' AND detail LIKE '%another cluster''s%')::int "
	                          "FROM snowflake_state()"),
	          1);
}

TEST(Floors, PgUpgradeStartsAboveTheOldClustersIds) {
	// pg_upgrade starts the new cluster before it carries the OID counter over; 0.4.0 put a floor of 0
	// on record then, and the first real start issued at the clock, below IDs borrowed ahead of it.
	const std::vector<std::string> conf = {kPreload, "snowflake.node = 23", "snowflake.fault_injection = on",
	                                       "snowflake.max_clock_drift = '30s'"};
	Server old_cluster("upgrade_old", conf);
	Server new_cluster("upgrade_new", conf);
	ASSERT_TRUE(old_cluster.start());
	long long high = 0;
	{
		pqxx::connection conn = old_cluster.connect();
		exec(conn, {"CREATE EXTENSION snowflake", "CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval())",
		            "SELECT snowflake_inject_clock_offset(20000)"}); // IDs 20 s ahead, within the 30 s bound
		exec(conn, {"INSERT INTO orders SELECT FROM generate_series(1, 20000)"});
		high = query_int(conn, "SELECT max(id) FROM orders");
	}
	old_cluster.stop();
	pg_upgrade(old_cluster, new_cluster);
	ASSERT_TRUE(new_cluster.start());
	EXPECT_TRUE(new_cluster.wait_for_log("from pg_control's latest checkpoint", 5s));
	pqxx::connection conn = new_cluster.connect();
	EXPECT_EQ(query_int(conn, "SELECT count(*) FROM orders"), 20000);
	exec(conn, {"INSERT INTO orders SELECT FROM generate_series(1, 20000)"});
	EXPECT_EQ(query_int(conn, "SELECT count(*) FROM orders WHERE id > " + std::to_string(high)), 20000)
	    << "IDs after the upgrade below the old cluster's";
}

TEST(Floors, AnOlderFileIsRewrittenThroughItsLinkAndNeverThroughAPlantedOne) {
	// A version 2 file (0.2.0's) is rewritten as version 3 at start, written aside and renamed into
	// place. 0.4.0 renamed it over a symbolic link in the file's place (the file kept on another
	// volume), leaving a plain file in the data directory and the old reservation on the volume; and
	// it opened the file aside through whatever link was planted under that name.
	Server server("older_behind_link", {kPreload, "snowflake.node = 25"});
	ASSERT_TRUE(server.start());
	const long long high = create_and_issue(server, 1000);
	server.stop();
	const std::string file = server.data_file("snowflake.state");
	const std::string volume = server.socket_dir() + "/volume";
	fs::create_directories(volume);
	StateImage image = read_state_image(file);
	image.version = 2;
	image.reserved_tick = kTwitter.decompose(high).time;
	write_state_image(volume + "/snowflake.state", image);
	fs::remove(file);
	fs::create_symlink(volume + "/snowflake.state", file);
	const std::string victim = server.socket_dir() + "/victim";
	std::ofstream(victim) << "not snowflake's\n";
	fs::create_symlink(victim, volume + "/snowflake.state.tmp");
	ASSERT_TRUE(server.start());
	EXPECT_TRUE(fs::is_symlink(file)) << "the link was replaced";
	EXPECT_EQ(file_size(volume + "/snowflake.state"), 72) << "the file on the volume was not rewritten";
	EXPECT_FALSE(fs::exists(fs::symlink_status(volume + "/snowflake.state.tmp")));
	std::string kept;
	std::getline(std::ifstream(victim), kept);
	EXPECT_EQ(kept, "not snowflake's") << "the write went through the planted link";
	{
		pqxx::connection conn = server.connect();
		EXPECT_GT(query_int(conn, "SELECT snowflake_nextval()"), high);
	}
	server.stop();
	// The same in the data directory: a version 2 file, and a link planted where it is written aside.
	fs::remove(file);
	write_state_image(file, image);
	fs::create_symlink(victim, server.data_file("snowflake.state.tmp"));
	ASSERT_TRUE(server.start());
	EXPECT_EQ(file_size(file), 72);
	std::getline(std::ifstream(victim), kept);
	EXPECT_EQ(kept, "not snowflake's") << "the write went through the planted link";
}

} // namespace
} // namespace snowflake::test
