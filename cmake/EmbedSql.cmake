# Embeds .sql files into the library as string constants (design.md: no SQL loose in C++).
#
# relstore_embed_sql(TARGET <target> FILES <abs paths...> BASE <dir>) generates
# embedded_sql.cc defining relstore::embedded_sql(name), where name is the path relative
# to BASE, e.g. "sqlite/schema_hp.sql".

set(_RELSTORE_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/EmbedSqlGenerate.cmake")

function(relstore_embed_sql)
  cmake_parse_arguments(ARG "" "TARGET;BASE" "FILES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/embedded_sql.cc")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${out}" "-DBASE=${ARG_BASE}" "-DFILES=${ARG_FILES}"
            -P "${_RELSTORE_EMBED_SCRIPT}"
    DEPENDS ${ARG_FILES} "${_RELSTORE_EMBED_SCRIPT}"
    COMMENT "Embedding SQL files"
    VERBATIM)
  target_sources(${ARG_TARGET} PRIVATE "${out}")
endfunction()
