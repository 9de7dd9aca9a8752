// The rules a node check's claim keeps before it is believed (see claim_rules.hpp).
#include "claim_rules.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace snowflake {
namespace {

// Whether every byte of text is printable ASCII and there are from 1 to max of them.
bool printable(const char *text, size_t max) noexcept {
	size_t n = 0;
	for (; text[n] != '\0'; ++n)
		if (n >= max || static_cast<unsigned char>(text[n]) < 0x20 || static_cast<unsigned char>(text[n]) > 0x7e)
			return false;
	return n > 0;
}

// Whether text is 1 to max decimal digits and nothing else.
bool digits(const char *text, size_t from, size_t to) noexcept {
	if (to <= from)
		return false;
	for (size_t i = from; i < to; ++i)
		if (text[i] < '0' || text[i] > '9')
			return false;
	return true;
}

// Whether identity is a system identifier (1 to 20 digits), ':', and a timeline (1 to 10 digits).
bool identity_shape(const char *identity) noexcept {
	const char *colon = strchr(identity, ':');
	if (colon == nullptr || strlen(identity) > kClaimIdentityMax)
		return false;
	const size_t at = static_cast<size_t>(colon - identity);
	const size_t end = strlen(identity);
	return at <= 20 && end - at - 1 <= 10 && digits(identity, 0, at) && digits(identity, at + 1, end);
}

// Checks one time of a claim (name: its column) against now_us; false with why filled in.
bool time_ok(const char *text, const char *name, int64_t now_us, int64_t &out, char (&why)[96]) noexcept {
	if (text == nullptr || !parse_claim_number(text, out)) {
		snprintf(why, sizeof(why), "%s is not finite", name);
		return false;
	}
	if (out > now_us && out - now_us > kClaimAheadLimitUs) {
		snprintf(why, sizeof(why), "%s is %lld s ahead of this server's clock", name,
		         static_cast<long long>((out - now_us) / 1000000));
		return false;
	}
	return true;
}

} // namespace

bool parse_claim_number(const char *text, int64_t &out) noexcept {
	if (text == nullptr)
		return false;
	const size_t sign = text[0] == '-' ? 1 : 0;
	size_t end = sign;
	while (text[end] >= '0' && text[end] <= '9')
		++end;
	if (end == sign || end - sign > 19)
		return false;
	if (text[end] == '.') {
		size_t frac = end + 1;
		while (text[frac] >= '0' && text[frac] <= '9')
			++frac;
		if (text[frac] != '\0')
			return false;
	} else if (text[end] != '\0') {
		return false;
	}
	errno = 0;
	const long long value = strtoll(text, nullptr, 10);
	if (errno == ERANGE)
		return false;
	out = value;
	return true;
}

bool check_claim(const ClaimText &claim, int64_t max_node, int64_t now_us, ClaimValues &values, char (&why)[96]) noexcept {
	why[0] = '\0';
	if (claim.node == nullptr || !parse_claim_number(claim.node, values.node) || strchr(claim.node, '.') != nullptr) {
		snprintf(why, sizeof(why), "its node is not a whole number");
		return false;
	}
	if (values.node < 0 || values.node > max_node) {
		snprintf(why, sizeof(why), "node %lld is outside 0 to %lld", static_cast<long long>(values.node),
		         static_cast<long long>(max_node));
		return false;
	}
	if (claim.server == nullptr || !printable(claim.server, kClaimServerMax)) {
		snprintf(why, sizeof(why), "its server is not 1 to %zu printable ASCII characters", kClaimServerMax);
		return false;
	}
	if (claim.identity == nullptr || !identity_shape(claim.identity)) {
		snprintf(why, sizeof(why), "its identity is not a system identifier and a timeline");
		return false;
	}
	if (!time_ok(claim.started_us, "started_at", now_us, values.started_us, why))
		return false;
	values.heartbeat_us = INT64_MIN;
	return claim.heartbeat_us == nullptr || time_ok(claim.heartbeat_us, "heartbeat", now_us, values.heartbeat_us, why);
}

void escape_claim_text(const char *text, char *out, size_t size) noexcept {
	if (size == 0)
		return;
	if (text == nullptr)
		text = "(null)";
	size_t n = 0;
	for (const char *p = text; *p != '\0'; ++p) {
		const unsigned char c = static_cast<unsigned char>(*p);
		char piece[5];
		if (c == '\\')
			snprintf(piece, sizeof(piece), "\\\\");
		else if (c >= 0x20 && c <= 0x7e)
			snprintf(piece, sizeof(piece), "%c", c);
		else
			snprintf(piece, sizeof(piece), "\\x%02x", c);
		const size_t len = strlen(piece);
		if (n + len + 4 > size) { // room for "..." and the NUL
			if (n + 4 <= size)
				memcpy(out + n, "...", 3), n += 3;
			break;
		}
		memcpy(out + n, piece, len);
		n += len;
	}
	out[n] = '\0';
}

uint64_t claim_fingerprint(const ClaimText &claim, const char *why) noexcept {
	uint64_t hash = 14695981039346656037ull;
	for (const char *part : {claim.server, claim.identity, claim.node, why}) {
		for (const char *p = part != nullptr ? part : ""; *p != '\0'; ++p)
			hash = (hash ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
		hash = (hash ^ 0xff) * 1099511628211ull; // a separator no text holds
	}
	return hash;
}

} // namespace snowflake
