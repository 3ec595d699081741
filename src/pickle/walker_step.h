// What each opcode does: Walker<C>::step. Part of walker.h, which includes it at its end;
// include walker.h, not this file.
#pragma once

namespace relstore::pickle {

template <class C>
RELSTORE_INLINE void Walker<C>::step(uint8_t op) {
  switch (op) {
    case kProto:
      if (u8() > kHighestProtocol) fault("unsupported protocol");
      break;
    case kFrame: {
      const uint64_t n = u64le();
      if (n > size_ - p_) fault("frame runs past the record");
      break;
    }
    case kStop: {
      const Value v = pop();
      stack_.clear();
      stack_.push_back(v);
      stopped_ = true;
      break;
    }

    // --- scalars ---
    case kNone:
      stack_.push_back(c_.none());
      break;
    case kNewTrue:
      stack_.push_back(c_.boolean(true));
      break;
    case kNewFalse:
      stack_.push_back(c_.boolean(false));
      break;
    case kInt: {
      const std::string_view t = line();
      // Protocol 0 writes booleans as INT with these exact arguments.
      if (t == "01" || t == "00") {
        stack_.push_back(c_.boolean(t == "01"));
      } else {
        push_text_int(t, false);
      }
      break;
    }
    case kBinInt:
      stack_.push_back(c_.int64(static_cast<int32_t>(u32le())));
      break;
    case kBinInt1:
      stack_.push_back(c_.int64(u8()));
      break;
    case kBinInt2:
      stack_.push_back(c_.int64(u16le()));
      break;
    case kLong:
      push_text_int(line(), true);
      break;
    case kLong1:
      push_long_bytes(bytes(u8()));
      break;
    case kLong4: {
      const int32_t n = static_cast<int32_t>(u32le());
      if (n < 0) fault("negative LONG4 length");
      if (static_cast<size_t>(n) > kMaxLongBytes) fault("integer longer than 10000 digits");
      push_long_bytes(bytes(static_cast<uint32_t>(n)));
      break;
    }
    case kFloat:
      stack_.push_back(c_.float64(parse_text_float(line())));
      break;
    case kBinFloat: {
      need(8);  // big-endian on the wire
      const uint64_t bits = read_be64(base_ + p_);
      p_ += 8;
      stack_.push_back(c_.float64(std::bit_cast<double>(bits)));
      break;
    }

    // --- strings ---
    case kString: {
      const std::string_view t = line();
      std::string_view body = t;
      while (!body.empty() && (body.back() == '\r' || body.back() == ' ')) body.remove_suffix(1);
      if (body.size() < 2 || body.front() != body.back() ||
          (body.front() != '\'' && body.front() != '"')) {
        fault("STRING argument is not quoted");
      }
      stack_.push_back(c_.py2str(unescape_py2_string(body.substr(1, body.size() - 2), arena_)));
      break;
    }
    case kBinString: {
      const int32_t n = static_cast<int32_t>(u32le());
      if (n < 0) fault("negative BINSTRING length");
      stack_.push_back(c_.py2str(bytes(static_cast<uint32_t>(n))));
      break;
    }
    case kShortBinString:
      stack_.push_back(c_.py2str(bytes(u8())));
      break;
    case kUnicode:
      stack_.push_back(c_.str(decode_raw_unicode_escape(line(), arena_)));
      break;
    case kBinUnicode:
      stack_.push_back(c_.str(bytes(u32le())));
      break;
    case kShortBinUnicode:
      stack_.push_back(c_.str(bytes(u8())));
      break;
    case kBinUnicode8:
      stack_.push_back(c_.str(bytes(u64le())));
      break;
    case kBinBytes:
      stack_.push_back(c_.bytes(bytes(u32le())));
      break;
    case kShortBinBytes:
      stack_.push_back(c_.bytes(bytes(u8())));
      break;
    case kBinBytes8:
      stack_.push_back(c_.bytes(bytes(u64le())));
      break;
    case kByteArray8:
      stack_.push_back(c_.bytearray(bytes(u64le())));
      break;

    // --- containers ---
    case kEmptyTuple:
      stack_.push_back(c_.tuple(nullptr, 0));
      break;
    case kTuple1:
    case kTuple2:
    case kTuple3: {
      const size_t n = op - kTuple1 + 1u;
      require(n);
      const Value v = c_.tuple(stack_.data() + stack_.size() - n, n);
      stack_.resize(stack_.size() - n);
      stack_.push_back(v);
      break;
    }
    case kTuple:
    case kList:
    case kDict:
    case kFrozenSet: {
      const size_t k = pop_mark();
      const size_t n = stack_.size() - k;
      const Value* items = stack_.data() + k;
      Value v;
      if (op == kTuple) {
        v = c_.tuple(items, n);
      } else if (op == kList) {
        v = c_.list(items, n);
      } else if (op == kDict) {
        if (n % 2) fault("DICT with an odd number of items");
        v = c_.dict(items, n);
      } else {
        v = c_.frozenset(items, n);
      }
      stack_.resize(k);
      stack_.push_back(v);
      break;
    }
    case kEmptyList:
      stack_.push_back(c_.list(nullptr, 0));
      break;
    case kEmptyDict:
      stack_.push_back(c_.dict(nullptr, 0));
      break;
    case kEmptySet:
      stack_.push_back(c_.set());
      break;
    case kAppend: {
      require(2);
      const Value v = stack_.back();
      stack_.pop_back();
      c_.append(stack_.back(), &v, 1);
      break;
    }
    case kSetItem: {
      require(3);
      c_.setitems(stack_[stack_.size() - 3], stack_.data() + stack_.size() - 2, 2);
      stack_.resize(stack_.size() - 2);
      break;
    }
    case kAppends:
    case kSetItems:
    case kAddItems: {
      const size_t k = pop_mark_with_target();
      const size_t n = stack_.size() - k;
      const Value target = stack_[k - 1];
      if (op == kAppends) {
        c_.append(target, stack_.data() + k, n);
      } else if (op == kSetItems) {
        if (n % 2) fault("SETITEMS with an odd number of items");
        c_.setitems(target, stack_.data() + k, n);
      } else {
        c_.additems(target, stack_.data() + k, n);
      }
      stack_.resize(k);
      break;
    }

    // --- stack and memo ---
    case kPop:
      if (stack_.size() > frame_base()) {
        stack_.pop_back();
      } else {
        stack_.resize(pop_mark());  // POP on an empty frame discards the frame (as CPython)
      }
      break;
    case kDup: {
      const Value v = top();
      stack_.push_back(v);
      break;
    }
    case kMark:
      marks_.push_back(stack_.size());
      frame_ = stack_.size();
      break;
    case kPopMark:
      stack_.resize(pop_mark());
      break;
    case kGet:
      stack_.push_back(memo_get(text_key()));
      break;
    case kBinGet:
      stack_.push_back(memo_get(u8()));
      break;
    case kLongBinGet:
      stack_.push_back(memo_get(u32le()));
      break;
    case kPut: {
      const uint64_t key = text_key();
      memo_put(key, top());
      break;
    }
    case kBinPut: {
      const uint8_t key = u8();
      memo_put(key, top());
      break;
    }
    case kLongBinPut: {
      const uint32_t key = u32le();
      memo_put(key, top());
      break;
    }
    case kMemoize:
      memo_put(memo_count_, top());
      break;

    // --- classes, objects, references ---
    case kGlobal: {
      const std::string_view module = line();
      const std::string_view name = line();
      stack_.push_back(c_.global(module, name));
      break;
    }
    case kStackGlobal: {
      require(2);
      const Value name = pop();
      const Value module = pop();
      stack_.push_back(c_.stack_global(module, name));
      break;
    }
    case kReduce: {
      require(2);
      const Value args = pop();
      const Value callable = pop();
      stack_.push_back(c_.reduce(callable, args));
      break;
    }
    case kNewObj: {
      require(2);
      const Value args = pop();
      const Value cls = pop();
      stack_.push_back(c_.newobj(cls, args));
      break;
    }
    case kNewObjEx: {
      require(3);
      const Value kwargs = pop();
      const Value args = pop();
      const Value cls = pop();
      stack_.push_back(c_.newobj_ex(cls, args, kwargs));
      break;
    }
    case kBuild: {
      require(2);
      const Value state = pop();
      c_.build(stack_.back(), state);
      break;
    }
    case kInst: {
      const std::string_view module = line();
      const std::string_view name = line();
      const size_t k = pop_mark();
      const Value v = c_.inst(module, name, stack_.data() + k, stack_.size() - k);
      stack_.resize(k);
      stack_.push_back(v);
      break;
    }
    case kObj: {
      const size_t k = pop_mark();
      if (stack_.size() == k) fault("OBJ without a class");
      const Value v = c_.obj(stack_[k], stack_.data() + k + 1, stack_.size() - k - 1);
      stack_.resize(k);
      stack_.push_back(v);
      break;
    }
    case kPersId:
      stack_.push_back(c_.persid_text(line()));
      break;
    case kBinPersId: {
      const Value pid = pop();
      stack_.push_back(c_.persid(pid));
      break;
    }
    case kExt1:
    case kExt2:
    case kExt4: {
      const uint32_t code = op == kExt1 ? u8() : op == kExt2 ? u16le() : u32le();
      if (code == 0) fault("extension code 0");
      stack_.push_back(c_.ext(code));
      break;
    }
    case kNextBuffer:
      stack_.push_back(c_.buffer());
      break;
    case kReadOnlyBuffer:
      top();
      break;  // a no-op on a value that must exist

    default:
      fault("unknown opcode");
  }
}

}  // namespace relstore::pickle
