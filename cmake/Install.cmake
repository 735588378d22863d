# cmake/Install.cmake - what `cmake --install` puts where: the plugin SDK and the host.
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
# shoal.pc finds the prefix from where it sits (${pcfiledir}, pkg-config's
# own variable: the directory of the .pc file), so a moved tree needs
# nothing, as find_package(shoal) does not. Only with an absolute libdir
# does it name the prefix the tree is installed to, which is known only at
# install time (`cmake --install --prefix` may override the configured
# one): then the file is configured now with every other value, and once
# more at install time with the prefix.
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
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(SHOAL_PC_PREFIX "@SHOAL_PC_PREFIX@") # kept for the install-time pass
  set(_pc_prefix "\${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _pc_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" _pc_up "${_pc_up}")
  set(SHOAL_PC_PREFIX "\${pcfiledir}/${_pc_up}")
  set(_pc_prefix "${SHOAL_PC_PREFIX}")
  unset(_pc_up)
endif()
configure_file(${PROJECT_SOURCE_DIR}/sdk/shoal.pc.in ${PROJECT_BINARY_DIR}/sdk/shoal.pc.in @ONLY)
unset(SHOAL_PC_PREFIX)
install(CODE "
  set(SHOAL_PC_PREFIX \"${_pc_prefix}\")
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

# ---- the host: programs, plugin directory, config, unit, man pages ------------
# Layout (same prefix, GNUInstallDirs):
#
#   bin/shoald, bin/shoalctl, bin/shoal-demo     (Runtime)
#   <sysconfdir>/shoal/shoal.yaml                the example config (config/service.yaml)
#   lib/systemd/system/shoald.service            the unit (config/shoald.service.in)
#   <mandir>/man1, man5, man8                    docs/man/*.[158]
#
# Nothing installed needs LD_LIBRARY_PATH, and the prefix may be moved:
#
# - shoald and shoal-plugin-check link the whole static libshoal and export
#   it (ENABLE_EXPORTS, top level). A plugin has DT_NEEDED libshoal.so.0, and
#   glibc satisfies a DT_NEEDED by the SONAME of any object already loaded,
#   the main executable included: so both programs carry the SONAME
#   libshoal.so.<major> themselves. Every plugin then binds to the program's
#   own copy of the runtime (one copy, one set of globals), whatever its
#   RUNPATH says and whether or not libshoal.so is installed at all.
# - The bundled plugins also get an $ORIGIN-relative RUNPATH to <libdir>
#   (for other hosts that dlopen them, e.g. a program linking libshoal.so).
# - shoal-demo links libshoal.so: RUNPATH $ORIGIN/<bindir -> libdir>.
# CMake replaces the build-tree RUNPATHs (absolute) by these at install.
#
# The build tree has the install's shape for plugins: build/bin/shoald finds
# build/<libdir>/shoal/plugins/<name>.so (symlinks to
# build/plugins/<name>/<name>.so, which stays where it was).
file(RELATIVE_PATH SHOAL_PLUGINDIR_FROM_BINDIR ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_FULL_LIBDIR}/shoal/plugins)
file(RELATIVE_PATH _shoal_lib_from_bin ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
file(RELATIVE_PATH _shoal_lib_from_plugins ${CMAKE_INSTALL_FULL_LIBDIR}/shoal/plugins
     ${CMAKE_INSTALL_FULL_LIBDIR})
string(REGEX REPLACE "/$" "" _shoal_lib_from_plugins "${_shoal_lib_from_plugins}")
set_property(SOURCE ${PROJECT_SOURCE_DIR}/core/host/plugin_path.c APPEND PROPERTY
             COMPILE_DEFINITIONS SHOAL_PLUGINDIR_FROM_BINDIR="${SHOAL_PLUGINDIR_FROM_BINDIR}")

foreach(_prog shoald shoal-plugin-check)
  if(TARGET ${_prog})
    target_link_options(${_prog} PRIVATE
                        "-Wl,-soname,libshoal.so.${PROJECT_VERSION_MAJOR}")
  endif()
endforeach()
if(TARGET shoal-demo)
  set_target_properties(shoal-demo PROPERTIES INSTALL_RPATH "$ORIGIN/${_shoal_lib_from_bin}")
endif()
install(TARGETS shoald shoalctl shoal-demo
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  COMPONENT Runtime)

if(SHOAL_BUNDLED_PLUGINS)
  set_target_properties(${SHOAL_BUNDLED_PLUGINS} PROPERTIES
                        INSTALL_RPATH "$ORIGIN/${_shoal_lib_from_plugins}")
  get_filename_component(_shoal_build_plugindir
                         ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/${SHOAL_PLUGINDIR_FROM_BINDIR} ABSOLUTE)
  set(_links "")
  foreach(_p ${SHOAL_BUNDLED_PLUGINS})
    list(APPEND _links COMMAND ${CMAKE_COMMAND} -E create_symlink $<TARGET_FILE:${_p}>
         ${_shoal_build_plugindir}/$<TARGET_FILE_NAME:${_p}>)
  endforeach()
  add_custom_target(shoal_plugin_dir ALL
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_shoal_build_plugindir} ${_links}
    COMMENT "Linking the bundled plugins into ${_shoal_build_plugindir}"
    VERBATIM)
  add_dependencies(shoal_plugin_dir ${SHOAL_BUNDLED_PLUGINS})
  unset(_links)
endif()

# The example config, the unit (its paths are the install's: configured at
# install time, as shoal.pc is, since --prefix may change them) and the
# man pages.
# A system install (configured with CMAKE_INSTALL_PREFIX=/usr) puts the
# config in /etc, as GNUInstallDirs says for that prefix; any other prefix
# keeps it under the prefix (relative: `cmake --install --prefix` moves it).
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(SHOAL_INSTALL_SYSCONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR})
else()
  set(SHOAL_INSTALL_SYSCONFDIR ${CMAKE_INSTALL_SYSCONFDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/config/service.yaml
  DESTINATION ${SHOAL_INSTALL_SYSCONFDIR}/shoal
  RENAME shoal.yaml
  COMPONENT Runtime)
foreach(_d BINDIR SYSCONFDIR)
  if(_d STREQUAL "SYSCONFDIR")
    set(_dir ${SHOAL_INSTALL_SYSCONFDIR})
  else()
    set(_dir ${CMAKE_INSTALL_${_d}})
  endif()
  if(IS_ABSOLUTE "${_dir}")
    set(_shoal_unit_${_d} "${_dir}")
  else()
    set(_shoal_unit_${_d} "\${CMAKE_INSTALL_PREFIX}/${_dir}")
  endif()
endforeach()
unset(_dir)
install(CODE "
  set(SHOAL_UNIT_BINDIR \"${_shoal_unit_BINDIR}\")
  set(SHOAL_UNIT_SYSCONFDIR \"${_shoal_unit_SYSCONFDIR}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/config/shoald.service.in\"
                 \"${PROJECT_BINARY_DIR}/config/shoald.service\" @ONLY)"
  COMPONENT Runtime)
install(FILES ${PROJECT_BINARY_DIR}/config/shoald.service
  DESTINATION lib/systemd/system
  COMPONENT Runtime)
foreach(_sec 1 5 8)
  file(GLOB _pages ${PROJECT_SOURCE_DIR}/docs/man/*.${_sec})
  install(FILES ${_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${_sec} COMPONENT Runtime)
endforeach()
unset(_sec)
unset(_pages)
# test_plugin_path finds the bundled plugins in build/<libdir>/shoal/plugins.
if(TARGET test_plugin_path AND TARGET shoal_plugin_dir)
  add_dependencies(test_plugin_path shoal_plugin_dir)
endif()
