/* node_kit.c - the node suites' shared steps (node_kit.h). */
#include "node_kit.h"

int nk_parse(const char *text, shoal_node_t **root, shoal_diag_t *err)
{
    return shoal__node_parse("t.yaml", text, strlen(text), root, err);
}

const char *nk_refused(const char *text, char *buf, size_t size)
{
    shoal_node_t *root = (shoal_node_t *)1;
    shoal_diag_t err;
    memset(&err, 0, sizeof err);
    int rc = nk_parse(text, &root, &err);
    CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(root);
    if (rc == SHOAL_OK)
        shoal__node_free(root);
    return shoal__diag_format(&err, buf, size);
}

void nk_assert_at(const shoal_node_t *n, shoal_node_kind_t kind, uint32_t line, uint32_t col)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_EQUAL(n->kind, kind);
    CU_ASSERT_EQUAL(n->line, line);
    CU_ASSERT_EQUAL(n->col, col);
}

void nk_assert_scalar(const shoal_node_t *n, const char *text, bool quoted, uint32_t line,
                      uint32_t col)
{
    nk_assert_at(n, SHOAL_NODE_SCALAR, line, col);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->text);
    CU_ASSERT_STRING_EQUAL(n->text, text);
    CU_ASSERT_EQUAL(n->quoted, quoted);
    CU_ASSERT_EQUAL(n->n, 0);
}
