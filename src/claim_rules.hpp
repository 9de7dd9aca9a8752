// What a claim of the node check (claims.hpp) must look like before it is
// believed, as pure C++: a node within the layout, a server name and an
// identity of bounded length in printable ASCII, and times that are finite
// and not absurdly ahead of this server's clock. A claim that breaks a rule
// could have been written by no server's node check (a forged row, a hand
// edit): it is ignored, never logged, compared or put into an error as it
// stands, and reported once with every value escaped. No PostgreSQL header:
// claims.cpp reads the rows and reports; the unit tests drive this directly.
#pragma once

#include <cstddef>
#include <cstdint>

namespace snowflake {

// A claim as the worker reads it: every value as the text the query gave, so that nothing is converted
// before it is checked. nullptr for a value this server cannot see (a Citus peer's heartbeat).
struct ClaimText {
	const char *server;       // how people reach the claimant: host:port
	const char *identity;     // system identifier ':' timeline
	const char *node;         // the node claimed, in decimal
	const char *started_us;   // since when it issues under the node, Unix µs (numeric text: may be Infinity)
	const char *heartbeat_us; // its last renewal, Unix µs
};

// A claim's values, once they keep every rule.
struct ClaimValues {
	int64_t node;
	int64_t started_us;
	int64_t heartbeat_us; // INT64_MIN when unknown here
};

// How far ahead of this server's clock a claim's times may be: an hour of clock difference between
// servers, and no more.
constexpr int64_t kClaimAheadLimitUs = int64_t{3600} * 1000000;

// The longest server name and identity a claim may carry (the worker keeps them in fixed buffers).
constexpr size_t kClaimServerMax = 127;
constexpr size_t kClaimIdentityMax = 63;

// Whether claim keeps every rule for a layout whose nodes are 0 to max_node at now_us: true with values
// filled in; false with the first broken rule, as words, in why.
bool check_claim(const ClaimText &claim, int64_t max_node, int64_t now_us, ClaimValues &values, char (&why)[96]) noexcept;

// Copies text into out (of size bytes, NUL-terminated), printable ASCII as it is but the backslash doubled,
// every other byte as \xNN; text longer than out has room for ends in "...". A null text is "(null)".
void escape_claim_text(const char *text, char *out, size_t size) noexcept;

// A number that tells a claim and its broken rule apart from others (FNV-1a over the values that
// identify it, and why), so that it is reported once while it stays the same.
uint64_t claim_fingerprint(const ClaimText &claim, const char *why) noexcept;

// Parses a decimal integer with an optional fraction ("1700000000123456.000000"), as numeric's text
// gives it, into out: false for anything else (Infinity, NaN, a value beyond int64).
bool parse_claim_number(const char *text, int64_t &out) noexcept;

} // namespace snowflake
