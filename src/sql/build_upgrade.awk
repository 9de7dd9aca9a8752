# Builds an unreleased version's upgrade script, snowflake--A--B.sql, from its source
# src/sql/upgrade--A--B.sql and the install script's sources (the Makefile runs
# awk -v helpers=src/sql/upgrade_privileges.sql -f src/sql/build_upgrade.awk SOURCES... UPGRADE_SOURCE).
# The upgrade source is copied line for line, except for these directives, each on a line of its own
# (CONTRIBUTING.md, Building, says when to use which):
#   -- @new SIGNATURE        a function new in B: its definition as the sources give it, plain CREATE
#                            FUNCTION with its GRANT, REVOKE and COMMENT (a function of that signature
#                            already in the schema makes the update fail);
#   -- @replace SIGNATURE    a function that exists in A: CREATE OR REPLACE FUNCTION and its COMMENT,
#                            without its GRANT and REVOKE (PostgreSQL would record the whole privilege
#                            list, the users' grants included, in pg_init_privs as the extension's own);
#   -- @recreate SIGNATURE   a function that must be dropped and created again (its result type changes):
#                            the privileges users changed on it are kept aside, the function is dropped
#                            and created with the extension's GRANT and REVOKE, then the users' changes
#                            are made again, pg_init_privs keeping only the extension's;
#   -- @init-privileges      sets pg_init_privs of every existing function the sources grant or revoke
#                            on back to exactly what those statements give (repairs scripts that re-granted);
#   -- @new-schema NAME      a schema new in B: its CREATE SCHEMA, GRANT and COMMENT as the sources give them;
#   -- @new-table NAME       a table new in B: its CREATE TABLE, GRANT, REVOKE and COMMENT as the sources
#                            give them.
# A SIGNATURE is written as in the function's COMMENT ON FUNCTION line, such as snowflake_stats() or
# snowflake_node_origins(regclass, name); spaces do not count. In the sources, a function's definition
# runs from its CREATE FUNCTION line (with the comment lines right above it) to the next top-level
# CREATE, and names itself by its COMMENT ON FUNCTION line; GRANT and REVOKE statements are one line
# each, REVOKE ALL ON FUNCTION ... FROM PUBLIC or GRANT EXECUTE ON FUNCTION ... TO role. A table's
# definition likewise runs from its CREATE TABLE line, names itself by its COMMENT ON TABLE line, and
# keeps its own GRANT and REVOKE lines (REVOKE ALL ON name FROM PUBLIC, GRANT privileges ON name TO role);
# a schema's runs from its CREATE SCHEMA line and names itself by its COMMENT ON SCHEMA line.

# Stops the build with a message naming the file and line at fault.
function fail(message) {
	printf "%s:%d: %s\n", FILENAME, FNR, message > "/dev/stderr"
	failed = 1
	exit 1
}

# A signature without its spaces, the form definitions are looked up by.
function key_of(signature) {
	gsub(/[ \t]/, "", signature)
	return signature
}

# Ends the definition being read: it now holds its lines, and the comment lines read since go with it.
function end_definition() {
	if (current != "" && pending != "")
		text[current] = text[current] pending
	pending = ""
}

# Prints the helpers that @recreate and @init-privileges call, once per script (dropped at its end).
function need_helpers(   line) {
	if (helpers_printed)
		return
	helpers_printed = 1
	print ""
	while ((getline line < helpers) > 0)
		print line
	close(helpers)
	print ""
}

# Prints the definition of the function whose signature is given, as mode (new, replace or recreate) wants it;
# or, as mode table or schema, the table or schema whose name is given.
function print_definition(signature, mode,   key, n, lines, i, created) {
	key = (mode == "table" || mode == "schema" ? mode " " : "") key_of(signature)
	if (!(key in text))
		fail("no function " signature " in the sources (they name each by its COMMENT ON FUNCTION line)")
	if (count[key] > 1)
		fail("the sources define " signature " " count[key] " times")
	n = split(text[key], lines, "\n")
	for (i = 1; i < n; i++) {
		if (lines[i] ~ /^CREATE (FUNCTION|TABLE|SCHEMA) /) {
			created = 1
			if (mode == "replace")
				sub(/^CREATE FUNCTION /, "CREATE OR REPLACE FUNCTION ", lines[i])
		}
		if (mode == "replace" && lines[i] ~ /^(GRANT|REVOKE) /)
			continue
		print lines[i]
	}
	if (!created)
		fail(signature " is not defined by a CREATE FUNCTION (or TABLE, or SCHEMA) line in the sources")
}

# The sources (every file but the last): their definitions, and their GRANT and REVOKE statements.
FILENAME != ARGV[ARGC - 1] {
	if (FNR == 1) {
		end_definition()
		current = ""
	}
	if ($0 ~ /^CREATE /) {
		own_privileges = $0 ~ /^CREATE (TABLE|SCHEMA) /
		defined++
		current = "#" defined
		text[current] = pending $0 "\n"
		pending = ""
		next
	}
	if ($0 ~ /^--/) {
		pending = pending $0 "\n"
		next
	}
	end_definition()
	if (current != "")
		text[current] = text[current] $0 "\n"
	if ($0 ~ /^COMMENT ON (TABLE|SCHEMA) / && current ~ /^#/) {
		signature = $0
		sub(/^COMMENT ON /, "", signature)
		kind = tolower(substr(signature, 1, index(signature, " ") - 1))
		sub(/^[A-Z]+ /, "", signature)
		sub(/ IS.*$/, "", signature)
		key = kind " " key_of(signature)
		count[key]++
		text[key] = text[current]
		current = key
	}
	# A table's or schema's own privileges stay in its definition.
	if ($0 ~ /^(GRANT|REVOKE) / && own_privileges)
		next
	if ($0 ~ /^COMMENT ON FUNCTION / && current ~ /^#/) {
		signature = $0
		sub(/^COMMENT ON FUNCTION /, "", signature)
		sub(/ IS.*$/, "", signature)
		key = key_of(signature)
		count[key]++
		text[key] = text[current]
		current = key
	}
	if ($0 ~ /^(GRANT|REVOKE) /) {
		if (match($0, /^REVOKE ALL ON FUNCTION .* FROM PUBLIC;$/)) {
			signature = substr($0, 24, length($0) - 23 - 13)
			revokes[key_of(signature)] = 1
		} else if (match($0, /^GRANT EXECUTE ON FUNCTION .* TO [a-z_]+;$/)) {
			signature = $0
			sub(/^GRANT EXECUTE ON FUNCTION /, "", signature)
			role = signature
			sub(/ TO [a-z_]+;$/, "", signature)
			sub(/^.* TO /, "", role)
			sub(/;$/, "", role)
			grants[key_of(signature)] = grants[key_of(signature)] ", '" role "'"
		} else
			fail("a privilege statement the upgrade build cannot read: " $0)
		if (!(key_of(signature) in written)) {
			written[key_of(signature)] = signature
			order[++privileged] = key_of(signature)
		}
	}
	next
}

# The upgrade source: copied, with its directives expanded.
FNR == 1 { end_definition() }

/^-- @new / { print_definition(substr($0, 9), "new"); next }

/^-- @new-table / { print_definition(substr($0, 15), "table"); next }

/^-- @new-schema / { print_definition(substr($0, 16), "schema"); next }

/^-- @replace / { print_definition(substr($0, 13), "replace"); next }

/^-- @recreate / {
	signature = substr($0, 14)
	need_helpers()
	print "SELECT pg_temp.snowflake_keep_privileges('" signature "');"
	print "DROP FUNCTION " signature ";"
	print_definition(signature, "recreate")
	print "SELECT pg_temp.snowflake_restore_privileges('" signature "');"
	next
}

/^-- @init-privileges$/ {
	need_helpers()
	print "SELECT pg_temp.snowflake_repair_init_privileges(s.fn, s.revoke_public, s.grantees) FROM (VALUES"
	for (i = 1; i <= privileged; i++)
		printf "    ('%s', %s, ARRAY[%s]::name[])%s\n", written[order[i]], (order[i] in revokes) ? "true" : "false",
		       substr(grants[order[i]], 3), i < privileged ? "," : ""
	print ") AS s(fn, revoke_public, grantees);"
	next
}

/^-- @[a-z-]+( |$)/ { fail("unknown directive (@new, @new-schema, @new-table, @replace, @recreate or @init-privileges): " $0) }

{ print }

END {
	if (failed)
		exit 1
	if (helpers_printed)
		print "\nDROP FUNCTION pg_temp.snowflake_keep_privileges(regprocedure), pg_temp.snowflake_restore_privileges(regprocedure),\n" \
		      "    pg_temp.snowflake_repair_init_privileges(text, boolean, name[]), pg_temp.snowflake_set_init_privileges(regprocedure, aclitem[]);\n" \
		      "DROP TABLE pg_temp.snowflake_kept_privileges;"
}
