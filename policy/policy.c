/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Accessors of a built FsgPolicy and its printing as a key file that parses
 * back to the same policy.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <string.h>

const FsgRule *const *
fsg_policy_rules (const FsgPolicy *policy, guint *out_n)
{
  if (out_n)
    *out_n = policy->rules->len;
  return policy->pub_rules;
}

const char *const *
fsg_policy_literal_deny_read (const FsgPolicy *policy)
{
  return (const char *const *) policy->literal_deny_read;
}

gboolean
fsg_policy_network_allowed (const FsgPolicy *policy)
{
  return policy->network;
}

gboolean
fsg_policy_hide_denied (const FsgPolicy *policy)
{
  return policy->hide_denied;
}

gboolean
fsg_policy_devices_allowed (const FsgPolicy *policy)
{
  return policy->devices_allowed;
}

gboolean
fsg_policy_setid_kept (const FsgPolicy *policy)
{
  return policy->setid_kept;
}

guint64
fsg_policy_timeout_ms (const FsgPolicy *policy)
{
  return policy->timeout_ms;
}

guint64
fsg_policy_kill_after_ms (const FsgPolicy *policy)
{
  return policy->kill_after_ms;
}

guint64
fsg_policy_output_cap (const FsgPolicy *policy)
{
  return policy->output_cap;
}

const char *
fsg_policy_profile (const FsgPolicy *policy)
{
  return policy->profile;
}

static char *
format_duration (guint64 ms)
{
  if (ms == 0)
    return g_strdup ("none");
  if (ms % 3600000 == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "h", ms / 3600000);
  if (ms % 60000 == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "m", ms / 60000);
  if (ms % 1000 == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "s", ms / 1000);
  return g_strdup_printf ("%" G_GUINT64_FORMAT "ms", ms);
}

static char *
format_size (guint64 n)
{
  if (n != 0 && n % (1024 * 1024 * 1024) == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "GiB", n >> 30);
  if (n != 0 && n % (1024 * 1024) == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "MiB", n >> 20);
  if (n != 0 && n % 1024 == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT "KiB", n >> 10);
  return g_strdup_printf ("%" G_GUINT64_FORMAT, n);
}

/* '$' must be doubled in values, and a value that starts with '?' followed
 * by a path start would read as optional. */
static char *
escape_value (const char *value)
{
  g_autoptr(GString) s = g_string_new (NULL);

  for (const char *p = value; *p; p++)
    {
      if (*p == '$')
        g_string_append_c (s, '$');
      g_string_append_c (s, *p);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static void
set_list (GKeyFile *kf, const char *group, const char *key, GPtrArray *values)
{
  if (values->len == 0)
    return;
  g_key_file_set_string_list (kf, group, key, (const char *const *) values->pdata, values->len);
}

char *
fsg_policy_to_keyfile (const FsgPolicy *policy)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  GPtrArray *lists[4];
  g_autoptr(GPtrArray) exclude = g_ptr_array_new ();
  g_autoptr(GPtrArray) include_only = g_ptr_array_new ();
  g_autoptr(GPtrArray) set = g_ptr_array_new ();
  g_autoptr(GPtrArray) secret_names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *timeout = format_duration (policy->timeout_ms);
  g_autofree char *kill_after = format_duration (policy->kill_after_ms);
  g_autofree char *cap = format_size (policy->output_cap);
  g_autofree char *body = NULL;
  guint n_default = 0;

  for (guint i = 0; i < 4; i++)
    lists[i] = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *r = policy->rules->pdata[i];
      const char *written;
      gboolean shadowed = FALSE;

      if (r->secret_name != NULL)
        {
          /* printed back as the name: parsing derives the same rules */
          gboolean seen = FALSE;
          for (guint j = 0; j < secret_names->len && !seen; j++)
            seen = strcmp (secret_names->pdata[j], r->secret_name) == 0;
          if (!seen)
            g_ptr_array_add (secret_names, escape_value (r->secret_name));
          continue;
        }
      if (r->pub.kind == FSG_RULE_WRITABLE || r->pub.kind == FSG_RULE_READONLY)
        {
          /* of two roots at one path the later decides; print only that one */
          for (guint j = i + 1; j < policy->rules->len && !shadowed; j++)
            {
              const FsgRuleImpl *o = policy->rules->pdata[j];
              shadowed = (o->pub.kind == FSG_RULE_WRITABLE || o->pub.kind == FSG_RULE_READONLY) &&
                         strcmp (o->pub.path, r->pub.path) == 0;
            }
          if (shadowed)
            continue;
          /* keep a symlink alias that an earlier root at this path brought */
          written = r->pub.pattern;
          for (guint j = 0; j < i && r->alias_path == NULL; j++)
            {
              const FsgRuleImpl *o = policy->rules->pdata[j];
              if ((o->pub.kind == FSG_RULE_WRITABLE || o->pub.kind == FSG_RULE_READONLY) &&
                  o->alias_path && strcmp (o->pub.path, r->pub.path) == 0)
                written = o->pub.pattern;
            }
          g_ptr_array_add (lists[r->pub.kind], escape_value (written));
        }
      else
        g_ptr_array_add (lists[r->pub.kind], escape_value (r->pub.path));
    }

  g_key_file_set_string (kf, "policy", "profile", "none");
  set_list (kf, "filesystem", "readonly", lists[FSG_RULE_READONLY]);
  set_list (kf, "filesystem", "writable", lists[FSG_RULE_WRITABLE]);
  set_list (kf, "filesystem", "deny-read", lists[FSG_RULE_DENY_READ]);
  set_list (kf, "filesystem", "deny-write", lists[FSG_RULE_DENY_WRITE]);
  set_list (kf, "filesystem", "secret-names", secret_names);
  g_key_file_set_string (kf, "filesystem", "hide-denied", policy->hide_denied ? "true" : "false");
  g_key_file_set_string (kf, "filesystem", "git", policy->git_protect ? "protect" : "off");
  if (policy->devices_allowed)
    g_key_file_set_string (kf, "filesystem", "devices", "allow");
  if (policy->setid_kept)
    g_key_file_set_string (kf, "filesystem", "setid", "keep");
  g_key_file_set_string (kf, "filesystem", "hybrid", policy->hybrid ? "on" : "off");
  {
    g_autoptr(GPtrArray) trees = g_ptr_array_new_with_free_func (g_free);

    for (guint i = 0; i < policy->hybrid_trees->len; i++)
      g_ptr_array_add (trees, escape_value (policy->hybrid_trees->pdata[i]));
    set_list (kf, "filesystem", "hybrid-trees", trees);
  }
  g_key_file_set_string (kf, "network", "allow", policy->network ? "true" : "false");
  g_key_file_set_string (kf, "process", "timeout", timeout);
  g_key_file_set_string (kf, "process", "kill-after", kill_after);
  g_key_file_set_string (kf, "output", "output-cap", cap);
  g_key_file_set_string (kf, "environment", "inherit",
                         policy->env.inherit == FSG_ENV_INHERIT_ALL    ? "all"
                         : policy->env.inherit == FSG_ENV_INHERIT_NONE ? "none"
                                                                       : "core");
  while (fsg_env_default_excludes[n_default])
    n_default++;
  for (guint i = n_default; i < policy->env.exclude->len; i++)
    g_ptr_array_add (exclude, policy->env.exclude->pdata[i]);
  for (guint i = 0; i < policy->env.include_only->len; i++)
    g_ptr_array_add (include_only, policy->env.include_only->pdata[i]);
  for (guint i = 0; i < policy->env.set->len; i++)
    g_ptr_array_add (set, policy->env.set->pdata[i]);
  set_list (kf, "environment", "exclude", exclude);
  set_list (kf, "environment", "set", set);
  set_list (kf, "environment", "include-only", include_only);

  body = g_key_file_to_data (kf, NULL, NULL);
  for (guint i = 0; i < 4; i++)
    g_ptr_array_unref (lists[i]);
  return g_strconcat ("# The effective fsgate policy, flattened: parsing this file\n"
                      "# (fsgate policy --policy THIS-FILE) gives the same policy.\n", body, NULL);
}
