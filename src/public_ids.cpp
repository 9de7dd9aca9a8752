// Public IDs in the server: the setting snowflake.mask_keys (its parse into
// a key ring, the sources it may come from, and a SHOW that hides the key
// material), each backend's FF1 contexts built from it on first use, and the
// four SQL entry points snowflake_mask, snowflake_unmask, snowflake_mask_text
// and snowflake_unmask_text. The construction is mask.hpp's; the threat model
// is docs/public-ids.md's.
#include "public_ids.hpp"

#include "encoding.hpp"
#include "mask.hpp"
#include "shmem.hpp"

namespace snowflake {
namespace {

constexpr const char *kMaskKeys = "snowflake.mask_keys";

char *mask_keys_text = nullptr;          // the setting as written (never shown)
const MaskKeyRing *mask_ring = nullptr;  // the setting parsed: its GUC extra
uint64_t ring_generation = 0;            // counts assignments of the setting
uint64_t built_generation = 0;           // the generation ciphers[] were built for
Ff1 ciphers[kMaxMaskKeys];               // FF1 per key of mask_ring, cipher nullptr until first use
char shown[kMaxMaskKeys * 12];           // what SHOW gives: the key IDs only

// True for the sources that store a setting in a catalog every role can read (ALTER ROLE or
// DATABASE ... SET, a function's SET clause, all checked as PGC_S_TEST), or apply such a value.
bool catalog_source(GucSource source) noexcept {
	return source == PGC_S_TEST || source == PGC_S_GLOBAL || source == PGC_S_DATABASE || source == PGC_S_USER ||
	       source == PGC_S_DATABASE_USER;
}

extern "C" {

// Accepts a key list from postgresql.conf, ALTER SYSTEM, the command line or a superuser's SET, and
// passes it on parsed in extra. Its messages never quote the value: it holds keys.
static bool check_mask_keys(char **newval, void **extra, GucSource source) {
	if (catalog_source(source) && *newval != nullptr && **newval != '\0') {
		GUC_check_errcode(ERRCODE_INSUFFICIENT_PRIVILEGE);
		GUC_check_errmsg("%s cannot be stored with ALTER ROLE, ALTER DATABASE or a function's SET", kMaskKeys);
		GUC_check_errdetail("Those keep the value in a catalog that every role can read.");
		GUC_check_errhint("Set it in postgresql.conf, or with ALTER SYSTEM SET, and reload.");
		return false;
	}
	MaskKeyRing parsed; // parsed first: guc_malloc'ed memory is not free()'s on PostgreSQL 16+
	int entry = 0;
	if (const char *problem = parse_mask_keys(*newval != nullptr ? *newval : "", parsed, entry)) {
		GUC_check_errmsg("invalid value for parameter \"%s\" at entry %d", kMaskKeys, entry);
		GUC_check_errdetail("%s.", problem);
		GUC_check_errhint("Write each key as ID:HEX, such as A:000102030405060708090a0b0c0d0e0f, separated by "
		                  "commas; the first key masks.");
		return false;
	}
	auto *ring = static_cast<MaskKeyRing *>(guc_malloc(LOG, sizeof(MaskKeyRing)));
	if (ring == nullptr)
		return false;
	*ring = parsed;
	*extra = ring;
	return true;
}

// Makes the parsed list current; the FF1 contexts are rebuilt at the next use.
static void assign_mask_keys(const char *, void *extra) {
	mask_ring = static_cast<const MaskKeyRing *>(extra);
	++ring_generation;
}

// What SHOW, current_setting() and pg_settings give: the key IDs, never the keys.
static const char *show_mask_keys(void) {
	if (mask_ring == nullptr)
		return "";
	describe_mask_keys(*mask_ring, shown);
	return shown;
}

} // extern "C"

// The width of the IDs masked: the layout's bits; ERROR when FF1 cannot take so few, or when
// snowflake is not preloaded (the key is protected only once the library defines the setting).
int mask_width() {
	(void)preloaded(); // refuses without preloading
	const Layout &layout = layout_setting.layout;
	const int width = layout.time_bits + layout.node_bits + layout.seq_bits;
	if (width < kMinMaskWidth)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("snowflake.layout \"%s\" has %d bits, too few to mask", layout_setting.name, width),
		                errdetail("FF1 needs at least %d bits.", kMinMaskWidth)));
	return width;
}

// The key list in force; ERROR 55000 with a hint when none is set.
const MaskKeyRing &key_ring() {
	if (mask_ring == nullptr || mask_ring->count == 0)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("no mask key is set"),
		                errdetail("Public IDs need %s, which is empty.", kMaskKeys),
		                errhint("As a superuser, run ALTER SYSTEM SET %s = 'A:' followed by a key of 32 hex digits "
		                        "(openssl rand -hex 16 makes one), then SELECT pg_reload_conf(); see "
		                        "docs/public-ids.md.",
		                        kMaskKeys)));
	return *mask_ring;
}

// FF1 for a key of the list in force, over IDs of the layout's width, built on first use.
Ff1 &cipher(const MaskKeyRing &ring, const MaskKey &key, int width) {
	if (built_generation != ring_generation) {
		for (Ff1 &f : ciphers)
			ff1_close(f);
		built_generation = ring_generation;
	}
	Ff1 &f = ciphers[&key - ring.keys];
	if ((f.cipher == nullptr || f.width != width) && !ff1_open(f, key, width))
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("could not set up AES for key \"%c\"", key.id)));
	return f;
}

// id when it is an ID of the layout's width; ERROR 22003 otherwise.
uint64_t in_range(int64_t id, int width) {
	if (id < 0 || (width < 63 && (id >> width) != 0))
		ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
		                errmsg("%lld is not an ID of the layout in use", static_cast<long long>(id)),
		                errdetail("Masks take and give values from 0 to 2^%d - 1.", width)));
	return static_cast<uint64_t>(id);
}

// FF1 of value with key, forwards or backwards.
int64_t run_ff1(const MaskKeyRing &ring, const MaskKey &key, int width, uint64_t value, bool forwards) {
	Ff1 &f = cipher(ring, key, width);
	uint64_t out = 0;
	if (!(forwards ? ff1_encrypt(f, value, out) : ff1_decrypt(f, value, out)))
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("AES failed for key \"%c\"", key.id)));
	return static_cast<int64_t>(out);
}

// ERROR 22P02 for text that is not a public ID, naming it (its first 64 bytes) and what is wrong.
[[noreturn]] void refuse_public_id(const text *code, const char *detail, const char *hint) {
	const int len = VARSIZE_ANY_EXHDR(code);
	const int shown_len = pg_mbcliplen(VARDATA_ANY(code), len, 64);
	ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
	                errmsg("invalid public ID: \"%s%s\"", pnstrdup(VARDATA_ANY(code), shown_len),
	                       shown_len < len ? "..." : ""),
	                errdetail("%s", detail), hint != nullptr ? errhint("%s", hint) : 0));
	pg_unreachable();
}

} // namespace

void define_mask_setting() {
	DefineCustomStringVariable(kMaskKeys, "Sets the keys that mask public IDs (superusers only).",
	                           "A comma-separated list of ID:HEX, one character and an AES key of 32, 48 or 64 hex "
	                           "digits; the first masks, every one unmasks the text IDs that name it.",
	                           &mask_keys_text, "", PGC_SUSET, GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
	                           check_mask_keys, assign_mask_keys, show_mask_keys);
}

} // namespace snowflake

extern "C" {
PG_FUNCTION_INFO_V1(snowflake_mask);
PG_FUNCTION_INFO_V1(snowflake_unmask);
PG_FUNCTION_INFO_V1(snowflake_mask_text);
PG_FUNCTION_INFO_V1(snowflake_unmask_text);

// snowflake_mask(id bigint) → bigint: FF1 of id under the first key; a permutation of the layout's IDs.
Datum snowflake_mask(PG_FUNCTION_ARGS) {
	const int width = snowflake::mask_width();
	const snowflake::MaskKeyRing &ring = snowflake::key_ring();
	const uint64_t id = snowflake::in_range(PG_GETARG_INT64(0), width);
	PG_RETURN_INT64(snowflake::run_ff1(ring, ring.keys[0], width, id, true));
}

// snowflake_unmask(masked bigint) → bigint: the ID that snowflake_mask() gave masked for, under the first key.
Datum snowflake_unmask(PG_FUNCTION_ARGS) {
	const int width = snowflake::mask_width();
	const snowflake::MaskKeyRing &ring = snowflake::key_ring();
	const uint64_t masked = snowflake::in_range(PG_GETARG_INT64(0), width);
	PG_RETURN_INT64(snowflake::run_ff1(ring, ring.keys[0], width, masked, false));
}

// snowflake_mask_text(id bigint) → text: the first key's ID and 11 base62 digits of snowflake_mask(id).
Datum snowflake_mask_text(PG_FUNCTION_ARGS) {
	const int width = snowflake::mask_width();
	const snowflake::MaskKeyRing &ring = snowflake::key_ring();
	const uint64_t id = snowflake::in_range(PG_GETARG_INT64(0), width);
	const int64_t masked = snowflake::run_ff1(ring, ring.keys[0], width, id, true);
	char out[snowflake::kPublicIdLength];
	snowflake::write_public_id(ring.keys[0].id, static_cast<uint64_t>(masked), out);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out, static_cast<int>(sizeof(out))));
}

// snowflake_unmask_text(code text) → bigint: the ID whose snowflake_mask_text() is code, under the key it names.
Datum snowflake_unmask_text(PG_FUNCTION_ARGS) {
	const int width = snowflake::mask_width();
	const snowflake::MaskKeyRing &ring = snowflake::key_ring();
	const text *code = PG_GETARG_TEXT_PP(0);
	const snowflake::PublicIdText read =
	    snowflake::read_public_id(VARDATA_ANY(code), VARSIZE_ANY_EXHDR(code), width);
	char detail[160];
	switch (read.error) {
	case snowflake::PublicIdError::None:
		break;
	case snowflake::PublicIdError::Length:
		snowflake::refuse_public_id(code, "A public ID has exactly 12 characters.", nullptr);
	case snowflake::PublicIdError::Character:
		snprintf(detail, sizeof(detail), "Byte %zu is not a base62 digit (0-9, A-Z, a-z).", read.position + 1);
		snowflake::refuse_public_id(code, detail, nullptr);
	case snowflake::PublicIdError::Overflow:
		snprintf(detail, sizeof(detail), "Its value is not below 2^%d, the layout's IDs.", width);
		snowflake::refuse_public_id(code, detail, nullptr);
	}
	const snowflake::MaskKey *key = snowflake::find_mask_key(ring, read.key_id);
	if (key == nullptr) {
		snprintf(detail, sizeof(detail), "It was masked with key \"%c\", which %s does not hold.", read.key_id,
		         snowflake::kMaskKeys);
		snowflake::refuse_public_id(code, detail,
		                            "If that key was retired, list it again after the current one in "
		                            "snowflake.mask_keys to resolve the IDs it masked.");
	}
	PG_RETURN_INT64(snowflake::run_ff1(ring, *key, width, read.masked, false));
}
}
