# Warnings and sanitizers, applied to our own targets only through one interface target.
add_library(relstore_flags INTERFACE)
target_compile_options(relstore_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                       $<$<BOOL:${RELSTORE_WERROR}>:-Werror>)
if(RELSTORE_SANITIZE)
  set(_san "-fsanitize=${RELSTORE_SANITIZE}" -fno-omit-frame-pointer)
  if(RELSTORE_SANITIZE MATCHES "undefined")
    list(APPEND _san -fno-sanitize-recover=undefined)
  endif()
  target_compile_options(relstore_flags INTERFACE ${_san})
  target_link_options(relstore_flags INTERFACE ${_san})
endif()
