# Version.cmake - the `--version` line of every program (core/host/version.h):
#   shoal_version.h  SHOAL_VERSION, from project(VERSION), written at configure time
#   shoal_commit.h   SHOAL_GIT_COMMIT, from git, checked at every build by the
#                    shoal_commit target (cmake/GitCommit.cmake) and rewritten
#                    only when it changed, so builds stay incremental
# and shoal_version, the one object that includes them, linked into each
# program.
set(SHOAL_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
file(MAKE_DIRECTORY ${SHOAL_GENERATED_DIR})
file(CONFIGURE OUTPUT ${SHOAL_GENERATED_DIR}/shoal_version.h
     CONTENT "/* Generated from CMake's project(VERSION): do not edit. */\n#define SHOAL_VERSION \"@PROJECT_VERSION@\"\n"
     @ONLY)
add_custom_target(shoal_commit
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DOUT=${SHOAL_GENERATED_DIR}/shoal_commit.h
          -P ${PROJECT_SOURCE_DIR}/cmake/GitCommit.cmake
  BYPRODUCTS ${SHOAL_GENERATED_DIR}/shoal_commit.h
  COMMENT "" VERBATIM)
add_library(shoal_version STATIC ${PROJECT_SOURCE_DIR}/core/host/version.c)
add_dependencies(shoal_version shoal_commit)
target_include_directories(shoal_version PRIVATE ${PROJECT_SOURCE_DIR}/sdk/include
                                                 ${PROJECT_SOURCE_DIR}/core ${SHOAL_GENERATED_DIR})
