// Integration tests of snowflake.state against real servers: what a start
// makes of every kind of file in its place (one from 0.1.0, crafted records,
// another cluster's, a link to nothing, none at all, a reservation far ahead
// of the clock or at the end of the layout), what the state says meanwhile,
// and the SQLSTATEs of write errors. state_image.hpp makes the files.
#include "generator.hpp"
#include "server.hpp"
#include "state_image.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// The tick of a Unix ms on the twitter layout with its default epoch.
int64_t twitter_tick(int64_t unix_ms) {
	return kTwitter.tick_of(unix_ms, kTwitterEpochMs);
}

TEST(StateFile, AFileWrittenBy010IsReadAsTheTwitterLayout) {
	Server server("state_v1", {kPreload, "snowflake.node = 2", "snowflake.max_clock_drift = '60s'"});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
	}
	server.stop();
	// A 0.1.0 file whose reservation lies 20 s ahead of the clock: the first ID must start above it.
	const int64_t reserved_ms = unix_ms() - kTwitterEpochMs + 20000;
	write_state_image(server.data_file("snowflake.state"), StateImage{1, kTwitterEpochMs, kTwitter, 1, reserved_ms});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		const long long first = query_int(conn, "SELECT snowflake_nextval()");
		EXPECT_GT(kTwitter.decompose(first).time, reserved_ms);
		EXPECT_EQ(query_int(conn, "SELECT (state = 'ok')::int FROM snowflake_stats()"), 1);
	}
	// The start rewrote it as version 3 (72 bytes, with this cluster's identity), read back below.
	EXPECT_EQ(file_size(server.data_file("snowflake.state")), 72);
	server.stop();
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(query_int(conn, "SELECT (state = 'ok')::int FROM snowflake_stats()"), 1);
	}
	server.stop();
	// A 0.1.0 file is a twitter record: on a sonyflake server, or with another epoch, it is refused.
	write_state_image(server.data_file("snowflake.state"), StateImage{1, kTwitterEpochMs, kTwitter, 1, reserved_ms});
	server.append_conf("snowflake.layout = 'sonyflake'");
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
	EXPECT_EQ(query_int(conn, "SELECT (state <> 'ok')::int FROM snowflake_stats()"), 1);
}

TEST(StateFile, AnUnreadableOrDamagedFileIsRefused) {
	// The high-water mark is unknown: generation refuses, decoding goes on.
	Server server("state_unreadable", {kPreload, "snowflake.node = 1"});
	ASSERT_TRUE(server.start());
	const long long high = create_and_issue(server, 1000);
	server.stop();
	ASSERT_EQ(::chmod(server.data_file("snowflake.state").c_str(), 0), 0);
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
		EXPECT_EQ(query_int(conn, "SELECT (state = 'state file unreadable' AND detail LIKE '%Permission denied')::int "
		                          "FROM snowflake_state()"),
		          1);
	}
	server.stop();
	ASSERT_EQ(::chmod(server.data_file("snowflake.state").c_str(), 0600), 0);
	std::ofstream(server.data_file("snowflake.state"), std::ios::trunc) << "not a state record";
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
	EXPECT_EQ(query_int(conn, "SELECT (state = 'state file damaged')::int FROM snowflake_state()"), 1);
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(" + std::to_string(high) + ")"), "");
	EXPECT_TRUE(server.wait_for_log("is not a valid snowflake state record", 5s));
}

TEST(StateFile, ALinkToNothingInItsPlaceIsRefusedNeverReplaced) {
	// A volume that is not mounted: the state file is a symbolic link to a path that does not exist.
	// 0.3.0 took that for no file, replaced the link and, with the clock 20 s back, issued only IDs
	// below the last ones. It is an error until the volume is back, and then IDs continue above.
	Server server("state_dangling", {kPreload, "snowflake.node = 12", "snowflake.fault_injection = on",
	                                 "snowflake.max_clock_drift = '1min'"});
	ASSERT_TRUE(server.start());
	long long high = create_and_issue(server, 20000);
	server.stop();
	const std::string file = server.data_file("snowflake.state"), volume = server.socket_dir() + "/volume",
	                  saved = server.socket_dir() + "/saved.state";
	ASSERT_EQ(std::rename(file.c_str(), saved.c_str()), 0);
	ASSERT_EQ(::symlink((volume + "/snowflake.state").c_str(), file.c_str()), 0);
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"SELECT snowflake_inject_clock_offset(-20000)"});
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
		EXPECT_EQ(query_int(conn, "SELECT (state = 'state file unreadable' AND detail = 'snowflake.state is a symbolic "
		                          "link to \"" + volume + "/snowflake.state\", which did not exist at server start')::int "
		                          "FROM snowflake_state()"),
		          1);
		EXPECT_TRUE(server.wait_for_log("is a symbolic link to \"" + volume + "/snowflake.state\", which does not exist",
		                                5s));
	}
	server.stop();
	EXPECT_TRUE(std::filesystem::is_symlink(file)) << "the link was replaced";
	ASSERT_TRUE(std::filesystem::create_directory(volume));
	ASSERT_EQ(std::rename(saved.c_str(), (volume + "/snowflake.state").c_str()), 0);
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	// The file is back, but it does not carry the mark of the clean stop since: pg_control's floor
	// (that stop + 1 s + the 1 min bound) counts too, and a clock 20 s back is refused until a wider
	// bound lets it borrow.
	exec(conn, {"SELECT snowflake_inject_clock_offset(-20000)"});
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "58000");
	{
		pqxx::nontransaction outside{conn};
		outside.exec("ALTER SYSTEM SET snowflake.max_clock_drift = '2min'");
		outside.exec("SELECT pg_reload_conf()");
	}
	ASSERT_TRUE(server.wait_for_setting("snowflake.max_clock_drift", "2min"));
	const long long lowest = query_int(conn, "SELECT min(snowflake_nextval()) FROM generate_series(1, 20000)");
	EXPECT_GT(lowest, high) << "an ID repeats one issued before the volume went away";
	EXPECT_TRUE(std::filesystem::is_symlink(file));
}

TEST(StateFile, WithoutAFileIdsStartAboveTheLastCheckpoint) {
	// A new cluster has nothing to fear: no object was ever created in it, so no ID was issued.
	Server server("state_missing", {kPreload, "snowflake.node = 12", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	EXPECT_TRUE(server.wait_for_log("no object was ever created in this cluster", 5s));
	long long high = create_and_issue(server, 20000);
	// The file is deleted after a clean stop, and the server starts with its clock 20 s back. 0.3.0
	// relied on the clock alone: every ID was below the last ones (249,132 duplicates in a denser run).
	server.stop();
	ASSERT_EQ(std::remove(server.data_file("snowflake.state").c_str()), 0);
	ASSERT_TRUE(server.start());
	EXPECT_TRUE(server.wait_for_log("from pg_control's latest checkpoint plus 1 s and snowflake.max_clock_drift", 5s));
	pqxx::connection conn = server.connect();
	exec(conn, {"SELECT snowflake_inject_clock_offset(-20000)"});
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "58000");
	{
		pqxx::work tx{conn};
		const pqxx::result rows = tx.exec("SELECT state, detail, resumes_at - clock_timestamp() FROM snowflake_state()");
		std::cout << "  without the file, clock 20 s back: " << rows[0][0].c_str() << ": " << rows[0][1].c_str()
		          << "; resumes in " << rows[0][2].c_str() << "\n";
	}
	EXPECT_EQ(query_int(conn, "SELECT (state = 'clock behind' AND detail LIKE '%pg_control''s latest checkpoint%' AND "
	                          "resumes_at > clock_timestamp() + interval '15 s')::int FROM snowflake_state()"),
	          1);
	// A bound that covers the lag lets IDs continue, above every old one.
	{
		pqxx::nontransaction outside{conn};
		outside.exec("ALTER SYSTEM SET snowflake.max_clock_drift = '1min'");
		outside.exec("SELECT pg_reload_conf()");
	}
	ASSERT_TRUE(wait_until([&] { return query_int(conn, "SELECT (current_setting('snowflake.max_clock_drift') = '1min')::int") == 1; },
	                       10s));
	const long long lowest = query_int(conn, "SELECT min(snowflake_nextval()) FROM generate_series(1, 20000)");
	EXPECT_GT(lowest, high) << "an ID repeats one issued before the file was deleted";
}

TEST(StateFile, ARestartBehindTheReservationSaysWhyCallsFail) {
	// 0.3.0 refused every call (58000, "behind the last snowflake ID issued", though none was) while
	// snowflake_stats().state said "ok", so no alert fired. Three ways to get there:
	Server server("state_ahead", {kPreload, "snowflake.node = 13", "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
		max_of(conn, 1000);
	}
	server.stop();
	const std::string file = server.data_file("snowflake.state");
	const char *const behind = "SELECT (s.state = 'clock behind' AND st.state = s.state AND s.last_id IS NULL AND "
	                           "st.detail LIKE 'the clock is % ms behind the time IDs must start above, the reservation "
	                           "recorded in \"snowflake.state\"%' AND st.resumes_at > clock_timestamp())::int "
	                           "FROM snowflake_stats() s, snowflake_state() st";
	// 1. A state file whose reservation reaches 2070.
	StateImage image = read_state_image(file);
	image.reserved_tick = twitter_tick(3171484800000); // 2070-07-01
	write_state_image(file, image);
	ASSERT_TRUE(server.start());
	EXPECT_TRUE(server.wait_for_log("calls are refused with 58000 for about", 5s));
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "58000");
		EXPECT_EQ(query_int(conn, behind), 1);
		EXPECT_EQ(query_int(conn, "SELECT extract(year FROM resumes_at)::int FROM snowflake_state()"), 2070);
		EXPECT_TRUE(server.wait_for_log("behind the time snowflake IDs must start above", 5s));
	}
	server.stop();
	// 2. A reservation at the last tick of the layout: no ID fits above it (2200H).
	image.reserved_tick = kTwitter.max_time();
	write_state_image(file, image);
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "2200H");
		EXPECT_EQ(query_int(conn, "SELECT (state = 'time run out')::int FROM snowflake_state()"), 1);
	}
	server.stop();
	// 3. IDs issued with the clock an hour fast, then a clean restart on the right clock.
	image.reserved_tick = twitter_tick(unix_ms());
	write_state_image(file, image);
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"SELECT snowflake_inject_clock_offset(3600000)"});
		max_of(conn, 1000);
	}
	server.stop();
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "58000");
	EXPECT_EQ(query_int(conn, behind), 1);
	EXPECT_EQ(query_int(conn, "SELECT (resumes_at BETWEEN clock_timestamp() + interval '55 min' AND clock_timestamp() + "
	                          "interval '61 min')::int FROM snowflake_state()"),
	          1);
}

TEST(StateFile, AnotherClustersFileIsNotTrusted) {
	// A issued IDs with its clock 20 s ahead; then B's state file (same layout and epoch, a lower
	// reservation) is copied into A's data directory and A starts with the right clock. 0.2.0
	// trusted the file and repeated 18,041 of 328,000 IDs; now A sees another system's identifier
	// and begins above the clock plus its 30 s drift bound.
	Server a("foreign_a", {kPreload, "snowflake.node = 10", "snowflake.fault_injection = on",
	                       "snowflake.max_clock_drift = '30s'"});
	Server b("foreign_b", {kPreload, "snowflake.node = 10"});
	ASSERT_TRUE(a.start());
	long long high = 0;
	{
		pqxx::connection conn = a.connect();
		exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_inject_clock_offset(20000)"});
		high = max_of(conn, 50000);
	}
	a.stop();
	ASSERT_TRUE(b.start());
	{
		pqxx::connection conn = b.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
		max_of(conn, 1000);
	}
	b.stop();
	std::filesystem::copy_file(b.data_file("snowflake.state"), a.data_file("snowflake.state"),
	                           std::filesystem::copy_options::overwrite_existing);
	ASSERT_TRUE(a.start());
	EXPECT_TRUE(a.wait_for_log("was written by another database system", 5s));
	pqxx::connection conn = a.connect();
	const long long lowest = query_int(conn, "SELECT min(snowflake_nextval()) FROM generate_series(1, 50000)");
	EXPECT_GT(lowest, high) << "an ID repeats one issued before the foreign file was copied in";
	EXPECT_EQ(query_int(conn, "SELECT (state = 'ok')::int FROM snowflake_stats()"), 1);
}

TEST(StateFile, TheLayoutIsOnRecordBeforeTheFirstId) {
	// A server that never issued an ID (a decode-only subscriber, an aggregator) already records its
	// epoch, so an index on snowflake_timestamp(id) cannot silently change meaning with it.
	Server server("layout_record", {kPreload, "snowflake.node = 11"});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake", "CREATE TABLE t (id bigint PRIMARY KEY)",
		            "INSERT INTO t VALUES (1541815603606036480)", "CREATE INDEX ON t (snowflake_timestamp(id))"});
	}
	server.stop();
	EXPECT_TRUE(std::filesystem::exists(server.data_file("snowflake.state")));
	server.append_conf("snowflake.epoch = 1577836800000");
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(id) FROM t"), "55000");
	EXPECT_EQ(query_int(conn, "SELECT (state = 'epoch changed')::int FROM snowflake_stats()"), 1);
}

TEST(StateFile, CraftedRecordsAreRefusedSayingWhatIsWrong) {
	// CRC-valid files with a field the generator never writes: generation stops (55000, "state file
	// damaged"), and the log says which field is wrong, instead of a misleading clock or layout error.
	Server server("state_crafted", {kPreload, "snowflake.node = 3"});
	const int64_t now_ms = unix_ms() - kTwitterEpochMs;
	const struct {
		const char *what;
		int64_t epoch_ms;
		int32_t unit_ms;
		int64_t reserved_tick;
		const char *detail;
	} cases[] = {
	    {"reserved_tick = INT64_MAX", kTwitterEpochMs, 1, INT64_MAX, "Its reservation lies outside the layout's time field."},
	    {"unit_ms = 0", kTwitterEpochMs, 0, now_ms, "The unit must be 1ms, 10ms or 1s."},
	    {"epoch_ms = -1", -1, 1, now_ms, "Its epoch is outside 1970 to 9999."},
	};
	for (const auto &c : cases) {
		write_state_image(server.data_file("snowflake.state"),
		                  StateImage{2, c.epoch_ms, Layout{41, 10, 12, c.unit_ms}, 1, c.reserved_tick});
		ASSERT_TRUE(server.start()) << c.what;
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION IF NOT EXISTS snowflake"});
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000") << c.what;
		EXPECT_EQ(query_int(conn, "SELECT (state = 'state file damaged')::int FROM snowflake_stats()"), 1) << c.what;
		EXPECT_TRUE(server.wait_for_log(c.detail, 5s)) << c.what;
		server.stop();
	}
}

TEST(StateFile, WriteErrorsHaveTheirOwnSqlstates) {
	// Nothing is issued without a durable reservation. The file is written in place: a directory in
	// its place is 42809, a read-only file 42501; a missing one is created aside, and a directory
	// where that temporary file goes is 42809 too. Once the obstacle is gone, IDs flow again.
	Server server("state_write_errors", {kPreload, "snowflake.node = 3"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	const std::string file = server.data_file("snowflake.state");
	const std::string aside = server.data_file("snowflake.state.aside");
	const std::string tmp = server.data_file("snowflake.state.tmp");
	ASSERT_EQ(::rename(file.c_str(), aside.c_str()), 0);
	ASSERT_EQ(::mkdir(file.c_str(), 0700), 0);
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "42809");
	// While writes fail and a call needs one, the state says so, with the error, since the first failure.
	EXPECT_EQ(query_int(conn, "SELECT (state = 'reservation write failing' AND detail LIKE '%failed: Is a directory' "
	                          "AND since <= clock_timestamp())::int FROM snowflake_state()"),
	          1);
	ASSERT_EQ(::rmdir(file.c_str()), 0);
	ASSERT_EQ(::rename(aside.c_str(), file.c_str()), 0);
	ASSERT_EQ(::chmod(file.c_str(), 0400), 0);
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "42501");
	ASSERT_EQ(::unlink(file.c_str()), 0);
	ASSERT_EQ(::mkdir(tmp.c_str(), 0700), 0);
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "42809");
	ASSERT_EQ(::rmdir(tmp.c_str()), 0);
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "");
	EXPECT_EQ(query_int(conn, "SELECT (state = 'ok')::int FROM snowflake_state()"), 1);
	EXPECT_EQ(file_size(file), 72);
	EXPECT_TRUE(server.wait_for_log("could not open file \"snowflake.state\": Is a directory", 5s));
	EXPECT_TRUE(server.wait_for_log("could not open file \"snowflake.state\": Permission denied", 5s));
	EXPECT_TRUE(server.wait_for_log("could not create file \"snowflake.state.tmp\": Is a directory", 5s));
}

} // namespace
} // namespace snowflake::test
