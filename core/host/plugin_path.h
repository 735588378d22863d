/* plugin_path.h - plugins by name (plugin_path.c): a `plugins:` value with
 * no '/' ("echo", or "echo.so" written out) is a NAME, found as NAME.so on
 * the plugin path, in this order:
 *
 *   1. runtime.plugin_path   a list of directories, relative to the config
 *   2. $SHOAL_PLUGIN_PATH    colon-separated, relative to the current dir
 *   3. the install's         <dir of /proc/self/exe>/SHOAL_PLUGINDIR_FROM_BINDIR
 *                            (CMake: bindir -> <libdir>/shoal/plugins; the
 *                            build tree has the same shape)
 *
 * A value with a '/' is a file relative to the config (config.c), never
 * searched. The search runs when the config is resolved
 * (shoal__config_resolve, and shoald --help-config), so --check, a reload
 * and a diff all find the same files.
 */
#ifndef SHOAL_HOST_PLUGIN_PATH_H
#define SHOAL_HOST_PLUGIN_PATH_H

#include <stddef.h>

#include "host/config.h"

/* Where a plugin was found, as --check prints it (pl->found). */
#define SHOAL_FOUND_FILE "a path in the config"
#define SHOAL_FOUND_CONFIG "runtime.plugin_path"
#define SHOAL_FOUND_ENV "SHOAL_PLUGIN_PATH"
#define SHOAL_FOUND_INSTALL "the install's plugin directory"

/* Validation (config.c): fills c->plugins from the `plugins:` node, a
 * mapping { NAME: path | name, ... } or a list [name, ...] (each keyed by
 * its name without .so). A path gets pl->path (relative to the config), a
 * name pl->file ("echo.so"). SHOAL_OK; SHOAL_EINVAL with err at the bad
 * entry; SHOAL_ENOMEM. */
int shoal__config_plugins(shoal_config_t *c, const shoal_node_t *plugins, shoal_diag_t *err);

/* Gives every plugin of c that is a name (pl->path NULL, pl->file set) its
 * path: the first directory of the plugin path holding a regular file
 * pl->file; sets pl->found. Plugins with a path are left alone (pl->found
 * set to SHOAL_FOUND_FILE). SHOAL_OK; SHOAL_ELOAD with err at the plugin's
 * value when one is not found (the directories searched are listed, and a
 * file of that name beside the config is pointed out); SHOAL_ENOMEM. */
int shoal__config_find_plugins(shoal_config_t *c, shoal_diag_t *err);

/* The install's plugin directory beside the running program (realpath'd
 * when it exists) into buf. SHOAL_OK, or SHOAL_EINVAL when /proc/self/exe
 * cannot be read or buf is too small. */
int shoal__plugin_path_install_dir(char *buf, size_t size);

#endif
