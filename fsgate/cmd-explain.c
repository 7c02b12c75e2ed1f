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

/* Parse the POLICY OPTIONS (and --help) of a subcommand. Returns the policy,
 * or NULL with *out_status set. */
static FsgPolicy *
parse_policy_args (const char *name, const char *params, const char *summary,
                   int *argc, char ***argv, int *out_status)
{
  g_autoptr(FsgPolicyOptions) opts = fsg_policy_options_new ();
  g_autoptr(GOptionContext) ctx = g_option_context_new (params);
  g_autoptr(GError) error = NULL;
  g_autofree char *prgname = g_strdup_printf ("fsgate %s", name);
  FsgPolicy *policy;

  g_set_prgname (prgname);
  g_option_context_set_summary (ctx, summary);
  g_option_context_set_description (ctx, fsg_policy_options_help ());
  g_option_context_set_main_group (ctx, fsg_policy_options_group (opts));
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
  int status = 0;

  policy = parse_policy_args ("explain", "PATH...",
                              "Print, for each PATH, the decision of the policy (rw, ro, deny or\n"
                              "absent) and the rule that made it, with where the rule came from.\n"
                              "\n"
                              "Example:\n"
                              "  $ fsgate explain ~/.ssh/id_rsa src/main.c /etc/passwd\n"
                              "  deny    /home/ann/.ssh/id_rsa    deny-read /home/ann/.ssh (profile workspace-write)\n"
                              "  rw      /home/ann/proj/src/main.c  writable /home/ann/proj (profile workspace-write)\n"
                              "  ro      /etc/passwd              readonly / (profile workspace-write)\n"
                              "\n"
                              "Exit status: 0 when every path is rw or ro, 1 when one is deny or\n"
                              "absent, 2 for a bad command line or policy.",
                              &argc, &argv, &status);
  if (policy == NULL)
    return status;
  if (argc < 2)
    {
      g_printerr ("fsgate explain: name at least one PATH (see fsgate explain --help)\n");
      return FSG_EXIT_USAGE;
    }
  for (int i = 1; i < argc; i++)
    {
      g_autofree char *path = g_canonicalize_filename (argv[i], cwd);
      FsgPathState state = fsg_policy_decide (policy, path);
      g_autofree char *why = fsg_path_state_describe (policy, &state);
      g_autofree char *git = state.access == FSG_ACCESS_RW ? fsg_policy_git_explain (policy, path)
                                                           : NULL;

      printf ("%-6s  %s  %s\n", fsg_access_to_string (state.access), path, why);
      if (git != NULL)
        printf ("        %s\n", git);
      if (state.access < FSG_ACCESS_RO)
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
                              &argc, &argv, &status);
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
