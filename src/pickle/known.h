// Classes and functions whose pickles the JSON mapping rewrites (json-mirror.md), by the
// module and name a GLOBAL gives them. Python 2 spellings (__builtin__, copy_reg) included.
#pragma once

#include <cstdint>
#include <string_view>

namespace relstore::pickle {

enum class Known : uint8_t {
  kOther,
  kDatetime,        // datetime.datetime
  kDate,            // datetime.date
  kTime,            // datetime.time
  kTimedelta,       // datetime.timedelta
  kTimezone,        // datetime.timezone
  kDecimal,         // decimal.Decimal
  kUuid,            // uuid.UUID
  kSet,             // builtins.set
  kFrozenSet,       // builtins.frozenset
  kBytes,           // builtins.bytes
  kByteArray,       // builtins.bytearray
  kCodecsEncode,    // _codecs.encode: Python 3 writes bytes this way in protocols 0-2
  kReconstructor,   // copyreg._reconstructor: protocol 0/1 objects of new-style classes
  kNewObjFunc,      // copyreg.__newobj__
  kNewObjExFunc,    // copyreg.__newobj_ex__
  kPytzUtc,         // pytz._UTC
  kPytzZone,        // pytz._p
  kPytzFixed,       // pytz.FixedOffset (its pickle: FixedOffset(minutes))
  kDateutilUtc,     // dateutil.tz.tzutc
  kDateutilOffset,  // dateutil.tz.tzoffset
};

Known classify_global(std::string_view module, std::string_view name);

// The kind of BTrees state a record's class stores (BTrees.<prefix>BTree.<prefix><kind>).
enum class BTreeKind : uint8_t { kNone, kBucket, kSet, kTree, kTreeSet };

BTreeKind classify_btree(std::string_view dotted_class_name);

}  // namespace relstore::pickle
