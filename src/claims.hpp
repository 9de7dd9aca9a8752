// The node check: two servers on one node is the mistake that silently
// breaks "never a duplicate", so every server claims its node where its peers
// can see the claim, and checks theirs, in the background.
//
// - The claim: a row of snowflake_node_check.claims (src/sql/node_check.sql) in
//   the database snowflake.database names: the node, the cluster's system
//   identifier and the WAL timeline (together, the server: a promoted copy
//   is on a new timeline), how people reach it (host name and port), since
//   when it issues under that node (kept across restarts while the node stays
//   the same), and a heartbeat. Logical replication carries the rows to the
//   peers like any table (each renewal deletes the row and inserts it whole,
//   so a subscriber that lacked it gets it); on Citus, each server asks every
//   other for its rows through run_command_on_all_nodes.
// - The worker "snowflake node check" connects to that database and, every
//   snowflake.node_check_interval, renews its claim and reads every live
//   claim (a heartbeat within three intervals and 10 s) on its node by another
//   server; claims of its own past (an earlier timeline of its cluster, or its
//   name with a heartbeat from before it started) are not another's. For
//   snowflake.node_source = 'citus' it first reads the group (node.hpp). It
//   runs once recovery is done: a standby claims nothing until it is promoted.
// - A conflict: the server that claimed the node later refuses IDs (SQLSTATE
//   SN001, with the other server named) under snowflake.node_conflict =
//   'refuse', by refusing its node (node.hpp: the hot path is untouched); the
//   one that claimed it first keeps issuing. Both log a WARNING and report
//   the other server (snowflake_stats().node_conflict). The refusal lifts by
//   itself once no live claim conflicts: a reload that moves the node lifts
//   it at once, and the next pass checks the new node.
// - What the worker trusts: it runs as the bootstrap superuser in a database
//   other roles own, so its search_path is pinned to pg_catalog, pg_temp and
//   every operator its queries use is named as pg_catalog's; a claim is
//   believed only when it keeps claim_rules.hpp's rules (else it is ignored
//   and reported once, escaped). docs/security.md has who can do what.
// - At start, the first calls wait for the first pass (at most
//   kFirstCheckWaitMs after the shared state is created), so that a conflict
//   found at once costs no ID.
//
// Shared fields (shmem.hpp): `check_status`, `check_at_us` and
// `check_passes` are atomics the worker stores; `report` is a text under a
// sequence lock (`report_version`, odd while the worker rewrites it);
// `checked_cv` is broadcast after every pass.
#pragma once

#include "shmem.hpp"

namespace snowflake {

// What the node check found last.
enum class NodeCheck : uint32_t {
	Off,         // snowflake.node_check_interval = 0, or a single-user backend (no worker runs there)
	Starting,    // no pass yet since the worker started
	NoExtension, // the database of the node check has no snowflake extension: nothing to claim with
	Failing,     // the last pass raised an error (report: its message)
	Standby,     // a standby, where the worker does not run: it issues nothing, so it claims nothing
	Ok,          // no other live claim on this server's node
	Refusing,    // another server claimed the node first: this one refuses (report: the other)
	Warning,     // another server claims the node too, and this one keeps issuing (report: the other)
	Incomplete,  // no other claim seen, but some Citus servers could not be asked (report: which, and why)
};

// How long the first calls after a start wait for the node check's first pass, at most.
constexpr int64_t kFirstCheckWaitMs = 10000;

// What the node check found last, in words for snowflake_stats().node_check ("ok", "off", ...).
const char *node_check_text(NodeCheck check) noexcept;

// The node check's status and its report (the other server on this node, or the error), read whole.
NodeCheck node_check_report(SharedState &state, char (&report)[192]) noexcept;

// Waits, cancellably, for the node check's first pass since the shared state was created, at most
// until kFirstCheckWaitMs after its creation; returns at once when the check is off (a single-user
// backend's always is) or has passed.
void await_first_node_check(SharedState &state);

// Raises the ERROR of a call whose node a conflict refuses: SN001, naming the other server.
[[noreturn]] void raise_node_conflict(SharedState &state, int32_t node);

// The node check worker's body: a pass every snowflake.node_check_interval until the server stops.
[[noreturn]] void check_nodes();

} // namespace snowflake
