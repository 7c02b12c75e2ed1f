/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Which host mount flags fsgate-run gives the view (runner/host-mounts.c),
 * decided from a synthetic /proc/self/mountinfo.
 */
#include "config.h"

#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "runner/run.h"
#include "tests/lib/testlib.h"

static char *tmp_root; /* canonical */

static FsgPolicy *
policy_with_deny (const char *rw, const char *ro, const char *deny)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (tmp_root, tmp_root, NULL);
  g_autoptr(GError) error = NULL;
  FsgPolicy *policy;

  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  if (rw != NULL)
    g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, rw, "--rw", &error));
  if (ro != NULL)
    g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, ro, "--ro", &error));
  if (deny != NULL)
    g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_DENY_READ, deny, "--deny-read", &error));
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  return policy;
}

static FsgPolicy *
policy_with (const char *rw, const char *ro)
{
  return policy_with_deny (rw, ro, NULL);
}

/* "@T" in @text becomes the temporary root. */
static char *
subst (const char *text)
{
  g_auto(GStrv) parts = g_strsplit (text, "@T", -1);

  return g_strjoinv (tmp_root, parts);
}

static void
check_plan (GArray *plan, const char *const *want_paths, const unsigned long *want_flags, guint n)
{
  g_assert_cmpuint (plan->len, ==, n);
  for (guint i = 0; i < n && i < plan->len; i++)
    {
      const FsgHostFlags *h = &g_array_index (plan, FsgHostFlags, i);
      g_autofree char *want = subst (want_paths[i]);

      g_assert_cmpstr (h->path, ==, want);
      g_assert_cmpuint (h->flags, ==, want_flags[i]);
    }
}

static const char mountinfo[] =
  "1 0 8:1 / / rw,relatime - ext4 /dev/vda rw\n"
  "2 1 0:5 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
  "3 1 0:6 / @T/nx rw,nosuid,nodev,noexec,relatime - tmpfs a rw\n"
  "4 3 0:7 / @T/nx/ex rw,relatime - tmpfs b rw\n"
  "5 1 0:8 / @T/sym rw,relatime,nosymfollow - tmpfs c rw\n"
  "6 3 0:9 / @T/nx/deep/nx2 rw,noexec shared:3 - tmpfs d rw\n"
  "7 1 0:10 / @T/with\\040space rw,noexec - tmpfs e rw\n"
  "8 1 0:11 / /srv/elsewhere rw,noexec - tmpfs f rw\n"
  "10 1 0:13 / @T/stacked rw,noexec - tmpfs h rw\n"
  "11 1 0:14 / @T/stacked rw - tmpfs i rw\n"
  "garbage line\n";

/* A read-only root over everything and a writable root inside a noexec
 * mount: the writable root and every mount point below the read-only root
 * whose flags differ from its parent's, shallowest first; a mount stacked
 * on another counts with the top one's flags. */
static void
test_plan (void)
{
  g_autofree char *rw = g_build_filename (tmp_root, "nx/work", NULL);
  g_autofree char *info = subst (mountinfo);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GArray) plan = NULL;
  static const char *const paths[] = { "@T/nx", "@T/sym", "@T/with space", "@T/nx/ex", "@T/nx/work" };
  static const unsigned long flags[] = { MS_NOEXEC, FSG_MS_NOSYMFOLLOW, MS_NOEXEC, 0, MS_NOEXEC };

  g_assert_no_errno (g_mkdir_with_parents (rw, 0755));
  policy = policy_with (rw, tmp_root);
  plan = fsg_host_flags_plan (policy, info, FALSE);
  check_plan (plan, paths, flags, G_N_ELEMENTS (paths));
}

/* A place the policy denies is left out: the bind would only be refused. */
static void
test_denied_place (void)
{
  g_autofree char *rw = g_build_filename (tmp_root, "nx/work", NULL);
  g_autofree char *deny = g_build_filename (tmp_root, "sym", NULL);
  g_autofree char *info = subst (mountinfo);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GArray) plan = NULL;
  static const char *const paths[] = { "@T/nx", "@T/with space", "@T/nx/ex", "@T/nx/work" };
  static const unsigned long flags[] = { MS_NOEXEC, MS_NOEXEC, 0, MS_NOEXEC };

  g_assert_no_errno (g_mkdir_with_parents (rw, 0755));
  policy = policy_with_deny (rw, tmp_root, deny);
  plan = fsg_host_flags_plan (policy, info, FALSE);
  check_plan (plan, paths, flags, G_N_ELEMENTS (paths));
}

/* Roots on plain mounts need nothing; /proc, /dev, /sys and a private /tmp
 * are the runner's own. (The temporary root may itself be below /tmp: the
 * synthetic mountinfo has no /tmp mount except where a test adds one.) */
static void
test_nothing_to_do (void)
{
  g_autofree char *info = subst (mountinfo);
  const char *info_tmp = "1 0 8:1 / / rw,relatime - ext4 /dev/vda rw\n"
                         "12 1 0:15 / /tmp rw,noexec - tmpfs g rw\n";
  g_autofree char *plain = g_build_filename (tmp_root, "plain", NULL);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GArray) plan = NULL;

  g_assert_no_errno (g_mkdir_with_parents (plain, 0755));
  policy = policy_with (plain, NULL);
  plan = fsg_host_flags_plan (policy, info, FALSE);
  g_assert_cmpuint (plan->len, ==, 0);
  g_clear_pointer (&policy, fsg_policy_free);
  g_clear_pointer (&plan, g_array_unref);
  policy = policy_with ("/proc/sys", "/dev/shm");
  plan = fsg_host_flags_plan (policy, info, FALSE);
  g_assert_cmpuint (plan->len, ==, 0);
  g_clear_pointer (&policy, fsg_policy_free);
  g_clear_pointer (&plan, g_array_unref);
  policy = policy_with ("/tmp", NULL);
  plan = fsg_host_flags_plan (policy, info_tmp, TRUE);
  g_assert_cmpuint (plan->len, ==, 0);
  g_clear_pointer (&plan, g_array_unref);
  /* /tmp shown from the host: its noexec is kept */
  plan = fsg_host_flags_plan (policy, info_tmp, FALSE);
  g_assert_cmpuint (plan->len, ==, 1);
  g_assert_cmpstr (g_array_index (plan, FsgHostFlags, 0).path, ==, "/tmp");
  g_assert_cmpuint (g_array_index (plan, FsgHostFlags, 0).flags, ==, MS_NOEXEC);
}

/* A mount moved onto another keeps its place in the list: the one on top
 * (its parent is the other) decides, whichever is listed first; parent ids
 * that loop (not a real mountinfo) end the walk all the same. */
static void
test_stacked_moved (void)
{
  const char *text = "1 0 8:1 / / rw,relatime - ext4 /dev/vda rw\n"
                     "20 21 0:16 / @T/moved rw,noexec - tmpfs top rw\n"
                     "21 1 0:17 / @T/moved rw - tmpfs below rw\n"
                     "30 31 0:18 / @T/loop rw,noexec - tmpfs l1 rw\n"
                     "31 30 0:19 / @T/loop rw - tmpfs l2 rw\n";
  g_autofree char *info = subst (text);
  g_autofree char *moved = g_build_filename (tmp_root, "moved", NULL);
  g_autofree char *loop = g_build_filename (tmp_root, "loop", NULL);
  g_autoptr(GArray) mounts = fsg_mountinfo_parse (info);
  const FsgMount *m = fsg_mountinfo_containing (mounts, moved);

  g_assert_nonnull (m);
  g_assert_cmpuint (m->id, ==, 20);
  g_assert_nonnull (fsg_mountinfo_containing (mounts, loop));
  {
    g_autoptr(FsgPolicy) policy = policy_with (NULL, tmp_root);
    g_autoptr(GArray) plan = fsg_host_flags_plan (policy, info, FALSE);
    gboolean found = FALSE;

    for (guint i = 0; i < plan->len; i++)
      {
        const FsgHostFlags *h = &g_array_index (plan, FsgHostFlags, i);

        if (strcmp (h->path, moved) == 0)
          found = h->flags == MS_NOEXEC;
      }
    g_assert_true (found);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_root = (char *) fsg_test_scratch_dir ("host-mounts");
  g_test_add_func ("/runner/host-mounts/plan", test_plan);
  g_test_add_func ("/runner/host-mounts/denied-place", test_denied_place);
  g_test_add_func ("/runner/host-mounts/nothing-to-do", test_nothing_to_do);
  g_test_add_func ("/runner/host-mounts/stacked-moved", test_stacked_moved);
  return g_test_run ();
}
