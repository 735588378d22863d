# cmake/Install.cmake - what `cmake --install` puts where: the plugin SDK.
#
# Included once, at the end of the top-level CMakeLists.txt (after plugins/,
# so the bundled plugins exist). Layout, under the prefix (GNUInstallDirs):
#
#   bin/shoal-plugin-check                 runs a plugin's behaviours (Development)
#   include/shoal/*.h                      the SDK headers (sdk/include/shoal/)
#   <libdir>/libshoal.so.<ver>, .so.<maj>  the runtime          (Runtime)
#   <libdir>/libshoal.so                   the link-time name   (Development)
#   <libdir>/pkgconfig/shoal.pc            pkg-config, with plugindir
#   <libdir>/cmake/shoal/                  the CMake package:
#       shoalConfig.cmake                  find_package(shoal) entry point
#       shoalConfigVersion.cmake           SameMajorVersion
#       shoalTargets*.cmake                imported shoal::shoal and shoal::sdk
#       ShoalPlugin.cmake                  shoal_add_plugin()
#   <libdir>/shoal/plugins/<name>.so       the bundled plugins  (Plugins)
#
# Everything honours `cmake --install <build> --prefix <dir>`. The CMake
# package finds the prefix from where it sits, so the tree can be moved
# afterwards; shoal.pc names the prefix it was installed to.
#
# Usage is the same in the tree and installed: target_link_libraries(x
# PRIVATE shoal::sdk), or shoal_add_plugin(name SOURCES ...). In the tree
# shoal::sdk is an ALIAS of `shoal`; an export cannot carry an alias, so the
# export set holds an INTERFACE library (shoal_sdk, exported as shoal::sdk)
# that links shoal::shoal.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SHOAL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/shoal)
set(SHOAL_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}/shoal/plugins)

# ---- make `shoal` exportable -----------------------------------------------
# The top level gives `shoal` source-tree include paths and its own link
# dependencies (Threads, libyaml, libdl) as PUBLIC. Neither may leave the
# build: installed, the headers are under include/, and a shared libshoal
# carries its dependencies itself (DT_NEEDED) — a plugin links -lshoal only
# (shoal.pc lists them as Libs.private). Wrapping both in BUILD_INTERFACE
# keeps every in-tree user exactly as before.
foreach(_prop INTERFACE_INCLUDE_DIRECTORIES INTERFACE_LINK_LIBRARIES)
  get_target_property(_items shoal ${_prop})
  if(_items)
    list(TRANSFORM _items REPLACE "^(.+)$" "$<BUILD_INTERFACE:\\1>")
    set_property(TARGET shoal PROPERTY ${_prop} "${_items}")
  endif()
endforeach()
unset(_prop)
unset(_items)

# shoal::sdk for installed users (see above). In the tree nobody links
# shoal_sdk: shoal::sdk there stays the ALIAS of shoal.
add_library(shoal_sdk INTERFACE)
target_link_libraries(shoal_sdk INTERFACE shoal)
set_target_properties(shoal_sdk PROPERTIES EXPORT_NAME sdk)

# ---- the library and headers -----------------------------------------------
install(TARGETS shoal shoal_sdk
  EXPORT shoalTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT Runtime
          NAMELINK_COMPONENT Development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/include/shoal
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT Development
  FILES_MATCHING PATTERN "*.h")

# shoal-plugin-check, the conformance checker for plugin authors: it loads a
# plugin as the host does and runs each behaviour (linked statically, so it
# needs no libshoal at run time).
if(TARGET shoal-plugin-check)
  install(TARGETS shoal-plugin-check
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    COMPONENT Development)
endif()

# ---- the CMake package ------------------------------------------------------
install(EXPORT shoalTargets
  NAMESPACE shoal::
  DESTINATION ${SHOAL_INSTALL_CMAKEDIR}
  COMPONENT Development)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/sdk/shoalConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sdk/shoalConfig.cmake
  INSTALL_DESTINATION ${SHOAL_INSTALL_CMAKEDIR}
  PATH_VARS SHOAL_INSTALL_PLUGINDIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/sdk/shoalConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/sdk/shoalConfig.cmake
  ${PROJECT_BINARY_DIR}/sdk/shoalConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/ShoalPlugin.cmake
  DESTINATION ${SHOAL_INSTALL_CMAKEDIR}
  COMPONENT Development)

# ---- pkg-config ---------------------------------------------------------------
# shoal.pc names the prefix the tree is installed to, which is only known at
# install time (`cmake --install --prefix` may override the configured one):
# the file is configured now with every other value, and once more at install
# time with the prefix. (A moved tree still works with `pkg-config
# --define-prefix`; find_package(shoal) needs nothing.)
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(SHOAL_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(SHOAL_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
unset(_dir)
# libshoal's own dependencies, for static links only (Libs.private).
set(SHOAL_PC_LIBS_PRIVATE "-lyaml")
foreach(_lib ${CMAKE_DL_LIBS})
  string(APPEND SHOAL_PC_LIBS_PRIVATE " -l${_lib}")
endforeach()
unset(_lib)
string(APPEND SHOAL_PC_LIBS_PRIVATE " -pthread")
set(SHOAL_PC_PREFIX "@SHOAL_PC_PREFIX@") # kept for the install-time pass
configure_file(${PROJECT_SOURCE_DIR}/sdk/shoal.pc.in ${PROJECT_BINARY_DIR}/sdk/shoal.pc.in @ONLY)
unset(SHOAL_PC_PREFIX)
install(CODE "
  set(SHOAL_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/sdk/shoal.pc.in\"
                 \"${PROJECT_BINARY_DIR}/sdk/shoal.pc\" @ONLY)"
  COMPONENT Development)
install(FILES ${PROJECT_BINARY_DIR}/sdk/shoal.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT Development)

# ---- the bundled plugins ------------------------------------------------------
# Every MODULE library defined under plugins/ (what shoal_add_plugin makes)
# goes to <libdir>/shoal/plugins. Walks the directory tree, so a new plugin
# folder needs nothing here.
function(_shoal_collect_plugins dir out)
  set(found "")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "MODULE_LIBRARY")
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _shoal_collect_plugins(${sub} sub_found)
    list(APPEND found ${sub_found})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

set(SHOAL_BUNDLED_PLUGINS "")
get_property(_shoal_top_subdirs DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTY SUBDIRECTORIES)
if("${PROJECT_SOURCE_DIR}/plugins" IN_LIST _shoal_top_subdirs) # not with SHOAL_BUILD_PLUGINS=OFF
  _shoal_collect_plugins(${PROJECT_SOURCE_DIR}/plugins SHOAL_BUNDLED_PLUGINS)
endif()
unset(_shoal_top_subdirs)
if(SHOAL_BUNDLED_PLUGINS)
  install(TARGETS ${SHOAL_BUNDLED_PLUGINS}
    LIBRARY DESTINATION ${SHOAL_INSTALL_PLUGINDIR}
    COMPONENT Plugins)
endif()
