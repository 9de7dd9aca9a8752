// Time ranges to ID ranges for SQL (see time_range.hpp): timestamptz and
// tstzrange bounds converted to the core's TimeBound, ranges clamped to the
// times the layout can hold and errors for single bounds it cannot, int8range
// results, backfilled IDs, and the expression that the planner support
// function puts in place of snowflake_between().
#include "time_range.hpp"

#include "restart.hpp"

namespace snowflake {
namespace {

// A finite timestamptz as a bound; one past year 294,000 in Unix µs saturates (still after every layout's end).
TimeBound bound_at(TimestampTz ts, bool inclusive) noexcept {
	int64_t unix_us = 0;
	if (__builtin_add_overflow(ts, kPostgresEpochUnixUs, &unix_us))
		unix_us = INT64_MAX;
	return TimeBound{false, inclusive, unix_us};
}
constexpr TimeBound kUnbounded{true, false, 0};

// Raises the ERROR for a bound that the layout cannot hold.
[[noreturn]] void raise_bound_error(BoundStatus status, const LayoutSpec &active) {
	if (status == BoundStatus::BeforeEpoch)
		ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
		                errmsg("time is before snowflake.epoch, %s",
		                       timestamptz_to_str(unix_ms_to_timestamptz(active.epoch_ms))),
		                errhint("No snowflake ID is that old. A time range may start there: <@, snowflake_between() and "
		                        "snowflake_id_range() clamp it to the epoch.")));
	ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
	                errmsg("time is past the last one snowflake IDs can hold, %s",
	                       timestamptz_to_str(unix_ms_to_timestamptz(
	                           active.layout.unix_ms_of(active.layout.max_time(), active.epoch_ms)))),
	                errhint("A time range may end there: <@, snowflake_between() and snowflake_id_range() clamp it "
	                        "to the last time.")));
}

// The span of lower..upper in this server's layout, or an ERROR.
IdSpan checked_span(TimeBound lower, TimeBound upper) {
	const LayoutSpec active = decoding_layout();
	IdSpan span{};
	if (const BoundStatus status = id_span(lower, upper, active.layout, active.epoch_ms, span);
	    status != BoundStatus::Ok)
		raise_bound_error(status, active);
	return span;
}

// ERROR 22008 for ±infinity, where a single ID bound is asked for.
void require_finite(TimestampTz ts) {
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
		                errmsg("no snowflake ID bound exists for an infinite time"),
		                errhint("Use snowflake_id_range() or snowflake_between() with an unbounded range.")));
}

// A range's two ends as bounds, clamped to the layout's span (clamp_to_layout): false when no time
// the layout can hold lies in it (an empty range, an end at -infinity/+infinity that leaves no time,
// or an end beyond the layout on the far side).
bool range_bounds(const RangeType *range, TypeCacheEntry *typcache, TimeBound &lower, TimeBound &upper) {
	RangeBound lo, hi;
	bool empty;
	range_deserialize(typcache, range, &lo, &hi, &empty);
	lower = upper = kUnbounded;
	if (empty)
		return false;
	if (!lo.infinite) {
		const TimestampTz ts = DatumGetTimestampTz(lo.val);
		if (TIMESTAMP_IS_NOEND(ts))
			return false;
		if (!TIMESTAMP_NOT_FINITE(ts))
			lower = bound_at(ts, lo.inclusive);
	}
	if (!hi.infinite) {
		const TimestampTz ts = DatumGetTimestampTz(hi.val);
		if (TIMESTAMP_IS_NOBEGIN(ts))
			return false;
		if (!TIMESTAMP_NOT_FINITE(ts))
			upper = bound_at(ts, hi.inclusive);
	}
	const LayoutSpec active = decoding_layout();
	return clamp_to_layout(lower, upper, active.layout, active.epoch_ms);
}

// The OID of one of this extension's functions taking a tstzrange, in the schema of sibling.
Oid extension_function(Oid sibling, const char *name) {
	Oid argtypes[1] = {TSTZRANGEOID};
	List *qualified =
	    list_make2(makeString(get_namespace_name(get_func_namespace(sibling))), makeString(pstrdup(name)));
	return LookupFuncName(qualified, 1, argtypes, false);
}

// `left <strategy> right` with the bigint B-tree operator of that strategy.
Expr *int8_compare(int16 strategy, Expr *left, Expr *right) {
	const Oid op = get_opfamily_member(INTEGER_BTREE_FAM_OID, INT8OID, INT8OID, strategy);
	return make_opclause(op, BOOLOID, false, left, right, InvalidOid, InvalidOid);
}

// A bigint constant.
Expr *int8_const(int64_t value) {
	return reinterpret_cast<Expr *>(
	    makeConst(INT8OID, -1, InvalidOid, sizeof(int64), Int64GetDatum(value), false, FLOAT8PASSBYVAL));
}

} // namespace

int64_t min_id_at(TimestampTz ts) {
	require_finite(ts);
	const IdSpan span = checked_span(bound_at(ts, true), kUnbounded);
	if (span.first > span.last) // ts lies inside the last tick: no ID is at or after it
		raise_bound_error(BoundStatus::AfterEnd, decoding_layout());
	return span.first;
}

int64_t max_id_at(TimestampTz ts) {
	require_finite(ts);
	return checked_span(kUnbounded, bound_at(ts, true)).last;
}

IdSpan span_of_range(const RangeType *range, TypeCacheEntry *typcache) {
	TimeBound lower, upper;
	return range_bounds(range, typcache, lower, upper) ? checked_span(lower, upper) : IdSpan{1, 0};
}

Datum id_range(const RangeType *range, TypeCacheEntry *typcache) {
	TimeBound lower, upper;
	const IdSpan span = range_bounds(range, typcache, lower, upper) ? checked_span(lower, upper) : IdSpan{1, 0};
	TypeCacheEntry *int8range = lookup_type_cache(INT8RANGEOID, TYPECACHE_RANGE_INFO);
	RangeBound lo{Int64GetDatum(span.first), lower.infinite, true, true};
	// The largest ID cannot be an exclusive upper bound, so a range reaching it is unbounded above.
	const bool open_above = upper.infinite || span.last == INT64_MAX;
	RangeBound hi{Int64GetDatum(open_above ? 0 : span.last + 1), open_above, false, false};
	return RangeTypePGetDatum(snowflake_make_range(int8range, &lo, &hi, span.first > span.last));
}

int64_t backfill_id(TimestampTz ts, int32_t seq) {
	if (backfill_node_setting < 0)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("snowflake.backfill_node is not set"),
		                errdetail("Backfilled IDs carry a node that no server uses for new IDs, so they can never "
		                          "repeat one."),
		                errhint("Pick a node no server uses (1023, say), set \"snowflake.backfill_node = 1023\" on "
		                        "every server, and reload.")));
	const Layout &layout = layout_setting.layout; // snowflake.backfill_node fits it: its range is the layout's
	if (seq < 0 || seq > layout.max_seq())
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("backfill sequence %d is out of range", seq),
		                errhint("Use 0 to %d; number the rows that share a tick of the layout (a millisecond on "
		                        "twitter), for example with "
		                        "row_number() OVER (PARTITION BY date_trunc('milliseconds', ts)) - 1.",
		                        layout.max_seq())));
	const int64_t time = layout.decompose(max_id_at(ts)).time; // the tick ts falls in
	return layout.compose(Parts{time, backfill_node_setting, seq});
}

Node *simplify_between(const FuncExpr &call) {
	if (list_length(call.args) != 2)
		return nullptr;
	Node *id = static_cast<Node *>(linitial(call.args));
	Node *range = static_cast<Node *>(lsecond(call.args));
	// The rewrite mentions id and the range twice: only stable expressions (a column, a parameter,
	// now()) may be copied; a volatile one (clock_timestamp()) would be evaluated twice.
	if (contain_volatile_functions(id) || contain_volatile_functions(range))
		return nullptr;
	// A snowflake-typed id compares with bigint's operators (and its indexes) through the binary cast.
	if (exprType(id) != INT8OID)
		id = reinterpret_cast<Node *>(makeRelabelType(reinterpret_cast<Expr *>(id), INT8OID, -1, InvalidOid,
		                                              COERCE_IMPLICIT_CAST));
	Expr *first, *last;
	if (IsA(range, Const)) {
		const Const *constant = castNode(Const, range);
		if (constant->constisnull)
			return nullptr;
		const IdSpan span = span_of_range(DatumGetRangeTypeP(constant->constvalue),
		                                  lookup_type_cache(TSTZRANGEOID, TYPECACHE_RANGE_INFO));
		first = int8_const(span.first);
		last = int8_const(span.last);
	} else {
		// A parameter or column: the bounds are computed when the plan runs (generic plans, joins).
		first = reinterpret_cast<Expr *>(makeFuncExpr(extension_function(call.funcid, "snowflake_range_first_id"),
		                                              INT8OID, list_make1(copyObjectImpl(range)), InvalidOid,
		                                              InvalidOid, COERCE_EXPLICIT_CALL));
		last = reinterpret_cast<Expr *>(makeFuncExpr(extension_function(call.funcid, "snowflake_range_last_id"),
		                                             INT8OID, list_make1(copyObjectImpl(range)), InvalidOid, InvalidOid,
		                                             COERCE_EXPLICIT_CALL));
	}
	List *both = list_make2(int8_compare(BTGreaterEqualStrategyNumber, static_cast<Expr *>(copyObjectImpl(id)), first),
	                        int8_compare(BTLessEqualStrategyNumber, static_cast<Expr *>(copyObjectImpl(id)), last));
	return reinterpret_cast<Node *>(make_andclause(both));
}

} // namespace snowflake
