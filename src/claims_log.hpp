// The node check's log lines: what each change of its status says, and the
// HINT an operator follows, and the report of an invalid claim. claims.cpp calls it after every pass, and when the
// check turns off or cannot start.
#pragma once

#include "claim_rules.hpp"
#include "claims.hpp"

namespace snowflake {

// Logs what a pass found when it differs from the last pass: a conflict (WARNING, naming the other
// server; a refusal's HINT names how to release the claim of identity, when there is one), its end, a
// failure, nothing to claim with, a server it cannot see (for 'incomplete', identity is the HINT's
// statements that let a subscription bring the claims, "" for Citus), and the check working (again).
// A refusal over a clone (copies.hpp) says which: the other holds the identity this one left, or
// writes the one this one took.
enum class Clone { None, Left, Shared };
void log_change(NodeCheck was, NodeCheck now, const char *report, int32_t node, const char *identity,
                Clone clone = Clone::None);

// Whether claim keeps claim_rules.hpp's rules, with its values filled in; an invalid claim is logged
// (a WARNING, every value escaped) the first time it is seen.
bool believed(const ClaimText &claim, ClaimValues &values);

} // namespace snowflake
