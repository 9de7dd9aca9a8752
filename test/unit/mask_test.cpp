// Unit tests of public IDs' core (src/mask.*): AES against FIPS-197's
// published vectors, FF1 against known answers, exact round trips over 10
// million IDs and every layout's extremes, a whole 20-bit domain checked to be
// a permutation, the statistical smoke test (Spearman's rho and each output
// bit's balance over a million consecutive IDs), the key list's parser and its
// redacted form, and the text form's every malformed input.
//
// The known answers come from @noble/ciphers' FF1 (which reproduces NIST's
// FF1 samples) and were checked row by row with Bouncy Castle's; the clients
// suite checks both against the server's masks byte for byte.
#include "mask.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace snowflake {
namespace {

constexpr const char *kNistKey = "2b7e151628aed2a6abf7158809cf4f3c"; // NIST's FF1 samples' AES-128 key
constexpr const char *kKey256 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

// The first key of a one-key list "A:hex".
MaskKey key_of(const std::string &hex) {
	MaskKeyRing ring{};
	int entry = 0;
	EXPECT_EQ(parse_mask_keys("A:" + hex, ring, entry), nullptr);
	return ring.keys[0];
}

// FF1 set up for a key and width; closed by the caller's ff1_close.
Ff1 opened(const std::string &hex, int width) {
	Ff1 f{};
	EXPECT_TRUE(ff1_open(f, key_of(hex), width));
	return f;
}

uint64_t enc(Ff1 &f, uint64_t x) {
	uint64_t y = 0;
	EXPECT_TRUE(ff1_encrypt(f, x, y));
	return y;
}

uint64_t dec(Ff1 &f, uint64_t y) {
	uint64_t x = 0;
	EXPECT_TRUE(ff1_decrypt(f, y, x));
	return x;
}

TEST(Aes, Fips197AppendixCVectors) {
	const uint8_t plain[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	                           0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
	const struct {
		const char *key, *cipher;
	} cases[] = {
	    {"000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"},
	    {"000102030405060708090a0b0c0d0e0f1011121314151617", "dda97ca4864cdfe06eaf70a0ec0d7191"},
	    {kKey256, "8ea2b7ca516745bfeafc49904b496089"},
	};
	for (const auto &c : cases) {
		Ff1 f = opened(c.key, 63);
		uint8_t out[16];
		ASSERT_TRUE(aes_block(f, plain, out));
		char hex[33];
		for (int i = 0; i < 16; ++i)
			snprintf(hex + 2 * i, 3, "%02x", out[i]);
		EXPECT_STREQ(hex, c.cipher) << "key " << c.key;
		ff1_close(f);
	}
}

// Known answers of two independent FF1 implementations, @noble/ciphers' and Bouncy Castle's
// (test/unit/mask_vectors.inc), for AES-128, -192 and -256 at widths 63 and 53, with the text form.
TEST(Ff1, KnownAnswersOfTwoOtherImplementations) {
	static const struct {
		char key_id;
		const char *key_hex;
		int width;
		uint64_t id, masked;
		const char *text;
	} cases[] = {
#include "mask_vectors.inc"
	};
	ASSERT_GE(std::size(cases), 72u);
	for (const auto &c : cases) {
		Ff1 f = opened(c.key_hex, c.width);
		EXPECT_EQ(enc(f, c.id), c.masked) << c.key_hex << " w" << c.width << " x" << c.id;
		EXPECT_EQ(dec(f, c.masked), c.id);
		char text[kPublicIdLength];
		write_public_id(c.key_id, c.masked, text);
		EXPECT_EQ(std::string(text, sizeof(text)), c.text);
		ff1_close(f);
	}
}

TEST(Ff1, TenMillionRoundTripsAreExactAndDistinct) {
	// Every layout's extremes: 0, 1, 2^62, 2^63-1; the largest ID of js53 and of a 22-bit field.
	std::vector<uint64_t> ids = {0, 1, 2, uint64_t{1} << 62, (uint64_t{1} << 63) - 1, (uint64_t{1} << 53) - 1,
	                             uint64_t{1} << 53, (uint64_t{1} << 22) - 1};
	// IDs with their low bits set: a whole millisecond of one node, then random ones.
	const uint64_t base = (uint64_t{123456789} << 22) | (uint64_t{7} << 12);
	for (uint64_t seq = 0; seq < 4096; ++seq)
		ids.push_back(base | seq);
	std::mt19937_64 rng(35);
	while (ids.size() < 10'000'000)
		ids.push_back(rng() >> 1);
	std::sort(ids.begin(), ids.end());
	ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
	ASSERT_GT(ids.size(), 9'999'000u);

	Ff1 f = opened(kNistKey, 63);
	std::vector<uint64_t> masks;
	masks.reserve(ids.size());
	for (uint64_t x : ids) {
		const uint64_t y = enc(f, x);
		ASSERT_LT(y, uint64_t{1} << 63);
		ASSERT_EQ(dec(f, y), x);
		masks.push_back(y);
	}
	ff1_close(f);
	std::sort(masks.begin(), masks.end());
	EXPECT_EQ(std::adjacent_find(masks.begin(), masks.end()), masks.end()) << "two distinct IDs share a mask";
}

TEST(Ff1, AWholeTwentyBitDomainIsAPermutation) {
	Ff1 f = opened(kKey256, 20);
	std::vector<bool> seen(1u << 20);
	for (uint64_t x = 0; x < (1u << 20); ++x) {
		const uint64_t y = enc(f, x);
		ASSERT_LT(y, uint64_t{1} << 20);
		ASSERT_FALSE(seen[y]) << "two IDs share the mask " << y;
		seen[y] = true;
		ASSERT_EQ(dec(f, y), x);
	}
	ff1_close(f);
}

TEST(Ff1, JsLayoutStaysBelowTwoToThe53) {
	Ff1 f = opened(kNistKey, 53);
	std::mt19937_64 rng(53);
	for (int i = 0; i < 200'000; ++i) {
		const uint64_t x = rng() >> 11;
		const uint64_t y = enc(f, x);
		ASSERT_LT(y, uint64_t{1} << 53);
		ASSERT_EQ(dec(f, y), x);
	}
	ff1_close(f);
}

// Over a million consecutive IDs of one millisecond-dense run, masks keep no order (Spearman) and
// every output bit is set about half the time.
TEST(Ff1, StatisticalSmokeTest) {
	constexpr int kCount = 1'000'000;
	Ff1 f = opened(kNistKey, 63);
	// 245 ms of 4,096 IDs each from node 7: consecutive IDs as one busy server issues them.
	std::vector<uint64_t> masks(kCount);
	uint64_t ms = uint64_t{987654321}, seq = 0;
	for (int i = 0; i < kCount; ++i) {
		masks[i] = enc(f, (ms << 22) | (uint64_t{7} << 12) | seq);
		if (++seq == 4096) {
			seq = 0;
			++ms;
		}
	}
	ff1_close(f);
	std::vector<int> order(kCount);
	std::iota(order.begin(), order.end(), 0);
	std::sort(order.begin(), order.end(), [&](int a, int b) { return masks[a] < masks[b]; });
	double sum_d2 = 0; // the IDs' ranks are their indices; order[r] is the index of the mask of rank r
	for (int r = 0; r < kCount; ++r) {
		const double d = static_cast<double>(order[r]) - r;
		sum_d2 += d * d;
	}
	const double n = kCount;
	const double rho = 1 - 6 * sum_d2 / (n * (n * n - 1));
	EXPECT_LT(std::fabs(rho), 0.01) << "Spearman's rho " << rho;
	for (int bit = 0; bit < 63; ++bit) {
		int set = 0;
		for (uint64_t m : masks)
			set += static_cast<int>((m >> bit) & 1);
		EXPECT_NEAR(set / n, 0.5, 0.005) << "bit " << bit;
	}
}

TEST(MaskKeys, ParsesListsAndNamesTheEntryAtFault) {
	MaskKeyRing ring{};
	int entry = 0;
	EXPECT_EQ(parse_mask_keys(" B:000102030405060708090a0b0c0d0e0f ,A:2B7E151628AED2A6ABF7158809CF4F3C", ring, entry),
	          nullptr);
	ASSERT_EQ(ring.count, 2);
	EXPECT_EQ(ring.keys[0].id, 'B');
	EXPECT_EQ(ring.keys[1].id, 'A');
	EXPECT_EQ(ring.keys[1].bytes[0], 0x2b);
	EXPECT_EQ(find_mask_key(ring, 'A'), &ring.keys[1]);
	EXPECT_EQ(find_mask_key(ring, 'C'), nullptr);
	EXPECT_EQ(parse_mask_keys("", ring, entry), nullptr);
	EXPECT_EQ(ring.count, 0);

	const struct {
		const char *text;
		int entry;
	} bad[] = {
	    {"A:00", 1},                                                                   // short key
	    {"A:000102030405060708090a0b0c0d0e0", 1},                                      // 31 digits
	    {"A:000102030405060708090a0b0c0d0e0g", 1},                                     // not hex
	    {"A000102030405060708090a0b0c0d0e0f", 1},                                      // no colon
	    {"-:000102030405060708090a0b0c0d0e0f", 1},                                     // bad ID
	    {"A:000102030405060708090a0b0c0d0e0f,A:000102030405060708090a0b0c0d0e0f", 2}, // same ID
	    {"A:000102030405060708090a0b0c0d0e0f,", 2},                                    // empty entry
	};
	for (const auto &b : bad) {
		const char *problem = parse_mask_keys(b.text, ring, entry);
		ASSERT_NE(problem, nullptr) << b.text;
		EXPECT_EQ(entry, b.entry) << b.text;
		EXPECT_EQ(std::string(problem).find("0102"), std::string::npos) << "a problem quotes key material";
	}
}

TEST(MaskKeys, TheRedactedFormShowsOnlyTheIds) {
	MaskKeyRing ring{};
	int entry = 0;
	ASSERT_EQ(parse_mask_keys("B:000102030405060708090a0b0c0d0e0f, A:2b7e151628aed2a6abf7158809cf4f3c", ring, entry),
	          nullptr);
	char out[kMaxMaskKeys * 12];
	describe_mask_keys(ring, out);
	EXPECT_STREQ(out, "B:(hidden), A:(hidden)");
}

TEST(PublicIdText, RoundTripsAndRefusesWhatIsNotOne) {
	char text[kPublicIdLength];
	write_public_id('B', 3989821467963092630u, text);
	const std::string s(text, sizeof(text));
	EXPECT_EQ(s.size(), 12u);
	EXPECT_EQ(s[0], 'B');
	PublicIdText r = read_public_id(s.data(), s.size(), 63);
	EXPECT_EQ(r.error, PublicIdError::None);
	EXPECT_EQ(r.key_id, 'B');
	EXPECT_EQ(r.masked, 3989821467963092630u);
	write_public_id('0', 0, text);
	EXPECT_EQ(std::string(text, sizeof(text)), "000000000000");

	EXPECT_EQ(read_public_id("B123", 4, 63).error, PublicIdError::Length);
	EXPECT_EQ(read_public_id("B0000000000000", 14, 63).error, PublicIdError::Length);
	r = read_public_id("B0000-000000", 12, 63);
	EXPECT_EQ(r.error, PublicIdError::Character);
	EXPECT_EQ(r.position, 5u);
	EXPECT_EQ(read_public_id("-00000000000", 12, 63).error, PublicIdError::Character);
	EXPECT_EQ(read_public_id("Bzzzzzzzzzzz", 12, 63).error, PublicIdError::Overflow); // above 2^63-1
	// 2^53 fits 63 bits but not the js53 layout's 53.
	write_public_id('A', uint64_t{1} << 53, text);
	EXPECT_EQ(read_public_id(text, sizeof(text), 63).error, PublicIdError::None);
	EXPECT_EQ(read_public_id(text, sizeof(text), 53).error, PublicIdError::Overflow);
}

} // namespace
} // namespace snowflake
