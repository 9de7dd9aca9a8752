// The node check: two servers on one node is the mistake that silently
// breaks "never a duplicate", so every server claims its node where its peers
// can see the claim, and checks theirs, in the background.
//
// - The claim: a row of snowflake_node_check.claims (src/sql/node_check.sql) in
//   the database snowflake.database names: the node, the cluster's system
//   identifier (or the one a clone took, copies.hpp) and the WAL timeline
//   (together, the server: a promoted copy is on a new timeline), how people
//   reach it (host name and port), since
//   when it issues under that node (its seniority: kept across restarts while
//   the node stays the same, taken over from its own past on the node after a
//   promotion or pg_upgrade, and set after every claim on the node it sees),
//   and when it was last written. It is written only when it is new or
//   changed, or at the first pass after IDs were issued: an idle server
//   writes nothing. Logical replication carries the rows to the peers like
//   any table (each write deletes the row and inserts it whole, so a
//   subscriber that lacked it gets it); on Citus, each server asks every
//   other for its rows through run_command_on_all_nodes.
// - The worker "snowflake node check" connects to that database and, every
//   snowflake.node_check_interval, writes its claim if due and reads every
//   claim on its node by another server, however old: a claim stands until
//   its server moves it to another node or an operator releases it
//   (snowflake_release_claim()). Claims of its own past (an earlier timeline
//   of its cluster, or its name with a heartbeat from before it started) are
//   not another's, unless written again after it first saw them (its
//   original still runs). For snowflake.node_source = 'citus' it first reads
//   the group (node.hpp). It runs once recovery is done: a standby claims
//   nothing until it is promoted. It runs only while the interval is above
//   0: the renewal worker registers it then (node_check_worker.hpp), and at 0
//   it exits, so that a check turned off holds no max_worker_processes slot.
// - A conflict: the server that claimed the node later refuses IDs (SQLSTATE
//   SN001, with the other server named) under snowflake.node_conflict =
//   'refuse', by refusing its node (node.hpp: the hot path is untouched); the
//   one that claimed it first keeps issuing. A copy of a server refuses too:
//   one that finds, on its node, its cluster's claim on a later timeline (a
//   promoted copy of it), or its original's claim written again. A clone (its
//   own claim written by another server) takes an identity of its own and
//   then claims the node after the claim the two shared (copies.hpp). Both
//   log a WARNING and report the
//   other server (snowflake_stats().node_conflict). A refusal ends on evidence
//   only: a reload that moves this server's node, the other claim moved or
//   released; silence (a partition, lag, a frozen server, a failing check, a
//   Citus server that cannot be asked) never lifts it.
// - What the worker trusts: it runs as the bootstrap superuser in a database
//   other roles own, so its search_path is pinned to pg_catalog, pg_temp and
//   every operator its queries use is named as pg_catalog's; a claim is
//   believed only when it keeps claim_rules.hpp's rules (else it is ignored
//   and reported once, escaped). docs/security.md has who can do what.
// - The first calls under a node wait for a pass of the check under it, so
//   that a conflict found at once costs no ID: after a start, and after a
//   reload (or a Citus group read) that moves the node to another. node.hpp
//   counts the moves (`node_changes`), and each pass stores the count it read
//   before its node (`node_checked`) once its outcome is published (none
//   while a move is still being published, nor for a pass that failed). A
//   reload's SIGHUP wakes the worker at once, so the wait lasts about one
//   pass, and a call under a node another server claimed first is refused
//   with no ID issued. The wait is cancellable, ends kFirstCheckWaitMs after
//   the move at most, and is not made while no pass follows: the check is
//   off, or its worker could not connect (node_check_worker.hpp: its exit
//   says so at once) or found no slot. A step reads the count under the
//   generator's lock around the node word (node_to_step_under), so no ID is
//   issued under a node before its pass. The fast path needs none of it: it
//   issues only under the node of the last ID, and a move holds the node
//   word until a step finds no pass owed (node.hpp), so a move back to the
//   node of the last ID waits for its pass too.
// - Being seen: each change of the status is logged once (log_change), and a
//   status whose last pass is older than kStalePasses intervals and 10 s reads
//   'stale' (node_check_as_read), so a stuck or gone worker never reads 'ok'.
//
// Shared fields (shmem.hpp): `check_status`, `check_at_us` and
// `node_checked` are atomics the worker stores; `report` is a text under a
// sequence lock (`report_version`, odd while it is rewritten), written by the
// worker, or by the renewal worker while none is registered;
// `checked_cv` is broadcast after every pass.
#pragma once

#include "shmem.hpp"

namespace snowflake {
// How many intervals (plus 10 s) after its last pass a check that still says how it went reads 'stale'.
constexpr int64_t kStalePasses = 3;

// How long after a start, or a move of the node, the first calls wait for the node check's pass, at most.
constexpr int64_t kFirstCheckWaitMs = 10000;

// What the node check found last, in words for snowflake_stats().node_check ("ok", "off", ...).
const char *node_check_text(NodeCheck check) noexcept;

// The status a reader reports for check, whose last pass ended at check_at_us (Unix µs): Stale when the
// worker should have ended another pass by now, else check.
NodeCheck node_check_as_read(NodeCheck check, int64_t check_at_us) noexcept;

// The node word a step issues under (node_in_effect), read after the last pass's record, so that it is
// at least as new as that pass's outcome; check_owed says whether the node check owes a pass under it,
// which await_node_check waits for. When it owes none, it first clears the moves that hold the word
// (node.hpp). Atomics only, no lock: a step calls it under the generator's lock.
int32_t node_to_step_under(SharedState &state, bool &check_owed) noexcept;

// Waits, cancellably and without the generator's lock, until the node check owes the node in effect no
// pass: a pass under it ended, or the status is one no pass follows ('off', as a single-user backend's
// always is, 'cannot connect', 'no worker slot'), or kFirstCheckWaitMs have passed since the move.
void await_node_check(SharedState &state);

// Publishes a status of a check that makes no pass ('off', 'no worker slot'; its writer: shmem.hpp),
// logs it when it is a change, and wakes the calls waiting for a pass; 'off' also lifts a refusal.
void publish_not_checking(SharedState &state, NodeCheck status);

// The node check worker's body: a pass every snowflake.node_check_interval until the server stops, or
// until the interval is 0, when it publishes 'off' and exits (code 0: the postmaster frees its slot).
[[noreturn]] void check_nodes();

} // namespace snowflake
