#include "adapters/mysql/procedures.h"

#include <map>

#include "embedded_sql.h"
#include "md5.h"
#include "relstore/errors.h"
#include "schema/server_code.h"

namespace relstore::mysql {
namespace {

// Client settings the procedures are created with (see open_connection's admin role).
constexpr const char* kCharset = "utf8mb4";
constexpr const char* kCollation = "utf8mb4_general_ci";

std::string procedure_name(const std::string& text, std::string_view file) {
  constexpr std::string_view kCreate = "CREATE PROCEDURE ";
  const size_t start = text.find(kCreate);
  const size_t paren = start == std::string::npos ? start : text.find('(', start);
  if (paren == std::string::npos) {
    throw std::logic_error("no CREATE PROCEDURE name( in " + std::string(file));
  }
  return text.substr(start + kCreate.size(), paren - start - kCreate.size());
}

struct Installed {
  std::string comment;
  std::string charset;
  std::string collation;
};

std::map<std::string, Installed> installed(Connection& admin) {
  std::map<std::string, Installed> out;
  admin.batch(
      "SELECT ROUTINE_NAME, ROUTINE_COMMENT, CHARACTER_SET_CLIENT, COLLATION_CONNECTION "
      "FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() "
      "AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME LIKE 'relstore\\_%'",
      1,
      [&](Rows& r) {
        while (r.next()) out[r.bytes(0)] = {r.bytes(1), r.bytes(2), r.bytes(3)};
      },
      Context::other);
  return out;
}

}  // namespace

std::vector<Procedure> procedures(const ServerInfo& server, bool keep_history) {
  const std::string mode = keep_history ? "hp/" : "hf/";
  const std::string files[] = {
      "sql/mysql/relstore_make_tid.sql",
      "sql/mysql/relstore_move_blobs.sql",
      "sql/mysql/" + mode + "relstore_lock_and_detect.sql",
      "sql/mysql/" + mode + "relstore_finish.sql",
      "sql/mysql/relstore_json_mirror_write.sql",
      "sql/mysql/relstore_json_mirror_rows.sql",
      "sql/mysql/" + mode + "relstore_json_mirror_apply_batch.sql",
  };
  std::vector<Procedure> out;
  for (const std::string& file : files) {
    std::string text = trim_statements(embedded_sql(file));
    replace_all(text, "{SHARE_LOCK}", server.share_lock());
    replace_all(text, "{SHARE_WAIT}", std::to_string(server.share_wait()));
    Procedure p;
    p.name = procedure_name(text, file);
    // The checksum covers the text as it will run on this server, so a change of server
    // flavour or of the file replaces the procedure.
    p.checksum = server_code_comment(md5_hex(text));
    replace_all(text, "{CHECKSUM}", p.checksum);
    p.create = std::move(text);
    out.push_back(std::move(p));
  }
  return out;
}

void install_procedures(Connection& admin, const ServerInfo& server, bool keep_history,
                        std::vector<std::string>& created) {
  const auto present = installed(admin);
  // All checked before any is replaced: a newer relstore's procedures stay as they are.
  for (const auto& [name, proc] : present) {
    check_server_code_not_newer(name, proc.comment, admin.params().describe);
  }
  for (const Procedure& p : procedures(server, keep_history)) {
    const auto it = present.find(p.name);
    if (it != present.end() && it->second.comment == p.checksum && it->second.charset == kCharset &&
        it->second.collation == kCollation) {
      continue;
    }
    const std::string what = "installing the stored procedure " + p.name +
                             " (needs the CREATE ROUTINE and ALTER ROUTINE privileges)";
    if (it != present.end() && server.mariadb) {
      // MariaDB replaces a procedure in one statement, under the routine's metadata lock:
      // a CALL from another process runs the old text or the new one, never finds none.
      std::string replace = p.create;
      const size_t at = replace.find("CREATE PROCEDURE");
      if (at != std::string::npos) replace.replace(at, 16, "CREATE OR REPLACE PROCEDURE");
      admin.exec(replace, Context::other, what);
    } else {
      // MySQL has no CREATE OR REPLACE PROCEDURE: a CALL between these two statements
      // fails with "does not exist" (a SchemaError; the next attempt finds the new one).
      if (it != present.end()) {
        admin.exec("DROP PROCEDURE IF EXISTS " + p.name, Context::other, what);
      }
      admin.exec(p.create, Context::other, what);
    }
    if (it == present.end()) created.push_back(p.name);
  }
}

}  // namespace relstore::mysql
