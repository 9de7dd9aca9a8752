// The SQL-callable entry points, as thin extern "C" shells: argument checks
// and Datum conversion here, generation in issuing.cpp, bit layout in the core.
// The one-argument decode functions depend only on their argument,
// snowflake.epoch and snowflake.layout, which cannot change while the server
// runs (and are the fixed defaults when snowflake is not preloaded); the
// explicit-layout ones depend only on their arguments. That is what makes them
// IMMUTABLE (docs/functions.md, "Why the decode functions are IMMUTABLE").
#include "encoding.hpp"
#include "faults.hpp"
#include "issuing.hpp"
#include "layout_record.hpp"
#include "reservation.hpp"
#include "restart.hpp"
#include "stats.hpp"
#include "time_range.hpp"

namespace snowflake {
namespace {

// id, if it is not negative; ERROR 22023 if it is.
int64_t non_negative(int64_t id) {
	if (id < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("snowflake ID must not be negative: %lld", static_cast<long long>(id)),
		                errdetail("Bit 63, the sign bit, is 0 in every snowflake ID.")));
	return id;
}

// The parts of a valid ID of a layout; ERROR 22023 for a negative one or one too large for it.
Parts checked_parts(int64_t id, const LayoutSpec &spec) {
	non_negative(id);
	const Layout &layout = spec.layout;
	if (layout.time_shift() + layout.time_bits < 63 && (id >> (layout.time_shift() + layout.time_bits)) != 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("snowflake ID %lld is too large for layout \"%s\"", static_cast<long long>(id),
		                       spec.name),
		                errdetail("IDs of this layout are below 2^%d.", layout.time_shift() + layout.time_bits),
		                errhint("Decode it with the layout it was made in: snowflake_parse(id, 'layout').")));
	return spec.decode(id);
}

// The instant a tick of a layout starts at.
TimestampTz tick_timestamptz(int64_t time, const LayoutSpec &spec) {
	return unix_ms_to_timestamptz(spec.layout.unix_ms_of(time, spec.epoch_ms));
}

// The layout spec in a text argument; ERROR 22023 with a hint when it is not one.
LayoutSpec layout_arg(FunctionCallInfo fcinfo, int n) {
	const text *arg = PG_GETARG_TEXT_PP(n);
	const std::string_view spec_text(VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg));
	LayoutSpec spec{};
	if (const char *problem = parse_layout(spec_text, spec))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("invalid snowflake layout: \"%s\"", text_to_cstring(arg)), errdetail("%s", problem),
		                errhint("Name a preset (twitter, sonyflake or js53) or give time, unit, node and seq, "
		                        "optionally with an epoch: 'sonyflake', 'twitter,epoch=1288834974657', "
		                        "'time=39,unit=10ms,node=16,seq=8,epoch=1409529600000'.")));
	return spec;
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

// The timestamp, node and sequence of id in a layout, as a tuple of the function's result type.
Datum parse_tuple(FunctionCallInfo fcinfo, int64_t id, const LayoutSpec &spec) {
	const Parts parts = checked_parts(id, spec);
	Datum values[3] = {TimestampTzGetDatum(tick_timestamptz(parts.time, spec)), Int32GetDatum(parts.node),
	                   Int32GetDatum(parts.seq)};
	bool nulls[3] = {false, false, false};
	return result_tuple(fcinfo, values, nulls);
}

// A time field (ticks since the epoch) as timestamptz, or NULL for a negative one.
void time_or_null(int64_t time, Datum &value, bool &null) {
	null = time < 0;
	value = null ? Datum(0)
	             : TimestampTzGetDatum(unix_ms_to_timestamptz(layout_setting.layout.unix_ms_of(time, epoch_ms)));
}

// The fixed-width text of argument 0 (an ID) in encoding e; ERROR 22023 for a negative ID.
Datum encode_arg(FunctionCallInfo fcinfo, Encoding e) {
	const int64_t id = PG_GETARG_INT64(0);
	non_negative(id);
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
		                errdetail("A %s snowflake ID has exactly %zu characters, not %d.", name, encoded_length(e),
		                          pg_mbstrlen_with_len(VARDATA_ANY(code), static_cast<int>(len)))));
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

// The last ID snowflake_nextval() returned in this backend; -1 before the first.
int64_t last_issued_here = -1;

} // namespace
} // namespace snowflake

extern "C" {

PG_FUNCTION_INFO_V1(snowflake_nextval);
PG_FUNCTION_INFO_V1(snowflake_lastval);
PG_FUNCTION_INFO_V1(snowflake_timestamp);
PG_FUNCTION_INFO_V1(snowflake_parse);
PG_FUNCTION_INFO_V1(snowflake_inject_clock_offset);
PG_FUNCTION_INFO_V1(snowflake_stats);
PG_FUNCTION_INFO_V1(snowflake_node_status);
PG_FUNCTION_INFO_V1(snowflake_reservation);
PG_FUNCTION_INFO_V1(snowflake_state);
PG_FUNCTION_INFO_V1(snowflake_adopt_layout);
PG_FUNCTION_INFO_V1(snowflake_record_layout);
PG_FUNCTION_INFO_V1(snowflake_inject_write_delay);
PG_FUNCTION_INFO_V1(snowflake_min_id);
PG_FUNCTION_INFO_V1(snowflake_max_id);
PG_FUNCTION_INFO_V1(snowflake_id_range);
PG_FUNCTION_INFO_V1(snowflake_range_first_id);
PG_FUNCTION_INFO_V1(snowflake_range_last_id);
PG_FUNCTION_INFO_V1(snowflake_between);
PG_FUNCTION_INFO_V1(snowflake_between_support);
PG_FUNCTION_INFO_V1(snowflake_backfill_id);
PG_FUNCTION_INFO_V1(snowflake_timestamp_layout);
PG_FUNCTION_INFO_V1(snowflake_parse_layout);
PG_FUNCTION_INFO_V1(snowflake_layout);
PG_FUNCTION_INFO_V1(snowflake_nextval_block);
PG_FUNCTION_INFO_V1(snowflake_to_base32);
PG_FUNCTION_INFO_V1(snowflake_to_base62);
PG_FUNCTION_INFO_V1(snowflake_to_hex);
PG_FUNCTION_INFO_V1(snowflake_from_base32);
PG_FUNCTION_INFO_V1(snowflake_from_base62);
PG_FUNCTION_INFO_V1(snowflake_from_hex);

// snowflake_nextval() → bigint: a new ID, above every ID this server issued since start.
Datum snowflake_nextval(PG_FUNCTION_ARGS) {
	(void)fcinfo;
	snowflake::last_issued_here = snowflake::next_id();
	PG_RETURN_INT64(snowflake::last_issued_here);
}

// snowflake_lastval() → bigint: the ID snowflake_nextval() last returned in this session, as lastval()
// does for sequences; 55000 before the first.
Datum snowflake_lastval(PG_FUNCTION_ARGS) {
	(void)fcinfo;
	if (snowflake::last_issued_here < 0)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake_lastval is not yet defined in this session"),
		                errhint("Call snowflake_nextval() (or insert a row whose default calls it) first, or read "
		                        "the new ID with INSERT ... RETURNING.")));
	PG_RETURN_INT64(snowflake::last_issued_here);
}

// snowflake_timestamp(id bigint) → timestamptz: when id was issued, to the tick, in the active layout.
Datum snowflake_timestamp(PG_FUNCTION_ARGS) {
	const int64_t id = snowflake::non_negative(PG_GETARG_INT64(0)); // the argument is checked first
	const snowflake::LayoutSpec active = snowflake::decoding_layout();
	const snowflake::Parts parts = snowflake::checked_parts(id, active);
	PG_RETURN_TIMESTAMPTZ(snowflake::tick_timestamptz(parts.time, active));
}

// snowflake_parse(id bigint) → (ts timestamptz, node int, seq int): every field of id, in the active layout.
Datum snowflake_parse(PG_FUNCTION_ARGS) {
	const int64_t id = snowflake::non_negative(PG_GETARG_INT64(0)); // the argument is checked first
	PG_RETURN_DATUM(snowflake::parse_tuple(fcinfo, id, snowflake::decoding_layout()));
}

// snowflake_stats() → one row: the node, layout, last ID, reservation and counters of this server.
Datum snowflake_stats(PG_FUNCTION_ARGS) {
	using namespace snowflake;
	const Stats snap = read_stats();
	const GeneratorState &gen = snap.generator;
	const Counters &count = gen.counters;
	Datum values[20];
	bool nulls[20] = {};
	nulls[0] = snap.configured.node < 0;
	values[0] = Int32GetDatum(snap.configured.node);
	const Layout &layout = layout_setting.layout;
	values[1] = TimestampTzGetDatum(unix_ms_to_timestamptz(epoch_ms));
	values[2] = CStringGetTextDatum(psprintf("%d/%d/%d", layout.time_bits, layout.node_bits, layout.seq_bits));
	nulls[3] = gen.last_id < 0;
	values[3] = Int64GetDatum(gen.last_id);
	time_or_null(gen.last_id < 0 ? -1 : layout.decompose(gen.last_id).time, values[4], nulls[4]);
	time_or_null(gen.reserved_tick, values[5], nulls[5]);
	values[6] = Int64GetDatum(count.issued);
	values[7] = Int64GetDatum(count.exhaustions);
	values[8] = Int64GetDatum(count.regressions);
	values[9] = Int64GetDatum(count.max_drift_ticks * layout.unit_ms);
	values[10] = Int64GetDatum(snap.waits);
	values[11] = Int64GetDatum(snap.wait_ms);
	values[12] = Int64GetDatum(count.reservations);
	values[13] = Int64GetDatum(layout.ids_per_second());
	values[14] = TimestampTzGetDatum(unix_ms_to_timestamptz(layout.unix_ms_of(layout.max_time(), epoch_ms)));
	values[15] = CStringGetTextDatum(state_text(snap.state));
	values[16] = Int64GetDatum(snap.clock_offset_ms);
	// Columns added in 0.2.0; a 0.1.0 declaration has only the 17 above, and the tuple is built
	// from the declared descriptor, so the extra values are simply not read. No column is added
	// since: an older library builds its row with the columns of a newer declaration.
	values[17] = CStringGetTextDatum(layout_setting.name);
	char spec[64];
	format_layout(layout, spec);
	values[18] = CStringGetTextDatum(psprintf("%s,epoch=%lld", spec, static_cast<long long>(epoch_ms)));
	values[19] = Int32GetDatum(layout.max_node());
	PG_RETURN_DATUM(result_tuple(fcinfo, values, nulls));
}

// snowflake_node_status() → one row: the node, where it came from, and what the node check found when.
Datum snowflake_node_status(PG_FUNCTION_ARGS) {
	using namespace snowflake;
	const Stats snap = read_stats();
	Datum values[5];
	bool nulls[5] = {};
	nulls[0] = snap.configured.node < 0;
	values[0] = Int32GetDatum(snap.configured.node);
	char origin[160];
	describe_node_origin(snap.configured, origin);
	values[1] = CStringGetTextDatum(origin);
	values[2] = CStringGetTextDatum(snap.check == NodeCheck::CannotConnect
	                                    ? psprintf("cannot connect to database \"%s\"", check_database)
	                                    : node_check_text(snap.check));
	nulls[3] = !snap.check_conflict; // kept while a stale check still refuses

	values[3] = CStringGetTextDatum(snap.check_report);
	nulls[4] = snap.check_at_us == 0; // no pass ended yet
	values[4] = TimestampTzGetDatum(unix_ms_to_timestamptz(snap.check_at_us / 1000));
	PG_RETURN_DATUM(result_tuple(fcinfo, values, nulls));
}

// snowflake_reservation() → one row: the durable reservation, its lead, and who made the writes.
Datum snowflake_reservation(PG_FUNCTION_ARGS) {
	using namespace snowflake;
	const Stats snap = read_stats();
	Datum values[6];
	bool nulls[6] = {};
	time_or_null(snap.generator.reserved_tick, values[0], nulls[0]);
	values[1] = Int64GetDatum(snap.lead_ms);
	values[2] = Float8GetDatum(static_cast<double>(snap.write_latency_us) / 1000.0);
	values[3] = Int64GetDatum(snap.renewals);
	values[4] = Int64GetDatum(snap.caller_writes);
	values[5] = Int64GetDatum(snap.caller_waits);
	PG_RETURN_DATUM(result_tuple(fcinfo, values, nulls));
}

// snowflake_state() → one row: whether IDs can be issued now, and if not why, since when, in words,
// and when that ends by itself; the same state as snowflake_stats().state.
Datum snowflake_state(PG_FUNCTION_ARGS) {
	using namespace snowflake;
	const Stats snap = read_stats();
	const char *detail = state_detail(snap);
	Datum values[4] = {CStringGetTextDatum(state_text(snap.state)),
	                   TimestampTzGetDatum(unix_ms_to_timestamptz(snap.state_since_us / 1000)),
	                   detail != nullptr ? CStringGetTextDatum(detail) : Datum(0),
	                   TimestampTzGetDatum(unix_ms_to_timestamptz(snap.resumes_unix_ms))};
	bool nulls[4] = {false, false, detail == nullptr, snap.resumes_unix_ms < 0};
	PG_RETURN_DATUM(result_tuple(fcinfo, values, nulls));
}

// snowflake_record_layout() → void: this database's record says the epoch and layout this server's
// IDs are on record with; nothing without preloading.
Datum snowflake_record_layout(PG_FUNCTION_ARGS) {
	int64_t epoch = 0;
	snowflake::Layout layout{};
	// While the layout is unconfirmed after a start without a state file, the settings may be the
	// wrong ones: the new database records nothing rather than confirm them (layout_record.hpp).
	if (snowflake::layout_in_effect(epoch, layout) &&
	    pg_atomic_read_u32(&snowflake::shared_state->layout_unconfirmed) == 0)
		snowflake::put_layout_on_record(epoch, layout);
	PG_RETURN_VOID();
}

// snowflake_adopt_layout() → timestamptz: puts the epoch and layout in effect on record, with new IDs
// above every old one from the next start on; the time they start above.
Datum snowflake_adopt_layout(PG_FUNCTION_ARGS) {
	PG_RETURN_TIMESTAMPTZ(snowflake::unix_ms_to_timestamptz(snowflake::adopt_layout()));
}

// snowflake_inject_write_delay(delay_ms integer): makes every reservation write slower (tests only).
Datum snowflake_inject_write_delay(PG_FUNCTION_ARGS) {
	snowflake::inject_write_delay(PG_GETARG_INT32(0));
	PG_RETURN_VOID();
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
		PG_RETURN_POINTER(static_cast<Node *>(nullptr)); // typed: PG 19's PointerGetDatum is `true ? (X) : NULL`
	PG_RETURN_POINTER(snowflake::simplify_between(*reinterpret_cast<SupportRequestSimplify *>(request)->fcall));
}

// snowflake_backfill_id(ts timestamptz, seq integer) → bigint: an ID for a past time that no generator issues.
Datum snowflake_backfill_id(PG_FUNCTION_ARGS) {
	PG_RETURN_INT64(snowflake::backfill_id(PG_GETARG_TIMESTAMPTZ(0), PG_GETARG_INT32(1)));
}

// snowflake_timestamp(id bigint, layout text) → timestamptz: when id was issued, decoded in the given layout.
Datum snowflake_timestamp_layout(PG_FUNCTION_ARGS) {
	const snowflake::LayoutSpec spec = snowflake::layout_arg(fcinfo, 1);
	const snowflake::Parts parts = snowflake::checked_parts(PG_GETARG_INT64(0), spec);
	PG_RETURN_TIMESTAMPTZ(snowflake::tick_timestamptz(parts.time, spec));
}

// snowflake_parse(id bigint, layout text) → (ts, node, seq): every field of id, decoded in the given layout.
Datum snowflake_parse_layout(PG_FUNCTION_ARGS) {
	PG_RETURN_DATUM(snowflake::parse_tuple(fcinfo, PG_GETARG_INT64(0), snowflake::layout_arg(fcinfo, 1)));
}

// snowflake_layout(layout text) → one row: what a layout spec means (widths, epoch, capacity, end).
Datum snowflake_layout(PG_FUNCTION_ARGS) {
	using namespace snowflake;
	const LayoutSpec spec = layout_arg(fcinfo, 0);
	const Layout &layout = spec.layout;
	char canonical[64];
	format_layout(layout, canonical);
	Datum values[10] = {CStringGetTextDatum(spec.name),
	                    CStringGetTextDatum(psprintf("%s,epoch=%lld%s", canonical, static_cast<long long>(spec.epoch_ms),
	                                                 spec.seq_above_node ? ",order=seq-node" : "")),
	                    Int32GetDatum(layout.time_bits),
	                    Datum(0), // the unit, below
	                    Int32GetDatum(layout.node_bits),
	                    Int32GetDatum(layout.seq_bits),
	                    TimestampTzGetDatum(unix_ms_to_timestamptz(spec.epoch_ms)),
	                    Int64GetDatum(int64_t{layout.max_node()} + 1),
	                    Int64GetDatum(layout.ids_per_second()),
	                    TimestampTzGetDatum(unix_ms_to_timestamptz(layout.unix_ms_of(layout.max_time(), spec.epoch_ms)))};
	Interval *unit = static_cast<Interval *>(palloc0(sizeof(Interval)));
	unit->time = int64_t{layout.unit_ms} * 1000;
	values[3] = IntervalPGetDatum(unit);
	bool nulls[10] = {};
	PG_RETURN_DATUM(result_tuple(fcinfo, values, nulls));
}

// snowflake_nextval_block(n integer) → int8range: n consecutive new IDs [first, first + n) of this
// server, above every ID it issued before and below every later one.
Datum snowflake_nextval_block(PG_FUNCTION_ARGS) {
	const snowflake::IdBlock block = snowflake::next_block(PG_GETARG_INT32(0));
	TypeCacheEntry *int8range = lookup_type_cache(INT8RANGEOID, TYPECACHE_RANGE_INFO);
	RangeBound lo{Int64GetDatum(block.first), false, true, true};
	// The largest ID cannot be an exclusive upper bound, so a block reaching it is unbounded above.
	const bool open_above = block.last == INT64_MAX;
	RangeBound hi{Int64GetDatum(open_above ? 0 : block.last + 1), open_above, false, false};
	PG_RETURN_DATUM(RangeTypePGetDatum(snowflake_make_range(int8range, &lo, &hi, false)));
}

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
