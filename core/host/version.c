/* version.c - the `--version` line (version.h). Built apart from libshoal
 * (the shoal_version library, CMakeLists.txt): only this file depends on
 * the generated commit header, so a new commit recompiles one file. */
#include "host/version.h"

#include <stdarg.h>

#include "shoal/plugin.h"
#include "shoal_commit.h"  /* generated: SHOAL_GIT_COMMIT */
#include "shoal_version.h" /* generated: SHOAL_VERSION */

void shoal__version_print(FILE *out, const char *prog)
{
    fprintf(out, "%s %s (ABI %d.%d, commit %s)\n", prog, SHOAL_VERSION, (int)SHOAL_ABI_MAJOR,
            (int)SHOAL_ABI_MINOR, SHOAL_GIT_COMMIT);
}

int shoal__usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", prog);
    return 2;
}
