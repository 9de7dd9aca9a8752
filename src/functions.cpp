// The SQL-callable entry points, as thin extern "C" shells: argument checks
// and Datum conversion here, generation in shmem.cpp, bit layout in the core.
// The decode functions depend only on their argument and snowflake.epoch,
// which cannot change while the server runs (and is the fixed default when
// snowflake is not preloaded); that is what makes them IMMUTABLE (see README,
// "Why the decode functions are IMMUTABLE").
#include "encoding.hpp"
#include "pg_boundary.hpp"
#include "shmem.hpp"
#include "time_range.hpp"

namespace snowflake {
namespace {

// Returns only for an ID that can be valid; ERROR 22023 for a negative one.
void check_not_negative(int64_t id) {
	if (id < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("snowflake ID must not be negative: %lld", static_cast<long long>(id)),
		                errdetail("Bit 63, the sign bit, is 0 in every snowflake ID.")));
}

// The parts of a valid ID; ERROR 22023 for a negative one.
Parts checked_parts(int64_t id) {
	check_not_negative(id);
	return decompose(id);
}

// The instant an ID was issued at, on this server's epoch; ERROR when no epoch can be trusted.
TimestampTz id_timestamptz(const Parts &parts) {
	return unix_ms_to_timestamptz(decoding_epoch() + parts.time_ms);
}

// The tstzrange argument n and its type's cache.
const RangeType *range_arg(FunctionCallInfo fcinfo, int n, TypeCacheEntry *&typcache) {
	const RangeType *range = PG_GETARG_RANGE_P(n);
	typcache = range_get_typcache(fcinfo, RangeTypeGetOid(range));
	return range;
}

// A tuple of the function's declared result type from values, NULL where nulls says.
Datum result_tuple(FunctionCallInfo fcinfo, Datum *values, bool *nulls) {
	TupleDesc desc;
	if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("function returning record called in context that cannot accept type record")));
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls));
}

// A time field (ms since the epoch) as timestamptz, or NULL for a negative one.
void time_or_null(int64_t time_ms, Datum &value, bool &null) {
	null = time_ms < 0;
	value = null ? Datum(0) : TimestampTzGetDatum(unix_ms_to_timestamptz(epoch_ms + time_ms));
}

// What the generator is doing, in words.
const char *state_name(const Stats &snap) {
	switch (snap.blocked) {
	case Blocked::StateDamaged:
		return "state file damaged";
	case Blocked::StateUnreadable:
		return "state file unreadable";
	case Blocked::LayoutChanged:
		return "epoch changed";
	case Blocked::No:
		break;
	}
	return RecoveryInProgress() ? "recovery" : "ok";
}

} // namespace
} // namespace snowflake

extern "C" {

PG_FUNCTION_INFO_V1(snowflake_nextval);
PG_FUNCTION_INFO_V1(snowflake_timestamp);
PG_FUNCTION_INFO_V1(snowflake_parse);
PG_FUNCTION_INFO_V1(snowflake_inject_clock_offset);
PG_FUNCTION_INFO_V1(snowflake_stats);
PG_FUNCTION_INFO_V1(snowflake_min_id);
PG_FUNCTION_INFO_V1(snowflake_max_id);
PG_FUNCTION_INFO_V1(snowflake_id_range);
PG_FUNCTION_INFO_V1(snowflake_range_first_id);
PG_FUNCTION_INFO_V1(snowflake_range_last_id);
PG_FUNCTION_INFO_V1(snowflake_between);
PG_FUNCTION_INFO_V1(snowflake_between_support);
PG_FUNCTION_INFO_V1(snowflake_backfill_id);

// snowflake_nextval() → bigint: a new ID, above every ID this server issued since start.
Datum snowflake_nextval(PG_FUNCTION_ARGS) {
	(void)fcinfo;
	PG_RETURN_INT64(snowflake::next_id());
}

// snowflake_timestamp(id bigint) → timestamptz: when id was issued, to the millisecond.
Datum snowflake_timestamp(PG_FUNCTION_ARGS) {
	const snowflake::Parts parts = snowflake::checked_parts(PG_GETARG_INT64(0));
	PG_RETURN_TIMESTAMPTZ(snowflake::id_timestamptz(parts));
}

// snowflake_parse(id bigint) → (ts timestamptz, node int, seq int): every field of id.
Datum snowflake_parse(PG_FUNCTION_ARGS) {
	const snowflake::Parts parts = snowflake::checked_parts(PG_GETARG_INT64(0));
	Datum values[3] = {TimestampTzGetDatum(snowflake::id_timestamptz(parts)), Int32GetDatum(parts.node),
	                   Int32GetDatum(parts.seq)};
	bool nulls[3] = {false, false, false};
	PG_RETURN_DATUM(snowflake::result_tuple(fcinfo, values, nulls));
}

// snowflake_stats() → one row: the node, layout, last ID, reservation and counters of this server.
Datum snowflake_stats(PG_FUNCTION_ARGS) {
	using namespace snowflake;
	const Stats snap = read_stats();
	const GeneratorState &gen = snap.generator;
	const Counters &count = gen.counters;
	Datum values[17];
	bool nulls[17] = {};
	nulls[0] = snap.node < 0;
	values[0] = Int32GetDatum(snap.node);
	values[1] = TimestampTzGetDatum(unix_ms_to_timestamptz(epoch_ms));
	values[2] = CStringGetTextDatum("41/10/12");
	nulls[3] = gen.last_id < 0;
	values[3] = Int64GetDatum(gen.last_id);
	time_or_null(gen.last_id < 0 ? -1 : decompose(gen.last_id).time_ms, values[4], nulls[4]);
	time_or_null(gen.reserved_ms, values[5], nulls[5]);
	values[6] = Int64GetDatum(count.issued);
	values[7] = Int64GetDatum(count.exhaustions);
	values[8] = Int64GetDatum(count.regressions);
	values[9] = Int64GetDatum(count.max_drift_ms);
	values[10] = Int64GetDatum(snap.waits);
	values[11] = Int64GetDatum(snap.wait_ms);
	values[12] = Int64GetDatum(count.reservations);
	values[13] = Int64GetDatum(int64_t{kMaxSeq + 1} * 1000);
	values[14] = TimestampTzGetDatum(unix_ms_to_timestamptz(epoch_ms + kMaxTime));
	values[15] = CStringGetTextDatum(state_name(snap));
	values[16] = Int64GetDatum(snap.clock_offset_ms);
	PG_RETURN_DATUM(result_tuple(fcinfo, values, nulls));
}

// snowflake_inject_clock_offset(offset_ms bigint): moves the generator's clock (tests only).
Datum snowflake_inject_clock_offset(PG_FUNCTION_ARGS) {
	snowflake::inject_clock_offset(PG_GETARG_INT64(0));
	PG_RETURN_VOID();
}

// snowflake_min_id(ts timestamptz) → bigint: the smallest ID whose time is at or after ts.
Datum snowflake_min_id(PG_FUNCTION_ARGS) {
	PG_RETURN_INT64(snowflake::min_id_at(PG_GETARG_TIMESTAMPTZ(0)));
}

// snowflake_max_id(ts timestamptz) → bigint: the largest ID whose time is at or before ts.
Datum snowflake_max_id(PG_FUNCTION_ARGS) {
	PG_RETURN_INT64(snowflake::max_id_at(PG_GETARG_TIMESTAMPTZ(0)));
}

// snowflake_id_range(r tstzrange) → int8range: exactly the IDs whose time lies in r.
Datum snowflake_id_range(PG_FUNCTION_ARGS) {
	TypeCacheEntry *typcache;
	const RangeType *range = snowflake::range_arg(fcinfo, 0, typcache);
	PG_RETURN_DATUM(snowflake::id_range(range, typcache));
}

// snowflake_range_first_id(r tstzrange) → bigint: the smallest ID in r (above the largest if none is).
Datum snowflake_range_first_id(PG_FUNCTION_ARGS) {
	TypeCacheEntry *typcache;
	const RangeType *range = snowflake::range_arg(fcinfo, 0, typcache);
	PG_RETURN_INT64(snowflake::span_of_range(range, typcache).first);
}

// snowflake_range_last_id(r tstzrange) → bigint: the largest ID in r (below the smallest if none is).
Datum snowflake_range_last_id(PG_FUNCTION_ARGS) {
	TypeCacheEntry *typcache;
	const RangeType *range = snowflake::range_arg(fcinfo, 0, typcache);
	PG_RETURN_INT64(snowflake::span_of_range(range, typcache).last);
}

// snowflake_between(id bigint, r tstzrange) → boolean: whether id's time lies in r.
Datum snowflake_between(PG_FUNCTION_ARGS) {
	const int64_t id = PG_GETARG_INT64(0);
	TypeCacheEntry *typcache;
	const RangeType *range = snowflake::range_arg(fcinfo, 1, typcache);
	const snowflake::IdSpan span = snowflake::span_of_range(range, typcache);
	PG_RETURN_BOOL(span.first <= id && id <= span.last);
}

// snowflake_between_support(internal): rewrites snowflake_between(id, r) as an ID range for the planner.
Datum snowflake_between_support(PG_FUNCTION_ARGS) {
	Node *request = reinterpret_cast<Node *>(PG_GETARG_POINTER(0));
	if (!IsA(request, SupportRequestSimplify))
		PG_RETURN_POINTER(nullptr);
	PG_RETURN_POINTER(snowflake::simplify_between(*reinterpret_cast<SupportRequestSimplify *>(request)->fcall));
}

// snowflake_backfill_id(ts timestamptz, seq integer) → bigint: an ID for a past time that no generator issues.
Datum snowflake_backfill_id(PG_FUNCTION_ARGS) {
	PG_RETURN_INT64(snowflake::backfill_id(PG_GETARG_TIMESTAMPTZ(0), PG_GETARG_INT32(1)));
}

} // extern "C"

// --- Adoption: text encodings of IDs ---------------------------------------

namespace snowflake {
namespace {

// The fixed-width text of argument 0 (an ID) in encoding e; ERROR 22023 for a negative ID.
Datum encode_arg(FunctionCallInfo fcinfo, Encoding e) {
	const int64_t id = PG_GETARG_INT64(0);
	check_not_negative(id);
	char buf[kMaxEncodedLength];
	encode(id, e, buf);
	return PointerGetDatum(cstring_to_text_with_len(buf, static_cast<int>(encoded_length(e))));
}

// The ID that text argument 0 encodes in e; ERROR 22P02 for malformed text.
int64_t decode_arg(FunctionCallInfo fcinfo, Encoding e) {
	const text *code = PG_GETARG_TEXT_PP(0);
	const std::size_t len = VARSIZE_ANY_EXHDR(code);
	const Decoded d = decode(VARDATA_ANY(code), len, e);
	if (d.error == DecodeError::None)
		return d.value;
	const char *name = encoding_name(e);
	const char *shown = text_to_cstring(code);
	switch (d.error) {
	case DecodeError::Length:
		ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
		                errmsg("invalid %s snowflake ID: \"%s\"", name, shown),
		                errdetail("A %s snowflake ID has exactly %zu characters, not %zu.", name, encoded_length(e),
		                          len)));
		break;
	case DecodeError::Character:
		ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
		                errmsg("invalid %s snowflake ID: \"%s\"", name, shown),
		                errdetail("Byte %zu is not a %s digit.", d.position + 1, name),
		                e == Encoding::Base32
		                    ? errhint("Crockford base32 digits are 0-9 and A-Z without I, L, O and U; lowercase letters "
		                              "and I, L, O (read as 1, 1, 0) are accepted.")
		                    : 0));
		break;
	default:
		ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
		                errmsg("invalid %s snowflake ID: \"%s\"", name, shown),
		                errdetail("It encodes a value above 9223372036854775807, the largest snowflake ID.")));
	}
	return 0;
}

} // namespace
} // namespace snowflake

extern "C" {

PG_FUNCTION_INFO_V1(snowflake_to_base32);
PG_FUNCTION_INFO_V1(snowflake_to_base62);
PG_FUNCTION_INFO_V1(snowflake_to_hex);
PG_FUNCTION_INFO_V1(snowflake_from_base32);
PG_FUNCTION_INFO_V1(snowflake_from_base62);
PG_FUNCTION_INFO_V1(snowflake_from_hex);

// snowflake_to_base32(id bigint) → snowflake_code: 13 Crockford base32 digits that sort like id.
Datum snowflake_to_base32(PG_FUNCTION_ARGS) {
	return snowflake::encode_arg(fcinfo, snowflake::Encoding::Base32);
}

// snowflake_to_base62(id bigint) → snowflake_code: 11 base62 digits that sort like id under COLLATE "C".
Datum snowflake_to_base62(PG_FUNCTION_ARGS) {
	return snowflake::encode_arg(fcinfo, snowflake::Encoding::Base62);
}

// snowflake_to_hex(id bigint) → snowflake_code: 16 lowercase hex digits that sort like id.
Datum snowflake_to_hex(PG_FUNCTION_ARGS) {
	return snowflake::encode_arg(fcinfo, snowflake::Encoding::Hex);
}

// snowflake_from_base32(code text) → bigint: exactly the ID snowflake_to_base32 encoded.
Datum snowflake_from_base32(PG_FUNCTION_ARGS) {
	PG_RETURN_INT64(snowflake::decode_arg(fcinfo, snowflake::Encoding::Base32));
}

// snowflake_from_base62(code text) → bigint: exactly the ID snowflake_to_base62 encoded.
Datum snowflake_from_base62(PG_FUNCTION_ARGS) {
	PG_RETURN_INT64(snowflake::decode_arg(fcinfo, snowflake::Encoding::Base62));
}

// snowflake_from_hex(code text) → bigint: exactly the ID snowflake_to_hex encoded.
Datum snowflake_from_hex(PG_FUNCTION_ARGS) {
	PG_RETURN_INT64(snowflake::decode_arg(fcinfo, snowflake::Encoding::Hex));
}

} // extern "C"
