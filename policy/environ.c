/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The environment of the sandboxed command: start from the caller's
 * variables as `inherit` says (by default all of them), drop the excluded
 * names (always any name containing KEY, SECRET, TOKEN, PASSWORD, PASSWD,
 * PASSPHRASE or CREDENTIAL, and the well-known SSHPASS and MYSQL_PWD, in
 * any case; PWD, OLDPWD and PGPASSFILE, a path, stay), keep only `include-only` names when that
 * list is given, then add the `set` pairs, which always win.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <string.h>

const char *const fsg_env_core_names[] = {
  "HOME", "PATH", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_*", "TMPDIR", "TZ", NULL,
};

const char *const fsg_env_default_excludes[] = {
  "*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", "*PASSWD*", "*PASSPHRASE*", "*CREDENTIAL*",
  "SSHPASS", "MYSQL_PWD", NULL,
};

void
fsg_env_policy_init (FsgEnvPolicy *env)
{
  env->inherit = FSG_ENV_INHERIT_ALL;
  env->exclude = g_ptr_array_new_with_free_func (g_free);
  env->include_only = g_ptr_array_new_with_free_func (g_free);
  env->set = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; fsg_env_default_excludes[i]; i++)
    g_ptr_array_add (env->exclude, g_strdup (fsg_env_default_excludes[i]));
}

void
fsg_env_policy_clear (FsgEnvPolicy *env)
{
  g_clear_pointer (&env->exclude, g_ptr_array_unref);
  g_clear_pointer (&env->include_only, g_ptr_array_unref);
  g_clear_pointer (&env->set, g_ptr_array_unref);
}

static gboolean
matches_any (const char *name, const char *const *globs, guint n)
{
  for (guint i = 0; i < n; i++)
    if (fsg_glob_match_nocase (globs[i], name))
      return TRUE;
  return FALSE;
}

static gboolean
set_by_policy (const FsgEnvPolicy *env, const char *name)
{
  gsize len = strlen (name);

  for (guint i = 0; i < env->set->len; i++)
    {
      const char *pair = env->set->pdata[i];
      if (strncmp (pair, name, len) == 0 && pair[len] == '=')
        return TRUE;
    }
  return FALSE;
}

char **
fsg_policy_build_environ (const FsgPolicy *policy, const char *const *envp)
{
  return fsg_policy_build_environ_full (policy, envp, NULL);
}

char **
fsg_policy_build_environ_full (const FsgPolicy *policy, const char *const *envp,
                               GPtrArray *dropped)
{
  const FsgEnvPolicy *env = &policy->env;
  g_autoptr(GHashTable) out = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  GPtrArray *result;

  for (guint i = 0; envp && envp[i]; i++)
    {
      const char *eq = strchr (envp[i], '=');
      g_autofree char *name = NULL;

      if (eq == NULL || eq == envp[i])
        continue;
      name = g_strndup (envp[i], (gsize) (eq - envp[i]));
      if (env->inherit == FSG_ENV_INHERIT_NONE)
        continue;
      if (env->inherit == FSG_ENV_INHERIT_CORE)
        {
          gboolean core = FALSE;
          for (guint j = 0; fsg_env_core_names[j]; j++)
            core |= fsg_glob_match (fsg_env_core_names[j], name);
          if (!core)
            continue;
        }
      if (matches_any (name, (const char *const *) env->exclude->pdata, env->exclude->len) ||
          (env->include_only->len > 0 &&
           !matches_any (name, (const char *const *) env->include_only->pdata, env->include_only->len)))
        {
          if (dropped != NULL && !set_by_policy (env, name))
            g_ptr_array_add (dropped, g_strdup (name));
          continue;
        }
      if (!g_hash_table_contains (out, name))
        g_ptr_array_add (order, g_strdup (name));
      g_hash_table_replace (out, g_steal_pointer (&name), g_strdup (eq + 1));
    }
  for (guint i = 0; i < env->set->len; i++)
    {
      const char *pair = env->set->pdata[i];
      const char *eq = strchr (pair, '=');
      char *name = g_strndup (pair, (gsize) (eq - pair));

      if (!g_hash_table_contains (out, name))
        g_ptr_array_add (order, g_strdup (name));
      g_hash_table_replace (out, name, g_strdup (eq + 1));
    }

  result = g_ptr_array_new ();
  for (guint i = 0; i < order->len; i++)
    {
      char *name = order->pdata[i];
      g_ptr_array_add (result, g_strconcat (name, "=", (char *) g_hash_table_lookup (out, name), NULL));
      g_free (name);
    }
  g_ptr_array_add (result, NULL);
  return (char **) g_ptr_array_free (result, FALSE);
}
