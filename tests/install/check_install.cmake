# cmake -DBUILD_DIR=… -DSOURCE_DIR=… -DGENERATOR=… -DWORK_DIR=… -P check_install.cmake
# Installs the build into a fresh prefix, builds tests/install/consumer against it with
# find_package(relstore), and runs it: what a project using the library does.
foreach(var BUILD_DIR SOURCE_DIR GENERATOR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
foreach(f bin/relstore include/relstore/storage.h lib/cmake/relstore/relstoreConfig.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${f})
    message(FATAL_ERROR "the install has no ${f}")
  endif()
endforeach()
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build -G ${GENERATOR}
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(${WORK_DIR}/build/consumer ${WORK_DIR}/db)
if(NOT step_output MATCHES "^committed 0x0*1 at 0x[0-9a-f]+: installed library state")
  message(FATAL_ERROR "unexpected output from the consumer: ${step_output}")
endif()
message(STATUS "${step_output}")
file(REMOVE_RECURSE ${WORK_DIR})
