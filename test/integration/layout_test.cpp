// Integration tests of layouts and blocks of IDs against real servers: bad
// layouts stop the server at start, a layout configured without preloading
// stops decoding, a layout change across a restart is
// refused once IDs exist, a state file written by 0.1.0 (version 1) is read as
// the twitter layout, reservations in ticks of 10 ms survive a crash
// restart, and many connections mixing blocks and single IDs never
// share an ID or leave their node, on twitter and on js53.
#include "generator.hpp"
#include "server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

TEST(Layouts, NonsenseStopsTheServerFromStarting) {
	const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
	    {{"snowflake.layout = 'snowflake'"}, "invalid value for parameter \"snowflake.layout\": \"snowflake\""},
	    {{"snowflake.layout = 'time=40,unit=1ms,node=10,seq=12'"}, "must be 63 bits"},
	    {{"snowflake.layout = 'time=53,unit=1ms,node=0,seq=10'"}, "Every field needs at least 1 bit."},
	    {{"snowflake.layout = 'time=39,unit=5ms,node=16,seq=8'"}, "The unit must be 1ms, 10ms or 1s."},
	    {{"snowflake.layout = 'twitter,epoch=0'"}, "snowflake.layout takes no epoch"},
	    {{"snowflake.layout = 'js53'", "snowflake.node = 32"}, "parameter \"snowflake.node\" (-1 .. 31)"},
	    {{"snowflake.layout = 'js53'", "snowflake.backfill_node = 40"}, "parameter \"snowflake.backfill_node\" (-1 .. 31)"},
	};
	for (const auto &[lines, message] : cases) {
		std::vector<std::string> conf = {kPreload};
		conf.insert(conf.end(), lines.begin(), lines.end());
		Server server("bad_layout", conf);
		EXPECT_FALSE(server.start()) << lines.back();
		EXPECT_NE(server.log().find(message), std::string::npos) << lines.back() << "\n" << server.log();
	}
	// The same uid-generator layout counted from a recent epoch starts (it lasts 8.5 years from it).
	Server fine("fine_layout", {kPreload, "snowflake.layout = 'time=28,unit=1s,node=22,seq=13'",
	                            "snowflake.epoch = " + std::to_string(unix_ms() - 86400000), "snowflake.node = 4000000"});
	ASSERT_TRUE(fine.start()) << fine.log();
	pqxx::connection conn = fine.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	EXPECT_EQ(query_int(conn, "SELECT node FROM snowflake_parse(snowflake_nextval())"), 4000000);
}

TEST(Layouts, AnEpochThatDoesNotSuitTheClockAtBootStopsOnlyGeneration) {
	// The clock may be what is wrong at boot (a dead RTC, a restored VM): the server starts, warns
	// with the clock's reading, and refuses IDs with a clock error until the pair suits; decoding works.
	const struct {
		std::vector<std::string> lines;
		const char *detail, *sqlstate, *state;
	} cases[] = {
	    // uid-generator #100: a layout whose time field, counted from the epoch, already ran out.
	    {{"snowflake.layout = 'time=28,unit=1s,node=22,seq=13'", "snowflake.node = 5"},
	     "The layout's time field counted from this epoch has already run out.", "2200H", "time run out"},
	    // An epoch in 2286, as a clock reading 2009 sees Twitter's.
	    {{"snowflake.layout = 'sonyflake'", "snowflake.epoch = 9999999999999", "snowflake.node = 5"},
	     "The epoch must not be in the future.", "22008", "clock before epoch"},
	};
	for (const auto &c : cases) {
		std::vector<std::string> conf = {kPreload};
		conf.insert(conf.end(), c.lines.begin(), c.lines.end());
		Server server("boot_clock", conf);
		ASSERT_TRUE(server.start()) << c.lines.front() << "\n" << server.log();
		EXPECT_NE(server.log().find("at the system clock's reading"), std::string::npos) << server.log();
		EXPECT_NE(server.log().find(c.detail), std::string::npos) << server.log();
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), c.sqlstate) << c.lines.front();
		EXPECT_EQ(query_int(conn, std::string("SELECT (state = '") + c.state + "')::int FROM snowflake_stats()"), 1);
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_parse(12345)"), "");
	}
}

TEST(Layouts, AChangeAcrossARestartIsRefusedOnceIdsExist) {
	Server server("layout_change", {kPreload, "snowflake.node = 3"});
	ASSERT_TRUE(server.start());
	long long high = 0;
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
		high = query_int(conn, "SELECT max(snowflake_nextval()) FROM generate_series(1, 1000)");
	}
	server.stop();
	server.append_conf("snowflake.layout = 'js53'");
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval_block(10)"), "55000");
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(1)"), "55000");
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_min_id(now())"), "55000");
		EXPECT_EQ(query_int(conn, "SELECT (state = 'layout changed')::int FROM snowflake_stats()"), 1);
		// Explicit-layout decoding depends on its arguments only, so it still works.
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(" + std::to_string(high) + ", 'twitter')"), "");
	}
	EXPECT_TRUE(server.wait_for_log("snowflake.layout changed from time=41,unit=1ms,node=10,seq=12 to "
	                                "time=41,unit=1ms,node=5,seq=7",
	                                5s));
	server.stop();
	server.append_conf("snowflake.layout = 'twitter'");
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_GT(query_int(conn, "SELECT snowflake_nextval()"), high);
}

// Without preloading nothing holds a configured layout fixed, so decoding refuses any but twitter;
// the explicit-layout functions still work.
TEST(Layouts, WithoutPreloadingOnlyTwitterDecodes) {
	Server js53("unpreloaded_js53", {"snowflake.layout = 'js53'"});
	ASSERT_TRUE(js53.start());
	pqxx::connection conn = js53.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(1)"), "55000");
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_min_id(now())"), "55000");
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(1, 'js53')"), "");
	Server twitter("unpreloaded_twitter", {"snowflake.layout = 'twitter'"});
	ASSERT_TRUE(twitter.start());
	pqxx::connection conn2 = twitter.connect();
	exec(conn2, {"CREATE EXTENSION snowflake"});
	EXPECT_EQ(sqlstate_of(conn2, "SELECT snowflake_timestamp(1)"), "");
}

// CRC-32C (Castagnoli), as PostgreSQL computes it for the state file.
uint32_t crc32c(const unsigned char *data, size_t length) {
	uint32_t crc = 0xFFFFFFFF;
	for (size_t i = 0; i < length; ++i) {
		crc ^= data[i];
		for (int bit = 0; bit < 8; ++bit)
			crc = (crc >> 1) ^ (0x82F63B78 & (0 - (crc & 1)));
	}
	return crc ^ 0xFFFFFFFF;
}

// Writes a state file as snowflake 0.1.0 did (version 1, 48 bytes, no unit).
void write_v1_state(const std::string &path, int64_t epoch_ms, int64_t reserved_ms) {
	unsigned char image[48] = {};
	const uint32_t magic = 0x46574e53, version = 1, timeline = 1;
	const int32_t widths[3] = {41, 10, 12};
	std::memcpy(image, &magic, 4);
	std::memcpy(image + 4, &version, 4);
	std::memcpy(image + 8, &epoch_ms, 8);
	std::memcpy(image + 16, widths, 12);
	std::memcpy(image + 28, &timeline, 4);
	std::memcpy(image + 32, &reserved_ms, 8);
	const uint32_t crc = crc32c(image, 40);
	std::memcpy(image + 40, &crc, 4);
	std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char *>(image), 48);
}

// Writes a version 2 state file (56 bytes) with the given fields, CRC-valid.
void write_v2_state(const std::string &path, int64_t epoch_ms, int32_t unit_ms, int64_t reserved_tick,
                    uint32_t timeline) {
	unsigned char image[56] = {};
	const uint32_t magic = 0x46574e53, version = 2;
	const int32_t widths[3] = {41, 10, 12};
	std::memcpy(image, &magic, 4);
	std::memcpy(image + 4, &version, 4);
	std::memcpy(image + 8, &epoch_ms, 8);
	std::memcpy(image + 16, widths, 12);
	std::memcpy(image + 28, &timeline, 4);
	std::memcpy(image + 32, &reserved_tick, 8);
	std::memcpy(image + 40, &unit_ms, 4);
	const uint32_t crc = crc32c(image, 48);
	std::memcpy(image + 48, &crc, 4);
	std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char *>(image), 56);
}

// The size of a file in bytes, -1 if it is missing.
long file_size(const std::string &path) {
	struct stat st;
	return stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

TEST(Layouts, AStateFileWrittenBy010IsReadAsTheTwitterLayout) {
	Server server("state_v1", {kPreload, "snowflake.node = 2", "snowflake.max_clock_drift = '60s'"});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
	}
	server.stop();
	// A 0.1.0 file whose reservation lies 20 s ahead of the clock: the first ID must start above it.
	const int64_t reserved_ms = unix_ms() - kTwitterEpochMs + 20000;
	write_v1_state(server.data_file("snowflake.state"), kTwitterEpochMs, reserved_ms);
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
	write_v1_state(server.data_file("snowflake.state"), kTwitterEpochMs, reserved_ms);
	server.append_conf("snowflake.layout = 'sonyflake'");
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
	EXPECT_EQ(query_int(conn, "SELECT (state <> 'ok')::int FROM snowflake_stats()"), 1);
}

// The reservation is kept in ticks of 10 ms on sonyflake: after IDs borrowed 800 ms ahead of the
// clock and a crash restart (a backend killed: shared memory is rebuilt from the state file, which
// gets no exact last ID), the first ID is above all of them.
TEST(Layouts, ReservationsInTicksSurviveACrashRestart) {
	Server server("sonyflake_crash",
	              {kPreload, "snowflake.layout = 'sonyflake'", "snowflake.node = 50000",
	               "snowflake.fault_injection = on"});
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake", "SELECT snowflake_inject_clock_offset(800)"});
	const long long before = query_int(conn, "SELECT max(snowflake_nextval()) FROM generate_series(1, 2000)");
	ASSERT_TRUE(server.crash_a_backend());
	pqxx::connection again = server.connect();
	const long long after = query_int(again, "SELECT snowflake_nextval()");
	std::cout << "  sonyflake: first ID after the crash restart is "
	          << (kSonyflake.decompose(after).time - kSonyflake.decompose(before).time) << " ticks of 10 ms above\n";
	EXPECT_GT(after, before);
	EXPECT_EQ(kSonyflake.decompose(after).node, 50000);
}

// Connections mixing blocks of random sizes with single IDs: no ID twice, every ID on the node,
// each connection's IDs rising, and every block consecutive within one tick.
void blocks_and_singles(const std::string &layout, const Layout &core, int node) {
	Server server("blocks_" + layout, {kPreload, "snowflake.layout = '" + layout + "'",
	                                   "snowflake.node = " + std::to_string(node)});
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		exec(conn, {"CREATE EXTENSION snowflake"});
	}
	constexpr int kConnections = 6, kCalls = 1500;
	const int most = core.max_seq() + 1;
	std::vector<std::vector<long long>> ids(kConnections);
	std::vector<std::string> errors(kConnections);
	std::vector<std::thread> threads;
	for (int c = 0; c < kConnections; ++c)
		threads.emplace_back([&, c] {
			try {
				std::mt19937 rng(c);
				pqxx::connection conn = server.connect();
				for (int i = 0; i < kCalls; ++i) {
					pqxx::work tx{conn};
					if (rng() % 2 == 0) {
						const int n = 1 + static_cast<int>(rng() % most);
						const pqxx::result block = tx.exec("SELECT lower(b), upper(b) FROM snowflake_nextval_block(" +
						                                   std::to_string(n) + ") b");
						const long long lo = block.at(0)[0].as<long long>(), hi = block.at(0)[1].as<long long>();
						if (hi - lo != n || core.decompose(lo).time != core.decompose(hi - 1).time)
							throw std::runtime_error("block of " + std::to_string(n) + " is " + std::to_string(lo) +
							                         ".." + std::to_string(hi));
						for (long long id = lo; id < hi; ++id)
							ids[c].push_back(id);
					} else {
						ids[c].push_back(one_value<long long>(tx, "SELECT snowflake_nextval()"));
					}
					tx.commit();
				}
			} catch (const std::exception &e) {
				errors[c] = e.what();
			}
		});
	for (std::thread &t : threads)
		t.join();
	std::vector<long long> all;
	long long out_of_order = 0, wrong_node = 0;
	for (int c = 0; c < kConnections; ++c) {
		EXPECT_EQ(errors[c], "") << "connection " << c;
		for (size_t i = 1; i < ids[c].size(); ++i)
			out_of_order += ids[c][i] <= ids[c][i - 1];
		for (long long id : ids[c])
			wrong_node += core.decompose(id).node != node || id < 0 || (id >> (core.time_shift() + core.time_bits)) != 0;
		all.insert(all.end(), ids[c].begin(), ids[c].end());
	}
	std::sort(all.begin(), all.end());
	const long long duplicates = all.size() - (std::unique(all.begin(), all.end()) - all.begin());
	std::cout << "  " << layout << ": " << all.size() << " IDs from " << kConnections << " connections x " << kCalls
	          << " calls (half blocks of 1.." << most << "); duplicates " << duplicates << ", out of order "
	          << out_of_order << ", wrong node or out of layout " << wrong_node << "\n";
	EXPECT_EQ(duplicates, 0);
	EXPECT_EQ(out_of_order, 0);
	EXPECT_EQ(wrong_node, 0);
	EXPECT_GT(all.size(), size_t{kConnections} * kCalls);
}

TEST(Blocks, ConnectionsMixingBlocksAndSingleIdsNeverShareOne) {
	blocks_and_singles("twitter", kTwitter, 1023); // the node bits all ones: an overflow would show
	blocks_and_singles("js53", kJs53, 31);
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
		write_v2_state(server.data_file("snowflake.state"), c.epoch_ms, c.unit_ms, c.reserved_tick, 1);
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
	ASSERT_EQ(::rmdir(file.c_str()), 0);
	ASSERT_EQ(::rename(aside.c_str(), file.c_str()), 0);
	ASSERT_EQ(::chmod(file.c_str(), 0400), 0);
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "42501");
	ASSERT_EQ(::unlink(file.c_str()), 0);
	ASSERT_EQ(::mkdir(tmp.c_str(), 0700), 0);
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "42809");
	ASSERT_EQ(::rmdir(tmp.c_str()), 0);
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "");
	EXPECT_EQ(file_size(file), 72);
	EXPECT_TRUE(server.wait_for_log("could not open file \"snowflake.state\": Is a directory", 5s));
	EXPECT_TRUE(server.wait_for_log("could not open file \"snowflake.state\": Permission denied", 5s));
	EXPECT_TRUE(server.wait_for_log("could not create file \"snowflake.state.tmp\": Is a directory", 5s));
}

} // namespace
} // namespace snowflake::test

