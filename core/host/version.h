/* version.h - what `--version` prints, the same line for every program:
 *
 *   NAME VERSION (ABI MAJOR.MINOR, commit GITSHA[-dirty])
 *   e.g. "shoald 0.1.0 (ABI 1.3, commit 22d812d)"
 *
 * VERSION is CMake's project(VERSION); ABI the SDK's SHOAL_ABI_MAJOR and
 * SHOAL_ABI_MINOR (shoal/plugin.h), the plugin ABI this build loads; the
 * commit is read from git at build time (cmake/GitCommit.cmake), "unknown"
 * outside a git checkout.
 */
#ifndef SHOAL_HOST_VERSION_H
#define SHOAL_HOST_VERSION_H

#include <stdio.h>

/* Writes prog's version line (with its newline) to out. Any thread. */
void shoal__version_print(FILE *out, const char *prog);

#endif
