/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `fsgate`: subcommand dispatch. Each subcommand parses its own options
 * (sharing the POLICY OPTIONS group) and returns the exit status.
 */
#include "config.h"

#include <glib.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "common/fsg-util.h"
#include "fsgate/commands.h"
#include "fsgate/version.h"

static void
usage (FILE *out)
{
  fprintf (out,
           "Usage: fsgate COMMAND [OPTIONS]\n"
           "\n"
           "The fsgate policy view: a FUSE filesystem that shows only what a policy\n"
           "allows, enforces it on every operation and records every denial.\n"
           "\n"
           "Commands:\n"
           "  explain PATH...   print the decision (rw, ro, deny, absent) for each path\n"
           "                    and the rule that made it\n"
           "  policy            print the effective policy as a policy file\n"
           "  mount DIR         mount the policy view at DIR to inspect it\n"
           "\n"
           "Run `fsgate COMMAND --help` for the options of a command, and\n"
           "`fsgate-run --help` to run a command inside the view.\n"
           "\n"
           "Examples:\n"
           "  fsgate explain ~/.ssh/id_rsa ./src /etc/passwd\n"
           "  fsgate policy --profile read-only --rw ./build > my-policy.ini\n"
           "  fsgate mount --policy my-policy.ini /tmp/view\n"
           "\n"
           "Exit status: 0 success, 1 a path was denied or absent (explain),\n"
           "2 bad command line or policy, 125 the view could not be set up.\n");
}

int
main (int argc, char **argv)
{
  const char *cmd;

  setlocale (LC_ALL, "");
  if (argc < 2)
    {
      usage (stderr);
      return FSG_EXIT_USAGE;
    }
  cmd = argv[1];
  if (strcmp (cmd, "--help") == 0 || strcmp (cmd, "-h") == 0 || strcmp (cmd, "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (cmd, "--version") == 0 || strcmp (cmd, "version") == 0)
    {
      fsg_print_version ("fsgate");
      return 0;
    }
  if (strcmp (cmd, "explain") == 0)
    return fsg_cmd_explain (argc - 1, argv + 1);
  if (strcmp (cmd, "policy") == 0)
    return fsg_cmd_policy (argc - 1, argv + 1);
  if (strcmp (cmd, "mount") == 0)
    return fsg_cmd_mount (argc - 1, argv + 1);
  fprintf (stderr, "fsgate: unknown command '%s' (commands: explain, policy, mount; see fsgate --help)\n", cmd);
  return FSG_EXIT_USAGE;
}
