/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * fsgate-run [POLICY OPTIONS] [RUN OPTIONS] -- COMMAND [ARG...]
 *
 * The command line: parses the options, builds the policy (errors exit 2),
 * and hands over to fsg_run() or fsg_doctor().
 */
#include "config.h"

#include "common/fsg-util.h"
#include "fsgate/version.h"
#include "policy/policy-cli.h"
#include "runner/run.h"

#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static GArray *opt_pass_fds;

static gboolean
parse_pass_fd (const char *name, const char *value, gpointer data, GError **error)
{
  char *end = NULL;
  gint64 fd;

  errno = 0;
  fd = g_ascii_strtoll (value, &end, 10);
  if (value[0] == 0 || end == NULL || *end != 0 || errno != 0 || fd < 0 || fd > G_MAXINT)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--pass-fd: '%s' is not a file descriptor number", value);
      return FALSE;
    }
  if (fcntl ((int) fd, F_GETFD) < 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--pass-fd: file descriptor %d is not open", (int) fd);
      return FALSE;
    }
  if (opt_pass_fds->len >= FSG_MAX_PASS_FDS)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--pass-fd: at most %d file descriptors can be passed", FSG_MAX_PASS_FDS);
      return FALSE;
    }
  {
    int v = (int) fd;
    g_array_append_val (opt_pass_fds, v);
  }
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(FsgPolicyOptions) popts = fsg_policy_options_new ();
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *cwd = NULL;
  g_autofree char *json_path = NULL;
  g_autofree char *description = NULL;
  gboolean capture = FALSE, doctor = FALSE, verbose = FALSE, version = FALSE, quiet = FALSE;
  gboolean filter_terminal = FALSE;
  gboolean no_proc_fallback = FALSE;
  FsgRunOptions ro = { 0 };
  int status;
  GOptionEntry entries[] = {
    { "cwd", 'C', 0, G_OPTION_ARG_FILENAME, &cwd,
      "Run the command in DIR (must be in the view; default: the current directory)", "DIR" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path,
      "Write a JSON report to FILE ('-': stdout, after the command's output); its directory "
      "must not go through a symlink an earlier run could have planted", "FILE" },
    { "capture", 0, 0, G_OPTION_ARG_NONE, &capture,
      "Capture stdout and stderr into the report (they still stream live)", NULL },
    { "filter-terminal", 0, 0, G_OPTION_ARG_NONE, &filter_terminal,
      "Untrusted commands: pass to a terminal only text and an allowlist of escape "
      "sequences (colours, cursor, erase, scroll, modes without mouse reporting); drop "
      "OSC 52, DCS/APC strings and report requests (DSR, DA, XTVERSION, ...), 8-bit forms too", NULL },
    { "pass-fd", 0, 0, G_OPTION_ARG_CALLBACK, parse_pass_fd,
      "Keep file descriptor N open in the command (repeatable)", "N" },
    { "no-proc-fallback", 0, 0, G_OPTION_ARG_NONE, &no_proc_fallback,
      "Where a fresh /proc cannot be mounted (a container masks its /proc), exit 125 "
      "instead of showing the command the container's /proc (writes under it refused)", NULL },
    { "doctor", 0, 0, G_OPTION_ARG_NONE, &doctor,
      "Check whether this system can run sandboxed commands, and what to change (and what the hybrid view binds)", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Print timings, the reason of the exit, the environment variables dropped and what the hybrid view binds", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
      "No summary of denials on stderr after the run", NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version", NULL },
    { NULL }
  };

  fsg_trace_start ();
  fsg_trace ("R", "start");
  /* the character set only: messages are English, and loading every
   * category of the locale costs a dozen file opens at each start */
  setlocale (LC_CTYPE, "");
  opt_pass_fds = g_array_new (FALSE, FALSE, sizeof (int));

  context = g_option_context_new ("[--] COMMAND [ARG...]");
  g_option_context_set_summary (context,
                                "Run COMMAND inside the fsgate policy view, with no capabilities,\n"
                                "a seccomp filter, its own namespaces and (unless allowed) no network.\n"
                                "Exit status: the command's; 128+N on signal N; 124 timeout;\n"
                                "125 sandbox setup failed; 126 not executable; 127 not found; 2 usage.");
  description = g_strconcat (
      "Examples:\n"
      "  fsgate-run -- make test                  the default profile: the current\n"
      "                                           directory writable, the host read-only,\n"
      "                                           secrets denied, no network\n"
      "  fsgate-run --timeout 10m --json report.json --capture -- ./agent-step.sh\n"
      "  fsgate-run --profile read-only --rw ./build -- ninja -C build\n"
      "  fsgate-run --net --deny-read '~/work/customer-data' -- pip install -r req.txt\n"
      "  fsgate explain ./src ~/.ssh/id_rsa       what the policy decides, and why\n"
      "\n"
      "The policy options (--profile, --policy, --rw, --ro, --deny-read,\n"
      "--deny-write, --net, --timeout, ...) are listed by --help-policy.\n"
      "\n"
      "Read-only system trees that no rule can reach (/usr, the trust stores)\n"
      "are bind-mounted from the host (the hybrid view: the same decisions, at\n"
      "native speed; -v lists them). FSGATE_HYBRID=0, or `hybrid = off` in a\n"
      "policy, serves every path through the view, so that every refused write\n"
      "is listed in the report.\n"
      "\n",
      fsg_policy_options_help (), NULL);
  g_option_context_set_description (context, description);
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_add_group (context, fsg_policy_options_group (popts));
  /* Options end at the command: `fsgate-run ls -l` passes -l to ls. */
  g_option_context_set_strict_posix (context, TRUE);

  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("fsgate-run: %s\nTry 'fsgate-run --help'.\n", error->message);
      return FSG_EXIT_USAGE;
    }
  if (version)
    {
      fsg_print_version ("fsgate-run");
      return 0;
    }
  if (!fsg_policy_hybrid_env_check (&error))
    {
      g_printerr ("fsgate-run: %s\n", error->message);
      return FSG_EXIT_USAGE;
    }
  if (doctor)
    {
      int doctor_status = fsg_doctor (verbose, no_proc_fallback);
      g_autoptr(FsgPolicy) dpolicy = fsg_policy_options_build (popts, NULL);

      /* what a run with these policy options would bind and serve */
      if (dpolicy != NULL)
        {
          g_autofree char *line = fsg_hybrid_summary (dpolicy);
          g_autofree char *check = fsg_hybrid_doctor_check (dpolicy);

          g_print ("info  %s\n", line);
          if (check != NULL)
            g_print ("%s\n", check);
        }
      return doctor_status;
    }

  /* GOption leaves a "--" that follows a non-option; drop the first one. */
  {
    int first = 1;

    if (first < argc && g_str_equal (argv[first], "--"))
      first++;
    if (first >= argc)
      {
        g_printerr ("fsgate-run: no command given\n"
                    "Usage: fsgate-run [POLICY OPTIONS] [RUN OPTIONS] -- COMMAND [ARG...]\n");
        return FSG_EXIT_USAGE;
      }
    if (argv[first][0] == '\0')
      {
        g_printerr ("fsgate-run: the command name is empty\n");
        return FSG_EXIT_USAGE;
      }
    ro.argv = argv + first;
  }

  if (capture && json_path == NULL)
    {
      g_printerr ("fsgate-run: --capture keeps the output for the report: add --json FILE "
                  "(or --json - for stdout)\n");
      return FSG_EXIT_USAGE;
    }
  /* A report that cannot be written is known before anything runs: the
   * command must not run only for its status to be lost (and turned into 125). */
  if (json_path != NULL && !g_str_equal (json_path, "-"))
    {
      g_autofree char *dir = g_path_get_dirname (json_path);
      g_autofree char *base = g_path_get_basename (json_path);
      g_autofree char *shown = g_strescape (json_path, NULL);

      if (json_path[0] == '\0')
        {
          g_printerr ("fsgate-run: --json: empty file name (use - for stdout)\n");
          return FSG_EXIT_USAGE;
        }
      if (g_file_test (json_path, G_FILE_TEST_IS_DIR) || strlen (base) > NAME_MAX ||
          access (dir, W_OK | X_OK) < 0)
        {
          g_printerr ("fsgate-run: --json: cannot write the report to '%.200s%s': %s. "
                      "Fix: give a file in a writable directory\n",
                      shown, strlen (shown) > 200 ? "..." : "",
                      g_file_test (json_path, G_FILE_TEST_IS_DIR) ? "is a directory"
                      : strlen (base) > NAME_MAX ? "file name too long" : g_strerror (errno));
          return FSG_EXIT_SETUP;
        }
    }
  fsg_policy_options_set_protect_files (popts, TRUE);
  policy = fsg_policy_options_build (popts, &error);
  fsg_trace ("R", "policy built");
  if (policy == NULL)
    {
      g_printerr ("fsgate-run: %s\n", error->message);
      return FSG_EXIT_USAGE;
    }

  /* Not an error (the policy says so), but rarely what was meant: the
   * default profile makes the current directory writable, and run from "/"
   * that is the whole host. */
  {
    FsgPathState top = fsg_policy_walk (policy, "/");
    if (top.access == FSG_ACCESS_RW)
      {
        g_autofree char *why = fsg_path_state_describe (policy, &top);
        g_printerr ("fsgate-run: warning: '/' is writable in this run (%s); "
                    "run from a project directory or pass --profile read-only\n", why);
      }
  }
  /* review M7: the report's directory must not go through a symlink an
   * earlier run could have planted (`ln -s /etc o2`, then `--json o2/r.json`
   * would write /etc/r.json as root) */
  if (json_path != NULL && !g_str_equal (json_path, "-"))
    {
      g_autofree char *dir = g_path_get_dirname (json_path);
      g_autofree char *here = g_get_current_dir ();
      g_autofree char *abs = g_path_is_absolute (dir) ? g_strdup (dir)
                                                      : g_build_filename (here, dir, NULL);
      g_autofree char *link = NULL, *target = NULL;

      if (fsg_policy_find_untrusted_symlink (policy, abs, &link, &target))
        {
          g_printerr ("fsgate-run: --json: the report's directory '%s' goes through the symlink "
                      "'%s' -> '%s', which is not a system symlink (a sandboxed command could have "
                      "planted it). Fix: give the report's real directory, or remove the symlink\n",
                      dir, link, target);
          return FSG_EXIT_USAGE;
        }
    }
  ro.policy = policy;
  ro.cwd = cwd;
  ro.json_path = json_path;
  ro.capture = capture;
  ro.filter_terminal = filter_terminal;
  ro.no_proc_fallback = no_proc_fallback;
  ro.pass_fds = opt_pass_fds;
  ro.verbose = verbose ? 1 : 0;
  ro.quiet = quiet;
  if (g_getenv ("FSGATE_RUN_DEBUG") != NULL)
    ro.verbose = 2;

  /* A command of the same uid must not write our /proc/PID files
   * (oom_score_adj, clear_refs, ...: checked only against the owner),
   * which it could reach through a container's /proc (docs/security.md). */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  status = fsg_run (&ro);
  fsg_trace ("R", "done");
  g_array_unref (opt_pass_fds);
  return status;
}
