# Warnings and sanitizers, applied to our own targets only through one interface target.
add_library(relstore_flags INTERFACE)
target_compile_options(relstore_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                       $<$<BOOL:${RELSTORE_WERROR}>:-Werror>)
# GCC 12 at -O3 (Release) reports -Wrestrict for ordinary std::string concatenation
# ("x" + s, s = "x"): GCC bug 105651, fixed in GCC 13. Without this, Release builds fail.
target_compile_options(relstore_flags INTERFACE
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
if(RELSTORE_SANITIZE)
  set(_san "-fsanitize=${RELSTORE_SANITIZE}" -fno-omit-frame-pointer)
  if(RELSTORE_SANITIZE MATCHES "undefined")
    list(APPEND _san -fno-sanitize-recover=undefined)
  endif()
  target_compile_options(relstore_flags INTERFACE ${_san})
  target_link_options(relstore_flags INTERFACE ${_san})
endif()

# Fuzzing: coverage instrumentation for libFuzzer plus AddressSanitizer and UBSan on every
# target of ours; the fuzz executables add -fsanitize=fuzzer for libFuzzer's main.
if(RELSTORE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "RELSTORE_FUZZ=ON needs clang (CMAKE_CXX_COMPILER=clang++)")
  endif()
  set(_fuzz -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
            -fno-omit-frame-pointer)
  target_compile_options(relstore_flags INTERFACE ${_fuzz})
  target_link_options(relstore_flags INTERFACE -fsanitize=address,undefined)
endif()
