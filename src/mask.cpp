// Public IDs' core: FF1 in radix 2 over OpenSSL's AES (one ECB block per
// round, the P block's encryption computed once per key), the key list's
// parser and its redacted form, and the 12-character text form on top of the
// base62 encoding. No PostgreSQL headers; unit-tested in test/unit/mask_test.cpp.
#include "mask.hpp"

#include "encoding.hpp"

#include <openssl/evp.h>

#include <cstdio>
#include <cstring>

namespace snowflake {
namespace {

// True for the characters a key may be named by: 0-9, A-Z and a-z.
bool is_key_id(char c) noexcept {
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

// The value of hex digit c, or -1.
int hex_value(char c) noexcept {
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

// text without the spaces and tabs around it.
std::string_view trimmed(std::string_view text) noexcept {
	while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
		text.remove_prefix(1);
	while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
		text.remove_suffix(1);
	return text;
}

// Why one entry ("ID:HEX") is not a key, or nullptr with key filled in.
const char *parse_key(std::string_view entry, MaskKey &key) noexcept {
	if (entry.size() < 2 || entry[1] != ':' || !is_key_id(entry[0]))
		return "each entry must be a key ID (one of 0-9, A-Z, a-z), a colon and the key in hex";
	const std::string_view hex = entry.substr(2);
	if (hex.size() != 32 && hex.size() != 48 && hex.size() != 64)
		return "a key must be 32, 48 or 64 hex digits (AES-128, AES-192 or AES-256)";
	for (std::size_t i = 0; i < hex.size(); i += 2) {
		const int high = hex_value(hex[i]), low = hex_value(hex[i + 1]);
		if (high < 0 || low < 0)
			return "a key may hold only hex digits (0-9, a-f, A-F)";
		key.bytes[i / 2] = static_cast<uint8_t>(high * 16 + low);
	}
	key.id = entry[0];
	key.length = static_cast<uint8_t>(hex.size() / 2);
	return nullptr;
}

// The AES cipher for a key of length bytes.
const EVP_CIPHER *aes_ecb(int length) noexcept {
	return length == 16 ? EVP_aes_128_ecb() : length == 24 ? EVP_aes_192_ecb() : EVP_aes_256_ecb();
}

// FF1's round function for round i on half b (the value of B): NUM(S) of the round's CBC-MAC,
// whose Q block is 11 or more zero bytes, i, and b in the last bytes (b_bytes of them).
bool round_value(Ff1 &f, int i, uint64_t b, int b_bytes, uint64_t &y) noexcept {
	uint8_t block[16];
	std::memcpy(block, f.p_block, sizeof(block));
	block[15 - b_bytes] ^= static_cast<uint8_t>(i);
	for (int k = 0; k < b_bytes; ++k)
		block[15 - k] ^= static_cast<uint8_t>(b >> (8 * k));
	uint8_t r[16];
	if (!aes_block(f, block, r))
		return false;
	y = 0;
	for (int k = 0; k < 8; ++k) // S is R's first d = 8 bytes (b is at most 4, so d = 4 * 1 + 4)
		y = (y << 8) | r[k];
	return true;
}

// The widths of FF1's halves: A has u bits, B has v; b is the bytes of v bits.
struct Halves {
	int u, v, b_bytes;
};

// The halves of a width.
Halves halves(int width) noexcept {
	const int u = width / 2, v = width - u;
	return Halves{u, v, (v + 7) / 8};
}

// 2^bits - 1.
uint64_t low_bits(int bits) noexcept {
	return (uint64_t{1} << bits) - 1;
}

} // namespace

bool aes_block(Ff1 &f, const uint8_t (&in)[16], uint8_t (&out)[16]) noexcept {
	int length = 0;
	return EVP_EncryptUpdate(static_cast<EVP_CIPHER_CTX *>(f.cipher), out, &length, in, 16) == 1 && length == 16;
}

const char *parse_mask_keys(std::string_view text, MaskKeyRing &ring, int &entry) noexcept {
	ring.count = 0;
	entry = 0;
	if (trimmed(text).empty())
		return nullptr; // no key: the functions refuse until one is set
	while (true) {
		++entry;
		const std::size_t comma = text.find(',');
		const std::string_view item = trimmed(text.substr(0, comma));
		if (ring.count == kMaxMaskKeys)
			return "at most 62 keys may be listed, one per key ID";
		MaskKey &key = ring.keys[ring.count];
		if (const char *problem = parse_key(item, key))
			return problem;
		if (find_mask_key(ring, key.id) != nullptr)
			return "two keys have the same ID";
		++ring.count;
		if (comma == std::string_view::npos)
			return nullptr;
		text.remove_prefix(comma + 1);
	}
}

void describe_mask_keys(const MaskKeyRing &ring, char (&out)[kMaxMaskKeys * 12]) noexcept {
	std::size_t used = 0;
	out[0] = '\0';
	for (int i = 0; i < ring.count; ++i)
		used += static_cast<std::size_t>(
		    std::snprintf(out + used, sizeof(out) - used, "%s%c:(hidden)", i == 0 ? "" : ", ", ring.keys[i].id));
}

const MaskKey *find_mask_key(const MaskKeyRing &ring, char id) noexcept {
	for (int i = 0; i < ring.count; ++i)
		if (ring.keys[i].id == id)
			return &ring.keys[i];
	return nullptr;
}

bool ff1_open(Ff1 &f, const MaskKey &key, int width) noexcept {
	ff1_close(f);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (ctx == nullptr)
		return false;
	f.cipher = ctx;
	f.width = width;
	if (EVP_EncryptInit_ex(ctx, aes_ecb(key.length), nullptr, key.bytes, nullptr) != 1 ||
	    EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
		ff1_close(f);
		return false;
	}
	// P = [1]^1 [2]^1 [1]^1 [radix]^3 [10]^1 [u mod 256]^1 [n]^4 [t]^4, radix 2 and t 0.
	const uint8_t p[16] = {1, 2, 1, 0, 0, 2, 10, static_cast<uint8_t>(halves(width).u), 0, 0, 0,
	                       static_cast<uint8_t>(width), 0, 0, 0, 0};
	if (!aes_block(f, p, f.p_block)) {
		ff1_close(f);
		return false;
	}
	return true;
}

void ff1_close(Ff1 &f) noexcept {
	EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX *>(f.cipher));
	f.cipher = nullptr;
}

bool ff1_encrypt(Ff1 &f, uint64_t x, uint64_t &out) noexcept {
	const Halves h = halves(f.width);
	uint64_t a = x >> h.v, b = x & low_bits(h.v);
	for (int i = 0; i < 10; ++i) {
		uint64_t y = 0;
		if (!round_value(f, i, b, h.b_bytes, y))
			return false;
		const uint64_t c = (a + y) & low_bits(i % 2 == 0 ? h.u : h.v);
		a = b;
		b = c;
	}
	out = (a << h.v) | b;
	return true;
}

bool ff1_decrypt(Ff1 &f, uint64_t y, uint64_t &out) noexcept {
	const Halves h = halves(f.width);
	uint64_t a = y >> h.v, b = y & low_bits(h.v);
	for (int i = 9; i >= 0; --i) {
		uint64_t value = 0;
		if (!round_value(f, i, a, h.b_bytes, value))
			return false;
		const uint64_t c = b;
		b = a;
		a = (c - value) & low_bits(i % 2 == 0 ? h.u : h.v);
	}
	out = (a << h.v) | b;
	return true;
}

void write_public_id(char key_id, uint64_t masked, char (&out)[kPublicIdLength]) noexcept {
	out[0] = key_id;
	encode(static_cast<int64_t>(masked), Encoding::Base62, out + 1);
}

PublicIdText read_public_id(const char *text, std::size_t len, int width) noexcept {
	if (len != kPublicIdLength)
		return {'\0', 0, PublicIdError::Length, 0};
	if (!is_key_id(text[0]))
		return {text[0], 0, PublicIdError::Character, 0};
	const Decoded d = decode(text + 1, len - 1, Encoding::Base62);
	switch (d.error) {
	case DecodeError::None:
		break;
	case DecodeError::Character:
		return {text[0], 0, PublicIdError::Character, d.position + 1};
	case DecodeError::Length:
	case DecodeError::Overflow:
		return {text[0], 0, PublicIdError::Overflow, 0};
	}
	const uint64_t value = static_cast<uint64_t>(d.value);
	if (width < 64 && (value >> width) != 0)
		return {text[0], 0, PublicIdError::Overflow, 0};
	return {text[0], value, PublicIdError::None, 0};
}

} // namespace snowflake
