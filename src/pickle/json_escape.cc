// JSON strings: UTF-8 checking and escaping, the hottest code of the decoder (most of a
// record's bytes are text). One pass copies 16 bytes at a time, stopping at bytes JSON must
// escape and at non-ASCII bytes; runs of well-formed UTF-8 are checked a script-sized stride
// at a time and copied; malformed bytes are repaired where they are. (A first version
// checked the whole string and then escaped it: text that switches between ASCII and other
// scripts paid twice.)
#include <bit>
#include <cstring>

#include "pickle/json_out.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace relstore::pickle {
namespace {

constexpr char kHex[] = "0123456789abcdef";

inline bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

// The length of the well-formed multi-byte UTF-8 sequence at p (no surrogates, no overlong
// forms), or 0 when there is none (ASCII, a malformed sequence, the end).
inline size_t sequence_length(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = *p;
  const size_t left = static_cast<size_t>(end - p);
  if (c >= 0xE1 && c <= 0xEF && c != 0xED) {
    return left >= 3 && is_cont(p[1]) && is_cont(p[2]) ? 3 : 0;
  }
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && is_cont(p[1]) ? 2 : 0;
  if (c == 0xE0 || c == 0xED) {
    // E0 needs A0..BF next (else overlong); ED needs 80..9F (else a surrogate).
    const bool ok = left >= 3 && is_cont(p[2]) &&
                    (c == 0xE0 ? p[1] >= 0xA0 && p[1] <= 0xBF : p[1] >= 0x80 && p[1] <= 0x9F);
    return ok ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const bool ok = left >= 4 && is_cont(p[1]) && is_cont(p[2]) && is_cont(p[3]) &&
                    !(c == 0xF0 && p[1] < 0x90) && !(c == 0xF4 && p[1] > 0x8F);
    return ok ? 4 : 0;
  }
  return 0;
}

// Skips well-formed multi-byte UTF-8 sequences (no surrogates, no overlong forms) starting
// at p; returns where it stops: at an ASCII byte, at the end, or at a byte that is not the
// start of such a sequence.
inline const unsigned char* skip_multibyte(const unsigned char* p, const unsigned char* end) {
#if defined(__SSE2__)
  // Runs of one script are the common case: CJK text is all 3-byte sequences, Cyrillic or
  // Greek all 2-byte ones. Such a run is checked 12 or 16 bytes at a time: lead bytes in
  // range and continuation bytes of the form 10xxxxxx.
  const __m128i m3 = _mm_setr_epi8(-16, -64, -64, -16, -64, -64, -16, -64, -64, -16, -64, -64, 0, 0,
                                   0, 0);  // F0 C0 C0 …: the bits that are tested
  const __m128i v3 = _mm_setr_epi8(-32, -128, -128, -32, -128, -128, -32, -128, -128, -32, -128,
                                   -128, 0, 0, 0, 0);             // E0 80 80 …: their values
  const __m128i m2 = _mm_set1_epi16(static_cast<short>(0xC0E0));  // E0 C0 for each pair
  const __m128i v2 = _mm_set1_epi16(static_cast<short>(0x80C0));  // C0 80
  const __m128i e0 = _mm_set1_epi8(static_cast<char>(0xE0));
  const __m128i ed = _mm_set1_epi8(static_cast<char>(0xED));
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  while (end - p >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if (*p >= 0xE1) {
      const unsigned shape =
          static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(x, m3), v3)));
      // Leads E0 (overlong forms) and ED (surrogates) need the byte-wise check below.
      const unsigned odd = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, e0), _mm_cmpeq_epi8(x, ed))));
      if ((shape & 0x0FFF) != 0x0FFF || (odd & 0x0249)) break;
      p += 12;
    } else if (*p >= 0xC2 && *p <= 0xDF) {
      const unsigned shape =
          static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(x, m2), v2)));
      // Leads C0 and C1 are overlong: lead < C2 unsigned is (lead ^ 80) < 42 signed.
      const unsigned low = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_cmplt_epi8(_mm_xor_si128(x, flip), _mm_set1_epi8(0x42))));
      if (shape != 0xFFFF || (low & 0x5555)) break;
      p += 16;
    } else {
      break;
    }
  }
#endif
  while (p < end) {
    const size_t len = sequence_length(p, end);
    if (len == 0) return p;
    p += len;
  }
  return p;
}

// True when [p, end) is well-formed UTF-8 without surrogates.
bool clean_utf8(const unsigned char* p, const unsigned char* end) {
  while (p < end) {
#if defined(__SSE2__)
    // Skip ASCII 16 bytes at a time, up to the first non-ASCII byte.
    while (end - p >= 16) {
      const unsigned high = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
      if (high == 0) {
        p += 16;
        continue;
      }
      p += std::countr_zero(high);
      break;
    }
#endif
    if (*p < 0x80) {
      ++p;
      continue;
    }
    const unsigned char* q = skip_multibyte(p, end);
    if (q == p) return false;
    p = q;
  }
  return true;
}

inline char* put_replacement(char* o) {
  *o++ = static_cast<char>(0xEF);
  *o++ = static_cast<char>(0xBF);
  *o++ = static_cast<char>(0xBD);
  return o;
}

// The escape of ASCII byte c: a control character, '"' or '\\'.
inline char* put_ascii_escape(char* o, unsigned char c, bool replace_nul) {
  switch (c) {
    case '"':
      *o++ = '\\', *o++ = '"';
      return o;
    case '\\':
      *o++ = '\\', *o++ = '\\';
      return o;
    case '\n':
      *o++ = '\\', *o++ = 'n';
      return o;
    case '\r':
      *o++ = '\\', *o++ = 'r';
      return o;
    case '\t':
      *o++ = '\\', *o++ = 't';
      return o;
    case '\b':
      *o++ = '\\', *o++ = 'b';
      return o;
    case '\f':
      *o++ = '\\', *o++ = 'f';
      return o;
    case 0:
      if (replace_nul) return put_replacement(o);
      [[fallthrough]];
    default:
      std::memcpy(o, "\\u00", 4);
      o[4] = kHex[c >> 4];
      o[5] = kHex[c & 15];
      return o + 6;
  }
}

inline bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

#if defined(__SSE2__)
inline uint64_t load_le64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// The n (< 8) bytes at p as a little-endian integer, without touching p[n] or beyond:
// overlapping loads cover every byte.
inline uint64_t load_partial(const unsigned char* p, size_t n) {
  if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    return a | (uint64_t{b} << (8 * (n - 4)));
  }
  if (n == 0) return 0;
  return uint64_t{p[0]} | (uint64_t{p[n / 2]} << (8 * (n / 2))) |
         (uint64_t{p[n - 1]} << (8 * (n - 1)));
}
#endif

#if defined(__SSE2__)
// The n (<= 16) bytes at p in a vector, zero-padded, read without leaving [p, p + n): the
// tail of a string may end its record's buffer, and a copy through memory stalled on store
// forwarding.
inline __m128i gather(const unsigned char* p, size_t n) {
  if (n == 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const uint64_t lo = n >= 8 ? load_le64(p) : load_partial(p, n);
  const uint64_t hi = n > 8 ? load_partial(p + 8, n - 8) : 0;
  return _mm_set_epi64x(static_cast<int64_t>(hi), static_cast<int64_t>(lo));
}

// Bit i set when byte i must be escaped in a JSON string: <= 0x1F (unsigned), '"' or '\\'.
inline unsigned escape_mask(__m128i x) {
  const __m128i bad = _mm_or_si128(
      _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x),
      _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
  return static_cast<unsigned>(_mm_movemask_epi8(bad));
}
#endif

// One byte (or sequence) of malformed text at p: valid sequences are copied, a high
// surrogate directly followed by a low one (Python's "surrogatepass" spelling of a
// character outside the BMP) is joined, anything else becomes U+FFFD.
char* put_repaired(const unsigned char*& p, const unsigned char* end, char* o) {
  const unsigned char* q = skip_multibyte(p, end);
  if (q != p) {
    std::memcpy(o, p, static_cast<size_t>(q - p));
    o += q - p;
    p = q;
    return o;
  }
  const size_t left = static_cast<size_t>(end - p);
  if (p[0] == 0xED && left >= 3 && p[1] >= 0xA0 && p[1] <= 0xBF && is_cont(p[2])) {
    const uint32_t hi = 0xD000 | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    if (hi < 0xDC00 && left >= 6 && p[3] == 0xED && p[4] >= 0xB0 && p[4] <= 0xBF && is_cont(p[5])) {
      const uint32_t lo = 0xD000 | ((p[4] & 0x3F) << 6) | (p[5] & 0x3F);
      const uint32_t cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
      *o++ = static_cast<char>(0xF0 | (cp >> 18));
      *o++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *o++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *o++ = static_cast<char>(0x80 | (cp & 0x3F));
      p += 6;
      return o;
    }
    p += 3;  // a lone surrogate
    return put_replacement(o);
  }
  ++p;  // not UTF-8: replace this byte and resynchronize at the next
  return put_replacement(o);
}

#if defined(__SSE2__)
// Whether the multi-byte sequences in the first `cut` bytes at p, all complete there, are
// well-formed (no overlong forms, surrogates or code points past U+10FFFF): `odd` marks the
// lead bytes that need a look at their second byte, and bytes that are never valid.
bool odd_leads_ok(const unsigned char* p, unsigned odd) {
  for (; odd; odd &= odd - 1) {
    const int i = std::countr_zero(odd);
    const unsigned char c = p[i], next = p[i + 1];
    if (c == 0xE0 && next >= 0xA0) continue;
    if (c == 0xED && next <= 0x9F) continue;
    if (c == 0xF0 && next >= 0x90) continue;
    if (c == 0xF4 && next <= 0x8F) continue;
    return false;  // C0, C1, F5..FF, or a bad second byte
  }
  return true;
}

// One pass, 16 bytes at a time. A chunk of ASCII is copied up to the first byte JSON must
// escape. A chunk with other bytes is checked as a whole with byte masks: every lead byte
// must be followed by exactly as many continuation bytes as it announces, so the required
// continuation positions (computed from the leads by shifts) must equal the actual ones.
// A sequence that runs past the chunk ends it early. Mixed text (CJK with digits and
// punctuation, Latin with accents) thus never leaves the vector loop. A chunk that fails
// the check is handled one character at a time, repairing what is malformed. Writes at
// most 6 bytes per input byte plus 16 bytes of slack.
char* escape_vector(char* o, const unsigned char* p, const unsigned char* end, bool replace_nul) {
  const __m128i k80 = _mm_set1_epi8(static_cast<char>(0x80));
  const __m128i kC0 = _mm_set1_epi8(static_cast<char>(0xC0));
  const __m128i kE0 = _mm_set1_epi8(static_cast<char>(0xE0));
  const __m128i kF0 = _mm_set1_epi8(static_cast<char>(0xF0));
  const __m128i kF8 = _mm_set1_epi8(static_cast<char>(0xF8));
  const __m128i kFE = _mm_set1_epi8(static_cast<char>(0xFE));
  const __m128i kF5 = _mm_set1_epi8(static_cast<char>(0xF5));
  const __m128i kED = _mm_set1_epi8(static_cast<char>(0xED));
  const __m128i kF4 = _mm_set1_epi8(static_cast<char>(0xF4));
  const __m128i m3 = _mm_setr_epi8(-16, -64, -64, -16, -64, -64, -16, -64, -64, -16, -64, -64, 0, 0,
                                   0, 0);  // F0 C0 C0 …: the bits that are tested
  const __m128i v3 = _mm_setr_epi8(-32, -128, -128, -32, -128, -128, -32, -128, -128, -32, -128,
                                   -128, 0, 0, 0, 0);  // E0 80 80 …: their values
  auto mask = [](__m128i v) { return static_cast<unsigned>(_mm_movemask_epi8(v)); };
  while (p < end) {
    const size_t left = static_cast<size_t>(end - p);
    const unsigned n = left < 16 ? static_cast<unsigned>(left) : 16;
    const __m128i x = gather(p, n);
    const unsigned keep = (1u << n) - 1;
    unsigned cut = n;
    if (mask(x) & keep) {
      // Within a run of CJK, four 3-byte characters: the shape test alone is enough.
      if (n == 16 && *p >= 0xE1 && *p <= 0xEF && *p != 0xED &&
          (mask(_mm_cmpeq_epi8(_mm_and_si128(x, m3), v3)) & 0x0FFF) == 0x0FFF &&
          (mask(_mm_or_si128(_mm_cmpeq_epi8(x, kE0), _mm_cmpeq_epi8(x, kED))) & 0x0249) == 0) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), x);
        o += 12;
        p += 12;
        continue;
      }
      const unsigned cont = mask(_mm_cmpeq_epi8(_mm_and_si128(x, kC0), k80)) & keep;
      const unsigned l2 = mask(_mm_cmpeq_epi8(_mm_and_si128(x, kE0), kC0)) & keep;
      const unsigned l3 = mask(_mm_cmpeq_epi8(_mm_and_si128(x, kF0), kE0)) & keep;
      const unsigned l4 = mask(_mm_cmpeq_epi8(_mm_and_si128(x, kF8), kF0)) & keep;
      const unsigned leads = l2 | l3 | l4;
      const unsigned need = (leads << 1) | ((l3 | l4) << 2) | (l4 << 3);
      unsigned early = 0;  // positions at or past the cut that a sequence before it claims
      if (need >> n) {
        cut = 31 - static_cast<unsigned>(std::countl_zero(leads));
        const unsigned before = ~(1u << cut);
        early =
            (((leads & before) << 1) | (((l3 | l4) & before) << 2) | ((l4 & before) << 3)) >> cut;
      }
      const unsigned in = (1u << cut) - 1;
      const unsigned odd =
          mask(_mm_or_si128(
              _mm_or_si128(_mm_cmpeq_epi8(_mm_and_si128(x, kFE), kC0),
                           _mm_cmpeq_epi8(_mm_max_epu8(x, kF5), x)),
              _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, kE0), _mm_cmpeq_epi8(x, kED)),
                           _mm_or_si128(_mm_cmpeq_epi8(x, kF0), _mm_cmpeq_epi8(x, kF4))))) &
          in;
      if (cut == 0 || early || (need & in) != (cont & in) || (odd && !odd_leads_ok(p, odd))) {
        // Not well-formed here: one character (or malformed byte) the slow way.
        if (*p < 0x80) {
          o = needs_escape(*p) ? put_ascii_escape(o, *p, replace_nul)
                               : (*o = static_cast<char>(*p), o + 1);
          ++p;
        } else {
          const size_t len = sequence_length(p, end);
          if (len == 0) {
            o = put_repaired(p, end, o);
          } else {
            for (size_t i = 0; i < len; ++i) o[i] = static_cast<char>(p[i]);
            o += len;
            p += len;
          }
        }
        continue;
      }
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), x);
    const unsigned esc = escape_mask(x) & ((1u << cut) - 1);
    if (esc == 0) {
      o += cut;
      p += cut;
      continue;
    }
    const int k = std::countr_zero(esc);
    o += k;
    p += k;
    o = put_ascii_escape(o, *p++, replace_nul);
  }
  return o;
}
#else
// Without vectors: a check pass, then a plain copy for well-formed text (nearly all) or a
// byte-wise repair for the rest.
char* escape_scalar(char* o, const unsigned char* p, const unsigned char* end, bool replace_nul) {
  const bool clean = clean_utf8(p, end);
  while (p < end) {
    const unsigned char c = *p;
    if (c >= 0x80 && !clean) {
      o = put_repaired(p, end, o);
    } else if (needs_escape(c)) {
      o = put_ascii_escape(o, c, replace_nul);
      ++p;
    } else {
      *o++ = static_cast<char>(c);
      ++p;
    }
  }
  return o;
}
#endif

}  // namespace

char* JsonOut::escape(char* o, std::string_view s, bool replace_nul) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* const end = p + s.size();
#if defined(__SSE2__)
  return escape_vector(o, p, end, replace_nul);
#else
  return escape_scalar(o, p, end, replace_nul);
#endif
}

void JsonOut::put_latin1_string(std::string_view s, bool replace_nul) {
  char* o = reserve(s.size() * 6 + 2);
  *o++ = '"';
  for (unsigned char c : s) {
    if (c >= 0x80) {
      *o++ = static_cast<char>(0xC0 | (c >> 6));
      *o++ = static_cast<char>(0x80 | (c & 0x3F));
    } else if (needs_escape(c)) {
      o = put_ascii_escape(o, c, replace_nul);
    } else {
      *o++ = static_cast<char>(c);
    }
  }
  *o++ = '"';
  commit_to(o);
}

bool is_plain_ascii(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80 || c == 0) return false;
  }
  return true;
}

bool is_valid_utf8(std::string_view s) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  return clean_utf8(p, p + s.size());
}

}  // namespace relstore::pickle
