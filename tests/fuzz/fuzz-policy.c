/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libFuzzer target for the policy parser and the decision engines: any
 * input either fails with a GError or builds a policy whose incremental and
 * whole-path decisions agree and whose printed form parses back to itself.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "policy/policy-private.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char *const probe_paths[] = {
  "/", "/tmp", "/tmp/a", "/tmp/a/.env", "/tmp/a/b/c.pem", "/etc/shadow", "/home/u/.ssh/id_rsa",
  "/srv/x/secrets/y", "/usr/bin/sh", "/tmp/.git/hooks/pre-commit", "/proc/1/root", NULL,
};

static void
check_paths (FsgPolicy *policy)
{
  for (guint i = 0; probe_paths[i]; i++)
    {
      g_auto (GStrv) comps = fsg_path_split (probe_paths[i]);
      FsgPathState inc = fsg_policy_root_state (policy);
      FsgPathState whole = fsg_policy_decide (policy, probe_paths[i]);
      g_autofree char *why = NULL;

      for (guint j = 0; comps[j]; j++)
        inc = fsg_policy_child_state (policy, &inc, comps[j]);
      if (inc.access != whole.access || inc.flags != whole.flags || inc.rule != whole.rule)
        __builtin_trap ();
      why = fsg_path_state_describe (policy, &inc);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new ("/tmp", "/root", "/run/user/0");
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(FsgPolicyBuilder) b2 = NULL;
  g_autoptr(FsgPolicy) again = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *text2 = NULL;
  g_auto (GStrv) env = NULL;
  const char *const envp[] = { "PATH=/bin", "API_KEY=x", "LC_ALL=C", "HOME=/root", NULL };

  if (size > 64 * 1024)
    return 0;
  if (!fsg_policy_builder_set_profile (b, "none", &error) ||
      !fsg_policy_builder_add_data (b, "fuzz.ini", (const char *) data, (gssize) size, &error))
    return 0;
  policy = fsg_policy_builder_finish (b, &error);
  if (policy == NULL)
    return 0;
  check_paths (policy);
  env = fsg_policy_build_environ (policy, envp);

  /* the printed policy parses back to the same printed policy */
  text = fsg_policy_to_keyfile (policy);
  b2 = fsg_policy_builder_new ("/tmp", "/root", "/run/user/0");
  if (!fsg_policy_builder_add_data (b2, "printed.ini", text, -1, &error))
    __builtin_trap ();
  again = fsg_policy_builder_finish (b2, &error);
  if (again == NULL)
    __builtin_trap ();
  text2 = fsg_policy_to_keyfile (again);
  if (strcmp (text, text2) != 0)
    __builtin_trap ();
  return 0;
}
