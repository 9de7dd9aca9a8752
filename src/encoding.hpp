// Fixed-width text encodings of snowflake IDs (Crockford base32, base62, hex),
// pure C++ with no PostgreSQL headers. Every alphabet is in ASCII order and
// every encoding is zero-padded to one width, so comparing the encoded strings
// byte by byte (COLLATE "C") orders them exactly as the IDs. Decoding is exact
// and total: it reports a wrong length, a bad character or a value above
// 2^63-1 instead of guessing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace snowflake {

enum class Encoding { Base32, Base62, Hex };

// The longest encoded form (hex): callers size their buffers with it.
constexpr std::size_t kMaxEncodedLength = 16;

// The fixed number of characters every ID takes in encoding e: 13, 11 or 16.
std::size_t encoded_length(Encoding e) noexcept;

// The encoding's name as users write it: "base32", "base62" or "hex".
const char *encoding_name(Encoding e) noexcept;

// Writes exactly encoded_length(e) characters of id (which must be >= 0) to out; no terminator.
void encode(int64_t id, Encoding e, char *out) noexcept;

enum class DecodeError { None, Length, Character, Overflow };

struct Decoded {
	int64_t value;       // the ID, when error is None
	DecodeError error;   // what is wrong with the text, if anything
	std::size_t position; // for Character: the 0-based offset of the first bad character
};

// The ID that text (len bytes) encodes in e, or why it encodes none. Crockford
// base32 also accepts lowercase and the aliases I, L (for 1) and O (for 0);
// hex accepts A-F; base62 is case-sensitive.
Decoded decode(const char *text, std::size_t len, Encoding e) noexcept;

} // namespace snowflake
