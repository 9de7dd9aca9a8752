// The reservation in the WAL (see wal.hpp): the record, its insertion and
// flush on a primary, its redo on a recovering server or a standby, and the
// words pg_waldump and the server use for it.
#include "wal.hpp"

#include "node.hpp"
#include "reservation.hpp"
#include "state_file.hpp"

#include <algorithm>
#include <cstring>

namespace snowflake {
namespace {

// The one kind of record (the info bits of its header).
constexpr uint8 kReserve = 0x10;

// A reservation as the WAL carries it: plain data, the same on every platform PostgreSQL replays
// it on (a standby has the primary's architecture).
struct WalReservation {
	uint64_t system_identifier; // the cluster's (pg_control)
	int64_t epoch_ms;           // the epoch the tick counts from
	Layout layout;              // the layout the tick is a tick of
	int64_t reserved_tick;      // no ID the primary issues has a time above this without a later record
	uint32_t timeline;          // the WAL timeline it was made on
	int32_t node;               // the node word in effect (node.hpp), for pg_waldump's reader
};
static_assert(std::is_trivially_copyable_v<WalReservation> && sizeof(WalReservation) == 48,
              "the record is plain data of a fixed size");

// The record in reader, or an error of the startup process: a record of this resource manager that
// this library does not know (a newer snowflake wrote it) must not be skipped.
WalReservation record_of(XLogReaderState *reader) {
	const uint8 info = XLogRecGetInfo(reader) & ~XLR_INFO_MASK;
	if (info != kReserve || XLogRecGetDataLen(reader) != sizeof(WalReservation))
		elog(PANIC, "snowflake: unknown WAL record (info 0x%02x, %u bytes): replay it with the snowflake version "
		            "that wrote it",
		     info, static_cast<unsigned>(XLogRecGetDataLen(reader)));
	WalReservation record;
	memcpy(&record, XLogRecGetData(reader), sizeof(record));
	return record;
}

// Records a replayed reservation (under the lock) in the layout on record: while the settings name
// another epoch or layout (Blocked::LayoutChanged), only for snowflake_adopt_layout() to judge by.
// Otherwise also raises the generator's floor and reservation to it, lifts a 'state file lost'
// refusal, and puts it in snowflake.state unless the start found that file damaged or unreadable
// (its refusal says what to do, and the file is not overwritten).
void replay(SharedState &state, const WalReservation &record) {
	if (record.epoch_ms != state.recorded_epoch_ms || !(record.layout == state.recorded_layout)) {
		static bool told = false;
		if (!told)
			ereport(LOG, (errmsg("snowflake: the WAL holds reservations made with snowflake.epoch %lld and another "
			                     "layout than the ones on record; they raise no floor here",
			                     static_cast<long long>(record.epoch_ms))));
		told = true;
		return;
	}
	LWLockAcquire(state.lock, LW_EXCLUSIVE);
	const bool raised = record.reserved_tick > state.wal_tick;
	state.wal_tick = std::max(state.wal_tick, record.reserved_tick);
	if (state.blocked == Blocked::LayoutChanged) {
		LWLockRelease(state.lock);
		return;
	}
	if (record.reserved_tick > state.generator.floor_tick)
		state.floor_from = StartFloor::Wal;
	state.generator.resume_above(record.reserved_tick);
	const bool was_lost = state.blocked == Blocked::StateLost;
	if (was_lost)
		state.blocked = Blocked::No;
	const bool write = raised && state.blocked == Blocked::No;
	if (write)
		state.timeline = record.timeline;
	LWLockRelease(state.lock);
	if (was_lost)
		ereport(LOG, (errmsg("snowflake: the WAL holds this server's reservations: \"%s\" is not needed to know "
		                     "where IDs resume",
		                     kStateFile)));
	if (write)
		(void)write_state(record_for(state, record.reserved_tick, record.timeline), WARNING);
}

extern "C" {
// rm_redo: replays a reservation.
static void snowflake_wal_redo(XLogReaderState *reader) {
	const WalReservation record = record_of(reader);
	if (shared_state != nullptr)
		replay(*shared_state, record);
}

// rm_desc: the record in words, for pg_waldump built with it and for errors' context.
static void snowflake_wal_desc(StringInfo buf, XLogReaderState *reader) {
	const uint8 info = XLogRecGetInfo(reader) & ~XLR_INFO_MASK;
	if (info != kReserve || XLogRecGetDataLen(reader) != sizeof(WalReservation))
		return;
	WalReservation record;
	memcpy(&record, XLogRecGetData(reader), sizeof(record));
	char layout[64];
	format_layout(record.layout, layout);
	appendStringInfo(buf, "reserved until tick %lld of epoch %lld, layout %s; timeline %u, node %d",
	                 static_cast<long long>(record.reserved_tick), static_cast<long long>(record.epoch_ms), layout,
	                 record.timeline, record.node);
}

// rm_identify: the record's kind.
static const char *snowflake_wal_identify(uint8 info) {
	return (info & ~XLR_INFO_MASK) == kReserve ? "RESERVE" : nullptr;
}
}

RmgrData rmgr{};

} // namespace

void register_wal_rmgr() {
	rmgr.rm_name = "snowflake";
	rmgr.rm_redo = snowflake_wal_redo;
	rmgr.rm_desc = snowflake_wal_desc;
	rmgr.rm_identify = snowflake_wal_identify;
	RegisterCustomRmgr(kRmgrId, &rmgr);
}

void log_reservation(SharedState &state, int64_t tick, uint32_t timeline) {
	if (RecoveryInProgress())
		return;
	WalReservation record{state.system_identifier, epoch_ms, layout_setting.layout, tick, timeline,
	                      node_for_readers(state)};
	XLogBeginInsert();
	XLogRegisterData(reinterpret_cast<char *>(&record), sizeof(record));
	const XLogRecPtr end = XLogInsert(kRmgrId, kReserve);
	XLogFlush(end);
	pg_atomic_write_u64(&state.wal_logged_end, end);
}

bool wal_record_passed(SharedState &state) noexcept {
	const XLogRecPtr end = pg_atomic_read_u64(&state.wal_logged_end);
	return end == InvalidXLogRecPtr || GetRedoRecPtr() >= end; // none yet: the start's reservation is in no record of this run
}

} // namespace snowflake
