/* args_kit.h - what the args getter suites share (test_args_values,
 * test_args_lookup, test_args_actor): a pool's args parsed from YAML text
 * named "pool.yaml", a diag formatted whole, and a string comparison that
 * says which input it was for when it fails.
 */
#ifndef SHOAL_TEST_ARGS_KIT_H
#define SHOAL_TEST_ARGS_KIT_H

#include "host/args.h"
#include "support.h"

/* Parses text named "pool.yaml" (asserting it parses); the tree is freed by
 * the next call or by ag_drop(). */
const shoal_node_t *ag_yaml(const char *text);
void ag_drop(void);

/* d formatted whole, "pool.yaml:line:col: ...", in a buffer the next call
 * reuses. */
const char *ag_fmt(const shoal_diag_t *d);

/* CU_ASSERT that got is want; prints both, and text, when not. */
void ag_same(const char *got, const char *want, const char *text);

#endif
