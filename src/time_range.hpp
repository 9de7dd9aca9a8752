// Time-range queries on IDs, in PostgreSQL's terms: timestamptz and tstzrange
// turned into ID bounds (with the core's exact rounding, generator.hpp's
// id_span), int8range results, backfilled IDs for past times, and the planner
// support that rewrites `snowflake_between(id, range)` (and `id <@ range`) into
// `id >= first AND id <= last`, a plain B-tree/BRIN range on the ID that also
// prunes partitions.
#pragma once

#include "pg_boundary.hpp"

namespace snowflake {

// The smallest ID whose time is at or after ts; ERROR 22008 when ts is infinite or outside the layout.
int64_t min_id_at(TimestampTz ts);

// The largest ID whose time is at or before ts; ERROR 22008 when ts is infinite or outside the layout.
int64_t max_id_at(TimestampTz ts);

// The IDs whose time lies in a tstzrange: ends beyond the layout's span are clamped to it.
IdSpan span_of_range(const RangeType *range, TypeCacheEntry *typcache);

// The same IDs as an int8range: unbounded where the time range is, empty when no ID fits.
Datum id_range(const RangeType *range, TypeCacheEntry *typcache);

// An ID for a past time, on the node snowflake.backfill_node reserves, with the caller's sequence.
int64_t backfill_id(TimestampTz ts, int32_t seq);

// snowflake_between(id, range) as `id >= first AND id <= last`, or nullptr to leave the call alone.
Node *simplify_between(const FuncExpr &call);

} // namespace snowflake
