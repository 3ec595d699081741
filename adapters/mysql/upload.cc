#include "adapters/mysql/upload.h"

#include <algorithm>

#include "relstore/errors.h"

namespace relstore::mysql {

size_t packet_budget(const Settings& settings) {
  return static_cast<size_t>(std::max<int64_t>(settings.server.max_allowed_packet, 1 << 20)) -
         kPacketSlack;
}

size_t packet_limit(const Settings& settings) {
  // The packet also carries the protocol's own header; keep a little room for it.
  return static_cast<size_t>(std::max<int64_t>(settings.server.max_allowed_packet, 1 << 20)) - 1024;
}

void upload(Connection& conn, const Settings& settings, std::string_view insert,
            const UploadRows& rows, std::string_view tail, int tail_statements,
            const RowsCallback& on_rows, Context ctx) {
  const size_t budget = packet_budget(settings);
  // Only the packet with the tail can commit (the finish's CALL): a connection lost while
  // the rows before it travel is a plain disconnect, nothing committed, not an unknown
  // outcome.
  const Context rows_ctx = ctx == Context::commit ? Context::other : ctx;
  std::string sql;
  size_t i = 0;
  do {
    sql.clear();
    int statements = 0;
    if (i < rows.count) {
      sql += insert;
      size_t size = sql.size();
      const size_t first = i;
      for (; i < rows.count; ++i) {
        const size_t row = rows.size(i);
        if (size + row > budget) {
          if (i == first) {
            throw StorageError(
                settings.connect.describe + ": " + rows.name(i) + " needs " + std::to_string(row) +
                " bytes on the wire, more than the server's max_allowed_packet (" +
                std::to_string(settings.server.max_allowed_packet) + "); raise max_allowed_packet");
          }
          break;
        }
        if (i != first) sql += ',';
        rows.append(sql, i);
        size += row;
      }
      statements = 1;
    }
    if (i == rows.count) {
      // The last packet carries the tail, unless the tail is longer than the slack kept
      // for it (a long readCurrent list): then the rows go first, in a packet of their own.
      const size_t limit = packet_limit(settings);
      if (!tail.empty() && !sql.empty() && sql.size() + 2 + tail.size() > limit) {
        conn.batch(sql, statements, rows_ctx, "uploading the objects");
        sql.clear();
        statements = 0;
      }
      if (tail.size() > limit) {
        throw StorageError(settings.connect.describe + ": the statements after the upload need " +
                           std::to_string(tail.size()) +
                           " bytes on the wire, more than the server's max_allowed_packet (" +
                           std::to_string(settings.server.max_allowed_packet) +
                           "); raise max_allowed_packet");
      }
      if (!tail.empty()) {
        if (!sql.empty()) sql += "; ";
        sql += tail;
        statements += tail_statements;
      }
      if (statements > 0) conn.batch(sql, statements, on_rows, ctx, "uploading the objects");
    } else {
      conn.batch(sql, statements, rows_ctx, "uploading the objects");
    }
  } while (i < rows.count);
}

}  // namespace relstore::mysql
