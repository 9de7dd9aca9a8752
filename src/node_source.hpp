// Where a server's node comes from (snowflake.node_source), as pure C++: the
// source's text parsed, and the number a source gives (the trailing digits of
// a host name, an environment variable's decimal integer, a Citus group id)
// turned into a node with snowflake.node_offset, or the reason it cannot be
// one. Nothing is guessed: every text that is not exactly a number, and every
// node outside the layout's range, is a problem the server names. No
// PostgreSQL header: the glue that reads the host name, the environment and
// Citus is node.cpp's; the unit tests drive this directly.
#pragma once

#include <cstdint>
#include <string_view>

namespace snowflake {

// The kinds of snowflake.node_source.
enum class NodeSourceKind : int32_t {
	Setting,     // 'setting': snowflake.node
	HostName,    // 'hostname': the trailing decimal digits of the host name
	Environment, // 'env:NAME': the decimal integer in the postmaster's environment variable NAME
	Citus,       // 'citus': this server's Citus group id
};

// snowflake.node_source parsed: its kind, and for Environment the variable's name (a view into the text).
struct NodeSource {
	NodeSourceKind kind = NodeSourceKind::Setting;
	std::string_view variable;
};

// Why text is not a node source, as a sentence, or nullptr with source filled in. A variable's name is
// a letter or underscore, then letters, digits and underscores, at most 64 of them.
const char *parse_node_source(std::string_view text, NodeSource &source) noexcept;

// What keeps a source from giving a node; None when it gave one.
enum class NodeProblem : uint32_t {
	None,
	Unset,              // 'setting', and snowflake.node is -1
	SetTwice,           // snowflake.node is set together with another source
	NoDigitsInHostName, // the host name does not end in a decimal digit
	VariableUnset,      // the environment variable is not set
	VariableInvalid,    // the environment variable is not a decimal integer
	OutOfRange,         // the number plus snowflake.node_offset lies outside the layout's nodes
	CitusNotInstalled,  // 'citus', and the database the node check connects to has no Citus
	CitusUnreadable,    // 'citus', and the group could not be read (an error, or no node check)
	CitusNotInCluster,  // 'citus', and this server is in no cluster's metadata yet (group 0, no nodes)
	CitusPending,       // 'citus', and the group has not been read yet since start
};

// The node a source gave, or why none: node is -1 unless problem is None; number is what the source
// read before the offset (the host name's digits, the variable's value, the group; -1 when none).
struct DerivedNode {
	int32_t node;
	NodeProblem problem;
	int64_t number;
};

// The node number + offset gives in a layout whose nodes are 0..max_node (OutOfRange outside it).
DerivedNode node_from_number(int64_t number, int32_t offset, int32_t max_node) noexcept;

// The node a host name gives: its trailing decimal digits ("pg-7" 7, "orders-db-12" 12) + offset.
DerivedNode node_from_host_name(std::string_view host_name, int32_t offset, int32_t max_node) noexcept;

// The node an environment variable gives: its value, all decimal digits (no sign, no spaces) + offset.
DerivedNode node_from_variable(std::string_view value, bool is_set, int32_t offset, int32_t max_node) noexcept;

} // namespace snowflake
