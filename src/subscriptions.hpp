// What the node check cannot see through this database's subscriptions. On
// PostgreSQL 16 and later a subscription may belong to a role that is not a
// superuser. Its apply worker writes each table as the table's owner, or as
// itself with run_as_owner, and only the extension's owner may write the
// claims: such a subscription cannot bring its publisher's claims. The pass
// looks for those that carry the claims (they are in their publication) and
// cannot apply them, reports the first by name and how many more
// (node_check 'incomplete'), and logs a query that returns the statements
// that let the claims arrive through the first 20 (docs/many-servers.md,
// "A subscription owned by a role that is not a superuser").
#pragma once

#include "pg_boundary.hpp"

namespace snowflake {

// Whether an enabled subscription of this database carries the claims and its owner may not apply them
// (inside a pass, SPI connected); if so, the first by name and how many more into report (names escaped)
// and into fix a query that returns the statements that let them (the first 20) bring them (names quoted there by PostgreSQL, never pasted), else
// fix is "". Always false before PostgreSQL 16, where every subscription belongs to a superuser.
bool subscription_cannot_bring_claims(char (&report)[192], char (&fix)[1024]);

} // namespace snowflake
