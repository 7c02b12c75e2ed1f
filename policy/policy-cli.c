/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * POLICY OPTIONS for both binaries. The option callbacks only record what
 * was given, in order; fsg_policy_options_build() applies the records as the
 * last layer, so `--ro /p --rw /p` and `--rw /p --ro /p` mean what they say.
 */
#include "config.h"

#include "policy/policy-cli.h"
#include "policy/policy-private.h"

#include <stdlib.h>
#include <string.h>

typedef struct
{
  char *flag;  /* "--rw" */
  char *value; /* may be NULL for switches */
} Record;

struct _FsgPolicyOptions
{
  char *profile;
  GPtrArray *records; /* Record* in command-line order (--policy included) */
  gboolean protect_files;
};

static void
record_free (gpointer data)
{
  Record *r = data;

  g_free (r->flag);
  g_free (r->value);
  g_free (r);
}

FsgPolicyOptions *
fsg_policy_options_new (void)
{
  FsgPolicyOptions *opts = g_new0 (FsgPolicyOptions, 1);

  opts->records = g_ptr_array_new_with_free_func (record_free);
  return opts;
}

void
fsg_policy_options_free (FsgPolicyOptions *opts)
{
  if (opts == NULL)
    return;
  g_free (opts->profile);
  g_ptr_array_unref (opts->records);
  g_free (opts);
}

static gboolean
on_option (const char *option_name, const char *value, gpointer data, GError **error)
{
  FsgPolicyOptions *opts = data;
  Record *r;

  if (strcmp (option_name, "--profile") == 0)
    {
      g_free (opts->profile);
      opts->profile = g_strdup (value);
      return TRUE;
    }
  r = g_new0 (Record, 1);
  r->flag = g_strdup (option_name);
  r->value = g_strdup (value);
  g_ptr_array_add (opts->records, r);
  return TRUE;
}

GOptionGroup *
fsg_policy_options_group (FsgPolicyOptions *opts)
{
  return fsg_policy_options_group_full (opts, FSG_POLICY_OPTIONS_ALL);
}

GOptionGroup *
fsg_policy_options_group_full (FsgPolicyOptions *opts, FsgPolicyOptionsSet set)
{
  GOptionEntry entries[] = {
    { "profile", 0, 0, G_OPTION_ARG_CALLBACK, on_option,
      "Base profile: workspace-write (default), read-only, none", "NAME" },
    { "policy", 'p', 0, G_OPTION_ARG_CALLBACK, on_option,
      "Add a policy file (repeatable, applied in order)", "FILE" },
    { "rw", 0, 0, G_OPTION_ARG_CALLBACK, on_option,
      "Add a writable root (relative paths resolve against the current directory)", "PATH" },
    { "ro", 0, 0, G_OPTION_ARG_CALLBACK, on_option, "Add a read-only root", "PATH" },
    { "deny-read", 0, 0, G_OPTION_ARG_CALLBACK, on_option,
      "Deny reading, listing and writing matches (path or glob)", "PAT" },
    { "deny-write", 0, 0, G_OPTION_ARG_CALLBACK, on_option,
      "Make matches read-only even inside writable roots", "PAT" },
    { "net", 0, G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, on_option, "Allow the network", NULL },
    { "no-net", 0, G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, on_option,
      "Deny the network (the default)", NULL },
    { "timeout", 0, 0, G_OPTION_ARG_CALLBACK, on_option,
      "Stop the command after D (500ms, 10s, 2m, 1h; none)", "D" },
    { "kill-after", 0, 0, G_OPTION_ARG_CALLBACK, on_option,
      "After the timeout's SIGTERM, SIGKILL after D (default 2s)", "D" },
    { "output-cap", 0, 0, G_OPTION_ARG_CALLBACK, on_option,
      "Keep at most SIZE of each captured stream (default 1MiB)", "SIZE" },
    { "hide-denied", 0, G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, on_option,
      "Show denied paths as missing (ENOENT) instead of EACCES", NULL },
    G_OPTION_ENTRY_NULL
  };
  GOptionGroup *group = g_option_group_new ("policy", "Policy options:",
                                            "Show policy options", opts, NULL);

  for (guint i = 0; entries[i].long_name != NULL; i++)
    {
      const char *n = entries[i].long_name;
      gboolean run_only = strcmp (n, "timeout") == 0 || strcmp (n, "kill-after") == 0 ||
                          strcmp (n, "output-cap") == 0;
      gboolean net = strcmp (n, "net") == 0 || strcmp (n, "no-net") == 0;

      if ((set != FSG_POLICY_OPTIONS_ALL && run_only) || (set == FSG_POLICY_OPTIONS_MOUNT && net))
        entries[i].flags |= G_OPTION_FLAG_HIDDEN;
    }
  g_option_group_add_entries (group, entries);
  return group;
}

const char *
fsg_policy_options_help (void)
{
  return "Policy layers, applied in order: the base profile (--profile, or\n"
         "`profile =` in a policy file, else workspace-write), each --policy file,\n"
         "then the flags. Later layers add rules; nothing can weaken a deny-read.\n"
         "Built-in profiles:\n"
         "  workspace-write  host / read-only, the current directory writable,\n"
         "                   secrets (~/.ssh, .env, *.pem, ...) denied, no network\n"
         "  read-only        the same with the current directory read-only\n"
         "  none             the empty policy\n"
         "Patterns: gitignore-like globs. Without '/' a pattern matches a name at\n"
         "any depth (.env, *.pem); with '/' it is anchored (~/.ssh, /srv/**/secrets).\n"
         "See fsgate-policy(5) or docs/policy.md.";
}

void
fsg_policy_options_set_protect_files (FsgPolicyOptions *opts, gboolean protect)
{
  opts->protect_files = protect;
}

FsgPolicy *
fsg_policy_options_build (FsgPolicyOptions *opts, GError **error)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new_for_process ();

  if (opts->profile && !fsg_policy_builder_set_profile (b, opts->profile, error))
    return NULL;
  /* files first in their order, so a file's `profile =` is known before
   * anything is applied; flags are the last layer whatever their position */
  for (guint i = 0; i < opts->records->len; i++)
    {
      const Record *r = opts->records->pdata[i];
      if ((strcmp (r->flag, "--policy") == 0 || strcmp (r->flag, "-p") == 0) &&
          !fsg_policy_builder_add_file (b, r->value, error))
        return NULL;
    }
  /* fsgate-run: the policy files themselves (included ones too, by the
   * name they were reached by and by their real path, and optional
   * includes that do not exist yet) are never writable from the view, so
   * a command cannot rewrite the rules of the next run. */
  if (opts->protect_files)
    {
      const GPtrArray *files = fsg_policy_builder_sources (b);

      for (guint i = 0; i < files->len; i++)
        {
          g_autofree char *pat = fsg_glob_escape (files->pdata[i]);

          if (!fsg_policy_builder_add_rule (b, FSG_RULE_DENY_WRITE, pat, "policy file", error))
            return NULL;
        }
    }
  for (guint i = 0; i < opts->records->len; i++)
    {
      const Record *r = opts->records->pdata[i];
      const char *f = r->flag;
      gboolean ok = TRUE;

      if (strcmp (f, "--policy") == 0 || strcmp (f, "-p") == 0)
        continue;
      else if (strcmp (f, "--rw") == 0)
        ok = fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, r->value, f, error);
      else if (strcmp (f, "--ro") == 0)
        ok = fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, r->value, f, error);
      else if (strcmp (f, "--deny-read") == 0)
        ok = fsg_policy_builder_add_rule (b, FSG_RULE_DENY_READ, r->value, f, error);
      else if (strcmp (f, "--deny-write") == 0)
        ok = fsg_policy_builder_add_rule (b, FSG_RULE_DENY_WRITE, r->value, f, error);
      else if (strcmp (f, "--net") == 0)
        ok = fsg_policy_builder_set (b, "allow", "true", f, error);
      else if (strcmp (f, "--no-net") == 0)
        ok = fsg_policy_builder_set (b, "allow", "false", f, error);
      else if (strcmp (f, "--hide-denied") == 0)
        ok = fsg_policy_builder_set (b, "hide-denied", "true", f, error);
      else if (strcmp (f, "--timeout") == 0)
        ok = fsg_policy_builder_set (b, "timeout", r->value, f, error);
      else if (strcmp (f, "--kill-after") == 0)
        ok = fsg_policy_builder_set (b, "kill-after", r->value, f, error);
      else if (strcmp (f, "--output-cap") == 0)
        ok = fsg_policy_builder_set (b, "output-cap", r->value, f, error);
      else
        g_assert_not_reached ();
      if (!ok)
        return NULL;
    }
  return fsg_policy_builder_finish (b, error);
}
