// Values of URI options and configuration keys, parsed whole: a trailing "x" or "s" is an
// error, never ignored (std::stoi and atoi read "5432x" as 5432 and "ten" as 0).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace relstore {

// true/false, on/off, yes/no, 1/0 in any case; empty is true (a flag given bare).
bool parse_bool(const std::string& key, const std::string& value);
// A finite number >= 0.
double parse_number(const std::string& key, const std::string& value);
// A size in bytes: a whole number with an optional KB, MB, GB or TB (ZConfig's byte-size).
uint64_t parse_byte_size(const std::string& key, const std::string& value);
// A port 1-65535; `where` starts the message ("malformed URI", a config file's line).
int parse_port(std::string_view port, const std::string& where);

// What is wrong with a SQLite pragma given as an option (URI `pragma.NAME=VALUE`, a config
// file's <pragmas>), or empty when it may be set. Pragmas are spliced into SQL text, and
// relstore sets some itself. The caller says where it came from.
std::string sqlite_pragma_problem(const std::string& name, const std::string& value);
// A pragma relstore sets to that very value anyway (journal_mode wal): nothing to do.
bool sqlite_pragma_is_relstores(const std::string& name, const std::string& value);
// A pragma that is kept in the database file and takes effect only when set before the
// file's first table (page_size in WAL mode, auto_vacuum): set when the file is created.
bool sqlite_pragma_is_set_at_creation(const std::string& name);

}  // namespace relstore
