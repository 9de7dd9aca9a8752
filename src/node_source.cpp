// Parsing snowflake.node_source and turning the number a source gives into a
// node (see node_source.hpp). Plain string and integer work: no PostgreSQL,
// no allocation, no exceptions.
#include "node_source.hpp"

#ifdef POSTGRES_H
#error "node sources are pure C++: the glue that reads them is node.cpp"
#endif

namespace snowflake {
namespace {

constexpr size_t kMaxVariableName = 64;
constexpr int64_t kNoNumber = -1;

bool is_digit(char c) noexcept {
	return c >= '0' && c <= '9';
}

// A decimal number made of all of digits (1 or more digits, nothing else), at most 18 of them; false otherwise.
bool all_digits(std::string_view digits, int64_t &number) noexcept {
	if (digits.empty() || digits.size() > 18)
		return false;
	number = 0;
	for (char c : digits) {
		if (!is_digit(c))
			return false;
		number = number * 10 + (c - '0');
	}
	return true;
}

} // namespace

const char *parse_node_source(std::string_view text, NodeSource &source) noexcept {
	constexpr std::string_view kEnv = "env:";
	if (text == "setting") {
		source = NodeSource{NodeSourceKind::Setting, {}};
	} else if (text == "hostname") {
		source = NodeSource{NodeSourceKind::HostName, {}};
	} else if (text == "citus") {
		source = NodeSource{NodeSourceKind::Citus, {}};
	} else if (text.substr(0, kEnv.size()) == kEnv) {
		const std::string_view name = text.substr(kEnv.size());
		if (name.empty() || name.size() > kMaxVariableName || is_digit(name.front()))
			return "env: takes the name of an environment variable: a letter or underscore, then letters, digits "
			       "and underscores, at most 64 of them, such as env:POD_INDEX.";
		for (char c : name)
			if (!(is_digit(c) || c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
				return "env: takes the name of an environment variable: a letter or underscore, then letters, "
				       "digits and underscores, at most 64 of them, such as env:POD_INDEX.";
		source = NodeSource{NodeSourceKind::Environment, name};
	} else {
		return "snowflake.node_source is setting, hostname, env:NAME or citus.";
	}
	return nullptr;
}

DerivedNode node_from_number(int64_t number, int32_t offset, int32_t max_node) noexcept {
	if (number < 0 || number > max_node || int64_t{offset} + number > max_node)
		return DerivedNode{-1, NodeProblem::OutOfRange, number};
	return DerivedNode{static_cast<int32_t>(number + offset), NodeProblem::None, number};
}

DerivedNode node_from_host_name(std::string_view host_name, int32_t offset, int32_t max_node) noexcept {
	size_t start = host_name.size();
	while (start > 0 && is_digit(host_name[start - 1]))
		--start;
	int64_t number = 0;
	if (start == host_name.size())
		return DerivedNode{-1, NodeProblem::NoDigitsInHostName, kNoNumber};
	if (!all_digits(host_name.substr(start), number))
		return DerivedNode{-1, NodeProblem::OutOfRange, kNoNumber}; // more digits than any layout has nodes
	return node_from_number(number, offset, max_node);
}

DerivedNode node_from_variable(std::string_view value, bool is_set, int32_t offset, int32_t max_node) noexcept {
	if (!is_set)
		return DerivedNode{-1, NodeProblem::VariableUnset, kNoNumber};
	int64_t number = 0;
	if (!all_digits(value, number)) {
		const bool only_digits = !value.empty() && value.find_first_not_of("0123456789") == std::string_view::npos;
		return DerivedNode{-1, only_digits ? NodeProblem::OutOfRange : NodeProblem::VariableInvalid, kNoNumber};
	}
	return node_from_number(number, offset, max_node);
}

} // namespace snowflake
