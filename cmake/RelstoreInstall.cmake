# `cmake --install` puts the relstore command, the library and its public headers under the
# prefix, with a CMake package so that other projects can say
#   find_package(relstore CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE relstore::relstore)
# (README, "Using it"; tests/install checks it).
include(CMakePackageConfigHelpers)

set(RELSTORE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/relstore)
install(TARGETS relstore EXPORT relstoreTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/relstore
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT relstoreTargets NAMESPACE relstore:: DESTINATION ${RELSTORE_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/relstoreConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/relstoreConfig.cmake
                              INSTALL_DESTINATION ${RELSTORE_CMAKE_DIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/relstoreConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/relstoreConfig.cmake
              ${PROJECT_BINARY_DIR}/relstoreConfigVersion.cmake
        DESTINATION ${RELSTORE_CMAKE_DIR})
