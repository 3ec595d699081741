// The ZODB records of the sample tree, as protocol-3 pickles.
#pragma once

#include <string>
#include <vector>

#include "relstore/types.h"

namespace relstore::sample {

// A Python class as ZODB names it in a record or a persistent reference.
struct ClassName {
  const char* module;
  const char* name;
};

inline constexpr ClassName kPersistentMapping{"persistent.mapping", "PersistentMapping"};
inline constexpr ClassName kOOBTree{"BTrees.OOBTree", "OOBTree"};
inline constexpr ClassName kDocument{"myapp.content", "Document"};

struct Child {
  std::string name;
  Oid oid;
  ClassName cls;
};

struct DateTime {
  int year, month, day, hour, minute, second, microsecond;
};

struct Document {
  std::string title;
  std::string text;
  DateTime created;
  DateTime modified;
  std::vector<std::string> tags;
  bool tags_as_tuple = false;
  int64_t views = 0;
  double rating = 0;
  Oid parent;
  ClassName parent_class;
};

// PersistentMapping state: {'data': {name: ref, ...}}.
Bytes mapping_record(const std::vector<Child>& children);
// OOBTree with its single bucket inline: state (((k1, v1, k2, v2, ...),),), None if empty.
// `children` must be sorted by name, as a BTree keeps its keys.
Bytes btree_record(const std::vector<Child>& children);
// A Document's __dict__ as its state.
Bytes document_record(const Document& doc);
// A transaction extension: the pickled dict {'source': ..., 'objects': n}.
Bytes extension_bytes(const std::string& source, int64_t objects);

}  // namespace relstore::sample
