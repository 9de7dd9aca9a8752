// Fixed-width text encodings of snowflake IDs: the digit alphabets, encoding
// by repeated division from the right, and checked decoding. No PostgreSQL
// headers; unit-tested in test/unit/encoding_test.cpp.
#include "encoding.hpp"

namespace snowflake {
namespace {

constexpr char kBase32Digits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr char kBase62Digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
constexpr char kHexDigits[] = "0123456789abcdef";

struct Alphabet {
	const char *digits;
	int base;
	std::size_t width; // the fewest digits that hold 2^63-1
};

// The digits, base and width of e.
Alphabet alphabet(Encoding e) noexcept {
	switch (e) {
	case Encoding::Base32:
		return {kBase32Digits, 32, 13};
	case Encoding::Base62:
		return {kBase62Digits, 62, 11};
	case Encoding::Hex:
		break;
	}
	return {kHexDigits, 16, 16};
}

// The value of digit c in e, or -1 when c is not one of e's digits (aliases included).
int digit_value(char c, Encoding e) noexcept {
	if (c >= '0' && c <= '9')
		return c - '0';
	switch (e) {
	case Encoding::Base62:
		if (c >= 'A' && c <= 'Z')
			return c - 'A' + 10;
		if (c >= 'a' && c <= 'z')
			return c - 'a' + 36;
		return -1;
	case Encoding::Hex:
		if (c >= 'a' && c <= 'f')
			return c - 'a' + 10;
		if (c >= 'A' && c <= 'F')
			return c - 'A' + 10;
		return -1;
	case Encoding::Base32:
		break;
	}
	if (c >= 'a' && c <= 'z')
		c = static_cast<char>(c - 'a' + 'A');
	if (c == 'I' || c == 'L')
		return 1;
	if (c == 'O')
		return 0;
	for (int d = 10; d < 32; ++d)
		if (kBase32Digits[d] == c)
			return d;
	return -1;
}

} // namespace

std::size_t encoded_length(Encoding e) noexcept {
	return alphabet(e).width;
}

const char *encoding_name(Encoding e) noexcept {
	switch (e) {
	case Encoding::Base32:
		return "base32";
	case Encoding::Base62:
		return "base62";
	case Encoding::Hex:
		break;
	}
	return "hex";
}

void encode(int64_t id, Encoding e, char *out) noexcept {
	const Alphabet a = alphabet(e);
	uint64_t rest = static_cast<uint64_t>(id);
	for (std::size_t i = a.width; i-- > 0;) {
		out[i] = a.digits[rest % static_cast<uint64_t>(a.base)];
		rest /= static_cast<uint64_t>(a.base);
	}
}

Decoded decode(const char *text, std::size_t len, Encoding e) noexcept {
	const Alphabet a = alphabet(e);
	if (len != a.width)
		return {0, DecodeError::Length, 0};
	constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
	uint64_t value = 0;
	bool overflow = false;
	for (std::size_t i = 0; i < len; ++i) {
		const int d = digit_value(text[i], e);
		if (d < 0)
			return {0, DecodeError::Character, i};
		const uint64_t digit = static_cast<uint64_t>(d);
		const uint64_t base = static_cast<uint64_t>(a.base);
		if (overflow || value > (kMax - digit) / base)
			overflow = true; // keep scanning: a bad character is the more useful report
		else
			value = value * base + digit;
	}
	if (overflow)
		return {0, DecodeError::Overflow, 0};
	return {static_cast<int64_t>(value), DecodeError::None, 0};
}

} // namespace snowflake
