/* test_error.c - the error table (sdk/include/shoal/error.h). */
#include <string.h>

#include "support.h"

static void names_and_messages_come_from_one_table(void)
{
    CU_ASSERT_STRING_EQUAL(shoal_errname(SHOAL_OK), "SHOAL_OK");
    CU_ASSERT_STRING_EQUAL(shoal_errname(SHOAL_EFULL), "SHOAL_EFULL");
    CU_ASSERT_STRING_EQUAL(shoal_strerror(SHOAL_EFULL), "mailbox full");
    CU_ASSERT_STRING_EQUAL(shoal_errname(SHOAL_ENOPROC), "SHOAL_ENOPROC");
    CU_ASSERT_STRING_EQUAL(shoal_strerror(SHOAL_ENOPROC), "no such actor");
    CU_ASSERT_STRING_EQUAL(shoal_errname(-999), "SHOAL_E?");
    CU_ASSERT_STRING_EQUAL(shoal_strerror(-999), "unknown error");
}

static void codes_are_negative_and_distinct(void)
{
    int codes[] = {
#define X(name, n, msg) SHOAL_##name,
        SHOAL_ERRNO_MAP(X)
#undef X
    };
    size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT(codes[i] < 0);
        CU_ASSERT(strncmp(shoal_errname(codes[i]), "SHOAL_E", 7) == 0);
        CU_ASSERT_STRING_NOT_EQUAL(shoal_strerror(codes[i]), "unknown error");
        for (size_t j = i + 1; j < n; j++)
            CU_ASSERT(codes[i] != codes[j]);
    }
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"names and messages come from one table", names_and_messages_come_from_one_table},
        {"codes are negative and distinct", codes_are_negative_and_distinct},
        {NULL, NULL},
    };
    return shoal_test_run("error", cases);
}
