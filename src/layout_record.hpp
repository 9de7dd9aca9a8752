// The epoch and layout on record in each database (docs/guarantees.md, "The
// layout on record in each database"). snowflake.state and the WAL stay
// behind when pg_upgrade makes a new data directory, but the catalog goes
// along: the body of snowflake_layout_on_record() holds the epoch and layout
// this database's IDs were issued with. A start that found no state file of
// its own leaves the layout unconfirmed, and the first ID of that run waits
// until a call has compared its database's record: one that differs blocks
// the generator as a changed snowflake.epoch or snowflake.layout does.
#pragma once

#include "shmem.hpp"

namespace snowflake {

// What comparing this database's record with the settings did.
enum class RecordCheck {
	Confirmed, // the same (the layout is confirmed for the whole server), or no record (an extension
	           // that predates it, or one created without preloading: for this backend's database only)
	Blocked,   // another, while this run had issued and reserved nothing: the generator is blocked
	           // (Blocked::LayoutChanged) with a state file of the recorded layout whose reservation is
	           // pg_control's floor at start in it
	Conflict,  // another, but IDs of the settings' layout are out already: nothing changed
};

// Whether this backend's database has been compared since the start (`layout_checked_here`: no record
// in it; `layout_unconfirmed` cleared: a matching record anywhere).
extern bool layout_checked_here;

// Whether a call here must compare its database's record before an ID: one load and a test while
// the layout is confirmed, so that the fast path can afford it.
inline bool layout_check_due(SharedState &state) noexcept {
	return unlikely(pg_atomic_read_u32(&state.layout_unconfirmed) != 0) && !layout_checked_here;
}

// Compares this database's record with the settings, while a check is due.
RecordCheck check_layout_on_record(SharedState &state);

// Called before an ID while a check is due: returns when the check confirms the layout, else raises
// the ERROR of the blocked generator or of the conflict.
void confirm_layout_on_record(SharedState &state);

// Whether this database records another epoch or layout than the settings.
bool database_record_differs();

// Rewrites this database's record (snowflake_layout_on_record()) to say epoch and layout. Needs a
// superuser; an ERROR when the extension is not in this database.
void put_layout_on_record(int64_t epoch, const Layout &layout);

// The epoch and layout this server's IDs are on record with: the state file's while the generator
// refuses a changed one, else the settings'. False without preloading (nothing to record).
bool layout_in_effect(int64_t &epoch, Layout &layout) noexcept;

// Puts the epoch and layout in effect on record in place of the ones snowflake.state holds (a server
// that refuses with 'epoch changed' or 'layout changed'), with a reservation above every ID issued
// under the old ones, so that after a restart every new ID is larger than every old one. Returns the
// Unix ms new IDs start above. ERROR for a non-superuser (42501), when there is nothing to adopt, and
// when new IDs would be smaller than old ones for longer than a call may wait (55000, with the latest
// epoch that works).
int64_t adopt_layout();

} // namespace snowflake
