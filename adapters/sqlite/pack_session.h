// Storage::pack's connection to a SQLite database (backend::PackSession).
#pragma once

#include <memory>

#include "adapters/sqlite/adapter.h"
#include "backend/adapter.h"

namespace relstore::sqlite {

std::unique_ptr<backend::PackSession> open_pack_session(const Location& loc);

}  // namespace relstore::sqlite
