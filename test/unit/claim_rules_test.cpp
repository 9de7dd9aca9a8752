// Unit tests of the rules a node check's claim keeps (src/claim_rules.*): a
// valid claim, each broken rule named, times as numeric's text gives them
// (Infinity included), escaping and the fingerprint that reports a claim once.
#include "claim_rules.hpp"

#include <gtest/gtest.h>

#include <string>

namespace snowflake {
namespace {

constexpr int64_t kMaxNode = 1023;
constexpr int64_t kNow = int64_t{1700000000} * 1000000;

// The first broken rule of claim, or "" when it keeps them all.
std::string why_not(const ClaimText &claim) {
	ClaimValues values;
	char why[96];
	return check_claim(claim, kMaxNode, kNow, values, why) ? std::string() : std::string(why);
}

TEST(ClaimRules, AValidClaimIsBelievedWithItsValues) {
	ClaimValues values;
	char why[96];
	ASSERT_TRUE(check_claim({"db-1:5432", "7300000000000000001:2", "3", "1699999000123456.000000", "1700000000000000"},
	                        kMaxNode, kNow, values, why))
	    << why;
	EXPECT_EQ(values.node, 3);
	EXPECT_EQ(values.started_us, 1699999000123456);
	EXPECT_EQ(values.heartbeat_us, 1700000000000000);
	// A Citus peer's heartbeat is not seen here: the rest is checked.
	EXPECT_EQ(why_not({"db-1:5432", "1:1", "0", "1699999000000000", nullptr}), "");
}

TEST(ClaimRules, EachBrokenRuleIsNamed) {
	EXPECT_EQ(why_not({"a:1", "1:1", "1024", "0", "0"}), "node 1024 is outside 0 to 1023");
	EXPECT_EQ(why_not({"a:1", "1:1", "-1", "0", "0"}), "node -1 is outside 0 to 1023");
	EXPECT_EQ(why_not({"a:1", "1:1", "3.5", "0", "0"}), "its node is not a whole number");
	EXPECT_EQ(why_not({"a\n:1", "1:1", "3", "0", "0"}), "its server is not 1 to 127 printable ASCII characters");
	EXPECT_EQ(why_not({"", "1:1", "3", "0", "0"}), "its server is not 1 to 127 printable ASCII characters");
	EXPECT_EQ(why_not({std::string(128, 'a').c_str(), "1:1", "3", "0", "0"}),
	          "its server is not 1 to 127 printable ASCII characters");
	EXPECT_EQ(why_not({std::string(127, 'a').c_str(), "1:1", "3", "0", "0"}), "");
	for (const char *identity : {"1", ":1", "1:", "x:1", "1:1:1", "123456789012345678901:1", "1:12345678901"})
		EXPECT_EQ(why_not({"a:1", identity, "3", "0", "0"}), "its identity is not a system identifier and a timeline")
		    << identity;
	EXPECT_EQ(why_not({"a:1", "1:1", "3", "Infinity", "0"}), "started_at is not finite");
	EXPECT_EQ(why_not({"a:1", "1:1", "3", "-Infinity", "0"}), "started_at is not finite");
	EXPECT_EQ(why_not({"a:1", "1:1", "3", "0", "Infinity"}), "heartbeat is not finite");
	EXPECT_EQ(why_not({"a:1", "1:1", "3", "0", "99999999999999999999"}), "heartbeat is not finite");
	EXPECT_EQ(why_not({"a:1", "1:1", "3", "0", std::to_string(kNow + kClaimAheadLimitUs + 1000000).c_str()}),
	          "heartbeat is 3601 s ahead of this server's clock");
	EXPECT_EQ(why_not({"a:1", "1:1", "3", "0", std::to_string(kNow + kClaimAheadLimitUs).c_str()}), "");
}

TEST(ClaimRules, EscapesEveryByteThatIsNotPrintable) {
	char out[64];
	escape_claim_text("far:5432\nLOG:  x\\y\x7f\xc3", out, sizeof(out));
	EXPECT_STREQ(out, "far:5432\\x0aLOG:  x\\\\y\\x7f\\xc3");
	escape_claim_text(nullptr, out, sizeof(out));
	EXPECT_STREQ(out, "(null)");
	char small[8];
	escape_claim_text("abcdefghij", small, sizeof(small));
	EXPECT_STREQ(small, "abcd...");
}

TEST(ClaimRules, AFingerprintChangesWithTheClaimAndTheRuleNotTheHeartbeat) {
	const ClaimText a{"a:1", "1:1", "3", "0", "Infinity"};
	const ClaimText later{"a:1", "1:1", "3", "5", "7"};
	EXPECT_EQ(claim_fingerprint(a, "x"), claim_fingerprint(later, "x"));
	EXPECT_NE(claim_fingerprint(a, "x"), claim_fingerprint(a, "y"));
	EXPECT_NE(claim_fingerprint(a, "x"), claim_fingerprint({"a:1", "1:2", "3", "0", "0"}, "x"));
}

} // namespace
} // namespace snowflake
