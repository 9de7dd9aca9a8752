// The node check's log lines: what each change of its status says, and the
// HINT an operator follows. claims.cpp calls it after every pass, and when the
// check turns off or cannot start.
#pragma once

#include "claims.hpp"

namespace snowflake {

// Logs what a pass found when it differs from the last pass: a conflict (WARNING, naming the other
// server; a refusal's HINT names how to release the claim of identity, when there is one), its end, a
// failure, nothing to claim with, a server it cannot see (for 'incomplete', identity is the HINT's
// statements that let a subscription bring the claims, "" for Citus), and the check working (again).
// A refusal over a clone (clone: the other server holds the identity this one left when it was found a
// clone of it, copies.hpp) says so, and that releasing that claim is safe only once no server holds it.
void log_change(NodeCheck was, NodeCheck now, const char *report, int32_t node, const char *identity,
                bool clone = false);

} // namespace snowflake
