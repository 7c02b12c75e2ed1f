/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The seccomp programs compiled at build time (runner/gen-seccomp.c) are
 * exactly those libseccomp compiles from syscall-filter.c's rules now, for
 * both network settings: the cache can never drift from the rules.
 */
#include "config.h"

#include "runner/run.h"

#include <string.h>

static void
check (gboolean net)
{
  struct sock_fprog pre_notify = { 0 }, pre_plain = { 0 }, now_notify = { 0 }, now_plain = { 0 };
  g_autoptr(GError) error = NULL;

  if (!fsg_syscall_filter_precompiled ())
    {
      g_test_skip ("this build compiles the seccomp programs at run time (cross build)");
      return;
    }
  g_assert_true (fsg_syscall_filter_build_full (net, TRUE, &pre_notify, &pre_plain, &error));
  g_assert_no_error (error);
  g_assert_true (fsg_syscall_filter_build_full (net, FALSE, &now_notify, &now_plain, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (pre_plain.len, >, 10);
  g_assert_cmpmem (pre_plain.filter, pre_plain.len * sizeof (struct sock_filter),
                   now_plain.filter, now_plain.len * sizeof (struct sock_filter));
  g_assert_cmpmem (pre_notify.filter, pre_notify.len * sizeof (struct sock_filter),
                   now_notify.filter, now_notify.len * sizeof (struct sock_filter));
  g_assert_cmpuint (pre_notify.len, ==, net ? 0 : now_notify.len);
  if (!net)
    g_assert_cmpuint (pre_notify.len, >, 10);
  fsg_syscall_filter_clear (&pre_notify);
  fsg_syscall_filter_clear (&pre_plain);
  fsg_syscall_filter_clear (&now_notify);
  fsg_syscall_filter_clear (&now_plain);
}

static void
test_no_network (void)
{
  check (FALSE);
}

static void
test_network (void)
{
  check (TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/runner/seccomp/precompiled/no-network", test_no_network);
  g_test_add_func ("/runner/seccomp/precompiled/network", test_network);
  return g_test_run ();
}
