// The node this server issues under, and where it comes from: the settings
// (snowflake.node, snowflake.node_source, snowflake.node_offset) read in
// PostgreSQL's terms (the host name, the postmaster's environment), Citus's
// group id as the node check reads it (claims.hpp), and the one place that
// publishes the node in effect to shared memory, with the refusal a node
// conflict puts on it. The hot path reads only the word `node` (shmem.hpp):
// a node it may use, or a value no layout has (-1, or a node with kNodeHeld
// set), which sends the call to the slow path: its error, or, for a move,
// the wait for the node check's pass under the new node.
//
// Publication, lock-free (the postmaster publishes, and takes no lock):
// - `configured_node` packs what the source gave (node, problem, kind), and
//   `node_number` the number it read before the offset. The postmaster writes
//   them at start and on every reload of the settings; for 'citus', the node
//   check worker writes them once it has read the group.
// - `refused_node` is the node a conflict refuses (-1: none), written by the
//   node check worker.
// - `node` is recomputed from those by whoever changed one, with a
//   compare-and-exchange loop that rereads them after reading `node`, so the
//   last writer's view wins: the configured node, with kNodeHeld when it is
//   the refused one, or while a move is not yet cleared (below).
// - `node_changes` counts the moves of the configured node to another node
//   (one at creation: the start), and `node_changed_us` says when the last
//   was. Whoever publishes such a move stores the time, then adds one (a full
//   barrier), then the configured node and the node word, then adds one to
//   `node_moves_done`: a process that reads the node word and then (after a
//   read barrier) the count sees the move it made, and a pass that reads
//   `node_changes` equal to `node_moves_done` (read after it) knows every
//   move it counts is in the node it reads next; with a move still being
//   published, it vouches for none. The first calls under a new node wait for
//   a pass of the node check under it (claims.hpp).
// - `node_moves_cleared` is the count of moves up to which a step found no
//   such pass owed any more (the pass ended, none follows, or the wait's
//   bound passed); it only grows (compare-and-exchange), and the word is
//   recomputed after it. Until then the word is held: the fast path, which
//   issues only under the node of the last ID, never issues under a node the
//   server moved back to (3, then 5, then 3 again) before the pass under it.
#pragma once

#include "node_source.hpp"
#include "shmem.hpp"

namespace snowflake {

// Set in the node word while a node conflict refuses the node, or a move of it is not yet cleared
// (bit 30: above every layout's nodes).
constexpr uint32_t kNodeHeld = uint32_t{1} << 30;

// What the node source gave, as published.
struct ConfiguredNode {
	int32_t node; // -1 unless problem is None
	NodeProblem problem;
	NodeSourceKind kind;
	int64_t number; // what the source read before snowflake.node_offset (-1: none)
};

// The node the settings give in this process now (for 'citus': CitusPending, the group being the node
// check's to read).
DerivedNode derive_node() noexcept;

// The node source as published in shared memory.
ConfiguredNode configured_node(SharedState &state) noexcept;

// Publishes the node the settings give: at start (initialise) and on reload, in the postmaster. For
// 'citus' it keeps a group already read (with the offset in effect now), else marks it pending.
void publish_configured_node(SharedState &state) noexcept;

// Publishes the node a Citus group gives (the node check worker), while snowflake.node_source is
// 'citus'; problem says why there is none (CitusNotInstalled, CitusUnreadable, CitusNotInCluster).
void publish_citus_group(SharedState &state, int64_t group, NodeProblem problem) noexcept;

// Reads this server's Citus group (in the node check's pass, SPI connected) and publishes the node it
// gives: a group above 0 is a worker's; group 0 is the coordinator's only when Citus's metadata lists a
// server, else this server is in no cluster yet.
void read_citus_group(SharedState &state);

// Refuses node (a node conflict found by the node check), or lifts the refusal (-1).
void refuse_node(SharedState &state, int32_t node) noexcept;

// Whether the node word is held by a conflict's refusal (not only by a move not yet cleared).
bool held_by_refusal(SharedState &state, int32_t word) noexcept;

// Clears the moves up to changes (a step found no pass of the node check owed for them), and
// republishes the node word without their hold.
void clear_moves(SharedState &state, uint32 changes) noexcept;

// The node word as a reader reports it: held only by a refusal (a move not yet cleared is no reason
// to call the node refused or out of range).
int32_t node_for_readers(SharedState &state) noexcept;

// What keeps a call from issuing under the node word (a step found it invalid): no node, and why;
// a conflict; the node snowflake.backfill_node reserves.
Readiness node_readiness(SharedState &state, int32_t word, const Policy &policy) noexcept;

// Raises the ERROR of a call that cannot issue under the node word, with what to do about it:
// 55000 for every node source's problem and for the backfill node, SN001 for a node conflict.
[[noreturn]] void raise_node_error(SharedState &state, int32_t word, const Policy &policy);

// What keeps the source from giving a node, in words ("the host name has no trailing number", ...).
const char *node_problem_text(NodeProblem problem) noexcept;

// Where the node came from, in words: "snowflake.node", "host name pg-7", "environment variable
// POD_INDEX", "Citus group 2", with " + snowflake.node_offset 512" when there is an offset.
void describe_node_origin(const ConfiguredNode &node, char (&out)[160]) noexcept;

} // namespace snowflake
