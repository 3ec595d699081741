// Multi-row INSERTs sized to the server's max_allowed_packet: the vote's upload into
// temp_store, the mirror rows of a finish or a follow batch, bulk loads.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "adapters/mysql/adapter.h"

namespace relstore::mysql {

// The rows of one upload, by index.
struct UploadRows {
  size_t count = 0;
  // An upper bound of the bytes append adds for row i.
  std::function<size_t(size_t)> size;
  // Appends row i as "(…)".
  std::function<void(std::string&, size_t)> append;
  // Names row i in the error for a row larger than a packet ("the record of oid 0x…").
  std::function<std::string(size_t)> name;
};

// Room kept in each packet for the statements that follow the upload.
inline constexpr size_t kPacketSlack = 64 * 1024;

// The bytes of rows one packet may carry, from the server's max_allowed_packet, less the
// slack for what follows them.
size_t packet_budget(const Settings& settings);
// The bytes one packet may carry in all.
size_t packet_limit(const Settings& settings);

// Sends the rows as `insert` (up to VALUES) statements, each within the server's
// max_allowed_packet; the last packet also carries `tail`, `tail_statements` statements
// run after the upload in the same round trip, whose result sets go to `on_rows`. Rows
// that fit one packet with the tail take one round trip; a tail longer than the slack
// left after the rows goes in a packet of its own. Nothing but the tail is sent
// when there are no rows.
void upload(Connection& conn, const Settings& settings, std::string_view insert,
            const UploadRows& rows, std::string_view tail, int tail_statements,
            const RowsCallback& on_rows, Context ctx);

}  // namespace relstore::mysql
