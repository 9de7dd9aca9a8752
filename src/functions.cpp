// The SQL-callable entry points, as thin extern "C" shells: argument checks
// and Datum conversion here, generation in shmem.cpp, bit layout in the core.
// The decode functions depend only on their argument and snowflake.epoch,
// which cannot change while the server runs (and is the fixed default when
// snowflake is not preloaded); that is what makes them IMMUTABLE (see README,
// "Why the decode functions are IMMUTABLE").
#include "pg_boundary.hpp"
#include "shmem.hpp"

namespace snowflake {
namespace {

// The parts of a valid ID; ERROR 22023 for a negative one.
Parts checked_parts(int64_t id) {
	if (id < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("snowflake ID must not be negative: %lld", static_cast<long long>(id)),
		                errdetail("Bit 63, the sign bit, is 0 in every snowflake ID.")));
	return decompose(id);
}

// The instant an ID was issued at, on this server's epoch; ERROR when no epoch can be trusted.
TimestampTz id_timestamptz(const Parts &parts) {
	if (epoch_ms < 0)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake.epoch is set, but snowflake is not loaded via shared_preload_libraries"),
		                errdetail("Without preloading, nothing keeps the epoch fixed, so only the default epoch "
		                          "(1288834974657) can be decoded."),
		                errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart the "
		                        "server.")));
	return unix_ms_to_timestamptz(epoch_ms + parts.time_ms);
}

} // namespace
} // namespace snowflake

extern "C" {

PG_FUNCTION_INFO_V1(snowflake_nextval);
PG_FUNCTION_INFO_V1(snowflake_timestamp);
PG_FUNCTION_INFO_V1(snowflake_parse);
PG_FUNCTION_INFO_V1(snowflake_inject_clock_offset);

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
	TupleDesc desc;
	if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("snowflake_parse must be called where a record can be accepted")));
	Datum values[3] = {TimestampTzGetDatum(snowflake::id_timestamptz(parts)), Int32GetDatum(parts.node),
	                   Int32GetDatum(parts.seq)};
	bool nulls[3] = {false, false, false};
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

// snowflake_inject_clock_offset(offset_ms bigint): moves the generator's clock (tests only).
Datum snowflake_inject_clock_offset(PG_FUNCTION_ARGS) {
	snowflake::inject_clock_offset(PG_GETARG_INT64(0));
	PG_RETURN_VOID();
}

} // extern "C"
