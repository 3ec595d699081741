// Factories of the dialects compiled into this build (see cmake/RelstoreBackends.cmake).
#pragma once

#include <memory>

#include "backend/adapter.h"

namespace relstore::backend {

// The adapter for a sqlite:, postgresql: or mysql: URI (ConfigError for others).
std::unique_ptr<Adapter> open_adapter(const StorageUri& uri, const StorageOptions& options);

std::unique_ptr<Adapter> make_sqlite_adapter(const StorageUri& uri, const StorageOptions& options);
// Throws the ConfigError an open would for an option the dialect does not know, without
// connecting (a config file's reader then names the line). Nothing for dialects this
// build lacks: their open says so.
void check_driver_options(const StorageUri& uri);

#ifdef RELSTORE_HAVE_POSTGRESQL
std::unique_ptr<Adapter> make_postgresql_adapter(const StorageUri& uri,
                                                 const StorageOptions& options);
void check_postgresql_options(const StorageUri& uri);
#endif
#ifdef RELSTORE_HAVE_MYSQL
std::unique_ptr<Adapter> make_mysql_adapter(const StorageUri& uri, const StorageOptions& options);
#endif

}  // namespace relstore::backend
