// decode_record: the walker builds the value graph of both pickles of a record, then the
// emitter writes the state as JSON. Buffers live in RecordDecoder::Impl and are reused.
#include <algorithm>
#include <cstdio>

#include "pickle/arena.h"
#include "pickle/emitter.h"
#include "pickle/fault.h"
#include "pickle/json_out.h"
#include "pickle/known.h"
#include "pickle/tree.h"
#include "pickle/tree_builder.h"
#include "pickle/walker.h"
#include "relstore/pickle.h"

namespace relstore {

namespace pickle {

std::string describe_error(std::string_view what, size_t offset, int opcode) {
  std::string s = "pickle error at byte " + std::to_string(offset);
  if (opcode >= 0) {
    char buf[32];
    if (opcode >= 0x21 && opcode < 0x7F) {
      std::snprintf(buf, sizeof buf, " (opcode 0x%02x '%c')", opcode, opcode);
    } else {
      std::snprintf(buf, sizeof buf, " (opcode 0x%02x)", opcode);
    }
    s += buf;
  }
  s += ": ";
  s += what;
  return s;
}

}  // namespace pickle

using pickle::Kind;
using pickle::NodeId;

struct RecordDecoder::Impl {
  pickle::Tree tree;
  pickle::ByteArena arena;
  pickle::TreeBuilder builder{tree};
  pickle::Walker<pickle::TreeBuilder> walker{builder, arena};
  pickle::JsonOut out;
  pickle::EmitScratch scratch;

  // The dotted class name the class pickle gives: GLOBAL, (GLOBAL, args) or, in Zope 2
  // databases, ((module, name), args).
  bool class_name(NodeId cls, std::string& name) const {
    const pickle::Node* n = &tree[cls];
    if (n->kind == Kind::kTuple && n->b >= 1) n = &tree[tree.items(*n)[0]];
    if (n->kind == Kind::kGlobal) {
      const pickle::GlobalRef& g = tree.globals[n->a];
      name.assign(g.module);
      name += '.';
      name += g.name;
      return true;
    }
    if (n->kind == Kind::kTuple && n->b == 2) {
      const pickle::Node& m = tree[tree.items(*n)[0]];
      const pickle::Node& c = tree[tree.items(*n)[1]];
      auto text = [](const pickle::Node& x) {
        return x.kind == Kind::kStr || x.kind == Kind::kPy2Str;
      };
      if (text(m) && text(c)) {
        name.assign(m.text());
        name += '.';
        name += c.text();
        return true;
      }
    }
    return false;
  }

  // Starts a record afresh and walks its class pickle; `pos` ends after it.
  NodeId read_class_pickle(std::string_view record, size_t& pos) {
    // Offsets are kept in 32 bits.
    if (record.size() >= UINT32_MAX) throw PickleError("record larger than 4 GiB", 0, -1);
    tree.clear();
    arena.reset();
    walker.reset();
    pos = 0;
    return walker.run(record, pos);
  }

  void name_class(NodeId cls, std::string_view record, std::string& name) const {
    const char* problem = nullptr;
    if (!class_name(cls, name)) {
      problem = "the class pickle does not name a class";
    } else if (!pickle::is_valid_utf8(name) || name.find('\0') != std::string::npos) {
      // Python reads module and class names as text; these bytes are no class's name, and
      // class_name is a text column.
      problem = "the class pickle names a class that is not text (invalid UTF-8 or NUL)";
    }
    if (problem) {
      throw PickleError(pickle::describe_error(problem, 0, static_cast<uint8_t>(record[0])), 0,
                        static_cast<uint8_t>(record[0]));
    }
  }
};

RecordDecoder::RecordDecoder() : impl_(std::make_unique<Impl>()) {}
RecordDecoder::~RecordDecoder() = default;

void RecordDecoder::decode(std::string_view record, DecodedRecord& out,
                           const DecodeOptions& options) {
  Impl& d = *impl_;
  size_t pos = 0;
  const NodeId cls = d.read_class_pickle(record, pos);
  const size_t ghost_end = pos;
  if (pos >= record.size()) {
    throw PickleError(pickle::describe_error("record has no state pickle", pos, -1), pos, -1);
  }
  const NodeId state = d.walker.run(record, pos);  // shares the class pickle's memo

  d.name_class(cls, record, out.class_name);
  out.ghost_pickle.assign(record.data(), ghost_end);

  size_t max_output = options.max_output_bytes;
  if (max_output == 0) max_output = 64 * record.size() + (size_t{16} << 20);
  max_output = std::min<size_t>(max_output, size_t{1} << 31);  // set spans are 32-bit
  d.out.clear();
  pickle::Emitter emitter(d.tree, d.out, d.scratch, options, max_output);
  try {
    emitter.state(state, pickle::classify_btree(out.class_name));
  } catch (const pickle::Fault& f) {
    const size_t at = emitter.fault_offset();
    const int op = static_cast<uint8_t>(record[at]);
    throw PickleError(pickle::describe_error(f.what(), at, op), at, op);
  }
  out.json.assign(d.out.data(), d.out.size());

  out.refs.assign(d.tree.refs.begin(), d.tree.refs.end());
  std::sort(out.refs.begin(), out.refs.end());
  out.refs.erase(std::unique(out.refs.begin(), out.refs.end()), out.refs.end());
}

std::string RecordDecoder::class_name(std::string_view record) {
  size_t pos = 0;
  const NodeId cls = impl_->read_class_pickle(record, pos);
  std::string name;
  impl_->name_class(cls, record, name);
  return name;
}

std::string record_class_name(std::string_view record) {
  thread_local RecordDecoder decoder;
  return decoder.class_name(record);
}

DecodedRecord decode_record(std::string_view record, const DecodeOptions& options) {
  thread_local RecordDecoder decoder;
  DecodedRecord out;
  decoder.decode(record, out, options);
  return out;
}

}  // namespace relstore
