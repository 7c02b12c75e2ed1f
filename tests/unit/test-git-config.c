/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The git config checker of git protection (policy/git.c): which settings
 * make git run a program, and a parser that reads config files the way git
 * does. Where git is installed, git itself is the oracle: for every sample
 * the list of variables our parser sees must equal `git config --list`.
 */
#include "config.h"

#include <gio/gio.h>
#include <glib.h>
#include <string.h>

#include "policy/policy.h"

typedef struct
{
  const char *text;
  const char *program; /* the first program-running variable, NULL when safe,
                        * "syntax" for a file git refuses */
} Sample;

static const Sample samples[] = {
  /* what git writes: init, clone, remote, branch -u, submodule, worktree */
  { "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
    "\tlogallrefupdates = true\n", NULL },
  { "[remote \"origin\"]\n\turl = /srv/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n", NULL },
  { "[submodule \"sm\"]\n\turl = /srv/sm\n\tactive = true\n[core]\n\tworktree = ../../../sm\n", NULL },
  { "[user]\n\tname = A U Thor\n\temail = a@example.org\n[extensions]\n\tworktreeConfig = true\n", NULL },
  { "[protocol]\n\tversion = 2\n[pull]\n\trebase = true\n[gc]\n\tauto = 0\n", NULL },
  { "[core]\n\tfsmonitor = true\n\tpager\n[color]\n\tpager = false\n[pager]\n\tstatus = false\n", NULL },
  { "[credential]\n\thelper =\n", NULL },
  { "[submodule \"x\"]\n\tupdate = rebase\n\tpath = x\n", NULL },
  { "", NULL },
  { "# only a comment\n; another\n", NULL },
  /* program-running settings */
  { "[core]\n\tfsmonitor = /tmp/p\n", "core.fsmonitor" },
  /* git's isspace is space, \t, \n, \r: \f and \v stay in the value */
  { "[core]\n\tfsmonitor = true\f\n", "core.fsmonitor" },
  { "[core]\n\tfsmonitor = true\v\n", "core.fsmonitor" },
  { "[core]\n\tfsmonitor = \ftrue\n", "core.fsmonitor" },
  { "[imap]\n\ttunnel = /tmp/p\n", "imap.tunnel" },
  { "[svn]\n\tauthorsProg = /tmp/p\n", "svn.authorsprog" },
  { "[instaweb]\n\tmodulePath = /tmp/p\n", "instaweb.modulepath" },
  { "[core]\n\thooksPath = /tmp/h\n", "core.hookspath" },
  { "[core]\n\tsshCommand = ssh -o ProxyCommand=x\n", "core.sshcommand" },
  { "[core]\n\teditor = vim\n", "core.editor" },
  { "[core]\n\tpager = less\n", "core.pager" },
  { "[core]\n\taskPass = /tmp/p\n", "core.askpass" },
  { "[core]\n\tgitProxy = /tmp/p\n", "core.gitproxy" },
  { "[core]\n\talternateRefsCommand = /tmp/p\n", "core.alternaterefscommand" },
  { "[sequence]\n\teditor = /tmp/p\n", "sequence.editor" },
  { "[diff \"x\"]\n\ttextconv = /tmp/p\n", "diff.x.textconv" },
  { "[diff \"x\"]\n\tcommand = /tmp/p\n", "diff.x.command" },
  { "[diff]\n\texternal = /tmp/p\n", "diff.external" },
  { "[filter \"lfs\"]\n\tclean = /tmp/p %f\n", "filter.lfs.clean" },
  { "[filter \"lfs\"]\n\tsmudge = /tmp/p %f\n", "filter.lfs.smudge" },
  { "[filter \"lfs\"]\n\tprocess = /tmp/p\n", "filter.lfs.process" },
  { "[merge \"x\"]\n\tdriver = /tmp/p %O %A %B\n", "merge.x.driver" },
  { "[mergetool \"x\"]\n\tcmd = /tmp/p\n", "mergetool.x.cmd" },
  { "[mergetool \"x\"]\n\tpath = /tmp/p\n", "mergetool.x.path" },
  { "[alias]\n\tst = !sh -c id\n", "alias.st" },
  { "[alias]\n\tst = -c core.fsmonitor=/tmp/p status\n", "alias.st" },
  { "[credential]\n\thelper = /tmp/p\n", "credential.helper" },
  { "[credential \"https://x\"]\n\thelper = /tmp/p\n", "credential.https://x.helper" },
  { "[gpg]\n\tprogram = /tmp/p\n", "gpg.program" },
  { "[gpg \"ssh\"]\n\tprogram = /tmp/p\n", "gpg.ssh.program" },
  { "[gpg \"ssh\"]\n\tdefaultKeyCommand = /tmp/p\n", "gpg.ssh.defaultkeycommand" },
  { "[include]\n\tpath = /tmp/inc\n", "include.path" },
  { "[includeIf \"gitdir:/x/\"]\n\tpath = /tmp/inc\n", "includeif.gitdir:/x/.path" },
  { "[pager]\n\tlog = /tmp/p\n", "pager.log" },
  { "[remote \"o\"]\n\turl = /x\n\tuploadpack = /tmp/p\n", "remote.o.uploadpack" },
  { "[remote \"o\"]\n\treceivepack = /tmp/p\n", "remote.o.receivepack" },
  { "[remote \"o\"]\n\tvcs = evil\n", "remote.o.vcs" },
  { "[protocol \"ext\"]\n\tallow = always\n", "protocol.ext.allow" },
  { "[submodule \"x\"]\n\tupdate = !/tmp/p\n", "submodule.x.update" },
  { "[uploadpack]\n\tpackObjectsHook = /tmp/p\n", "uploadpack.packobjectshook" },
  { "[hook \"x\"]\n\tcommand = /tmp/p\n", "hook.x.command" },
  { "[interactive]\n\tdiffFilter = /tmp/p\n", "interactive.difffilter" },
  { "[sendemail]\n\tsmtpServer = /tmp/p\n", "sendemail.smtpserver" },
  { "[sendemail]\n\ttoCmd = /tmp/p\n", "sendemail.tocmd" },
  { "[trace2]\n\teventTarget = /tmp/t\n", "trace2.eventtarget" },
  { "[web]\n\tbrowser = x\n[browser \"x\"]\n\tcmd = /tmp/p\n", "browser.x.cmd" },
  /* the ways git's syntax can hide a key */
  { "[CORE]\n\tFsMonitor = /tmp/p\n", "core.fsmonitor" },
  { "[core] fsmonitor = /tmp/p\n", "core.fsmonitor" },
  { "[core]fsmonitor=/tmp/p", "core.fsmonitor" },
  { "[core.x]\n\teditor = v\n", "core.x.editor" },
  { "\xef\xbb\xbf[core]\n\tfsmonitor = /tmp/p\n", "core.fsmonitor" },
  { "[core]\r\n\tfsmonitor = /tmp/p\r\n", "core.fsmonitor" },
  { "[core]\n\tfsmonitor = \"/tmp/p\"\n", "core.fsmonitor" },
  { "[core]\n\tfsmonitor = tr\\\nue\n", NULL },
  { "[core]\n\tfsmonitor = /tmp/\\\np\n", "core.fsmonitor" },
  { "[core]\n\tbare = false ; fsmonitor = /tmp/p\n", NULL },
  { "[core]\n\tbare = \"x ; \\\" \" ; c\n\tfsmonitor = /tmp/p\n", "core.fsmonitor" },
  { "[core]\n\tfsmonitor = \"true\"\n", NULL },
  { "[core]\n\tfsmonitor\n", NULL },
  { "[core]\n\tfsmonitor = \n", NULL },
  { "[x \"a\\\"b\"]\n\teditor = v\n", "x.a\"b.editor" },
  { "[x \"sub\" ]\n\tk = v\n", "syntax" },
  /* a key before any section: git reads it as "fsmonitor", no setting */
  { "fsmonitor = /tmp/p\n", NULL },
  /* files git refuses to read */
  { "[core\n\tfsmonitor = /tmp/p\n", "syntax" },
  { "[core]\n\tfsmonitor = \"/tmp/p\n", "syntax" },
  { "[core]\n\tfsmonitor = \\q\n", "syntax" },
  { "[core]\n\t1x = y\n", "syntax" },
  { "{\"json\": true}\n", "syntax" },
};

static void
test_samples (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (samples); i++)
    {
      const Sample *s = &samples[i];
      g_autofree char *got = fsg_git_config_find_program (s->text, strlen (s->text));

      g_test_message ("sample %u: %s", i, got ? got : "(safe)");
      if (s->program == NULL)
        g_assert_null (got);
      else if (strcmp (s->program, "syntax") == 0)
        g_assert_true (got != NULL && g_str_has_prefix (got, "a syntax error"));
      else
        g_assert_cmpstr (got, ==, s->program);
    }
}

static void
collect_cb (const char *var, const char *value, gpointer data)
{
  GString *out = data;

  if (value == NULL)
    g_string_append_printf (out, "%s\n", var);
  else
    g_string_append_printf (out, "%s=%s\n", var, value);
}

/* git's own reading of each sample, as `git config --file - --list` prints
 * it (section and key lower case, subsection as written); no file is made. */
static void
test_git_oracle (void)
{
  g_autofree char *git = g_find_program_in_path ("git");
  g_autoptr(GSubprocessLauncher) launcher = NULL;

  if (git == NULL)
    {
      g_test_skip ("git is not installed");
      return;
    }
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_setenv (launcher, "GIT_CONFIG_NOSYSTEM", "1", TRUE);
  g_subprocess_launcher_setenv (launcher, "HOME", "/nonexistent", TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (samples); i++)
    {
      const Sample *s = &samples[i];
      g_autoptr(GString) ours = g_string_new (NULL);
      g_autofree char *shown = g_strescape (s->text, NULL);
      g_autoptr(GSubprocess) proc = NULL;
      g_autoptr(GBytes) in = g_bytes_new_static (s->text, strlen (s->text));
      g_autoptr(GBytes) out = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *theirs = NULL;
      gboolean parsed, git_reads;
      gsize len = 0;
      const char *data;

      parsed = fsg_git_config_scan (s->text, strlen (s->text), collect_cb, ours, NULL);
      proc = g_subprocess_launcher_spawn (launcher, &error, git, "config", "--file", "-", "--list", NULL);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_communicate (proc, in, NULL, &out, NULL, &error));
      g_assert_no_error (error);
      git_reads = g_subprocess_get_successful (proc);
      data = out ? g_bytes_get_data (out, &len) : NULL;
      theirs = len > 0 ? g_strndup (data, len) : g_strdup ("");
      g_test_message ("sample %u (%s): git %s, ours %s", i, shown, git_reads ? "reads it" : "refuses it",
                      parsed ? "reads it" : "refuses it");
      g_assert_cmpint (git_reads, ==, parsed);
      if (parsed)
        g_assert_cmpstr (ours->str, ==, theirs);
    }
}

static void
test_sample_names (void)
{
  g_assert_true (fsg_git_is_sample_name ("pre-commit.sample"));
  g_assert_false (fsg_git_is_sample_name ("pre-commit"));
  g_assert_false (fsg_git_is_sample_name ("pre-commit.sample.x"));
  g_assert_false (fsg_git_is_sample_name (".sample-pre-commit"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/git/config/program-keys", test_samples);
  g_test_add_func ("/git/config/git-oracle", test_git_oracle);
  g_test_add_func ("/git/hooks/sample-names", test_sample_names);
  return g_test_run ();
}
