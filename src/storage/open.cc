#include "backend/registry.h"
#include "relstore/errors.h"
#include "relstore/storage.h"
#include "storage/db_storage.h"

namespace relstore {
namespace {

std::unique_ptr<backend::Adapter> make_adapter(const StorageUri& uri,
                                               const StorageOptions& options) {
  switch (uri.scheme) {
    case Scheme::sqlite:
      return backend::make_sqlite_adapter(uri, options);
    case Scheme::postgresql:
#ifdef RELSTORE_HAVE_POSTGRESQL
      return backend::make_postgresql_adapter(uri, options);
#else
      throw ConfigError("this relstore was built without PostgreSQL support "
                        "(configure with -DRELSTORE_WITH_POSTGRESQL=ON)");
#endif
    case Scheme::mysql:
#ifdef RELSTORE_HAVE_MYSQL
      return backend::make_mysql_adapter(uri, options);
#else
      throw ConfigError("this relstore was built without MySQL support "
                        "(configure with -DRELSTORE_WITH_MYSQL=ON)");
#endif
    case Scheme::file:
      break;
  }
  throw ConfigError("a file: URI names a FileStorage, which only `relstore convert` reads and "
                    "writes; open_storage takes sqlite:, postgresql: or mysql: URIs");
}

}  // namespace

std::unique_ptr<Storage> open_storage(const StorageUri& uri, const StorageOptions& options) {
  return std::make_unique<DbStorage>(make_adapter(uri, options), options);
}

std::unique_ptr<Storage> open_storage(std::string_view uri) {
  const StorageUri parsed = StorageUri::parse(uri);
  return open_storage(parsed, parsed.options());
}

}  // namespace relstore
