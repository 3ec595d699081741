// relstore's code on the server (PostgreSQL functions, MySQL procedures) is installed by
// whichever relstore opens a database writable, and replaced when its text differs from
// that relstore's. Its comment also names the generation of the text, so that an older
// relstore refuses to put its text back over a newer one's: the two would otherwise swap
// it on every open, and the older text brings back what the newer one fixed, for every
// process of either version.
#pragma once

#include <string>
#include <string_view>

namespace relstore {

// Bump with every change to the files under sql/, and set kServerCodeDigest to what
// tests/unit/server_code_test.cc prints.
inline constexpr int kServerCodeGeneration = 8;
inline constexpr std::string_view kServerCodeDigest = "a4e1e383cd78dd324f1e67c8aa173680";

// "relstore g<generation> md5 <md5>": what an installed function or procedure carries.
std::string server_code_comment(std::string_view md5);

// The generation a comment names: 0 for comments written before generations existed
// ("relstore md5 …" on PostgreSQL, "relstore …" on MySQL) and for other text.
int server_code_generation(std::string_view comment);

// Throws SchemaError, changing nothing, when the installed `name` (its comment) is of a newer
// generation than this relstore's.
void check_server_code_not_newer(const std::string& name, std::string_view comment,
                                 const std::string& where);

// MD5 of every file under sql/, in name order: what kServerCodeDigest records.
std::string server_code_digest();

}  // namespace relstore
