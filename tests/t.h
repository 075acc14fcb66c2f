/*
 * t.h - the test harness every tests/test_*.c uses (prefix t_).
 *
 * A test program calls T_CHECK for each assertion and ends with
 * `return t_done("name");`, which prints "name: N passed, N failed" (the
 * runner sums these lines; ", N skipped" follows when T_SKIP was used)
 * and exits non-zero when anything failed. A failing check prints its
 * file, line and a message.
 */
#ifndef OC_T_H
#define OC_T_H

#include <stdio.h>

static int t_passed, t_failed;

#define T_CHECK(cond, ...)                                                 \
    do {                                                                   \
        if (cond) {                                                        \
            t_passed++;                                                    \
        } else {                                                           \
            t_failed++;                                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

/* Counts every check between t_group_begin and t_group_end as one case:
 * one pass if all of them passed, else one failure (each failing check
 * still prints). For suites that check many facts of one model. */
static int t_group_passed, t_group_failed;

static inline void t_group_begin(void)
{
    t_group_passed = t_passed;
    t_group_failed = t_failed;
}

static inline void t_group_end(void)
{
    int bad = t_failed > t_group_failed;
    t_passed = t_group_passed + !bad;
    t_failed = t_group_failed + bad;
}

/* What a test could not run (its data is not on this machine): counted
 * apart, named on a "SKIP" line, never a failure. */
static int t_skipped;

#define T_SKIP(...)                                                        \
    do {                                                                   \
        t_skipped++;                                                       \
        printf("SKIP ");                                                   \
        printf(__VA_ARGS__);                                               \
        putchar('\n');                                                     \
    } while (0)

static inline int t_done(const char *name)
{
    if (t_skipped)
        printf("%s: %d passed, %d failed, %d skipped\n", name, t_passed, t_failed,
               t_skipped);
    else
        printf("%s: %d passed, %d failed\n", name, t_passed, t_failed);
    return t_failed ? 1 : 0;
}

#endif
