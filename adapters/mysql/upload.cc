#include "adapters/mysql/upload.h"

#include <algorithm>

#include "relstore/errors.h"

namespace relstore::mysql {

size_t packet_budget(const Settings& settings) {
  return static_cast<size_t>(std::max<int64_t>(settings.server.max_allowed_packet, 1 << 20)) -
         kPacketSlack;
}

void upload(Connection& conn, const Settings& settings, std::string_view insert,
            const UploadRows& rows, std::string_view tail, int tail_statements,
            const RowsCallback& on_rows, Context ctx) {
  const size_t budget = packet_budget(settings);
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
      // The last packet carries the tail.
      if (!tail.empty()) {
        if (!sql.empty()) sql += "; ";
        sql += tail;
        statements += tail_statements;
      }
      if (statements > 0) conn.batch(sql, statements, on_rows, ctx, "uploading the objects");
    } else {
      conn.batch(sql, statements, ctx, "uploading the objects");
    }
  } while (i < rows.count);
}

}  // namespace relstore::mysql
