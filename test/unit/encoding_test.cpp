// Unit tests of the text encodings (src/encoding.*): widths, the extremes,
// round trips of random and boundary IDs, the order property (byte order of
// the codes equals numeric order of the IDs), Crockford's aliases, and every
// kind of malformed input.
#include "encoding.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <vector>

namespace snowflake {
namespace {

constexpr Encoding kAll[] = {Encoding::Base32, Encoding::Base62, Encoding::Hex};

std::string enc(int64_t id, Encoding e) {
	char buf[kMaxEncodedLength];
	encode(id, e, buf);
	return std::string(buf, encoded_length(e));
}

Decoded dec(const std::string &s, Encoding e) {
	return decode(s.data(), s.size(), e);
}

// Random IDs plus every boundary around powers of two and of each base.
std::vector<int64_t> sample_ids() {
	std::vector<int64_t> ids = {0, 1, 2, INT64_MAX, INT64_MAX - 1};
	for (int bit = 0; bit < 63; ++bit)
		for (int64_t d : {-1, 0, 1}) {
			const int64_t v = (int64_t{1} << bit) + d;
			if (v >= 0)
				ids.push_back(v);
		}
	for (int64_t base : {32, 62, 16}) {
		int64_t p = 1;
		while (p <= INT64_MAX / base) {
			p *= base;
			ids.push_back(p - 1);
			ids.push_back(p);
		}
	}
	std::mt19937_64 rng(7);
	for (int i = 0; i < 200000; ++i)
		ids.push_back(static_cast<int64_t>(rng() >> (1 + rng() % 62)));
	return ids;
}

TEST(Encoding, WidthsAndExtremes) {
	EXPECT_EQ(encoded_length(Encoding::Base32), 13u);
	EXPECT_EQ(encoded_length(Encoding::Base62), 11u);
	EXPECT_EQ(encoded_length(Encoding::Hex), 16u);
	EXPECT_EQ(enc(0, Encoding::Base32), "0000000000000");
	EXPECT_EQ(enc(INT64_MAX, Encoding::Base32), "7ZZZZZZZZZZZZ");
	EXPECT_EQ(enc(0, Encoding::Base62), "00000000000");
	EXPECT_EQ(enc(INT64_MAX, Encoding::Base62), "AzL8n0Y58m7");
	EXPECT_EQ(enc(INT64_MAX, Encoding::Hex), "7fffffffffffffff");
	EXPECT_EQ(enc(910499571847892992, Encoding::Hex), "0ca2be895c239000");
	EXPECT_EQ(enc(31, Encoding::Base32), "000000000000Z");
	EXPECT_EQ(enc(61, Encoding::Base62), "0000000000z");
	EXPECT_STREQ(encoding_name(Encoding::Base62), "base62");
}

TEST(Encoding, RoundTripsAndOrder) {
	std::vector<int64_t> ids = sample_ids();
	std::sort(ids.begin(), ids.end());
	ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
	for (Encoding e : kAll) {
		std::string prev;
		for (int64_t id : ids) {
			const std::string code = enc(id, e);
			const Decoded back = dec(code, e);
			ASSERT_EQ(back.error, DecodeError::None) << code;
			ASSERT_EQ(back.value, id) << code;
			if (!prev.empty()) {
				ASSERT_LT(prev, code) << "order broken at " << id << " in " << encoding_name(e);
			}
			prev = code;
		}
	}
}

TEST(Encoding, CrockfordAliasesAndCase) {
	const int64_t id = 1234567890123456789;
	const std::string code = enc(id, Encoding::Base32);
	std::string lower = code;
	std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) { return static_cast<char>(std::tolower(c)); });
	EXPECT_EQ(dec(lower, Encoding::Base32).value, id);
	EXPECT_EQ(dec("000000000000I", Encoding::Base32).value, 1);
	EXPECT_EQ(dec("000000000000i", Encoding::Base32).value, 1);
	EXPECT_EQ(dec("000000000000L", Encoding::Base32).value, 1);
	EXPECT_EQ(dec("000000000000l", Encoding::Base32).value, 1);
	EXPECT_EQ(dec("OOOOOOOOOOOOo", Encoding::Base32).value, 0);
	EXPECT_EQ(dec("000000000000U", Encoding::Base32).error, DecodeError::Character);
	EXPECT_EQ(dec("00000000000FF", Encoding::Hex).error, DecodeError::Length);
	EXPECT_EQ(dec("00000000000000FF", Encoding::Hex).value, 255);
	EXPECT_EQ(dec("00000000000000ff", Encoding::Hex).value, 255);
	// base62 is case-sensitive: a and A are different digits.
	EXPECT_EQ(dec("0000000000a", Encoding::Base62).value, 36);
	EXPECT_EQ(dec("0000000000A", Encoding::Base62).value, 10);
}

TEST(Encoding, MalformedInput) {
	for (Encoding e : kAll) {
		const std::string good = enc(42, e);
		EXPECT_EQ(dec("", e).error, DecodeError::Length);
		EXPECT_EQ(dec(good.substr(1), e).error, DecodeError::Length);
		EXPECT_EQ(dec(good + "0", e).error, DecodeError::Length);
		for (char bad : {'-', ' ', '+', '!', '\0', static_cast<char>(0xC3)}) {
			std::string s = good;
			s[5] = bad;
			const Decoded d = dec(s, e);
			EXPECT_EQ(d.error, DecodeError::Character);
			EXPECT_EQ(d.position, 5u);
		}
	}
	// One above 2^63-1, and the largest string of each width.
	EXPECT_EQ(dec("8000000000000", Encoding::Base32).error, DecodeError::Overflow);
	EXPECT_EQ(dec("ZZZZZZZZZZZZZ", Encoding::Base32).error, DecodeError::Overflow);
	EXPECT_EQ(dec("AzL8n0Y58m8", Encoding::Base62).error, DecodeError::Overflow);
	EXPECT_EQ(dec("zzzzzzzzzzz", Encoding::Base62).error, DecodeError::Overflow);
	EXPECT_EQ(dec("8000000000000000", Encoding::Hex).error, DecodeError::Overflow);
	EXPECT_EQ(dec("ffffffffffffffff", Encoding::Hex).error, DecodeError::Overflow);
	// A bad character is reported even after an overflowing prefix.
	EXPECT_EQ(dec("zzzzzzzzzz-", Encoding::Base62).error, DecodeError::Character);
	// Every single character of each alphabet decodes to its digit, and nothing else decodes.
	for (Encoding e : kAll) {
		int accepted = 0;
		for (int c = 0; c < 256; ++c) {
			std::string s = enc(0, e);
			s.back() = static_cast<char>(c);
			if (dec(s, e).error == DecodeError::None)
				++accepted;
		}
		EXPECT_EQ(accepted, e == Encoding::Base32 ? 32 + 22 + 4 + 2 : e == Encoding::Base62 ? 62 : 22);
	}
}

} // namespace
} // namespace snowflake
