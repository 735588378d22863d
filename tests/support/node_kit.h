/* node_kit.h - what the node suites share (test_node, test_node_aliases):
 * text parsed as "t.yaml", a refusal's whole error as shoal__diag_format
 * prints it ("file:line:col: message"), and a node's kind and place. */
#ifndef SHOAL_TEST_NODE_KIT_H
#define SHOAL_TEST_NODE_KIT_H

#include <stdio.h>
#include <string.h>

#include "host/node.h"
#include "support.h"

/* Parses text (a C string) named "t.yaml". */
int nk_parse(const char *text, shoal_node_t **root, shoal_diag_t *err);

/* Parses text that must be refused (asserted); returns the formatted error. */
const char *nk_refused(const char *text, char *buf, size_t size);

#define ASSERT_REFUSED(text, want)                                                                 \
    do {                                                                                           \
        char buf_[1200];                                                                           \
        const char *got_ = nk_refused(text, buf_, sizeof buf_);                                    \
        CU_ASSERT_STRING_EQUAL(got_, want);                                                        \
        if (strcmp(got_, want) != 0)                                                               \
            fprintf(stderr, "\n    got:  %s\n    want: %s\n", got_, want);                         \
    } while (0)

/* n is a node of kind at line:col; a scalar also of text and quoted-ness. */
void nk_assert_at(const shoal_node_t *n, shoal_node_kind_t kind, uint32_t line, uint32_t col);
void nk_assert_scalar(const shoal_node_t *n, const char *text, bool quoted, uint32_t line,
                      uint32_t col);

#endif
