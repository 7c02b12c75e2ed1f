/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Decision engine benchmark: decisions per second for policies of 10, 100
 * and 1000 rules, 5% of them globs of realistic shapes (`*.ext`, `prefix*`,
 * `name`, `/srv/ ** /x`, `[ab]*.y`), the rest roots and literal deny-read
 * and deny-write paths. Two measurements per policy: the whole-path
 * decision (fsg_policy_decide on absolute paths) and the incremental step
 * (fsg_policy_child_state from a cached parent state, as fsgate does on
 * every lookup), both over a realistic mix of names. Each is timed in
 * batches with CLOCK_MONOTONIC and reported as the median ns per decision
 * over the batches. The target: an incremental child decision under
 * 200 ns median with 1000 rules. Run with `meson test --benchmark` or
 * directly; `--quick` runs fewer batches.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/policy-private.h"
#include "tests/lib/testlib.h"

#define TARGET_NS 200.0

static char *tmp_root;

/* Names met in a source tree: most match nothing, a few match a glob. */
static const char *const names[] = {
  "main.c", "README.md", "node_modules", "index.js", ".git", "objects", "lib", "test_util.py",
  "Makefile", "a.out", "config.yaml", "server.pem", "package.json", "src", "include", "utils.h",
  "build", "CMakeLists.txt", ".env", "id_rsa.pub", "docs", "x", "secrets", "bundle.min.js",
  "__pycache__", "setup.py", "Cargo.toml", "go.mod", "vendor", "LICENSE", "b1.y7", "pre3-file",
};

/* Parent directories: in the work tree, and one absolute path below "/srv"
 * where every `/srv/ ** /x` pattern stays live. */
static const char *const dirs[] = { "src", "src/lib", "src/lib/deep", "node_modules/pkg", ".git/objects",
                                    "/srv/data/deep" };

static inline gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static double
median (double *v, guint n)
{
  qsort (v, n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A policy of @n_rules rules, @n_globs of them globs. */
static FsgPolicy *
make_policy (guint n_rules, guint n_globs, const char *work, const char *home)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (work, home, NULL);
  g_autoptr(GError) error = NULL;
  guint added = 0;
  FsgPolicy *policy;

  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  /* the roots: the host read-only, the work tree writable, a few more */
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, "/", "--ro", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, work, "--rw", &error));
  added = 2;
  for (guint i = 0; i < n_globs; i++, added++)
    {
      g_autofree char *pat = NULL;

      switch (i % 5)
        {
        case 0: pat = g_strdup_printf ("*.ext%u", i); break;
        case 1: pat = g_strdup_printf ("pre%u*", i); break;
        case 2: pat = g_strdup_printf ("name%u", i); break;
        case 3: pat = g_strdup_printf ("/srv/**/x%u", i); break;
        default: pat = g_strdup_printf ("[ab]*.y%u", i); break;
        }
      g_assert_true (fsg_policy_builder_add_rule (b, i % 3 ? FSG_RULE_DENY_READ : FSG_RULE_DENY_WRITE,
                                                  pat, "--glob", &error));
    }
  for (guint i = 0; added < n_rules; i++, added++)
    {
      g_autofree char *path = NULL;
      FsgRuleKind kind;

      switch (i % 4)
        {
        case 0:
          path = g_strdup_printf ("%s/.secret%u", home, i);
          kind = FSG_RULE_DENY_READ;
          break;
        case 1:
          path = g_strdup_printf ("%s/gen/out%u", work, i);
          kind = FSG_RULE_DENY_WRITE;
          break;
        case 2:
          path = g_strdup_printf ("/etc/app%u/credentials", i);
          kind = FSG_RULE_DENY_READ;
          break;
        default:
          path = g_strdup_printf ("%s/src/vendored%u", work, i);
          kind = FSG_RULE_DENY_WRITE;
          break;
        }
      g_assert_true (fsg_policy_builder_add_rule (b, kind, path, "--lit", &error));
    }
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  return policy;
}

typedef struct
{
  guint rules;
  guint globs;
  double whole_ns;
  double inc_ns;
} Row;

static volatile guint sink;

static void
bench_one (guint n_rules, const char *work, const char *home, guint batches, Row *row)
{
  guint n_globs = MAX (1, n_rules / 20);
  g_autoptr(FsgPolicy) policy = make_policy (n_rules, n_globs, work, home);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  FsgPathState parents[G_N_ELEMENTS (dirs)];
  g_autofree double *whole = g_new (double, batches);
  g_autofree double *inc = g_new (double, batches);
  const guint n_names = G_N_ELEMENTS (names);
  const guint inc_batch = 20000, whole_batch = n_rules >= 1000 ? 200 : 2000;
  guint n;

  fsg_policy_rules (policy, &n);
  g_assert_cmpuint (n, ==, n_rules);
  for (guint d = 0; d < G_N_ELEMENTS (dirs); d++)
    {
      g_autofree char *dir = dirs[d][0] == '/' ? g_strdup (dirs[d]) : g_build_filename (work, dirs[d], NULL);
      g_auto (GStrv) comps = fsg_path_split (dir);

      /* the cached parent state, as fsgate keeps one per inode */
      parents[d] = fsg_policy_root_state (policy);
      for (guint i = 0; comps[i]; i++)
        parents[d] = fsg_policy_child_state (policy, &parents[d], comps[i]);
      for (guint i = 0; i < n_names; i++)
        g_ptr_array_add (paths, g_build_filename (dir, names[i], NULL));
    }

  /* warm up: intern every state once */
  for (guint d = 0; d < G_N_ELEMENTS (dirs); d++)
    for (guint i = 0; i < n_names; i++)
      sink += fsg_policy_child_state (policy, &parents[d], names[i]).access;

  for (guint b = 0; b < batches; b++)
    {
      gint64 t0 = now_ns ();
      guint k = b;

      for (guint i = 0; i < inc_batch; i++, k++)
        {
          FsgPathState s = fsg_policy_child_state (policy, &parents[k % G_N_ELEMENTS (dirs)],
                                                   names[k % n_names]);
          sink += s.access;
        }
      inc[b] = (double) (now_ns () - t0) / inc_batch;

      t0 = now_ns ();
      for (guint i = 0; i < whole_batch; i++, k++)
        sink += fsg_policy_decide (policy, paths->pdata[k % paths->len]).access;
      whole[b] = (double) (now_ns () - t0) / whole_batch;
    }
  row->rules = n_rules;
  row->globs = n_globs;
  row->whole_ns = median (whole, batches);
  row->inc_ns = median (inc, batches);
}

int
main (int argc, char **argv)
{
  g_autofree char *work = NULL;
  g_autofree char *home = NULL;
  const guint sizes[] = { 10, 100, 1000 };
  Row rows[G_N_ELEMENTS (sizes)];
  guint batches = 31;

  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--quick") == 0)
      batches = 5;

  tmp_root = (char *) fsg_test_scratch_dir ("bench");
  work = g_build_filename (tmp_root, "work", NULL);
  home = g_build_filename (tmp_root, "home", NULL);
  fsg_test_mkdir (tmp_root, "work/src/lib/deep");
  fsg_test_mkdir (tmp_root, "home");

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    bench_one (sizes[i], work, home, batches, &rows[i]);

  printf ("fsgate policy engine: median ns per decision over %u batches\n\n", batches);
  printf ("%6s %6s  %14s %14s  %14s %14s\n", "rules", "globs", "whole-path ns", "whole/s",
          "incremental ns", "incremental/s");
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    printf ("%6u %6u  %14.1f %14.0f  %14.1f %14.0f\n", rows[i].rules, rows[i].globs,
            rows[i].whole_ns, 1e9 / rows[i].whole_ns, rows[i].inc_ns, 1e9 / rows[i].inc_ns);
  printf ("\ntarget: incremental child decision < %.0f ns median at 1000 rules: %s (%.1f ns)\n",
          TARGET_NS, rows[G_N_ELEMENTS (sizes) - 1].inc_ns < TARGET_NS ? "met" : "MISSED",
          rows[G_N_ELEMENTS (sizes) - 1].inc_ns);

  fsg_test_scratch_cleanup ();
  return 0;
}
