# shoal_add_plugin(<name> SOURCES <file>... [LIBRARIES <lib>...] [OUTPUT_DIRECTORY <dir>])
#
# Builds the shoal plugin <name>.so from SOURCES against shoal::sdk, with what
# a plugin needs to load and to really unload: position-independent, hidden
# visibility (only the descriptor is exported, by SHOAL_PLUGIN), no
# undefined symbols left to chance (-z defs), and -fno-gnu-unique so dlclose
# can unmap it. The same function serves the source tree and installed SDKs
# (shoalConfig.cmake includes this file).
include(CheckCCompilerFlag)
check_c_compiler_flag(-fno-gnu-unique SHOAL_HAVE_NO_GNU_UNIQUE)

function(shoal_add_plugin name)
  cmake_parse_arguments(P "" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT P_SOURCES)
    message(FATAL_ERROR "shoal_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${P_SOURCES})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    C_STANDARD 11
    C_VISIBILITY_PRESET hidden
    POSITION_INDEPENDENT_CODE ON)
  if(P_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIRECTORY})
  endif()
  if(SHOAL_HAVE_NO_GNU_UNIQUE)
    target_compile_options(${name} PRIVATE -fno-gnu-unique)
  endif()
  # Under a sanitizer the plugin's code references the sanitizer runtime,
  # which clang links only into the executable (the host): -z defs would
  # refuse those references, so it is left out there (and only there).
  get_directory_property(dir_opts COMPILE_OPTIONS)
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  if(NOT "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${config}} ${dir_opts}" MATCHES "-fsanitize=")
    target_link_options(${name} PRIVATE -Wl,-z,defs)
  endif()
  target_link_libraries(${name} PRIVATE shoal::sdk ${P_LIBRARIES})
endfunction()
