// The relstore_* stored procedures (sql/mysql/): their text for this server and history
// mode, and installing them or replacing those whose text changed.
#pragma once

#include <string>
#include <vector>

#include "adapters/mysql/adapter.h"

namespace relstore::mysql {

struct Procedure {
  std::string name;
  std::string checksum;  // MD5 of the text before the checksum goes into its COMMENT
  std::string create;    // the CREATE PROCEDURE statement to send
};

// Every procedure the history mode uses, with server-specific clauses filled in.
std::vector<Procedure> procedures(const ServerInfo& server, bool keep_history);

// Creates the missing procedures and replaces those whose checksum, client character set
// or collation differ, on an `admin` connection. Adds the names it created to `created`
// as it goes, so that a failed schema creation can remove them again.
void install_procedures(Connection& admin, const ServerInfo& server, bool keep_history,
                        std::vector<std::string>& created);

}  // namespace relstore::mysql
