/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The sandboxed command's environment, fsg_policy_build_environ(): inherit
 * all (the default), core or none; LC_* among the core names; the default
 * excludes (any name containing KEY, SECRET, TOKEN, PASSWORD, PASSWD,
 * PASSPHRASE or CREDENTIAL, and SSHPASS, MYSQL_PWD,
 * case-insensitive), and the list of what they dropped; `exclude` adding
 * to them; `include-only`; `set`, which always wins, even over the
 * excludes; and a stable order (the caller's order, then new `set` names).
 * Policies come from policy text with the `none` profile, so no file system
 * is involved.
 */
#include "config.h"

#include <string.h>

#include "policy/policy-private.h"
#include "tests/lib/testlib.h"

static const char *const base_env[] = {
  "HOME=/home/ann",
  "PATH=/usr/bin:/bin",
  "EDITOR=vi",
  "LC_ALL=C.UTF-8",
  "LANG=en_US.UTF-8",
  "AWS_REGION=eu-west-1",
  "AWS_SECRET_ACCESS_KEY=abc",
  "GITHUB_TOKEN=ghp_x",
  "github_token=lower",
  "my_api_key=k",
  "MONKEY=banana",
  "Secret_Sauce=ketchup",
  "TERM=xterm",
  "lc_all=lower-is-not-core",
  "LC_TIME=de_DE",
  "TZ=UTC",
  "USER=ann",
  "SSH_AUTH_SOCK=/run/ssh",
  "NOEQUALS",
  "=novalue",
  "EMPTY=",
  NULL,
};

static FsgPolicy *
build_env (const char *environment_group)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new ("/nonexistent-cwd", "/nonexistent-home", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = g_strdup_printf ("[policy]\nprofile = none\n[environment]\n%s",
                                           environment_group ? environment_group : "");
  FsgPolicy *policy;

  g_assert_true (fsg_policy_builder_add_data (b, "env.ini", text, -1, &error));
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  g_assert_nonnull (policy);
  return policy;
}

/* The environment as one string, "A=1 B=2", for exact comparison. */
static char *
env_for (const char *environment_group, const char *const *envp)
{
  g_autoptr(FsgPolicy) policy = build_env (environment_group);
  g_auto (GStrv) env = NULL;

  if (policy == NULL)
    return g_strdup ("(no policy)");
  env = fsg_policy_build_environ (policy, envp);
  g_assert_nonnull (env);
  return g_strjoinv (" ", env);
}

static void
test_inherit_core (void)
{
  g_autofree char *got = env_for ("inherit = core\n", base_env);

  g_assert_cmpstr (got, ==,
                   "HOME=/home/ann PATH=/usr/bin:/bin LC_ALL=C.UTF-8 LANG=en_US.UTF-8 TERM=xterm "
                   "LC_TIME=de_DE TZ=UTC USER=ann");
}

static void
test_inherit_core_names (void)
{
  const char *const envp[] = { "HOME=h", "PATH=p", "USER=u", "LOGNAME=l", "SHELL=s", "TERM=t",
                               "LANG=la", "LC_CTYPE=c", "LC_=empty-suffix", "TMPDIR=/tmp", "TZ=z",
                               "DISPLAY=:0", "PWD=/x", "LCX=no", NULL };
  g_autofree char *got = env_for ("inherit = core\n", envp);

  g_assert_cmpstr (got, ==,
                   "HOME=h PATH=p USER=u LOGNAME=l SHELL=s TERM=t LANG=la LC_CTYPE=c LC_=empty-suffix "
                   "TMPDIR=/tmp TZ=z");
}

static void
test_inherit_all (void)
{
  g_autofree char *got = env_for ("inherit = all\n", base_env);

  /* default excludes: KEY, SECRET, TOKEN anywhere in the name, any case */
  g_assert_cmpstr (got, ==,
                   "HOME=/home/ann PATH=/usr/bin:/bin EDITOR=vi LC_ALL=C.UTF-8 LANG=en_US.UTF-8 "
                   "AWS_REGION=eu-west-1 TERM=xterm lc_all=lower-is-not-core LC_TIME=de_DE TZ=UTC "
                   "USER=ann SSH_AUTH_SOCK=/run/ssh EMPTY=");
}

static void
test_inherit_none (void)
{
  g_autofree char *got = env_for ("inherit = none\n", base_env);
  g_autofree char *with_set = env_for ("inherit = none\nset = PATH=/bin;X=1\n", base_env);

  g_assert_cmpstr (got, ==, "");
  g_assert_cmpstr (with_set, ==, "PATH=/bin X=1");
}

static void
test_exclude_adds (void)
{
  g_autofree char *got = env_for ("inherit = all\nexclude = AWS_*;ssh_*;EDITOR\n", base_env);

  /* the defaults still apply */
  g_assert_cmpstr (got, ==,
                   "HOME=/home/ann PATH=/usr/bin:/bin LC_ALL=C.UTF-8 LANG=en_US.UTF-8 TERM=xterm "
                   "lc_all=lower-is-not-core LC_TIME=de_DE TZ=UTC USER=ann EMPTY=");
}

static void
test_exclude_core (void)
{
  g_autofree char *got = env_for ("inherit = core\nexclude = LC_*;TZ\n", base_env);

  g_assert_cmpstr (got, ==, "HOME=/home/ann PATH=/usr/bin:/bin LANG=en_US.UTF-8 TERM=xterm USER=ann");
}

static void
test_include_only (void)
{
  g_autofree char *all = env_for ("inherit = all\ninclude-only = PATH;LC_*;*_REGION;*TOKEN\n", base_env);
  g_autofree char *core = env_for ("inherit = core\ninclude-only = PATH;EDITOR\n", base_env);

  /* include-only narrows, it never brings back an excluded name */
  g_assert_cmpstr (all, ==,
                   "PATH=/usr/bin:/bin LC_ALL=C.UTF-8 AWS_REGION=eu-west-1 lc_all=lower-is-not-core "
                   "LC_TIME=de_DE");
  /* ... nor a name outside the core set */
  g_assert_cmpstr (core, ==, "PATH=/usr/bin:/bin");
}

static void
test_set_wins (void)
{
  g_autofree char *got = env_for ("inherit = all\n"
                                  "exclude = EDITOR\n"
                                  "include-only = PATH;HOME\n"
                                  "set = GITHUB_TOKEN=from-policy;PATH=/sandbox/bin;EDITOR=nano;"
                                  "NEW=a=b;NEW=last;EMPTY2=\n",
                                  base_env);

  /* PATH keeps its place; new names follow in the order set; the last value
   * for a name wins */
  g_assert_cmpstr (got, ==,
                   "HOME=/home/ann PATH=/sandbox/bin GITHUB_TOKEN=from-policy EDITOR=nano NEW=last "
                   "EMPTY2=");
}

static void
test_order_and_duplicates (void)
{
  const char *const envp[] = { "TZ=1", "PATH=a", "HOME=h", "PATH=b", "TZ=2", NULL };
  g_autofree char *got = env_for ("inherit = core\n", envp);
  g_autofree char *empty = env_for (NULL, NULL);
  const char *const none[] = { NULL };
  g_autofree char *empty2 = env_for ("inherit = all\n", none);

  /* first position, last value */
  g_assert_cmpstr (got, ==, "TZ=2 PATH=b HOME=h");
  g_assert_cmpstr (empty, ==, "");
  g_assert_cmpstr (empty2, ==, "");
}

static void
test_layers (void)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new ("/nonexistent-cwd", "/nonexistent-home", NULL);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_auto (GStrv) env = NULL;
  g_autofree char *got = NULL;
  const char *const envp[] = { "PATH=/bin", "EDITOR=vi", "PAGER=less", NULL };

  g_assert_true (fsg_policy_builder_add_data (b, "a.ini",
                                              "[policy]\nprofile = none\n[environment]\n"
                                              "inherit = all\nset = A=1\n",
                                              -1, &error));
  g_assert_true (fsg_policy_builder_add_data (b, "b.ini",
                                              "[environment]\nexclude = PAGER\nset = A=2;B=3\n",
                                              -1, &error));
  g_assert_true (fsg_policy_builder_set (b, "set", "B=cli", "--env", &error));
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  env = fsg_policy_build_environ (policy, envp);
  got = g_strjoinv (" ", env);
  g_assert_cmpstr (got, ==, "PATH=/bin EDITOR=vi A=2 B=cli");
}

/* The workspace-write profile inherits everything but names that look like
 * secrets (issue 12: CI, VIRTUAL_ENV, CC, SSL_CERT_FILE... must pass). */
static void
test_profile_environment (void)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new ("/", "/nonexistent-home", NULL);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_auto (GStrv) env = NULL;
  g_autofree char *got = NULL;

  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  {
    const char *const envp[] = { "CI=true", "GITHUB_ACTIONS=true", "VIRTUAL_ENV=/v", "CC=gcc",
                                 "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
                                 "PYTHONDONTWRITEBYTECODE=1", "DB_PASSWORD=pw", "Pg_Password=x",
                                 "GOOGLE_APPLICATION_CREDENTIALS=/k.json", "aws_credential_file=f",
                                 "NPM_TOKEN=t", "API_KEY=k", "CLIENT_SECRET=s", "SSHPASS=p",
                                 "MYSQL_PWD=p", "ldap_passwd=p", "BORG_PASSPHRASE=p",
                                 "PWD=/w", "OLDPWD=/o", "PGPASSFILE=/p", "SSHPASS_X=kept", NULL };
    g_autoptr(GPtrArray) dropped = g_ptr_array_new_with_free_func (g_free);
    g_auto (GStrv) env2 = fsg_policy_build_environ_full (policy, envp, dropped);
    g_autofree char *got2 = g_strjoinv (" ", env2);
    g_autofree char *names = NULL;

    g_ptr_array_add (dropped, NULL);
    names = g_strjoinv (" ", (char **) dropped->pdata);
    g_assert_cmpstr (got2, ==,
                     "CI=true GITHUB_ACTIONS=true VIRTUAL_ENV=/v CC=gcc "
                     "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt PYTHONDONTWRITEBYTECODE=1 "
                     "PWD=/w OLDPWD=/o PGPASSFILE=/p SSHPASS_X=kept");
    g_assert_cmpstr (names, ==,
                     "DB_PASSWORD Pg_Password GOOGLE_APPLICATION_CREDENTIALS aws_credential_file "
                     "NPM_TOKEN API_KEY CLIENT_SECRET SSHPASS MYSQL_PWD ldap_passwd BORG_PASSPHRASE");
  }
  env = fsg_policy_build_environ (policy, base_env);
  got = g_strjoinv (" ", env);
  g_assert_cmpstr (got, ==,
                   "HOME=/home/ann PATH=/usr/bin:/bin EDITOR=vi LC_ALL=C.UTF-8 LANG=en_US.UTF-8 "
                   "AWS_REGION=eu-west-1 TERM=xterm lc_all=lower-is-not-core LC_TIME=de_DE TZ=UTC "
                   "USER=ann SSH_AUTH_SOCK=/run/ssh EMPTY=");
}

static void
test_defaults_table (void)
{
  g_autofree char *core = g_strjoinv (",", (char **) fsg_env_core_names);
  g_autofree char *excl = g_strjoinv (",", (char **) fsg_env_default_excludes);

  g_assert_cmpstr (core, ==, "HOME,PATH,USER,LOGNAME,SHELL,TERM,LANG,LC_*,TMPDIR,TZ");
  g_assert_cmpstr (excl, ==,
                   "*KEY*,*SECRET*,*TOKEN*,*PASSWORD*,*PASSWD*,*PASSPHRASE*,*CREDENTIAL*,SSHPASS,MYSQL_PWD");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_set_nonfatal_assertions ();

  g_test_add_func ("/policy/env/inherit-core", test_inherit_core);
  g_test_add_func ("/policy/env/inherit-core-names", test_inherit_core_names);
  g_test_add_func ("/policy/env/inherit-all", test_inherit_all);
  g_test_add_func ("/policy/env/inherit-none", test_inherit_none);
  g_test_add_func ("/policy/env/exclude-adds", test_exclude_adds);
  g_test_add_func ("/policy/env/exclude-core", test_exclude_core);
  g_test_add_func ("/policy/env/include-only", test_include_only);
  g_test_add_func ("/policy/env/set-wins", test_set_wins);
  g_test_add_func ("/policy/env/order-and-duplicates", test_order_and_duplicates);
  g_test_add_func ("/policy/env/layers", test_layers);
  g_test_add_func ("/policy/env/profile", test_profile_environment);
  g_test_add_func ("/policy/env/defaults-table", test_defaults_table);

  return g_test_run ();
}
