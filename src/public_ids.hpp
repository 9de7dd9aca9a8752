// Public IDs in the server (public_ids.cpp): the one thing other files need
// from it is the definition of its setting, snowflake.mask_keys.
#pragma once

#include "pg_boundary.hpp"

namespace snowflake {

// Defines snowflake.mask_keys: superusers only, never stored in a catalog, shown without its keys.
void define_mask_setting();

} // namespace snowflake
