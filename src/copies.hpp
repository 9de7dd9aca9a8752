// What the node check (claims.hpp) calls this server, and what tells a copy of
// this server from the server itself. A server is its cluster's system
// identifier and its WAL timeline: a promoted standby or a point-in-time
// restore is on a new timeline, so it is another server. A clone (a data
// directory copied whole and started beside its original) shares both, and
// so one claim, which the two write in turn: the first pass that finds its
// claim written by another server takes an identity of its own for it, a
// system identifier below 2^32 (no initdb makes one: their high half is
// initdb's time), kept in $PGDATA/snowflake.identity with the identity it
// was a copy of. From then on it claims its node as another server would,
// after the claim the two shared, which stays the other's. It takes one only
// once: a server writing the identity it took (another copy, or a forged
// claim) refuses it as any copy would. The file is written once, durably
// (written aside, fsynced, renamed), read once a process, and ignored
// (logged) when it belongs to another cluster or is damaged; a standby or
// backup of the copy made after it carries it along.
// Inside a pass, with SPI connected, as claims.cpp runs it.
#pragma once

#include "shmem.hpp"

namespace snowflake {

// The claims' times as the worker reads them: Unix µs as numeric text, exact, and 'Infinity' for an
// infinite time (no cast that could fail on a forged value). Every operator is pg_catalog's, named.
#define SNOWFLAKE_CLAIM_US(column) "(EXTRACT(epoch FROM " column ") OPERATOR(pg_catalog.*) 1000000)::pg_catalog.text"

// This server as its claim names it.
struct Self {
	char server[128];           // how people reach it: host name and port
	char identity[64];          // system identifier ':' timeline
	char system_identifier[24]; // its cluster's, or the one it took as a clone
	int32_t timeline;
};

// This server's name and identity.
Self self_of(SharedState &state);

// The identity this server was found a copy of and left ("" when it took none).
const char *copy_of() noexcept;

// This server's own claim as the table holds it now (a fresh snapshot, so the pass's own write is
// seen): its start, Unix µs (INT64_MAX when unreadable); remembers its heartbeat for copy_found(),
// once own_claim_committed() says the pass committed.
int64_t own_claim_started_us(const Self &self);

// The pass that read its own claim committed: that heartbeat is this server's own last write.
void own_claim_committed() noexcept;

// A copy of this server that issues IDs too, as this pass finds it, described into copy: a claim of its
// cluster on a later timeline (a promoted copy of it, or it is the old primary), one of an earlier
// timeline written since this server first saw it (its original still runs: it is the promoted copy),
// or its own claim written by another server (a clone on its timeline), with that claim's identity
// into identity. For the first two only a claim on node counts (a copy on another node issues other
// IDs); a clone's counts on any node, as the two write one claim. A claim that breaks claim_rules.hpp's
// rules counts for nothing. False when there is none.
bool copy_found(const Self &self, int32_t node, char (&copy)[192], char (&identity)[64]);

// Gives this server, found a clone of the server self names, an identity of its own: durably on
// record before it returns, and self rewritten under it. Raises an ERROR (the pass fails, the claim
// it shared is not written) when the file cannot be written.
void take_identity_of_own(SharedState &state, Self &self);

} // namespace snowflake
