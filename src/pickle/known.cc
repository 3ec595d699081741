#include "pickle/known.h"

namespace relstore::pickle {

Known classify_global(std::string_view module, std::string_view name) {
  // Dispatch on the module first: nearly every GLOBAL in a record is an application class,
  // and one comparison tells it apart.
  if (module == "datetime") {
    if (name == "datetime") return Known::kDatetime;
    if (name == "date") return Known::kDate;
    if (name == "time") return Known::kTime;
    if (name == "timedelta") return Known::kTimedelta;
    if (name == "timezone") return Known::kTimezone;
  } else if (module == "builtins" || module == "__builtin__") {
    if (name == "set") return Known::kSet;
    if (name == "frozenset") return Known::kFrozenSet;
    if (name == "bytes") return Known::kBytes;
    if (name == "bytearray") return Known::kByteArray;
  } else if (module == "decimal") {
    if (name == "Decimal") return Known::kDecimal;
  } else if (module == "uuid") {
    if (name == "UUID") return Known::kUuid;
  } else if (module == "_codecs") {
    if (name == "encode") return Known::kCodecsEncode;
  } else if (module == "copyreg" || module == "copy_reg") {
    if (name == "_reconstructor") return Known::kReconstructor;
    if (name == "__newobj__") return Known::kNewObjFunc;
    if (name == "__newobj_ex__") return Known::kNewObjExFunc;
  } else if (module == "pytz") {
    if (name == "_UTC") return Known::kPytzUtc;
    if (name == "_p") return Known::kPytzZone;
    if (name == "FixedOffset") return Known::kPytzFixed;
  } else if (module == "dateutil.tz.tz" || module == "dateutil.tz") {
    if (name == "tzutc") return Known::kDateutilUtc;
    if (name == "tzoffset") return Known::kDateutilOffset;
  }
  return Known::kOther;
}

BTreeKind classify_btree(std::string_view dotted) {
  constexpr std::string_view kPackage = "BTrees.";
  if (dotted.substr(0, kPackage.size()) != kPackage) return BTreeKind::kNone;
  const size_t dot = dotted.rfind('.');
  const std::string_view module = dotted.substr(kPackage.size(), dot - kPackage.size());
  std::string_view name = dotted.substr(dot + 1);
  // Modules are BTrees.<prefix>BTree (OOBTree, IOBTree, fsBTree, …, or ZODB 3's
  // BTrees._<prefix>BTree); classes are either the
  // prefixed names or the module's unprefixed aliases (Bucket, Set, BTree, TreeSet). The
  // pure-Python implementations add a "Py" suffix.
  constexpr std::string_view kModuleSuffix = "BTree";
  if (module.size() < kModuleSuffix.size() ||
      module.substr(module.size() - kModuleSuffix.size()) != kModuleSuffix) {
    return BTreeKind::kNone;
  }
  std::string_view prefix = module.substr(0, module.size() - kModuleSuffix.size());
  // ZODB 3 named the C modules themselves: BTrees._OOBTree.OOBTree, BTrees._IOBTree.IOBucket.
  if (prefix.size() > 1 && prefix.front() == '_') prefix.remove_prefix(1);
  if (name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
  if (name.size() > 2 && name.substr(name.size() - 2) == "Py") name.remove_suffix(2);
  if (name == "Bucket") return BTreeKind::kBucket;
  if (name == "Set") return BTreeKind::kSet;
  if (name == "BTree") return BTreeKind::kTree;
  if (name == "TreeSet") return BTreeKind::kTreeSet;
  return BTreeKind::kNone;
}

}  // namespace relstore::pickle
