// The epoch and layout on record (layout_record.hpp): each database's, the
// body of snowflake_layout_on_record() as the catalog keeps it, read by the
// first call after a start without a state file and rewritten by
// snowflake_record_layout(); and snowflake_adopt_layout(), which puts a new
// epoch or layout on record in the state file and the database.
#include "layout_record.hpp"

#include "reservation.hpp"
#include "restart.hpp"

#include <algorithm>

namespace snowflake {
namespace {

constexpr const char *kRecordFunction = "snowflake_layout_on_record";

// The record's function in this database, its schema named ("schema.snowflake_layout_on_record"), or
// nullptr when the extension or the function is not there; within SPI.
const char *record_function() {
	if (SPI_execute("SELECT q, pg_catalog.to_regprocedure(q OPERATOR(pg_catalog.||) '.snowflake_layout_on_record()') "
	                "IS NOT NULL FROM (SELECT e.extnamespace::pg_catalog.regnamespace::pg_catalog.text AS q "
	                "FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'snowflake') s",
	                true, 1) != SPI_OK_SELECT ||
	    SPI_processed != 1 || strcmp(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2), "t") != 0)
		return nullptr;
	return psprintf("%s.%s", SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), kRecordFunction);
}

// The record a database holds, as read by SPI.
struct DatabaseRecord {
	bool found = false; // false: no snowflake_layout_on_record() here, or it records nothing
	int64_t epoch = 0;
	LayoutSpec spec{};
};

// This database's record of the epoch and layout (the extension's schema named, nothing looked up
// on the search path); found false when there is none.
DatabaseRecord read_database_record() {
	DatabaseRecord out;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "snowflake: SPI_connect failed");
	// No such function (an extension of 0.5.0 not yet updated): nothing on record.
	const char *function = record_function();
	if (function != nullptr && SPI_execute(psprintf("SELECT r.epoch_ms, r.layout FROM %s() r", function), true, 1) ==
	                               SPI_OK_SELECT &&
	    SPI_processed == 1) {
		const char *epoch = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		const char *layout = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		if (epoch != nullptr && layout != nullptr && parse_layout(layout, out.spec) == nullptr) {
			out.epoch = strtoll(epoch, nullptr, 10);
			out.found = true;
		}
	}
	SPI_finish();
	return out;
}

// Blocks the generator for the recorded epoch and layout, with a state file of them whose
// reservation is pg_control's floor at start in that layout, so that a restart refuses too and
// snowflake_adopt_layout() judges by that floor; false when this run already issued or reserved.
bool block_for_record(SharedState &state, const DatabaseRecord &record) {
	LWLockAcquire(state.lock, LW_EXCLUSIVE);
	if (state.blocked != Blocked::No || state.generator.last_id >= 0 ||
	    state.generator.reserved_tick > state.start_floor_tick || pg_atomic_read_u32(&state.writing) != 0) {
		const bool blocked = state.blocked == Blocked::LayoutChanged;
		LWLockRelease(state.lock);
		return blocked;
	}
	state.blocked = Blocked::LayoutChanged;
	state.recorded_epoch_ms = record.epoch;
	state.recorded_layout = record.spec.layout;
	pg_atomic_write_u32(&state.writing, 1); // the file is this process's to write: no reservation races it
	StateRecord file = record_for(state, -1, state.timeline);
	file.epoch_ms = record.epoch;
	file.layout = record.spec.layout;
	file.reserved_tick = std::max<int64_t>(old_ids_bound(state, file, current_policy()), 0);
	LWLockRelease(state.lock);
	PG_ENSURE_ERROR_CLEANUP(end_adoption_write, PointerGetDatum(&state));
	{
		if (!write_state(file, LOG))
			(void)unlink(kStateFile); // so that the next start, finding none, compares the record again
	}
	PG_END_ENSURE_ERROR_CLEANUP(end_adoption_write, PointerGetDatum(&state));
	end_adoption_write(0, PointerGetDatum(&state));
	char was[64], now[64];
	format_layout(record.spec.layout, was);
	format_layout(layout_setting.layout, now);
	ereport(LOG, (errmsg("snowflake: database \"%s\" records that its IDs were issued with snowflake.epoch %lld and "
	                     "layout %s; they are now %lld and %s, so snowflake refuses to generate or decode IDs",
	                     get_database_name(MyDatabaseId), static_cast<long long>(record.epoch), was,
	                     static_cast<long long>(epoch_ms), now)));
	return true;
}

} // namespace

bool layout_checked_here = false;

RecordCheck check_layout_on_record(SharedState &state) {
	const DatabaseRecord record = read_database_record();
	if (!record.found) {
		layout_checked_here = true; // this backend's database, and only it: another may hold a record
		return RecordCheck::Confirmed;
	}
	if (record.epoch == epoch_ms && record.spec.layout == layout_setting.layout) {
		pg_atomic_write_u32(&state.layout_unconfirmed, 0);
		return RecordCheck::Confirmed;
	}
	return block_for_record(state, record) ? RecordCheck::Blocked : RecordCheck::Conflict;
}

void confirm_layout_on_record(SharedState &state) {
	switch (check_layout_on_record(state)) {
	case RecordCheck::Confirmed:
		return;
	case RecordCheck::Blocked:
		check_not_blocked(state);
		break;
	case RecordCheck::Conflict:
		break;
	}
	ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
	                errmsg("database \"%s\" records that its IDs were issued with another snowflake.epoch or "
	                       "layout than the ones this server already issues IDs with",
	                       get_database_name(MyDatabaseId)),
	                errdetail("Another database's first call since the server started found no record, or one "
	                          "that matches the settings: snowflake_layout_on_record() tells each database's."),
	                errhint("If this database's IDs were issued with the settings after all, run SELECT "
	                        "snowflake_adopt_layout() here to put them on record. Otherwise this server's IDs "
	                        "and this database's follow two epochs or layouts: stop issuing IDs here and give "
	                        "this database's tables to a server of their own.")));
}

bool database_record_differs() {
	const DatabaseRecord record = read_database_record();
	return record.found && (record.epoch != epoch_ms || record.spec.layout != layout_setting.layout);
}

bool layout_in_effect(int64_t &epoch, Layout &layout) noexcept {
	if (shared_state == nullptr || epoch_ms < 0)
		return false;
	const bool changed = shared_state->blocked == Blocked::LayoutChanged;
	epoch = changed ? shared_state->recorded_epoch_ms : epoch_ms;
	layout = changed ? shared_state->recorded_layout : layout_setting.layout;
	return true;
}

void put_layout_on_record(int64_t epoch, const Layout &layout) {
	if (!superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("only a superuser may put a snowflake epoch and layout on record")));
	char spec[64];
	format_layout(layout, spec); // digits, letters, '=' and ',' only: nothing to quote
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "snowflake: SPI_connect failed");
	const char *function = record_function();
	if (function == nullptr ||
	    SPI_execute(psprintf("CREATE OR REPLACE FUNCTION %s(OUT epoch_ms bigint, OUT layout text) LANGUAGE sql "
	                         "IMMUTABLE PARALLEL SAFE AS $record$SELECT %lld::pg_catalog.int8, '%s'::pg_catalog.text"
	                         "$record$",
	                         function, static_cast<long long>(epoch), spec),
	                false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "snowflake: could not put the layout on record");
	SPI_finish();
}

int64_t adopt_layout() {
	SharedState &state = preloaded();
	if (!superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("only a superuser may adopt a new snowflake epoch or layout")));
	const Policy policy = policy_now(state);
	const Layout &layout = policy.layout;
	// A record here that differs from the settings: what there is to adopt while nothing was issued
	// (it blocks the generator); else a record to rewrite, as after an adoption in another database.
	if (layout_check_due(state))
		(void)check_layout_on_record(state);
	if (state.blocked == Blocked::No && database_record_differs()) {
		put_layout_on_record(epoch_ms, layout);
		ereport(NOTICE, (errmsg("this database now records the snowflake.epoch and snowflake.layout in effect")));
		return layout.unix_ms_of(std::max<int64_t>(state.start_floor_tick, 0) + 1, epoch_ms);
	}
	LWLockAcquire(state.lock, LW_EXCLUSIVE); // the checks and the floor under the lock (released by the ERRORs too)
	StateRecord record{};
	if (state.blocked != Blocked::LayoutChanged || read_state(record) != StateRead::Loaded)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("there is no new snowflake epoch or layout to adopt"),
		                errdetail("snowflake_adopt_layout() is for a server that refuses IDs because snowflake.epoch or "
		                          "snowflake.layout differs from the one in \"%s\".",
		                          kStateFile)));
	if (record.epoch_ms == epoch_ms && record.layout == layout) { // adopted already: the restart is left
		LWLockRelease(state.lock);
		put_layout_on_record(epoch_ms, layout);
		ereport(NOTICE, (errmsg("snowflake.epoch and snowflake.layout are on record already"),
		                 errhint("Restart the server to issue IDs with them.")));
		return layout.unix_ms_of(record.reserved_tick + 1, epoch_ms);
	}
	// The old IDs reach at most the file's reservation, the last one the WAL replayed here, and, when
	// the file is not the last word of the latest clean shutdown (a copy put back, a crash), pg_control's
	// floor: all in ticks of the old layout. New IDs must be larger than the largest that allows: their
	// time above its top bits.
	const int64_t old_tick = old_ids_bound(state, record, policy);
	const int64_t floor_tick = record.layout.last_id_of(old_tick) >> layout.time_shift();
	const int64_t now_ms = generator_clock_us(state) / 1000;
	const int64_t reach = policy.floor_reach_ticks(); // how far ahead a start waits a floor out
	if (floor_tick >= layout.max_time() || floor_tick - layout.tick_of(now_ms, epoch_ms) > reach) {
		// The latest epoch that puts that floor within reach now, if any suits the layout.
		const int64_t latest = now_ms - (floor_tick - reach) * layout.unit_ms;
		const bool any = floor_tick < layout.max_time() && epoch_problem(layout, latest, now_ms) == nullptr;
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("with snowflake.epoch %lld and this layout, new IDs would be smaller than IDs already issued",
		                static_cast<long long>(epoch_ms)),
		         errdetail("Every new ID must be larger than %lld, the largest the reservation on record allows.",
		                   static_cast<long long>(record.layout.last_id_of(old_tick))),
		         any ? errhint("Set snowflake.epoch to %lld or earlier, restart, and adopt that; or set it back to %lld.",
		                       static_cast<long long>(latest), static_cast<long long>(record.epoch_ms))
		             : errhint("No epoch makes this layout's IDs larger: set snowflake.epoch and snowflake.layout back "
		                       "to %lld and the layout on record, or start a new data directory with the new layout.",
		                       static_cast<long long>(record.epoch_ms))));
	}
	// The write without the lock, so that no call waits on it (a call on this blocked server fails at
	// once anyway): the writer's claim keeps a second adoption out.
	if (pg_atomic_read_u32(&state.writing) != 0) {
		LWLockRelease(state.lock);
		ereport(ERROR, (errcode(ERRCODE_OBJECT_IN_USE), errmsg("another snowflake_adopt_layout() is writing"),
		                errhint("Wait for it to end, then restart the server.")));
	}
	pg_atomic_write_u32(&state.writing, 1);
	LWLockRelease(state.lock);
	PG_ENSURE_ERROR_CLEANUP(end_adoption_write, PointerGetDatum(&state));
	{
		if (const int64_t delay_ms = static_cast<int64_t>(pg_atomic_read_u64(&state.write_delay_ms)); delay_ms > 0)
			pg_usleep(delay_ms * 1000); // a slow disk, as a test injects it (snowflake_inject_write_delay())
		(void)write_state(record_for(state, std::max<int64_t>(floor_tick, 0), record.timeline), ERROR);
	}
	PG_END_ENSURE_ERROR_CLEANUP(end_adoption_write, PointerGetDatum(&state));
	end_adoption_write(0, PointerGetDatum(&state));
	put_layout_on_record(epoch_ms, layout);
	const int64_t start_ms = layout.unix_ms_of(floor_tick + 1, epoch_ms);
	char spec[64];
	format_layout(layout, spec);
	ereport(WARNING, (errmsg("snowflake: \"%s\" now records snowflake.epoch %lld and layout %s, with IDs above %s",
	                         kStateFile, static_cast<long long>(epoch_ms), spec,
	                         timestamptz_to_str(unix_ms_to_timestamptz(start_ms))),
	                  errhint("Run SELECT snowflake_adopt_layout() in every other database with snowflake too, to "
	                          "put them on record there. Then restart the server to issue IDs, and REINDEX every "
	                          "index that uses snowflake_timestamp() or snowflake_parse().")));
	return start_ms;
}

} // namespace snowflake
