// libFuzzer target of the pickle decoder and the reference scanner. Beyond "no crash, no
// leak, no hang" (the sanitizers and libFuzzer's limits), it checks what must hold for any
// input: a record the decoder accepts gives well-formed JSON (UTF-8 included), the scanner
// accepts it too and finds the same references, and decoding is repeatable.
// (json_check.h says why the JSON is checked with our own checker.)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "json_check.h"
#include "relstore/pickle.h"

namespace {

// libFuzzer reports the input that got here as a crash.
[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "pickle_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace relstore;
  const std::string_view record(reinterpret_cast<const char*>(data), size);
  static RecordDecoder decoder;
  DecodedRecord out;
  DecodeOptions options;
  // Vary the options with the input so every mode of Python 2 strings gets fuzzed.
  if (size > 0) {
    options.py2_str = static_cast<Py2StrMode>(data[size - 1] % 3);
    options.replace_nul = data[size - 1] & 4;
    options.decimal_as_string = data[size - 1] & 8;
  }
  bool decoded = true;
  try {
    decoder.decode(record, out, options);
  } catch (const PickleError&) {
    decoded = false;
  }
  bool scanned = true;
  std::vector<Oid> refs;
  try {
    refs = scan_references(record);
  } catch (const PickleError&) {
    scanned = false;
  }
  if (!decoded) return 0;
  if (!scanned) broken("the scanner rejected a record the decoder accepted");
  if (refs != out.refs) broken("the scanner and the decoder found different references");
  if (!fuzz::JsonCheck::valid(out.json)) broken("the decoder wrote malformed JSON");
  // The reusable decoder must not carry state from one record to the next.
  const std::string first = out.json;
  decoder.decode(record, out, options);
  if (out.json != first) broken("decoding the same record twice gave different JSON");
  return 0;
}
