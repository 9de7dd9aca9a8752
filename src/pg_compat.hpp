// Every difference between the PostgreSQL major versions snowflake builds
// against is absorbed here, behind PG_VERSION_NUM checks or feature tests, so
// the other files read as if there were one version. The supported majors are
// SUPPORTED_MAJORS in scripts/lib.sh (the metadata suite checks the guard
// below against it). Include it only through pg_boundary.hpp, after the
// PostgreSQL headers.
#pragma once

#if PG_VERSION_NUM < 150000
#error "snowflake needs PostgreSQL 15 or later"
#endif

// PG16 exported guc_malloc for check hooks' extra data; before it, GUC frees extra with free().
#if PG_VERSION_NUM < 160000
#define guc_malloc(elevel, size) malloc(size)
#endif

// PG16 replaced each catalog's ownership check with one for every object.
#if PG_VERSION_NUM >= 160000
#define snowflake_database_ownercheck(db, role) object_ownercheck(DatabaseRelationId, db, role)
#else
#define snowflake_database_ownercheck(db, role) pg_database_ownercheck(db, role)
#endif

// PG16 added a soft-error context to make_range().
#if PG_VERSION_NUM >= 160000
#define snowflake_make_range(typcache, lower, upper, empty) make_range(typcache, lower, upper, empty, nullptr)
#else
#define snowflake_make_range(typcache, lower, upper, empty) make_range(typcache, lower, upper, empty)
#endif

// PG18 lets a module report its name and version in the magic block.
#ifdef PG_MODULE_MAGIC_EXT
#define SNOWFLAKE_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "snowflake", .version = SNOWFLAKE_VERSION)
#else
#define SNOWFLAKE_MODULE_MAGIC PG_MODULE_MAGIC
#endif

// PG16 keeps the settings in a hash table and counts them on the way out of get_guc_variables().
#if PG_VERSION_NUM >= 160000
#define snowflake_guc_variables(count) get_guc_variables(&(count))
#else
#define snowflake_guc_variables(count) ((count) = GetNumConfigOptions(), get_guc_variables())
#endif

// PG17 lets an extension name its own wait events; before it, they all show as Extension.
#if PG_VERSION_NUM >= 170000
#define SNOWFLAKE_NAMED_WAIT_EVENTS 1
#else
#define SNOWFLAKE_NAMED_WAIT_EVENTS 0
#endif
