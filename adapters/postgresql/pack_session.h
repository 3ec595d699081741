// Storage::pack's connection to a PostgreSQL database (backend::PackSession).
#pragma once

#include <memory>

#include "adapters/postgresql/adapter.h"
#include "backend/adapter.h"

namespace relstore::postgresql {

// Takes RelStorage's pack lock; StorageError when another pack holds it.
std::unique_ptr<backend::PackSession> open_pack_session(const Location& loc,
                                                        backend::Adapter& counter);

}  // namespace relstore::postgresql
