// Storage::pack's connection to a MySQL or MariaDB database (backend::PackSession).
#pragma once

#include <memory>

#include "adapters/mysql/adapter.h"
#include "backend/adapter.h"

namespace relstore::mysql {

// Takes RelStorage's pack lock; StorageError when another pack holds it.
std::unique_ptr<backend::PackSession> open_pack_session(const Settings& settings,
                                                        backend::Adapter& counter);

}  // namespace relstore::mysql
