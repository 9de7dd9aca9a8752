// Integration tests of layouts and blocks of IDs against real servers: bad
// layouts stop the server at start, a layout configured without preloading
// stops decoding, a layout or epoch change across a restart is refused once
// IDs exist,
// and many connections mixing blocks and single IDs never share an ID or
// leave their node, on twitter and on js53.
#include "generator.hpp"
#include "server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <thread>

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

// After IDs were issued, `setting` changes to `changed` across a restart: generation and decoding
// in the server's layout are refused (55000, the state names it, the log says what changed), the
// explicit-layout functions still decode; once it is back to `original`, IDs continue above the old.
void a_change_across_a_restart_is_refused(const std::string &setting, const std::string &changed,
                                          const std::string &original, const std::string &state,
                                          const std::string &logged) {
	Server server("changed_" + setting.substr(setting.find('.') + 1), {kPreload, "snowflake.node = 3"});
	ASSERT_TRUE(server.start());
	long long high = create_and_issue(server, 1000);
	server.stop();
	server.append_conf(setting + " = '" + changed + "'");
	ASSERT_TRUE(server.start());
	{
		pqxx::connection conn = server.connect();
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "55000");
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval_block(10)"), "55000");
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(" + std::to_string(high) + ")"), "55000");
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_min_id(now())"), "55000");
		EXPECT_EQ(query_int(conn, "SELECT (state = '" + state + "')::int FROM snowflake_state()"), 1);
		// Explicit-layout decoding depends on its arguments only, so it still works.
		EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_timestamp(" + std::to_string(high) + ", 'twitter')"), "");
	}
	EXPECT_TRUE(server.wait_for_log(logged, 5s));
	server.stop();
	server.append_conf(setting + " = '" + original + "'");
	ASSERT_TRUE(server.start());
	pqxx::connection conn = server.connect();
	EXPECT_GT(query_int(conn, "SELECT snowflake_nextval()"), high);
}

TEST(Layouts, AChangeAcrossARestartIsRefusedOnceIdsExist) {
	a_change_across_a_restart_is_refused("snowflake.layout", "js53", "twitter", "layout changed",
	                                     "snowflake.layout changed from time=41,unit=1ms,node=10,seq=12 to "
	                                     "time=41,unit=1ms,node=5,seq=7");
	a_change_across_a_restart_is_refused("snowflake.epoch", "1577836800000", "1288834974657", "epoch changed",
	                                     "snowflake.epoch changed from 1288834974657 to 1577836800000");
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

} // namespace
} // namespace snowflake::test

