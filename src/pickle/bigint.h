// Integers beyond 64 bits, kept exact: LONG1/LONG4 payloads written as decimal digits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace relstore::pickle {

// Decimal text of a two's complement little-endian integer ("-" sign when negative, no
// leading zeros). `scratch` is working memory the caller may reuse. Throws Fault when the
// result has more than kPickleMaxLongDigits digits.
void bigint_le_to_decimal(std::string_view le, std::string& out, std::vector<uint32_t>& scratch);

// The value of a two's complement little-endian integer when it is in [0, 2^128); false
// otherwise. hi/lo are the upper and lower 64 bits.
bool bigint_le_to_u128(std::string_view le, uint64_t& hi, uint64_t& lo);

// The value of decimal digits when it is below 2^128; false otherwise.
bool decimal_to_u128(std::string_view digits, uint64_t& hi, uint64_t& lo);

}  // namespace relstore::pickle
