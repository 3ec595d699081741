// Raw libpq for the PostgreSQL benchmarks: the yardstick side and the databases the
// benchmarks work in. Any error ends the program with the server's message.
#pragma once

#include <errno.h>  // program_invocation_short_name
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "relstore/storage.h"

namespace bench {

[[noreturn]] inline void die(const std::string& what, PGconn* c) {
  std::fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what.c_str(),
               c ? PQerrorMessage(c) : "");
  std::exit(1);
}

// Runs `sql` (simple query, any number of statements) and drops its results.
inline void exec(PGconn* c, const std::string& sql) {
  if (!PQsendQuery(c, sql.c_str())) die(sql, c);
  while (PGresult* r = PQgetResult(c)) {
    const auto st = PQresultStatus(r);
    PQclear(r);
    if (st == PGRES_FATAL_ERROR) die(sql, c);
  }
}

inline PGconn* connect(const std::string& uri) {
  // libpq takes URIs; relstore's own options must not reach it.
  PGconn* c = PQconnectdb(uri.substr(0, uri.find('?')).c_str());
  if (PQstatus(c) != CONNECTION_OK) die("connecting", c);
  return c;
}

// `uri` with its database replaced (and its options dropped).
inline std::string with_database(const std::string& uri, const std::string& db) {
  const size_t slash = uri.find('/', uri.find("://") + 3);
  return uri.substr(0, slash) + "/" + db;
}

inline std::string database_of(const std::string& uri) {
  const size_t slash = uri.find('/', uri.find("://") + 3);
  const size_t q = uri.find('?');
  return uri.substr(slash + 1, q == std::string::npos ? std::string::npos : q - slash - 1);
}

// The benchmark's own database <db><suffix>_hf or _hp on `server`, created when missing
// and emptied; returns its relstore URI with the history mode.
inline std::string bench_database(const std::string& server, const std::string& suffix, bool hp) {
  const std::string name = database_of(server) + suffix + (hp ? "_hp" : "_hf");
  PGconn* admin = connect(server);
  PGresult* r = PQexec(admin, ("SELECT 1 FROM pg_database WHERE datname = '" + name + "'").c_str());
  const bool exists = PQntuples(r) > 0;
  PQclear(r);
  if (!exists) exec(admin, "CREATE DATABASE \"" + name + "\"");
  PQfinish(admin);
  const std::string uri =
      with_database(server, name) + (hp ? "?history=preserving" : "?history=free");
  relstore::open_storage(uri)->zap_all();
  return uri;
}

}  // namespace bench
