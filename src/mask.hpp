// Public IDs: a keyed, reversible mask of snowflake IDs, with no PostgreSQL
// headers. The mask is FF1 (NIST SP 800-38G) in radix 2 with an empty tweak,
// over AES from OpenSSL's libcrypto, applied to an ID's w bits (the layout's
// width) most significant bit first: a permutation of [0, 2^w). This file also
// parses the key list of snowflake.mask_keys ("B:hex, A:hex", the first entry
// masking) and writes and reads the 12-character text form (the key's ID, then
// 11 base62 digits). Unit-tested in test/unit/mask_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace snowflake {

// The most keys snowflake.mask_keys may list: one per key ID character (0-9, A-Z, a-z).
constexpr int kMaxMaskKeys = 62;
// The text form's length: the key's ID and 11 base62 digits.
constexpr std::size_t kPublicIdLength = 12;
// FF1 needs radix^length >= 1,000,000: in radix 2, at least 20 bits.
constexpr int kMinMaskWidth = 20;

// One AES key of the list: its one-character ID and 16, 24 or 32 key bytes.
struct MaskKey {
	char id;
	uint8_t length;
	uint8_t bytes[32];
};

// snowflake.mask_keys parsed: keys[0] masks; every key unmasks the text IDs that name it.
struct MaskKeyRing {
	int count;
	MaskKey keys[kMaxMaskKeys];
};

// Why text is not a key list, or nullptr with ring filled in; entry is the 1-based entry at fault.
// The problem never quotes key material.
const char *parse_mask_keys(std::string_view text, MaskKeyRing &ring, int &entry) noexcept;

// The key list with its key material left out ("B:(hidden), A:(hidden)"), NUL-terminated.
void describe_mask_keys(const MaskKeyRing &ring, char (&out)[kMaxMaskKeys * 12]) noexcept;

// The key of ring whose ID is id, or nullptr.
const MaskKey *find_mask_key(const MaskKeyRing &ring, char id) noexcept;

// FF1 with one key over IDs of one width: an OpenSSL AES context and CIPH_K(P), which depends only
// on the key and the width. Plain data; ff1_open() and ff1_close() manage the context.
struct Ff1 {
	void *cipher; // EVP_CIPHER_CTX *, nullptr when closed
	int width;
	uint8_t p_block[16]; // AES_K(P): the first block of every round's CBC-MAC
};

// Sets f up for key and width (kMinMaskWidth to 63 bits); false when OpenSSL fails. Closes f first.
bool ff1_open(Ff1 &f, const MaskKey &key, int width) noexcept;

// Frees f's OpenSSL context; f may be closed already.
void ff1_close(Ff1 &f) noexcept;

// One AES block under f's key: out = AES_K(in) (FF1's PRF is built of these); false when OpenSSL fails.
bool aes_block(Ff1 &f, const uint8_t (&in)[16], uint8_t (&out)[16]) noexcept;

// FF1.Encrypt of x (below 2^width) into out; false only when OpenSSL fails.
bool ff1_encrypt(Ff1 &f, uint64_t x, uint64_t &out) noexcept;

// FF1.Decrypt of y (below 2^width) into out, so that ff1_decrypt(ff1_encrypt(x)) == x.
bool ff1_decrypt(Ff1 &f, uint64_t y, uint64_t &out) noexcept;

// Writes the text form of a masked value: key_id, then 11 base62 digits; no terminator.
void write_public_id(char key_id, uint64_t masked, char (&out)[kPublicIdLength]) noexcept;

enum class PublicIdError { None, Length, Character, Overflow };

struct PublicIdText {
	char key_id;          // the text's first character, when error is not Length
	uint64_t masked;      // the masked value, when error is None
	PublicIdError error;  // what is wrong with the text
	std::size_t position; // for Character: the 0-based offset of the first bad character
};

// The key ID and masked value the text form (len bytes) holds, or why it holds none; a value of
// width bits or more is Overflow.
PublicIdText read_public_id(const char *text, std::size_t len, int width) noexcept;

} // namespace snowflake
