// The snowflake.* settings: defining them when the library loads, and the
// ERROR that replaces SET of one. Their values live in the variables
// pg_boundary.hpp declares, which every glue file reads.
#pragma once

#include "pg_boundary.hpp"

namespace snowflake {

// Defines the settings. Preloading (in the postmaster): every setting, a bad or misspelt configured
// value stopping the start, and a log line of those in effect. Otherwise only the reloadable ones.
void define_settings(bool preloading);

// SET, SET LOCAL or RESET of a snowflake setting: the same ERROR PostgreSQL raises, plus where to set it.
void refuse_session_change(const VariableSetStmt &stmt);

} // namespace snowflake
