/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `fsgate explain` and `fsgate policy`: the policy, without mounting.
 */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/fsg-util.h"
#include "fsgate/commands.h"
#include "policy/policy-cli.h"

/* Parse the POLICY OPTIONS (and --help) of a subcommand, plus @extra.
 * @runner_options: list --timeout, --kill-after, --output-cap in --help
 * (`fsgate policy` prints them; explain accepts them silently).
 * Returns the policy, or NULL with *out_status set. */
static FsgPolicy *
parse_policy_args (const char *name, const char *params, const char *summary,
                   const GOptionEntry *extra, gboolean runner_options,
                   int *argc, char ***argv, int *out_status)
{
  g_autoptr(FsgPolicyOptions) opts = fsg_policy_options_new ();
  g_autoptr(GOptionContext) ctx = g_option_context_new (params);
  g_autoptr(GError) error = NULL;
  g_autofree char *prgname = g_strdup_printf ("fsgate %s", name);
  GOptionGroup *group;
  FsgPolicy *policy;

  g_set_prgname (prgname);
  g_option_context_set_summary (ctx, summary);
  g_option_context_set_description (ctx, fsg_policy_options_help ());
  group = fsg_policy_options_group_full (opts, runner_options ? FSG_POLICY_OPTIONS_ALL
                                                              : FSG_POLICY_OPTIONS_VIEW);
  if (extra != NULL)
    g_option_group_add_entries (group, extra);
  g_option_context_set_main_group (ctx, group);
  if (!g_option_context_parse (ctx, argc, argv, &error))
    {
      g_printerr ("fsgate %s: %s (see fsgate %s --help)\n", name, error->message, name);
      *out_status = FSG_EXIT_USAGE;
      return NULL;
    }
  policy = fsg_policy_options_build (opts, &error);
  if (policy == NULL)
    {
      g_printerr ("fsgate %s: %s\n", name, error->message);
      *out_status = FSG_EXIT_USAGE;
      return NULL;
    }
  return policy;
}

int
fsg_cmd_explain (int argc, char **argv)
{
  g_autoptr(FsgPolicy) policy = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  g_autoptr(GPtrArray) plan = NULL;
  int status = 0;
  gboolean mount_view = FALSE;
  const GOptionEntry extra[] = {
    { "mount", 0, 0, G_OPTION_ARG_NONE, &mount_view,
      "Explain the view of `fsgate mount` (the policy alone) instead of fsgate-run's", NULL },
    G_OPTION_ENTRY_NULL
  };

  policy = parse_policy_args ("explain", "PATH...",
                              "Print, for each PATH, what a command run by fsgate-run gets (rw, ro,\n"
                              "deny or absent) and the rule that made it, with where the rule came\n"
                              "from. fsgate-run adds its own /proc, a minimal /dev and a private\n"
                              "/tmp (tmp (private), dev, proc below); --mount explains the view of\n"
                              "`fsgate mount` instead, which is the policy alone.\n"
                              "Paths that fsgate-run's hybrid view shows through a read-only bind\n"
                              "mount of the host directory (the same decision, no daemon) end in\n"
                              "[bound: DIR]; FSGATE_HYBRID=0 or `hybrid = off` turns it off.\n"
                              "\n"
                              "Example:\n"
                              "  $ fsgate explain ~/.ssh/id_rsa src/main.c /etc/passwd\n"
                              "  deny    /home/ann/.ssh/id_rsa    deny-read /home/ann/.ssh (profile workspace-write)\n"
                              "  rw      /home/ann/proj/src/main.c  writable /home/ann/proj (profile workspace-write)\n"
                              "  ro      /etc/passwd              readonly / (profile workspace-write)\n"
                              "\n"
                              "Exit status: 0 when every path is rw or ro, 1 when one is deny or\n"
                              "absent, 2 for a bad command line or policy.",
                              extra, FALSE, &argc, &argv, &status);
  if (policy == NULL)
    return status;
  if (argc < 2)
    {
      g_printerr ("fsgate explain: name at least one PATH (see fsgate explain --help)\n");
      return FSG_EXIT_USAGE;
    }
  /* fsgate-run binds the uniform read-only trees of its hybrid view
   * directly: mark the paths it would not serve through the daemon */
  {
    g_autoptr(GError) error = NULL;

    if (!fsg_policy_hybrid_env_check (&error))
      {
        g_printerr ("fsgate explain: %s\n", error->message);
        return FSG_EXIT_USAGE;
      }
  }
  if (!mount_view && fsg_policy_hybrid_enabled (policy, NULL))
    {
      g_autofree char *mountinfo = NULL;

      if (g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, NULL))
        plan = fsg_policy_hybrid_plan (policy, mountinfo);
    }
  for (int i = 1; i < argc; i++)
    {
      g_autofree char *path = g_canonicalize_filename (argv[i], cwd);
      FsgPathState state = fsg_policy_decide (policy, path);
      g_autofree char *why = NULL;
      FsgAccess access = state.access;
      const FsgHybridTree *bound = NULL;

      if (mount_view || !fsg_policy_run_place (policy, path, &access, &why))
        {
          why = fsg_path_state_describe (policy, &state);
          bound = fsg_hybrid_plan_find (plan, path);
        }
      if (bound != NULL)
        printf ("%-6s  %s  %s [bound: %s]\n", fsg_access_to_string (access), path, why, bound->path);
      else
        printf ("%-6s  %s  %s\n", fsg_access_to_string (access), path, why);
      if (access == FSG_ACCESS_RW)
        {
          g_autofree char *git = fsg_policy_git_explain (policy, path);

          if (git != NULL)
            printf ("        %s\n", git);
        }
      if (access < FSG_ACCESS_RO)
        status = 1;
    }
  return status;
}

int
fsg_cmd_policy (int argc, char **argv)
{
  g_autoptr(FsgPolicy) policy = NULL;
  g_autofree char *text = NULL;
  int status = 0;

  policy = parse_policy_args ("policy", NULL,
                              "Print the effective policy (profile, files and flags applied) as a\n"
                              "policy file that parses back to the same policy.\n"
                              "\n"
                              "Example:\n"
                              "  $ fsgate policy --rw ~/.cache/pip > agent.ini\n"
                              "  $ fsgate explain --profile none --policy agent.ini ~/.cache/pip/x",
                              NULL, TRUE, &argc, &argv, &status);
  if (policy == NULL)
    return status;
  if (argc > 1)
    {
      g_printerr ("fsgate policy: unexpected argument '%s' (see fsgate policy --help)\n", argv[1]);
      return FSG_EXIT_USAGE;
    }
  text = fsg_policy_to_keyfile (policy);
  fputs (text, stdout);
  return fflush (stdout) == 0 ? 0 : 1;
}
