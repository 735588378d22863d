/* version.h - what every program's command line says alike: its
 * `--version` line, and a usage error. The version line:
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

/* A usage error on stderr: "PROG: " what fmt says, then "Try 'PROG
 * --help'."; returns 2, the exit status of a usage error. */
int shoal__usage_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
