// What a server start recovers of the IDs issued before it (restart.hpp):
// the floor of the first ID from snowflake.state and pg_control, or the
// reason generation must refuse; the log line that says which; the
// postmaster's last word on disk at its exit; and the checks that keep
// decoding honest while the recorded layout differs.
#include "restart.hpp"

#include "reservation.hpp"
#include "state_file.hpp"

#include <algorithm>

namespace snowflake {
namespace {

// Logs, at every start, which floor the first ID of this run must lie above and why, and what that
// means for the first calls when the clock is behind it: how long they wait, or are refused.
void log_start_floor(const SharedState &state) {
	if (state.blocked != Blocked::No)
		return; // read_state() and recover_reservation() logged why generation is refused
	if (state.start_floor == StartFloor::None) {
		ereport(LOG, (errmsg("snowflake: no \"%s\", and no object was ever created in this cluster, so no ID can "
		                     "have been issued here: IDs start at the clock",
		                     kStateFile)));
		return;
	}
	const Policy policy = policy_now(const_cast<SharedState &>(state));
	const Layout &layout = policy.layout;
	const int64_t floor_ms = layout.unix_ms_of(state.start_floor_tick + 1, epoch_ms);
	const int64_t ahead_ms = floor_ms - unix_now_ms();
	const int64_t refused_ms = ahead_ms - policy.floor_reach_ticks() * layout.unit_ms;
	const int64_t waited_ms = ahead_ms - (policy.clock == ClockPolicy::Borrow ? policy.max_drift_ms : 0);
	char when[64] = "the clock is past it";
	if (ahead_ms > 0)
		snprintf(when, sizeof(when), "the clock is %lld ms behind it", static_cast<long long>(ahead_ms));
	ereport(LOG, (errmsg("snowflake: IDs start above %s, from %s; %s",
	                     timestamptz_to_str(unix_ms_to_timestamptz(floor_ms)), floor_origin(state.start_floor), when),
	              refused_ms > 0
	                  ? errdetail("That is more than snowflake.max_clock_drift and one lead allow: calls are refused "
	                              "with 58000 for about %lld s, until the clock is within them, then wait for it.",
	                              static_cast<long long>((refused_ms + 999) / 1000))
	              : waited_ms > 0 ? errdetail("The first calls wait up to %lld ms for the clock.",
	                                          static_cast<long long>(waited_ms))
	                              : 0));
}

// The floor pg_control gives in ticks of layout from epoch_ms (see checkpoint_floor()).
int64_t checkpoint_floor_in(const ControlFacts &control, const Policy &policy, const Layout &layout,
                            int64_t epoch) noexcept {
	const int64_t bound_ms = (control.checkpoint_unix_s + 1) * 1000 + policy.max_drift_ms;
	return std::clamp<int64_t>(layout.tick_of(bound_ms, epoch), 0, layout.max_time());
}

// The floor pg_control gives (a tick of the layout in effect): every ID issued before its latest
// checkpoint has a time at most the drift bound past that checkpoint, which pg_control keeps in whole
// seconds; after a clean shutdown no ID was issued after it.
int64_t checkpoint_floor(const ControlFacts &control, const Policy &policy) noexcept {
	return checkpoint_floor_in(control, policy, policy.layout, epoch_ms);
}


// Sets the floor of this run: its tick and what it came from.
void set_floor(SharedState &state, StartFloor from, int64_t tick) noexcept {
	state.start_floor = from;
	state.start_floor_tick = tick;
}

} // namespace

// The bound of the old IDs: the file's, the WAL's, and pg_control's at start for a file not trusted.
int64_t old_ids_bound(const SharedState &state, const StateRecord &record, const Policy &policy) noexcept {
	int64_t tick = std::max(record.reserved_tick, state.wal_tick);
	if (!state.file_trusted && state.start_checkpoint_s >= 0) {
		ControlFacts control{};
		control.checkpoint_unix_s = state.start_checkpoint_s;
		tick = std::max(tick, checkpoint_floor_in(control, policy, record.layout, record.epoch_ms));
	}
	return tick;
}

void end_adoption_write(int, Datum arg) {
	SharedState &state = *reinterpret_cast<SharedState *>(DatumGetPointer(arg));
	pg_atomic_write_u32(&state.writing, 0);
	ConditionVariableBroadcast(&state.reserved_cv);
}

const char *floor_origin(StartFloor floor) noexcept {
	switch (floor) {
	case StartFloor::Reservation:
		return "the reservation recorded in \"snowflake.state\"";
	case StartFloor::LastCheckpoint:
		return "pg_control's latest checkpoint plus 1 s and snowflake.max_clock_drift (there was no "
		       "\"snowflake.state\" of this cluster's)";
	case StartFloor::CheckpointAboveReservation:
		return "pg_control's latest checkpoint plus 1 s and snowflake.max_clock_drift, above the reservation in "
		       "\"snowflake.state\", which the server did not write at its last clean shutdown";
	case StartFloor::NewTimeline:
		return "the clock of the first ID on a new timeline (after a promotion or point-in-time recovery) plus "
		       "snowflake.max_clock_drift";
	case StartFloor::Wal:
		return "the last reservation the WAL carried here";
	case StartFloor::None:
		break;
	}
	return "none";
}

Readiness blocked_readiness(const SharedState &state) noexcept {
	switch (state.blocked) {
	case Blocked::StateDamaged:
		return Readiness::StateDamaged;
	case Blocked::StateUnreadable:
		return Readiness::StateUnreadable;
	case Blocked::StateLost:
		return Readiness::StateLost;
	case Blocked::LayoutChanged:
		return state.recorded_epoch_ms != epoch_ms ? Readiness::EpochChanged : Readiness::LayoutChanged;
	case Blocked::No:
		break;
	}
	return Readiness::Ok;
}

void recover_reservation(SharedState &state) {
	const Policy policy = current_policy();
	ControlFacts control{};
	const bool control_read = read_control(control);
	state.start_checkpoint_s = control_read ? control.checkpoint_unix_s : -1;
	StateRecord record{};
	StateRead read = read_state(record);
	if (read == StateRead::Loaded && record.system_identifier != 0 &&
	    record.system_identifier != state.system_identifier) {
		// Another cluster's reservation says nothing of this one's IDs: as good as no file.
		ereport(LOG, (errmsg("snowflake: \"%s\" was written by another database system (identifier %llu, this one "
		                     "is %llu), so its reservation is not this server's",
		                     kStateFile, static_cast<unsigned long long>(record.system_identifier),
		                     static_cast<unsigned long long>(state.system_identifier))));
		state.foreign_file = 1;
		read = StateRead::Missing;
	}
	// pg_upgrade starts the new cluster in binary-upgrade mode before it carries the old cluster's
	// counters over: nothing it does issues an ID, and nothing is put on record then.
	bool put_on_record = !IsBinaryUpgrade;
	switch (read) {
	case StateRead::Missing:
		// No reservation of this cluster's: the floor is pg_control's, which covers every ID only after a
		// clean shutdown. A new cluster (no object ever created, not even the extension) that stopped
		// cleanly issued none. After anything else (a crash, a stop during recovery, a pg_control that
		// cannot be read) generation refuses, unless the WAL replayed here holds a reservation (wal.hpp).
		if (!control_read || !control.clean_shutdown) {
			state.blocked = Blocked::StateLost;
			put_on_record = false;
			break;
		}
		if (!control.objects_created)
			break;
		set_floor(state, StartFloor::LastCheckpoint, checkpoint_floor(control, policy));
		// pg_upgrade's new data directory, or a file removed: the layout IDs were issued with is on
		// record in the databases only (layout_record.hpp). Nothing is written until a call has
		// compared it: a file of the settings would pass for the record at the next start.
		pg_atomic_write_u32(&state.layout_unconfirmed, IsBinaryUpgrade ? 0 : 1);
		put_on_record = false;
		break;
	case StateRead::Corrupt:
		state.blocked = Blocked::StateDamaged;
		put_on_record = false;
		break;
	case StateRead::Unreadable:
		state.blocked = Blocked::StateUnreadable;
		state.state_errno = errno;
		put_on_record = false;
		break;
	case StateRead::Loaded:
		// After a clean shutdown the file should be the postmaster's last word, carrying that shutdown's
		// mark. One that does not (a copy put back, a file of 0.4.0 or older) may be older than IDs
		// issued since: the floor is then also pg_control's. After a crash the file, renewed ahead of
		// every ID, is the only record of the IDs since the latest checkpoint (with the WAL's).
		state.file_trusted = !(control_read && control.clean_shutdown && record.exit_mark != control.checkpoint_mark);
		if (record.epoch_ms != epoch_ms || record.layout != layout_setting.layout) {
			state.blocked = Blocked::LayoutChanged;
			state.recorded_epoch_ms = record.epoch_ms;
			state.recorded_layout = record.layout;
			put_on_record = false;
			char was[64], now[64];
			format_layout(record.layout, was);
			format_layout(layout_setting.layout, now);
			ereport(LOG, (errmsg("snowflake: IDs were issued or decoded here with snowflake.epoch %lld and layout %s; "
			                     "they are now %lld and %s, so snowflake refuses to generate or decode IDs",
			                     static_cast<long long>(record.epoch_ms), was, static_cast<long long>(epoch_ms),
			                     now)));
			break;
		}
		set_floor(state, StartFloor::Reservation, record.reserved_tick);
		if (!state.file_trusted && checkpoint_floor(control, policy) > record.reserved_tick)
			set_floor(state, StartFloor::CheckpointAboveReservation, checkpoint_floor(control, policy));
		state.timeline = record.timeline;
		pg_atomic_write_u64(&state.write_latency_us, static_cast<uint64>(record.write_latency_us));
		put_on_record = put_on_record && record.version < kStateVersion;
		break;
	}
	state.floor_from = state.start_floor;
	if (state.start_floor != StartFloor::None)
		state.generator.resume_above(state.start_floor_tick);
	if (put_on_record) {
		// The epoch and layout on record from the first start, the floor if any, this cluster's identity.
		// This write also measures the disk, so that the first reservation is sized for it.
		const int64_t started = monotonic_us();
		if (write_state(record_for(state, std::max<int64_t>(state.generator.reserved_tick, 0), state.timeline), LOG)) {
			const int64_t estimate = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us));
			pg_atomic_write_u64(&state.write_latency_us, next_write_latency_us(estimate, monotonic_us() - started));
		}
	}
	log_start_floor(state);
	note_state(state, blocked_readiness(state));
}

void check_not_blocked(const SharedState &state) {
	char target[1024];
	switch (state.blocked) {
	case Blocked::No:
		return;
	case Blocked::StateUnreadable:
		if (state.state_errno == ENOENT && state_file_link(target))
			ereport(ERROR,
			        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			         errmsg("snowflake cannot generate IDs: \"%s\" in the data directory is a symbolic link to "
			                "\"%s\", which did not exist at server start",
			                kStateFile, target),
			         errdetail("It holds the highest time this server's IDs have reached; a link to nothing (a volume "
			                   "that is not mounted) is not taken for a missing file."),
			         errhint("Mount or restore what the link points to, then restart the server. If the file is lost "
			                 "for good, make sure the system clock is right, stop the server cleanly, remove the "
			                 "link and start it: IDs then begin above that shutdown plus 1 s and "
			                 "snowflake.max_clock_drift.")));
		errno = state.state_errno;
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("snowflake cannot generate IDs: \"%s\" in the data directory could not be read at "
		                "server start: %m",
		                kStateFile),
		         errhint("Make the file readable by the server (do not remove it: it holds the high-water mark), "
		                 "then restart the server.")));
	case Blocked::StateDamaged:
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake cannot generate IDs: \"%s\" in the data directory is damaged", kStateFile),
		                errdetail("It records the highest time this server's IDs have reached; without it a new ID "
		                          "could repeat an old one."),
		                errhint("Make sure the system clock is right, then stop the server cleanly, remove the file "
		                        "and start the server: IDs then begin above that shutdown plus 1 s and "
		                        "snowflake.max_clock_drift.")));
	case Blocked::StateLost:
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg(state.foreign_file ? "snowflake cannot generate IDs: \"%s\" is another cluster's, and the "
		                                     "server stopped without a clean shutdown"
		                                   : "snowflake cannot generate IDs: \"%s\" is missing, and the server "
		                                     "stopped without a clean shutdown",
		                kStateFile),
		         errdetail("The file records the highest time this server's IDs have reached. pg_control's latest "
		                   "checkpoint says nothing of the IDs issued after it, up to the crash."),
		         errhint("If this server's own file still exists elsewhere, put it back and restart. Otherwise make "
		                 "sure the system clock is right (later than the crash), stop the server cleanly and start "
		                 "it: IDs then begin above that shutdown plus 1 s and snowflake.max_clock_drift.")));
	case Blocked::LayoutChanged:
		if (state.recorded_epoch_ms != epoch_ms)
			ereport(ERROR,
			        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			         errmsg("snowflake.epoch changed from %lld to %lld since this server last issued IDs",
			                static_cast<long long>(state.recorded_epoch_ms), static_cast<long long>(epoch_ms)),
			         errdetail("Under the new epoch its IDs decode to other times, and new IDs could repeat them."),
			         errhint("Set snowflake.epoch back to %lld and restart. To adopt the new epoch, run SELECT "
			                 "snowflake_adopt_layout() as a superuser, restart the server, and REINDEX every index "
			                 "that uses snowflake_timestamp() or snowflake_parse().",
			                 static_cast<long long>(state.recorded_epoch_ms))));
		char was[64], now[64];
		format_layout(state.recorded_layout, was);
		format_layout(layout_setting.layout, now);
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake.layout changed from %s to %s since this server last issued IDs", was, now),
		                errdetail("Under the new layout its IDs decode to other times and nodes, and new IDs could "
		                          "repeat them."),
		                errhint("Set snowflake.layout back to '%s' and restart. To adopt the new layout, run SELECT "
		                        "snowflake_adopt_layout() as a superuser, restart the server, and REINDEX every index "
		                        "that uses snowflake_timestamp() or snowflake_parse().",
		                        was)));
	}
}

void record_last_id_at_exit(SharedState &state, int exit_code) {
	// After a crash, shared memory is suspect and the reservation on disk covers every ID anyway. A
	// blocked state is not ours to overwrite, and pg_upgrade's start has nothing to say: but a server
	// that refused for a changed epoch or layout issued nothing, so the bound snowflake_adopt_layout()
	// judges by (the file, or the file snowflake_adopt_layout() wrote, raised to what this start knew)
	// is written with this clean shutdown's mark: the next start trusts it, and a hint given in this
	// run still holds in the next.
	ControlFacts control{};
	if (exit_code == 0 && state.blocked == Blocked::LayoutChanged && !IsBinaryUpgrade && read_control(control) &&
	    control.clean_shutdown) {
		StateRecord record{};
		if (read_state(record) == StateRead::Loaded && record.system_identifier == state.system_identifier) {
			if (record.epoch_ms == state.recorded_epoch_ms && record.layout == state.recorded_layout)
				record.reserved_tick = old_ids_bound(state, record, current_policy());
			record.exit_mark = control.checkpoint_mark;
			(void)write_state(record, LOG);
		}
		return;
	}
	if (exit_code != 0 || state.blocked != Blocked::No || IsBinaryUpgrade || !read_control(control) ||
	    !control.clean_shutdown)
		return;
	// A run that never compared the databases' record of the layout and issued nothing leaves no file,
	// so that the next start compares it (layout_record.hpp).
	if (pg_atomic_read_u32(&state.layout_unconfirmed) != 0 && state.generator.last_id < 0 &&
	    state.generator.reserved_tick <= state.start_floor_tick)
		return;
	// After a clean shutdown: the exact last ID (or, if none was issued, the floor as it stands), with
	// the mark of that shutdown, so the next start can tell this file from a copy.
	const GeneratorState &generator = state.generator;
	const int64_t tick = generator.last_id >= 0 ? generator.last_id >> layout_setting.layout.time_shift()
	                                            : std::max<int64_t>(generator.reserved_tick, 0);
	if (tick > std::max<int64_t>(generator.reserved_tick, 0))
		return; // cannot be: no ID is issued past the reservation
	StateRecord record = record_for(state, tick, state.timeline);
	record.exit_mark = control.checkpoint_mark;
	(void)write_state(record, LOG);
}

LayoutSpec decoding_layout() {
	if (shared_state != nullptr && shared_state->blocked == Blocked::LayoutChanged)
		check_not_blocked(*shared_state);
	if (epoch_ms < 0)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake.epoch or snowflake.layout is set, but snowflake is not loaded via "
		                       "shared_preload_libraries"),
		                errdetail("Without preloading, nothing keeps them fixed, so only the default epoch "
		                          "(1288834974657) and layout (twitter) can be decoded."),
		                errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart the "
		                        "server, or decode with an explicit layout: snowflake_parse(id, 'layout').")));
	return LayoutSpec{layout_setting.layout, epoch_ms, true, layout_setting.name};
}

} // namespace snowflake
