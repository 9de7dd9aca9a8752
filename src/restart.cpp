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
void log_start_floor(const SharedState &state, bool after_crash) {
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
	const int64_t refused_ms = ahead_ms - (policy.max_lag_ticks() + policy.lead_ticks()) * layout.unit_ms;
	const int64_t waited_ms = ahead_ms - (policy.clock == ClockPolicy::Borrow ? policy.max_drift_ms : 0);
	char when[64] = "the clock is past it";
	if (ahead_ms > 0)
		snprintf(when, sizeof(when), "the clock is %lld ms behind it", static_cast<long long>(ahead_ms));
	ereport(after_crash ? WARNING : LOG,
	        (errmsg("snowflake: IDs start above %s, from %s; %s", timestamptz_to_str(unix_ms_to_timestamptz(floor_ms)),
	                floor_origin(state.start_floor), when),
	         refused_ms > 0
	             ? errdetail("That is more than snowflake.max_clock_drift and one lead allow: calls are refused with "
	                         "58000 for about %lld s, until the clock is within them, then wait for it.",
	                         static_cast<long long>((refused_ms + 999) / 1000))
	         : waited_ms > 0 ? errdetail("The first calls wait up to %lld ms for the clock.",
	                                     static_cast<long long>(waited_ms))
	                         : 0,
	         after_crash ? errhint("pg_control records no clean shutdown, so IDs issued after its latest checkpoint "
	                               "are above new ones only if the clock has not gone back since; restore \"%s\" "
	                               "from a backup taken after them if you have one.",
	                               kStateFile)
	                     : 0));
}

} // namespace

const char *floor_origin(StartFloor floor) noexcept {
	switch (floor) {
	case StartFloor::Reservation:
		return "the reservation recorded in \"snowflake.state\"";
	case StartFloor::ForeignFile:
		return "the clock at start plus snowflake.max_clock_drift (\"snowflake.state\" was another cluster's)";
	case StartFloor::LastCheckpoint:
		return "pg_control's latest checkpoint plus 1 s and snowflake.max_clock_drift (there was no "
		       "\"snowflake.state\")";
	case StartFloor::None:
		break;
	}
	return "none";
}

// The Readiness of a generator its start found unable to run, else Ok.
Readiness blocked_readiness(const SharedState &state) noexcept {
	switch (state.blocked) {
	case Blocked::StateDamaged:
		return Readiness::StateDamaged;
	case Blocked::StateUnreadable:
		return Readiness::StateUnreadable;
	case Blocked::LayoutChanged:
		return state.recorded_epoch_ms != epoch_ms ? Readiness::EpochChanged : Readiness::LayoutChanged;
	case Blocked::No:
		break;
	}
	return Readiness::Ok;
}

void recover_reservation(SharedState &state) {
	const Policy policy = current_policy();
	const Layout &layout = policy.layout;
	StateRecord record{};
	bool put_on_record = false;
	bool after_crash = false;
	switch (read_state(record)) {
	case StateRead::Missing: {
		put_on_record = true; // no reservation yet: the epoch and layout, and the floor below if any
		ControlFacts control{};
		if (!read_control(control) || !control.objects_created)
			break; // a new cluster: no ID can have been issued here
		// Every ID's time is at most its clock plus the drift bound, and after a clean shutdown none was
		// issued after the shutdown checkpoint, whose time pg_control keeps in whole seconds.
		const int64_t bound_ms = (control.checkpoint_unix_s + 1) * 1000 + policy.max_drift_ms;
		state.start_floor = StartFloor::LastCheckpoint;
		state.start_floor_tick = std::clamp<int64_t>(layout.tick_of(bound_ms, epoch_ms), 0, layout.max_time());
		after_crash = !control.clean_shutdown;
		break;
	}
	case StateRead::Corrupt:
		state.blocked = Blocked::StateDamaged;
		break;
	case StateRead::Unreadable:
		state.blocked = Blocked::StateUnreadable;
		state.state_errno = errno;
		break;
	case StateRead::Loaded:
		if (record.system_identifier != 0 && record.system_identifier != state.system_identifier) {
			// Another cluster's reservation says nothing of this one's IDs: begin above the clock plus the
			// drift bound, as after a promotion, and put this cluster on record with that floor.
			state.start_floor = StartFloor::ForeignFile;
			state.start_floor_tick = std::clamp<int64_t>(
			    layout.tick_of(unix_now_ms(), epoch_ms) + policy.max_drift_ticks(), 0, layout.max_time());
			ereport(LOG, (errmsg("snowflake: \"%s\" was written by another database system (identifier %llu, this "
			                     "one is %llu), so its reservation is not this server's",
			                     kStateFile, static_cast<unsigned long long>(record.system_identifier),
			                     static_cast<unsigned long long>(state.system_identifier))));
			put_on_record = true;
			state.timeline = 0;
		} else if (record.epoch_ms != epoch_ms || record.layout != layout_setting.layout) {
			state.blocked = Blocked::LayoutChanged;
			state.recorded_epoch_ms = record.epoch_ms;
			state.recorded_layout = record.layout;
			char was[64], now[64];
			format_layout(record.layout, was);
			format_layout(layout_setting.layout, now);
			ereport(LOG, (errmsg("snowflake: IDs were issued or decoded here with snowflake.epoch %lld and layout %s; "
			                     "they are now %lld and %s, so snowflake refuses to generate or decode IDs",
			                     static_cast<long long>(record.epoch_ms), was, static_cast<long long>(epoch_ms),
			                     now)));
		} else {
			state.start_floor = StartFloor::Reservation;
			state.start_floor_tick = record.reserved_tick;
			state.timeline = record.timeline;
			pg_atomic_write_u64(&state.write_latency_us, static_cast<uint64>(record.write_latency_us));
			put_on_record = record.version < kStateVersion;
		}
		break;
	}
	if (state.start_floor != StartFloor::None)
		state.generator.resume_above(state.start_floor_tick);
	if (put_on_record) {
		// This write also measures the disk, so that the first reservation is sized for it.
		const int64_t started = monotonic_us();
		if (write_state(record_for(state, std::max<int64_t>(state.generator.reserved_tick, 0), state.timeline), LOG)) {
			const int64_t estimate = static_cast<int64_t>(pg_atomic_read_u64(&state.write_latency_us));
			pg_atomic_write_u64(&state.write_latency_us, next_write_latency_us(estimate, monotonic_us() - started));
		}
	}
	log_start_floor(state, after_crash);
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
			                 "for good, stop the server cleanly and remove the link: the next start begins above "
			                 "pg_control's latest checkpoint plus 1 s and snowflake.max_clock_drift.")));
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
		                errhint("Restore the file from a backup if you can. Otherwise stop the server cleanly, remove "
		                        "the file and start the server: IDs then begin above pg_control's latest checkpoint "
		                        "plus 1 s and snowflake.max_clock_drift.")));
	case Blocked::LayoutChanged:
		if (state.recorded_epoch_ms != epoch_ms)
			ereport(ERROR,
			        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			         errmsg("snowflake.epoch changed from %lld to %lld since this server last issued IDs",
			                static_cast<long long>(state.recorded_epoch_ms), static_cast<long long>(epoch_ms)),
			         errdetail("Under the new epoch its IDs decode to other times, and new IDs could repeat them."),
			         errhint("Set snowflake.epoch back to %lld and restart. To adopt the new epoch anyway, stop "
			                 "the server, remove \"%s\" from the data directory, start it, and REINDEX every "
			                 "index that uses snowflake_timestamp() or snowflake_parse().",
			                 static_cast<long long>(state.recorded_epoch_ms), kStateFile)));
		char was[64], now[64];
		format_layout(state.recorded_layout, was);
		format_layout(layout_setting.layout, now);
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake.layout changed from %s to %s since this server last issued IDs", was, now),
		                errdetail("Under the new layout its IDs decode to other times and nodes, and new IDs could "
		                          "repeat them."),
		                errhint("Set snowflake.layout back to '%s' and restart. A new layout needs a new data "
		                        "directory, or the removal of \"%s\" and a REINDEX of every index that uses "
		                        "snowflake_timestamp() or snowflake_parse(), with care that no new ID repeats an "
		                        "old one.",
		                        was, kStateFile)));
	}
}

void record_last_id_at_exit(SharedState &state, int exit_code) {
	const GeneratorState &generator = state.generator;
	// After a crash, shared memory is suspect and the reservation on disk covers every ID anyway.
	// Nothing issued since start leaves the file as it is; a blocked state is not ours to overwrite.
	const int64_t last_tick = generator.last_id >> layout_setting.layout.time_shift();
	if (exit_code == 0 && generator.last_id >= 0 && state.blocked == Blocked::No &&
	    last_tick <= generator.reserved_tick && cluster_shut_down_cleanly())
		(void)write_state(record_for(state, last_tick, state.timeline), LOG);
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
