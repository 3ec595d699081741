#include "sample/pickle_writer.h"

#include <bit>
#include <cstring>

namespace relstore::sample {

void PickleWriter::begin() {
  op('\x80');
  op('\x03');
}

void PickleWriter::end() { op('.'); }

std::string PickleWriter::take() {
  std::string out = std::move(out_);
  out_.clear();
  next_memo_ = 0;
  globals_.clear();
  return out;
}

void PickleWriter::le32(uint32_t v) {
  for (int i = 0; i < 4; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
}

// Python memoizes every container, string and class it pickles; readers (and our own
// decoder) must cope with BINPUT everywhere, so the sample does the same.
void PickleWriter::memoize() {
  if (next_memo_ < 256) {
    op('q');
    out_ += static_cast<char>(next_memo_);
  } else {
    op('r');
    le32(next_memo_);
  }
  ++next_memo_;
}

void PickleWriter::global(std::string_view module, std::string_view name) {
  std::string key = std::string(module) + "\n" + std::string(name);
  if (auto it = globals_.find(key); it != globals_.end()) {
    if (it->second < 256) {
      op('h');
      out_ += static_cast<char>(it->second);
    } else {
      op('j');
      le32(it->second);
    }
    return;
  }
  op('c');
  out_ += key;
  out_ += '\n';
  globals_.emplace(std::move(key), next_memo_);
  memoize();
}

void PickleWriter::none() { op('N'); }

void PickleWriter::boolean(bool v) { op(v ? '\x88' : '\x89'); }

void PickleWriter::integer(int64_t v) {
  if (v >= 0 && v < 256) {
    op('K');
    out_ += static_cast<char>(v);
  } else if (v >= 0 && v < 65536) {
    op('M');
    out_ += static_cast<char>(v & 0xff);
    out_ += static_cast<char>(v >> 8);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    op('J');
    le32(static_cast<uint32_t>(static_cast<int32_t>(v)));
  } else {
    // LONG1: little-endian two's complement, 8 bytes is always enough for int64.
    op('\x8a');
    out_ += '\x08';
    for (int i = 0; i < 8; ++i)
      out_ += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  }
}

void PickleWriter::floating(double v) {
  op('G');
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  for (int i = 7; i >= 0; --i) out_ += static_cast<char>((bits >> (8 * i)) & 0xff);
}

void PickleWriter::unicode(std::string_view utf8) {
  op('X');
  le32(static_cast<uint32_t>(utf8.size()));
  out_ += utf8;
  memoize();
}

void PickleWriter::bytes(std::string_view b) {
  if (b.size() < 256) {
    op('C');
    out_ += static_cast<char>(b.size());
  } else {
    op('B');
    le32(static_cast<uint32_t>(b.size()));
  }
  out_ += b;
  memoize();
}

void PickleWriter::empty_dict() {
  op('}');
  memoize();
}

void PickleWriter::empty_list() {
  op(']');
  memoize();
}

void PickleWriter::mark() { op('('); }
void PickleWriter::setitem() { op('s'); }
void PickleWriter::setitems() { op('u'); }
void PickleWriter::appends() { op('e'); }

void PickleWriter::tuple(size_t n) {
  switch (n) {
    case 0:
      op(')');
      return;  // the empty tuple is a singleton: Python does not memoize it
    case 1:
      op('\x85');
      break;
    case 2:
      op('\x86');
      break;
    case 3:
      op('\x87');
      break;
    default:
      op('t');
  }
  memoize();
}

void PickleWriter::persid() { op('Q'); }

void PickleWriter::reduce() {
  op('R');
  memoize();
}

void PickleWriter::newobj() {
  op('\x81');
  memoize();
}

void write_datetime(PickleWriter& w, int year, int month, int day, int hour, int minute, int second,
                    int microsecond) {
  w.global("datetime", "datetime");
  const char state[10] = {static_cast<char>(year >> 8),
                          static_cast<char>(year & 0xff),
                          static_cast<char>(month),
                          static_cast<char>(day),
                          static_cast<char>(hour),
                          static_cast<char>(minute),
                          static_cast<char>(second),
                          static_cast<char>((microsecond >> 16) & 0xff),
                          static_cast<char>((microsecond >> 8) & 0xff),
                          static_cast<char>(microsecond & 0xff)};
  w.bytes(std::string_view(state, sizeof state));
  w.tuple(1);
  w.reduce();
}

}  // namespace relstore::sample
