/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Explaining decisions: fsg_path_state_describe() names the kind of the
 * deciding rule, its pattern and its origin ("deny-read /home/u/.ssh
 * (profile workspace-write)", "readonly /data (policy.ini:3)", "writable /w
 * (--rw)", "ancestor of ...", "symlink to ...", "no rule: not under any
 * root"), and the small string helpers. Then the built `fsgate` binary, when
 * present ($FSGATE_BUILDDIR/fsgate/fsgate): the line format and exit codes of
 * `fsgate explain` (0 all rw/ro, 1 some deny or absent, 2 a bad policy with
 * FILE:LINE on stderr) and `fsgate policy`, whose output parses back to the
 * same output. The binary runs with a fake HOME and cwd in a temporary
 * directory, removed at exit.
 */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/policy-private.h"
#include "tests/lib/testlib.h"

static char *tmp_root; /* canonical */

static char *
subst (const char *text)
{
  g_autoptr(GString) s = g_string_new (text);

  g_string_replace (s, "@T", tmp_root, 0);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static void
setup_tree (void)
{
  fsg_test_mkdir (tmp_root, "cwd/src");
  fsg_test_mkdir (tmp_root, "cwd/.git/hooks");
  fsg_test_mkdir (tmp_root, "home/.ssh");
  fsg_test_mkdir (tmp_root, "data");
  fsg_test_mkdir (tmp_root, "w/inner");
  fsg_test_mkdir (tmp_root, "real");
  fsg_test_write_file (tmp_root, "bad.ini", "# bad\n[network]\nallow = maybe\n");
  {
    g_autofree char *link = subst ("@T/link");
    if (!g_file_test (link, G_FILE_TEST_IS_SYMLINK))
      g_assert_no_errno (symlink ("real", link));
  }
}

/* ---- fsg_path_state_describe ------------------------------------------- */

static void
expect_describe (const FsgPolicy *policy, const char *path_in, const char *expected_in)
{
  g_autofree char *path = subst (path_in);
  g_autofree char *expected = subst (expected_in);
  FsgPathState whole = fsg_policy_decide (policy, path);
  g_autofree char *why = fsg_path_state_describe (policy, &whole);
  g_auto (GStrv) comps = fsg_path_split (path);
  FsgPathState inc = fsg_policy_root_state (policy);
  g_autofree char *why_inc = NULL;

  for (guint i = 0; comps[i]; i++)
    inc = fsg_policy_child_state (policy, &inc, comps[i]);
  why_inc = fsg_path_state_describe (policy, &inc);
  g_test_message ("%s: %s %s", path, fsg_access_to_string (whole.access), why);
  g_assert_cmpstr (why, ==, expected);
  g_assert_cmpstr (why_inc, ==, expected);
}

static FsgPolicy *
build (const char *profile, const char *file_text, const char *const *cli)
{
  g_autofree char *cwd = subst ("@T/cwd");
  g_autofree char *home = subst ("@T/home");
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (cwd, home, NULL);
  g_autoptr(GError) error = NULL;
  FsgPolicy *policy;

  if (profile)
    g_assert_true (fsg_policy_builder_set_profile (b, profile, &error));
  if (file_text)
    {
      g_autofree char *text = subst (file_text);
      g_assert_true (fsg_policy_builder_add_data (b, "policy.ini", text, -1, &error));
    }
  for (guint i = 0; cli && cli[i]; i += 2)
    {
      g_autofree char *value = subst (cli[i + 1]);
      FsgRuleKind kind = strcmp (cli[i], "--rw") == 0          ? FSG_RULE_WRITABLE
                         : strcmp (cli[i], "--ro") == 0        ? FSG_RULE_READONLY
                         : strcmp (cli[i], "--deny-read") == 0 ? FSG_RULE_DENY_READ
                                                               : FSG_RULE_DENY_WRITE;
      g_assert_true (fsg_policy_builder_add_rule (b, kind, value, cli[i], &error));
    }
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  g_assert_nonnull (policy);
  return policy;
}

/* The scope of the secret-names rules: "/" (written as the empty prefix of
 * "/ ** /NAME"), whatever covers the test tree. */
static char *
secret_scope (const char *path_in)
{
  (void) path_in;
  return g_strdup ("");
}

static void
test_describe_profile (void)
{
  g_autoptr(FsgPolicy) policy = NULL;

  setup_tree ();
  policy = build (NULL, NULL, NULL);
  if (policy == NULL)
    return;
  expect_describe (policy, "@T/home/.ssh", "deny-read @T/home/.ssh (profile workspace-write)");
  expect_describe (policy, "@T/home/.ssh/id_rsa", "deny-read @T/home/.ssh (profile workspace-write)");
  {
    /* secret-names rules apply from "/" but for the public system trees */
    g_autofree char *scope = secret_scope ("@T/cwd");
    g_autofree char *pem = g_strdup_printf ("deny-read %s/**/*.pem (profile workspace-write)", scope);
    g_autofree char *env = g_strdup_printf ("deny-read %s/**/.env (profile workspace-write)", scope);

    expect_describe (policy, "@T/cwd/tls/server.pem", pem);
    expect_describe (policy, "@T/cwd/.env", env);
    expect_describe (policy, "/etc/ssl/certs/ca-certificates.crt", "readonly / (profile workspace-write)");
    expect_describe (policy, "/usr/share/ca-certificates/mozilla/ISRG_Root_X1.pem",
                     "readonly / (profile workspace-write)");
    expect_describe (policy, "/home/ann/.env", env);
    expect_describe (policy, "/etc/kubernetes/pki/ca.key",
                     "deny-read /**/*.key (profile workspace-write)");
  }
  expect_describe (policy, "@T/cwd/src/main.c", "writable @T/cwd (profile workspace-write)");
  expect_describe (policy, "@T/cwd", "writable @T/cwd (profile workspace-write)");
  expect_describe (policy, "/etc/passwd", "readonly / (profile workspace-write)");
  expect_describe (policy, "/", "readonly / (profile workspace-write)");
  expect_describe (policy, "/etc/shadow", "deny-read /etc/shadow (profile workspace-write)");
  expect_describe (policy, "@T/cwd/.git/hooks/pre-push",
                   "writable @T/cwd (profile workspace-write)");
}

static void
test_describe_origins (void)
{
  const char *const cli[] = { "--rw", "@T/w", "--deny-read", "*.key", "--deny-write", "@T/w/inner",
                              NULL };
  g_autoptr(FsgPolicy) policy = NULL;

  setup_tree ();
  policy = build ("none", "# data\n[filesystem]\n\nreadonly = @T/data\ndeny-read = @T/data/private\n", cli);
  if (policy == NULL)
    return;
  expect_describe (policy, "@T/data/x", "readonly @T/data (policy.ini:4)");
  expect_describe (policy, "@T/data/private/y", "deny-read @T/data/private (policy.ini:5)");
  expect_describe (policy, "@T/w/a", "writable @T/w (--rw)");
  expect_describe (policy, "@T/w/a.key", "deny-read *.key (--deny-read)");
  expect_describe (policy, "@T/w/inner/z", "deny-write @T/w/inner (--deny-write)");
  /* ancestors name the first root below them */
  expect_describe (policy, "@T", "ancestor of readonly @T/data (policy.ini:4)");
  expect_describe (policy, "/", "ancestor of readonly @T/data (policy.ini:4)");
  expect_describe (policy, "@T/elsewhere", "no rule: not under any root");
  expect_describe (policy, "/etc", "no rule: not under any root");
}


/* Run @data (a GTestFunc) with tmp_root in a trusted, root-owned tree: a
 * symlink under /tmp is never trusted to choose a root (policy/roots.c). */
static void
run_in_trusted_tree (gconstpointer data)
{
  char *saved = tmp_root;
  char *dir = fsg_test_trusted_tmpdir_new ("explain");

  if (dir == NULL)
    return;
  tmp_root = dir;
  ((GTestFunc) data) ();
  tmp_root = saved;
  fsg_test_tmpdir_free (dir);
}

static void
test_describe_alias (void)
{
  const char *const cli[] = { "--rw", "@T/link", NULL };
  g_autoptr(FsgPolicy) policy = NULL;

  setup_tree ();
  policy = build ("none", NULL, cli);
  if (policy == NULL)
    return;
  expect_describe (policy, "@T/link", "symlink to real for writable @T/link (--rw)");
  expect_describe (policy, "@T/real/f", "writable @T/link (--rw)");
  expect_describe (policy, "@T/link/f", "no rule: not under any root");
}

/* An ancestor of an alias symlink leads to the symlink, not to the
 * canonical root: it must not claim to be an ancestor of a path it does
 * not contain. */
static void
test_describe_alias_ancestor (void)
{
  const char *const cli[] = { "--rw", "@T/ax/link2", NULL };
  g_autoptr(FsgPolicy) policy = NULL;

  setup_tree ();
  fsg_test_mkdir (tmp_root, "ax");
  {
    g_autofree char *link = subst ("@T/ax/link2");
    if (!g_file_test (link, G_FILE_TEST_IS_SYMLINK))
      g_assert_no_errno (symlink ("../real", link));
  }
  policy = build ("none", NULL, cli);
  if (policy == NULL)
    return;
  expect_describe (policy, "@T/ax/link2", "symlink to ../real for writable @T/ax/link2 (--rw)");
  expect_describe (policy, "@T/ax", "ancestor of writable @T/ax/link2 (resolves to @T/real) (--rw)");
}

static void
test_access_strings (void)
{
  g_assert_cmpstr (fsg_access_to_string (FSG_ACCESS_RW), ==, "rw");
  g_assert_cmpstr (fsg_access_to_string (FSG_ACCESS_RO), ==, "ro");
  g_assert_cmpstr (fsg_access_to_string (FSG_ACCESS_DENY), ==, "deny");
  g_assert_cmpstr (fsg_access_to_string (FSG_ACCESS_ABSENT), ==, "absent");
  g_assert_cmpstr (fsg_access_to_string ((FsgAccess) 99), ==, "absent");
  g_assert_cmpstr (fsg_rule_kind_to_key (FSG_RULE_WRITABLE), ==, "writable");
  g_assert_cmpstr (fsg_rule_kind_to_key (FSG_RULE_READONLY), ==, "readonly");
  g_assert_cmpstr (fsg_rule_kind_to_key (FSG_RULE_DENY_READ), ==, "deny-read");
  g_assert_cmpstr (fsg_rule_kind_to_key (FSG_RULE_DENY_WRITE), ==, "deny-write");
  /* privilege order */
  g_assert_cmpint (FSG_ACCESS_ABSENT, <, FSG_ACCESS_DENY);
  g_assert_cmpint (FSG_ACCESS_DENY, <, FSG_ACCESS_RO);
  g_assert_cmpint (FSG_ACCESS_RO, <, FSG_ACCESS_RW);
}

/* ---- The fsgate binary ------------------------------------------------- */

/* The path of the built binary, or NULL after skipping the test. */
static char *
find_fsgate (void)
{
  const char *builddir = g_getenv ("FSGATE_BUILDDIR");
  g_autofree char *path = NULL;

  if (builddir == NULL)
    {
      fsg_test_skip_or_fail ("FSGATE_BUILDDIR is not set (run through meson test)");
      return NULL;
    }
  path = g_build_filename (builddir, "fsgate", "fsgate", NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_autofree char *why = g_strdup_printf ("the fsgate binary is not built (%s)", path);
      fsg_test_skip_or_fail (why);
      return NULL;
    }
  return g_steal_pointer (&path);
}

typedef struct
{
  int status;
  char *out;
  char *err;
} RunResult;

static void
run_result_clear (RunResult *r)
{
  g_clear_pointer (&r->out, g_free);
  g_clear_pointer (&r->err, g_free);
}

/* Run fsgate with @args ("@T" substituted) in @T/cwd, HOME=@T/home and no
 * XDG_RUNTIME_DIR. */
static void
run_fsgate (const char *exe, const char *const *args, RunResult *r)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) envp = g_get_environ ();
  g_autofree char *cwd = subst ("@T/cwd");
  g_autofree char *home = subst ("@T/home");
  g_autoptr(GError) error = NULL;
  int wait_status = 0;

  g_ptr_array_add (argv, g_strdup (exe));
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, subst (args[i]));
  g_ptr_array_add (argv, NULL);
  envp = g_environ_setenv (envp, "HOME", home, TRUE);
  envp = g_environ_unsetenv (envp, "XDG_RUNTIME_DIR");
  envp = g_environ_unsetenv (envp, "PWD");
  g_spawn_sync (cwd, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &r->out, &r->err,
                &wait_status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (wait_status));
  r->status = WEXITSTATUS (wait_status);
  g_test_message ("fsgate exit %d\nstdout:\n%s\nstderr:\n%s", r->status, r->out, r->err);
}

static void
test_cli_explain (void)
{
  g_autofree char *exe = find_fsgate ();

  if (exe == NULL)
    return;
  setup_tree ();
  /* all rw/ro: 0, one line per path: decision, path, rule and origin */
  {
    const char *const args[] = { "explain", "--profile", "none", "--ro", "@T/data", "--rw", "src",
                                 "@T/data/f", "src/main.c", "@T/data", NULL };
    RunResult r = { 0 };
    /* explain shows the pattern after expansion: relative flags resolved */
    g_autofree char *expected = subst ("ro      @T/data/f  readonly @T/data (--ro)\n"
                                       "rw      @T/cwd/src/main.c  writable @T/cwd/src (--rw)\n"
                                       "ro      @T/data  readonly @T/data (--ro)\n");

    run_fsgate (exe, args, &r);
    g_assert_cmpint (r.status, ==, 0);
    g_assert_cmpstr (r.out, ==, expected);
    g_assert_cmpstr (r.err, ==, "");
    run_result_clear (&r);
  }
  /* one deny or absent: 1 */
  {
    const char *const args[] = { "explain", "--profile", "none", "--ro", "@T/data", "--deny-read",
                                 "*.pem", "@T/data/x.pem", "/etc", "@T/data/ok", NULL };
    RunResult r = { 0 };
    g_autofree char *expected = subst ("deny    @T/data/x.pem  deny-read *.pem (--deny-read)\n"
                                       "absent  /etc  no rule: not under any root\n"
                                       "ro      @T/data/ok  readonly @T/data (--ro)\n");

    run_fsgate (exe, args, &r);
    g_assert_cmpint (r.status, ==, 1);
    g_assert_cmpstr (r.out, ==, expected);
    run_result_clear (&r);
  }
  /* the default profile, with the fake HOME; --mount: the policy alone
   * (under fsgate-run a HOME below /tmp would be hidden by the private /tmp) */
  {
    const char *const args[] = { "explain", "--mount", "@T/home/.ssh/id_rsa", "README", NULL };
    RunResult r = { 0 };
    g_autofree char *expected = subst ("deny    @T/home/.ssh/id_rsa  deny-read @T/home/.ssh (profile workspace-write)\n"
                                       "rw      @T/cwd/README  writable @T/cwd (profile workspace-write)\n");

    run_fsgate (exe, args, &r);
    g_assert_cmpint (r.status, ==, 1);
    g_assert_cmpstr (r.out, ==, expected);
    run_result_clear (&r);
  }
  /* a bad policy: 2, FILE:LINE on stderr, nothing on stdout */
  {
    const char *const args[] = { "explain", "--policy", "@T/bad.ini", "@T/data", NULL };
    RunResult r = { 0 };
    g_autofree char *where = subst ("@T/bad.ini:3: key 'allow' in [network]: 'maybe' is not a boolean");

    run_fsgate (exe, args, &r);
    g_assert_cmpint (r.status, ==, 2);
    g_assert_cmpstr (r.out, ==, "");
    g_assert_nonnull (strstr (r.err, where));
    run_result_clear (&r);
  }
  /* a missing root and a bad flag value: 2 */
  {
    const char *const args1[] = { "explain", "--rw", "@T/nope", "@T/data", NULL };
    const char *const args2[] = { "explain", "--timeout", "soon", "@T/data", NULL };
    const char *const args3[] = { "explain", "--profile", "none", NULL };
    RunResult r = { 0 };

    run_fsgate (exe, args1, &r);
    g_assert_cmpint (r.status, ==, 2);
    g_assert_nonnull (strstr (r.err, "--rw: writable root"));
    run_result_clear (&r);
    run_fsgate (exe, args2, &r);
    g_assert_cmpint (r.status, ==, 2);
    g_assert_nonnull (strstr (r.err, "--timeout: 'soon' is not a duration"));
    run_result_clear (&r);
    /* no PATH */
    run_fsgate (exe, args3, &r);
    g_assert_cmpint (r.status, ==, 2);
    run_result_clear (&r);
  }
}

static void
policy_round_trip (const char *exe, const char *const *first_args)
{
  RunResult r1 = { 0 }, r2 = { 0 }, r3 = { 0 };
  g_autofree char *out_path = subst ("@T/printed.ini");
  g_autoptr(GError) error = NULL;
  const char *const again[] = { "policy", "--profile", "none", "--policy", "@T/printed.ini", NULL };

  run_fsgate (exe, first_args, &r1);
  g_assert_cmpint (r1.status, ==, 0);
  g_file_set_contents (out_path, r1.out, -1, &error);
  g_assert_no_error (error);
  run_fsgate (exe, again, &r2);
  g_assert_cmpint (r2.status, ==, 0);
  g_file_set_contents (out_path, r2.out, -1, &error);
  run_fsgate (exe, again, &r3);
  /* printing is a fixed point after one round */
  g_assert_cmpstr (r3.out, ==, r2.out);
  /* ... and already after the first: the output parses back to itself */
  g_assert_cmpstr (r2.out, ==, r1.out);
  run_result_clear (&r1);
  run_result_clear (&r2);
  run_result_clear (&r3);
}

static void
test_cli_policy_none (void)
{
  g_autofree char *exe = find_fsgate ();
  const char *const args[] = { "policy", "--profile", "none", "--ro", "@T/data", "--rw", "src",
                               "--deny-read", "*.key", "--deny-write", "@T/data/x", "--net",
                               "--timeout", "90s", "--output-cap", "64KiB", NULL };

  if (exe == NULL)
    return;
  setup_tree ();
  policy_round_trip (exe, args);
}

static void
test_cli_policy_profile (void)
{
  g_autofree char *exe = find_fsgate ();
  const char *const args[] = { "policy", NULL };

  if (exe == NULL)
    return;
  setup_tree ();
  policy_round_trip (exe, args);
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  g_test_set_nonfatal_assertions ();

  tmp_root = (char *) fsg_test_scratch_dir ("explain");

  g_test_add_func ("/policy/explain/describe/profile", test_describe_profile);
  g_test_add_func ("/policy/explain/describe/origins", test_describe_origins);
  g_test_add_data_func ("/policy/explain/describe/alias", test_describe_alias, run_in_trusted_tree);
  g_test_add_data_func ("/policy/explain/describe/alias-ancestor", test_describe_alias_ancestor,
                        run_in_trusted_tree);
  g_test_add_func ("/policy/explain/access-strings", test_access_strings);
  g_test_add_func ("/policy/explain/cli/explain", test_cli_explain);
  g_test_add_func ("/policy/explain/cli/policy-none", test_cli_policy_none);
  g_test_add_func ("/policy/explain/cli/policy-profile", test_cli_policy_profile);

  ret = g_test_run ();
  fsg_test_scratch_cleanup ();
  return ret;
}
