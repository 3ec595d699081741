// ZODB record decoding for the JSON mirror (json-mirror.md): our own pickle reader, which
// never executes anything named in a pickle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "relstore/errors.h"
#include "relstore/types.h"

namespace relstore {

class TransactionIterator;

// Hard limits that turn hostile input into a PickleError (json-mirror.md, "Failure policy").
inline constexpr size_t kPickleMaxDepth = 1000;         // nesting of emitted JSON values
inline constexpr size_t kPickleMaxMemo = 1'000'000;     // memo entries (and largest memo key)
inline constexpr size_t kPickleMaxLongDigits = 10'000;  // decimal digits of one integer

// A record that cannot be decoded: truncated, unknown opcode, malformed, over a limit.
// The message names the byte offset in the record and the opcode being executed there.
class PickleError : public StorageError {
 public:
  PickleError(const std::string& what, size_t offset, int opcode)
      : StorageError(what), offset_(offset), opcode_(opcode) {}
  size_t offset() const { return offset_; }
  // The opcode byte at offset(), or -1 when the error is past the end of the record.
  int opcode() const { return opcode_; }

 private:
  size_t offset_;
  int opcode_;
};

// How Python 2 `str` values (opcodes S, T, U) become JSON.
enum class Py2StrMode : uint8_t {
  kAsciiOrHex,  // printable ASCII → string, anything else → {"::": "hex", "hex": …}
  kUtf8,        // valid UTF-8 → string, otherwise hex as above
  kLatin1,      // every byte is a character
};

struct DecodeOptions {
  Py2StrMode py2_str = Py2StrMode::kAsciiOrHex;
  // Decimal becomes a JSON number by default; true writes its text as a JSON string.
  bool decimal_as_string = false;
  // PostgreSQL's jsonb rejects the escape \u0000: true writes U+FFFD for NUL characters.
  bool replace_nul = false;
  // Upper bound of the JSON text; 0 means 64 × the record size + 16 MiB. Shared sub-objects
  // are expanded at every use, so a small record could otherwise produce huge output.
  size_t max_output_bytes = 0;
};

struct DecodedRecord {
  std::string class_name;  // dotted "module.Class" from the class pickle
  Bytes ghost_pickle;      // the class pickle's bytes
  std::string json;        // the state as JSON text (json-mirror.md mapping)
  std::vector<Oid> refs;   // strongly referenced zoids, ascending, without duplicates
};

// Decodes one ZODB record (class pickle + state pickle). Throws PickleError. Values nested
// kPickleMaxDepth deep take about 256 KiB of stack. Thread-safe (buffers are per thread).
DecodedRecord decode_record(std::string_view record, const DecodeOptions& options = {});

// The dotted class name of a record (its class pickle only), e.g. "ZODB.blob.Blob".
// Throws PickleError. Thread-safe.
std::string record_class_name(std::string_view record);

// The zoids `record` references, as decode_record would report them, without building JSON.
// Like ZODB's referencesf, weak and cross-database references are not included.
// Throws PickleError when the opcode stream itself is malformed (it checks less than the
// decoder: a record it accepts may still fail to decode). Thread-safe.
std::vector<Oid> scan_references(std::string_view record);

// A reusable decoder: keeps its buffers between records, so decoding allocates nothing once
// warmed up. Not thread-safe; use one per thread.
class RecordDecoder {
 public:
  RecordDecoder();
  ~RecordDecoder();
  RecordDecoder(const RecordDecoder&) = delete;
  RecordDecoder& operator=(const RecordDecoder&) = delete;

  // Fills `out` (reusing its capacity). Throws PickleError; `out` is then unspecified.
  void decode(std::string_view record, DecodedRecord& out, const DecodeOptions& options = {});
  // The dotted class name the record's class pickle gives, reading only that pickle.
  // Throws PickleError.
  std::string class_name(std::string_view record);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Decoder figures over every data record of a transaction stream, single thread.
struct DecodeBenchStats {
  uint64_t records = 0;  // data records (deletions are skipped)
  uint64_t errors = 0;   // records that raised PickleError
  uint64_t bytes = 0;    // record bytes
  // Per record, the median of its timed passes; then mean and percentiles over records.
  double mean_us = 0;
  double p50_us = 0;
  double p95_us = 0;
  double max_us = 0;
  double mb_per_s = 0;  // record bytes (10^6) per second of decoding
  int passes = 0;
  std::vector<std::string> sample_errors;  // first few errors, "oid 0x…: message"
};

// Loads every data record into memory, decodes each once to warm up and then `passes` more
// times, each decode timed (JSON text and refs included).
DecodeBenchStats bench_decode(TransactionIterator& records, int passes = 5,
                              const DecodeOptions& options = {});

// The figures as a readable table, or with `json` as one JSON object with the keys records,
// errors, mean_us, p50_us, p95_us, mb_per_s (and max_us, bytes, passes).
std::string format_bench_stats(const DecodeBenchStats& stats, bool json);

}  // namespace relstore
