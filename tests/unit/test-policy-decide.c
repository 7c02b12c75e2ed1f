/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The decision engine: precedence and nesting of roots, deny-read and
 * deny-write; synthetic ancestors and alias symlinks; protected states and
 * scopes; the built-in profiles and the layering of profile, files and
 * command line; literal deny-read canonicalisation; and the key property,
 * that the incremental walk (fsg_policy_root_state, fsg_policy_child_state)
 * always equals the whole-path decision (fsg_policy_decide), checked on
 * seeded random trees and rule sets. Every check of a single path walks it
 * both ways. Trees live in one temporary directory (canonical, so roots
 * need no symlink resolution) with a fake cwd and home; it is removed at
 * exit and on a fatal signal.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy-private.h"
#include "tests/lib/testlib.h"

static char *tmp_root; /* canonical */

/* "@T" is the temporary root. (transfer full) */
static char *
subst (const char *text)
{
  g_autoptr(GString) s = g_string_new (text);

  g_string_replace (s, "@T", tmp_root, 0);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* Create directories (relative to the temporary root, "a/b/c") and
 * symlinks ("link->target"). */
static void
make_tree (const char *const *entries)
{
  for (guint i = 0; entries[i]; i++)
    {
      const char *arrow = strstr (entries[i], "->");

      if (arrow)
        {
          g_autofree char *rel = g_strndup (entries[i], (gsize) (arrow - entries[i]));
          g_autofree char *path = g_build_filename (tmp_root, rel, NULL);
          g_autofree char *parent = g_path_get_dirname (path);

          g_mkdir_with_parents (parent, 0755);
          if (!g_file_test (path, G_FILE_TEST_IS_SYMLINK))
            g_assert_cmpint (symlink (arrow + 2, path), ==, 0);
        }
      else
        fsg_test_mkdir (tmp_root, entries[i]);
    }
}

/* Build a policy: @profile (NULL: the default), an optional policy file
 * text, then command-line rules "--rw=PATH", "--ro=", "--deny-read=",
 * "--deny-write=". "@T" is substituted everywhere. @cwd and @home are
 * relative to the temporary root. */
static FsgPolicy *
build (const char *profile, const char *cwd, const char *home, const char *runtime,
       const char *file_text, const char *const *cli)
{
  g_autofree char *cwd_abs = g_build_filename (tmp_root, cwd ? cwd : "", NULL);
  g_autofree char *home_abs = g_build_filename (tmp_root, home ? home : "home", NULL);
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (cwd_abs, home_abs, runtime);
  g_autoptr(GError) error = NULL;
  FsgPolicy *policy;

  if (profile && !fsg_policy_builder_set_profile (b, profile, &error))
    g_error ("%s", error->message);
  if (file_text)
    {
      g_autofree char *text = subst (file_text);
      if (!fsg_policy_builder_add_data (b, "test.ini", text, -1, &error))
        g_error ("%s", error->message);
    }
  for (guint i = 0; cli && cli[i]; i++)
    {
      const char *eq = strchr (cli[i], '=');
      g_autofree char *flag = g_strndup (cli[i], (gsize) (eq - cli[i]));
      g_autofree char *value = subst (eq + 1);
      FsgRuleKind kind = strcmp (flag, "--rw") == 0          ? FSG_RULE_WRITABLE
                         : strcmp (flag, "--ro") == 0        ? FSG_RULE_READONLY
                         : strcmp (flag, "--deny-read") == 0 ? FSG_RULE_DENY_READ
                                                             : FSG_RULE_DENY_WRITE;
      if (!fsg_policy_builder_add_rule (b, kind, value, flag, &error))
        g_error ("%s", error->message);
    }
  policy = fsg_policy_builder_finish (b, &error);
  if (policy == NULL)
    g_error ("%s", error->message);
  return policy;
}

static gboolean
states_equal (const FsgPathState *a, const FsgPathState *b)
{
  return a->access == b->access && a->flags == b->flags && a->rule == b->rule && a->depth == b->depth;
}

static char *
state_to_string (const FsgPolicy *policy, const FsgPathState *s)
{
  g_autofree char *why = fsg_path_state_describe (policy, s);

  return g_strdup_printf ("%s flags=0x%x depth=%u rule=#%d [%s]", fsg_access_to_string (s->access),
                          s->flags, s->depth, s->rule ? (int) s->rule->index : -1, why);
}

/* The incremental state of @path. */
static FsgPathState
walk (const FsgPolicy *policy, const char *path)
{
  g_auto (GStrv) comps = fsg_path_split (path);
  FsgPathState state = fsg_policy_root_state (policy);

  for (guint i = 0; comps[i]; i++)
    state = fsg_policy_child_state (policy, &state, comps[i]);
  return state;
}

/* walk() with "@T" substituted. */
static FsgPathState
walk_t (const FsgPolicy *policy, const char *path_in)
{
  g_autofree char *path = subst (path_in);

  return walk (policy, path);
}

/* Decide @path ("@T" substituted) both ways; they must agree. */
static FsgPathState
decide (const FsgPolicy *policy, const char *path_in)
{
  g_autofree char *path = subst (path_in);
  FsgPathState whole = fsg_policy_decide (policy, path);
  FsgPathState inc = walk (policy, path);
  FsgPathState lib = fsg_policy_walk (policy, path);

  if (!states_equal (&whole, &inc) || !states_equal (&whole, &lib))
    {
      g_autofree char *w = state_to_string (policy, &whole);
      g_autofree char *i = state_to_string (policy, &inc);
      g_autofree char *l = state_to_string (policy, &lib);
      g_test_fail_printf ("%s: whole-path %s != incremental %s or fsg_policy_walk %s", path, w, i, l);
    }
  return whole;
}

/* Check access, deciding rule (index into the rules, -1 for none) and the
 * exact flags. */
#define check(policy, path, acc, rule_index, flg)                                             \
  G_STMT_START                                                                                \
  {                                                                                           \
    FsgPathState _s = decide ((policy), (path));                                              \
    const FsgRule *const *_rules = fsg_policy_rules ((policy), NULL);                         \
    g_autofree char *_str = state_to_string ((policy), &_s);                                  \
    g_test_message ("%s: %s", (path), _str);                                                  \
    g_assert_cmpstr (fsg_access_to_string (_s.access), ==, fsg_access_to_string (acc));       \
    if ((rule_index) < 0)                                                                     \
      g_assert_null (_s.rule);                                                                \
    else                                                                                      \
      g_assert_true (_s.rule == _rules[(rule_index) < 0 ? 0 : (rule_index)]);                 \
    g_assert_cmphex (_s.flags, ==, (flg));                                                    \
  }                                                                                           \
  G_STMT_END

#define P FSG_STATE_PROTECTED
#define SYN (FSG_STATE_SYNTHETIC | FSG_STATE_PROTECTED)
#define ROOT (FSG_STATE_ROOT | FSG_STATE_PROTECTED)

/* ---- Precedence and nesting -------------------------------------------- */

static void
test_deny_wins (void)
{
  const char *const tree[] = { "deny/proj/secret/inner", "deny/proj/src", NULL };
  const char *const cli[] = { "--rw=@T/deny/proj", "--deny-read=@T/deny/proj/secret",
                              "--rw=@T/deny/proj/secret/inner", "--deny-read=*.key",
                              "--ro=@T/deny/proj/src", NULL };
  g_autoptr(FsgPolicy) policy = NULL;

  make_tree (tree);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  check (policy, "@T/deny/proj", FSG_ACCESS_RW, 0, ROOT);
  check (policy, "@T/deny/proj/secret", FSG_ACCESS_DENY, 1, P);
  check (policy, "@T/deny/proj/secret/x", FSG_ACCESS_DENY, 1, 0);
  /* a later --rw under a denied path stays denied */
  check (policy, "@T/deny/proj/secret/inner", FSG_ACCESS_DENY, 1, 0);
  check (policy, "@T/deny/proj/secret/inner/y", FSG_ACCESS_DENY, 1, 0);
  /* a floating deny-read beats a writable and a read-only root */
  check (policy, "@T/deny/proj/a.key", FSG_ACCESS_DENY, 3, P);
  check (policy, "@T/deny/proj/src/b.key", FSG_ACCESS_DENY, 3, P);
  check (policy, "@T/deny/proj/src/b.key/below", FSG_ACCESS_DENY, 3, 0);
  check (policy, "@T/deny/proj/src/b.keys", FSG_ACCESS_RO, 4, 0);
  check (policy, "@T/deny/proj/other", FSG_ACCESS_RW, 0, 0);
}

/* The first (lowest-index) deny-read at the shallowest depth names the
 * decision. */
static void
test_deny_rule_choice (void)
{
  const char *const tree[] = { "choice/a/b", NULL };
  const char *const cli[] = { "--rw=@T/choice", "--deny-read=@T/choice/a/b", "--deny-read=b",
                              "--deny-read=@T/choice/a", "--deny-read=a", NULL };
  g_autoptr(FsgPolicy) policy = NULL;

  make_tree (tree);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  check (policy, "@T/choice/a", FSG_ACCESS_DENY, 3, P);
  check (policy, "@T/choice/a/b", FSG_ACCESS_DENY, 3, 0);
  check (policy, "@T/choice/x/b", FSG_ACCESS_DENY, 2, P);
}

static void
test_longest_root_wins (void)
{
  const char *const tree[] = { "nest/a/b/c", NULL };
  const char *const forward[] = { "--ro=@T/nest", "--rw=@T/nest/a", "--ro=@T/nest/a/b",
                                  "--rw=@T/nest/a/b/c", NULL };
  const char *const reverse[] = { "--rw=@T/nest/a/b/c", "--ro=@T/nest/a/b", "--rw=@T/nest/a",
                                  "--ro=@T/nest", NULL };
  g_autoptr(FsgPolicy) fwd = NULL;
  g_autoptr(FsgPolicy) rev = NULL;

  make_tree (tree);
  fwd = build ("none", NULL, NULL, NULL, NULL, forward);
  check (fwd, "@T/nest", FSG_ACCESS_RO, 0, ROOT);
  check (fwd, "@T/nest/x", FSG_ACCESS_RO, 0, 0);
  check (fwd, "@T/nest/a", FSG_ACCESS_RW, 1, ROOT);  /* rw nested in ro reopens */
  check (fwd, "@T/nest/a/y", FSG_ACCESS_RW, 1, 0);
  check (fwd, "@T/nest/a/b", FSG_ACCESS_RO, 2, ROOT); /* ro nested in rw closes */
  check (fwd, "@T/nest/a/b/z", FSG_ACCESS_RO, 2, 0);
  check (fwd, "@T/nest/a/b/c", FSG_ACCESS_RW, 3, ROOT);
  check (fwd, "@T/nest/a/b/c/d/e", FSG_ACCESS_RW, 3, 0);
  /* the order of the rules does not matter for nesting */
  rev = build ("none", NULL, NULL, NULL, NULL, reverse);
  check (rev, "@T/nest/x", FSG_ACCESS_RO, 3, 0);
  check (rev, "@T/nest/a/y", FSG_ACCESS_RW, 2, 0);
  check (rev, "@T/nest/a/b/z", FSG_ACCESS_RO, 1, 0);
  check (rev, "@T/nest/a/b/c/d", FSG_ACCESS_RW, 0, 0);
}

static void
test_same_path_later_wins (void)
{
  const char *const tree[] = { "same/a", NULL };
  const char *const ro_rw[] = { "--ro=@T/same/a", "--rw=@T/same/a", NULL };
  const char *const rw_ro[] = { "--rw=@T/same/a", "--ro=@T/same/a/", NULL };
  g_autoptr(FsgPolicy) p1 = NULL;
  g_autoptr(FsgPolicy) p2 = NULL;

  make_tree (tree);
  p1 = build ("none", NULL, NULL, NULL, NULL, ro_rw);
  check (p1, "@T/same/a", FSG_ACCESS_RW, 1, ROOT);
  check (p1, "@T/same/a/f", FSG_ACCESS_RW, 1, 0);
  p2 = build ("none", NULL, NULL, NULL, NULL, rw_ro);
  check (p2, "@T/same/a", FSG_ACCESS_RO, 1, ROOT);
  check (p2, "@T/same/a/f", FSG_ACCESS_RO, 1, 0);
  /* synthetic ancestors name the first root */
  check (p2, "@T/same", FSG_ACCESS_RO, 0, SYN);
}

static void
test_deny_write (void)
{
  const char *const tree[] = { "dw/p/.git/hooks", "dw/p/lib/inner", "dw/q", NULL };
  const char *const cli[] = { "--rw=@T/dw/p", "--deny-write=@T/dw/p/lib", "--rw=@T/dw/p/lib/inner",
                              "--deny-write=**/.git/hooks", "--deny-write=@T/dw/q", "--rw=@T/dw/q",
                              NULL };
  g_autoptr(FsgPolicy) policy = NULL;

  make_tree (tree);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  check (policy, "@T/dw/p/src", FSG_ACCESS_RW, 0, 0);
  check (policy, "@T/dw/p/lib", FSG_ACCESS_RO, 1, P);
  check (policy, "@T/dw/p/lib/x", FSG_ACCESS_RO, 1, 0);
  /* a deeper root below a deny-write reopens */
  check (policy, "@T/dw/p/lib/inner", FSG_ACCESS_RW, 2, ROOT);
  check (policy, "@T/dw/p/lib/inner/x", FSG_ACCESS_RW, 2, 0);
  /* ... and a deny-write below that root closes again */
  check (policy, "@T/dw/p/lib/inner/.git/hooks", FSG_ACCESS_RO, 3, P);
  check (policy, "@T/dw/p/.git", FSG_ACCESS_RW, 0, P); /* on the path of a rule */
  check (policy, "@T/dw/p/.git/hooks", FSG_ACCESS_RO, 3, P);
  check (policy, "@T/dw/p/.git/hooks/pre-commit", FSG_ACCESS_RO, 3, 0);
  check (policy, "@T/dw/p/.git/HEAD", FSG_ACCESS_RW, 0, 0);
  /* deny-write beats a root at the same path, whatever the order */
  check (policy, "@T/dw/q", FSG_ACCESS_RO, 4, ROOT);
  check (policy, "@T/dw/q/f", FSG_ACCESS_RO, 4, 0);
  /* deny-write outside any root changes nothing */
  check (policy, "@T/dw", FSG_ACCESS_RO, 0, SYN);
  check (policy, "@T/dw/r", FSG_ACCESS_ABSENT, -1, 0);
}

static void
test_absent_and_synthetic (void)
{
  const char *const tree[] = { "syn/a/b", NULL };
  const char *const cli[] = { "--rw=@T/syn/a/b", NULL };
  g_autoptr(FsgPolicy) policy = NULL;
  g_auto (GStrv) comps = NULL;
  g_autoptr(GString) prefix = g_string_new (NULL);

  make_tree (tree);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  check (policy, "/", FSG_ACCESS_RO, 0, SYN);
  /* every ancestor of the temporary root is a synthetic directory */
  comps = fsg_path_split (tmp_root);
  for (guint i = 0; comps[i]; i++)
    {
      g_autofree char *sibling = NULL;

      g_string_append_c (prefix, '/');
      g_string_append (prefix, comps[i]);
      check (policy, prefix->str, FSG_ACCESS_RO, 0, SYN);
      sibling = g_strconcat (prefix->str, "-sibling", NULL);
      check (policy, sibling, FSG_ACCESS_ABSENT, -1, 0);
    }
  check (policy, "@T/syn", FSG_ACCESS_RO, 0, SYN);
  check (policy, "@T/syn/a", FSG_ACCESS_RO, 0, SYN);
  check (policy, "@T/syn/a/b", FSG_ACCESS_RW, 0, ROOT);
  check (policy, "@T/syn/a/b/c", FSG_ACCESS_RW, 0, 0);
  check (policy, "@T/syn/a/x", FSG_ACCESS_ABSENT, -1, 0);
  check (policy, "@T/syn/a/x/y", FSG_ACCESS_ABSENT, -1, 0);
  check (policy, "@T/syn/ab", FSG_ACCESS_ABSENT, -1, 0);
  check (policy, "/etc", FSG_ACCESS_ABSENT, -1, 0);
  check (policy, "/etc/passwd", FSG_ACCESS_ABSENT, -1, 0);
  /* the whole-path form normalises its argument */
  {
    g_autofree char *messy = subst ("@T/syn/./a//b/../b/c/");
    FsgPathState s = fsg_policy_decide (policy, messy);
    g_assert_cmpint (s.access, ==, FSG_ACCESS_RW);
    g_assert_cmpuint (s.depth, ==, g_strv_length (comps) + 4);
  }
  /* empty names lead nowhere */
  {
    FsgPathState root = fsg_policy_root_state (policy);
    FsgPathState s = fsg_policy_child_state (policy, &root, "");
    g_assert_cmpint (s.access, ==, FSG_ACCESS_ABSENT);
    g_assert_cmpuint (s.depth, ==, 1);
  }
}

/* A denied synthetic ancestor is denied, and so is everything below. */
static void
test_deny_on_synthetic (void)
{
  const char *const tree[] = { "dsyn/a/b", NULL };
  const char *const cli[] = { "--rw=@T/dsyn/a/b", "--deny-read=@T/dsyn/a", NULL };
  g_autoptr(FsgPolicy) policy = NULL;

  make_tree (tree);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  check (policy, "@T/dsyn", FSG_ACCESS_RO, 0, SYN);
  check (policy, "@T/dsyn/a", FSG_ACCESS_DENY, 1, P);
  check (policy, "@T/dsyn/a/b", FSG_ACCESS_DENY, 1, 0);
  check (policy, "@T/dsyn/x", FSG_ACCESS_ABSENT, -1, 0);
}

static void
set_mode (const char *path_t, mode_t mode)
{
  g_autofree char *path = subst (path_t);

  g_assert_cmpint (chmod (path, mode), ==, 0);
}

/* Policy text or one --rw rule that must fail with @code and a message
 * containing @expect ("@T" substituted). */
static void
expect_build_error (const char *file_text, const char *rw, int code, const char *expect)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (tmp_root, tmp_root, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(FsgPolicy) policy = NULL;
  g_autofree char *want = subst (expect);
  gboolean ok = fsg_policy_builder_set_profile (b, "none", &error);

  g_assert_true (ok);
  if (file_text)
    {
      g_autofree char *text = subst (file_text);
      ok = fsg_policy_builder_add_data (b, "test.ini", text, -1, &error);
      g_assert_no_error (error);
    }
  if (rw)
    {
      g_autofree char *value = subst (rw);
      ok = fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, value, "--rw", &error);
      g_assert_no_error (error);
    }
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_null (policy);
  g_assert_error (error, FSG_POLICY_ERROR, code);
  if (strstr (error->message, want) == NULL)
    g_error ("'%s' does not contain '%s'", error->message, want);
}

/* issue 14 item 1: a root through a symlink a sandboxed command could have
 * planted is an error naming the symlink and its target; optional roots and
 * ${CWD}/... too. Only a system symlink is trusted: its directory and every
 * ancestor root-owned and not group/other-writable, outside every writable
 * root of the policy. (Run by run_in_trusted_tree: /tmp is world-writable
 * and so never trusted.) */
static void
test_planted_symlink (void)
{
  const char *const tree[] = { "pl/real/sub", "pl/link->real", "pl/d/chain->../link", NULL };
  const char *const cli[] = { "--rw=@T/pl/link", NULL };
  g_autofree char *pl = subst ("@T/pl");
  gboolean trusted = getuid () == 0; /* run_in_trusted_tree */

  make_tree (tree);
  /* a group-writable directory: anyone in the group could have planted it */
  set_mode ("@T/pl", 0775);
  expect_build_error (NULL, "@T/pl/link", FSG_POLICY_ERROR_PLANTED_SYMLINK,
                      "--rw: writable root '@T/pl/link' goes through the symlink '@T/pl/link' -> "
                      "'real', which is not a system symlink");
  expect_build_error (NULL, "@T/pl/link/sub", FSG_POLICY_ERROR_PLANTED_SYMLINK,
                      "the symlink '@T/pl/link' -> 'real'");
  /* the first symlink met, also through the target of another */
  expect_build_error (NULL, "@T/pl/d/chain", FSG_POLICY_ERROR_PLANTED_SYMLINK,
                      "the symlink '@T/pl/d/chain' -> '../link'");
  expect_build_error ("[filesystem]\nwritable = ?@T/pl/link\n", NULL,
                      FSG_POLICY_ERROR_PLANTED_SYMLINK,
                      "test.ini:2: writable root '@T/pl/link' goes through the symlink");
  expect_build_error ("[filesystem]\nreadonly = ${CWD}/pl/link/sub\n", NULL,
                      FSG_POLICY_ERROR_PLANTED_SYMLINK,
                      "readonly root '@T/pl/link/sub' goes through the symlink '@T/pl/link'");
  set_mode ("@T/pl", 0755);
  if (!trusted)
    {
      /* not root, or the tree is under /tmp: nothing here is trusted */
      expect_build_error (NULL, "@T/pl/link", FSG_POLICY_ERROR_PLANTED_SYMLINK,
                          "the symlink '@T/pl/link' -> 'real'");
      g_test_message ("trusted-chain cases need root and a root-owned build tree: skipped");
      return;
    }
  /* review repro A: a directory owned by another user (mode 755), e.g. a
   * CI workspace owned by nobody, is not trusted by root */
  g_assert_no_errno (chown (pl, 65534, 65534));
  expect_build_error (NULL, "@T/pl/link", FSG_POLICY_ERROR_PLANTED_SYMLINK,
                      "the symlink '@T/pl/link' -> 'real', which is not a system symlink");
  g_assert_no_errno (chown (pl, 0, 0));
  /* a symlink inside a writable root of this very policy is not trusted */
  {
    const char *const both[] = { "--rw=@T/pl", "--ro=@T/pl/link", NULL };
    g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (tmp_root, tmp_root, NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(FsgPolicy) policy = NULL;

    g_assert_true (fsg_policy_builder_set_profile (b, "none", NULL));
    for (guint i = 0; both[i]; i++)
      {
        g_autofree char *v = subst (strchr (both[i], '=') + 1);
        fsg_policy_builder_add_rule (b, i == 0 ? FSG_RULE_WRITABLE : FSG_RULE_READONLY, v,
                                     i == 0 ? "--rw" : "--ro", NULL);
      }
    policy = fsg_policy_builder_finish (b, &error);
    g_assert_null (policy);
    g_assert_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_PLANTED_SYMLINK);
    g_assert_nonnull (strstr (error->message, "/pl/link' -> 'real'"));
  }
  /* the same symlink in a root-owned 755 chain, outside writable roots, is trusted */
  {
    g_autoptr(FsgPolicy) policy = build ("none", NULL, NULL, NULL, NULL, cli);
    g_autofree char *real = subst ("@T/pl/real");

    g_assert_cmpstr (fsg_policy_rules (policy, NULL)[0]->path, ==, real);
  }
  /* the system's own symlinks, whoever runs this */
  if (g_file_test ("/bin", G_FILE_TEST_IS_SYMLINK))
    {
      const char *const sys[] = { "--ro=/bin", NULL };
      g_autoptr(FsgPolicy) policy = build ("none", NULL, NULL, NULL, NULL, sys);
      g_autofree char *real = realpath ("/bin", NULL);

      g_assert_cmpstr (fsg_policy_rules (policy, NULL)[0]->path, ==, real);
    }
}

static void
test_alias (void)
{
  const char *const tree[] = { "alias/real/sub", "alias/link->real", "alias/deep/l2->../real/sub", NULL };
  const char *const cli[] = { "--rw=@T/alias/link", "--ro=@T/alias/deep/l2", NULL };
  g_autoptr(FsgPolicy) policy = NULL;
  g_autofree char *link = subst ("@T/alias/link");
  g_autofree char *real = subst ("@T/alias/real");
  const FsgRule *const *rules;
  FsgPathState s;

  make_tree (tree);
  /* symlinks the caller cannot have planted, as /bin -> usr/bin (a symlink
   * in a directory the caller can write is refused: test_planted_symlink) */
  set_mode ("@T/alias", 0555);
  set_mode ("@T/alias/deep", 0555);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  set_mode ("@T/alias", 0755);
  set_mode ("@T/alias/deep", 0755);
  rules = fsg_policy_rules (policy, NULL);
  g_assert_cmpstr (rules[0]->pattern, ==, link);
  g_assert_cmpstr (rules[0]->path, ==, real);

  check (policy, "@T/alias/link", FSG_ACCESS_RO, 0, FSG_STATE_ALIAS | P);
  s = decide (policy, "@T/alias/link");
  g_assert_cmpstr (fsg_policy_alias_target (policy, &s), ==, "real");
  s = walk (policy, link);
  g_assert_cmpstr (fsg_policy_alias_target (policy, &s), ==, "real");
  /* nothing is looked up through the alias */
  check (policy, "@T/alias/link/sub", FSG_ACCESS_ABSENT, -1, 0);
  check (policy, "@T/alias/link/x/y", FSG_ACCESS_ABSENT, -1, 0);
  check (policy, "@T/alias/real", FSG_ACCESS_RW, 0, ROOT);
  check (policy, "@T/alias/real/x", FSG_ACCESS_RW, 0, 0);
  check (policy, "@T/alias/real/sub", FSG_ACCESS_RO, 1, ROOT);
  check (policy, "@T/alias/deep", FSG_ACCESS_RO, 1, SYN);
  check (policy, "@T/alias/deep/l2", FSG_ACCESS_RO, 1, FSG_STATE_ALIAS | P);
  s = decide (policy, "@T/alias/deep/l2");
  g_assert_cmpstr (fsg_policy_alias_target (policy, &s), ==, "../real/sub");
  check (policy, "@T/alias", FSG_ACCESS_RO, 0, SYN);
  /* not an alias: no target */
  s = decide (policy, "@T/alias/real");
  g_assert_null (fsg_policy_alias_target (policy, &s));
  /* the children of a synthetic directory come from the incremental state
   * (a whole-path state carries no node set) */
  {
    FsgPathState dir = walk_t (policy, "@T/alias");
    g_autofree const char **names = fsg_policy_synthetic_children (policy, &dir);
    g_autofree char *joined = g_strjoinv (",", (char **) names);
    g_assert_cmpstr (joined, ==, "deep,link,real");
  }
}

/* An alias under another root is just a path under that root. */
static void
test_alias_under_root (void)
{
  const char *const tree[] = { "alias2/real", "alias2/link->real", NULL };
  const char *const cli[] = { "--ro=@T/alias2", "--rw=@T/alias2/link", NULL };
  g_autoptr(FsgPolicy) policy = NULL;

  make_tree (tree);
  set_mode ("@T/alias2", 0555);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  set_mode ("@T/alias2", 0755);
  check (policy, "@T/alias2/link", FSG_ACCESS_RO, 0, P);
  check (policy, "@T/alias2/real", FSG_ACCESS_RW, 1, ROOT);
  check (policy, "@T/alias2/real/f", FSG_ACCESS_RW, 1, 0);
}

static void
test_protected_and_scope (void)
{
  const char *const tree[] = { "scope/p/a", "scope/p/b", "scope/q", NULL };
  const char *const cli[] = { "--rw=@T/scope/p", "--rw=@T/scope/q", "--deny-write=**/.git/hooks",
                              "--deny-read=@T/scope/p/*/secret", NULL };
  g_autoptr(FsgPolicy) policy = NULL;
  FsgPathState a, b, c, git, q, qa, qb, deep1, deep2;

  make_tree (tree);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  check (policy, "@T/scope/p", FSG_ACCESS_RW, 0, ROOT);
  check (policy, "@T/scope/p/a", FSG_ACCESS_RW, 0, P); /* on the path of "p/ * /secret" */
  check (policy, "@T/scope/p/a/x", FSG_ACCESS_RW, 0, 0);
  check (policy, "@T/scope/p/a/secret", FSG_ACCESS_DENY, 3, P);
  check (policy, "@T/scope/q/.git", FSG_ACCESS_RW, 1, P);
  check (policy, "@T/scope/q/x", FSG_ACCESS_RW, 1, 0);

  a = decide (policy, "@T/scope/p/a");
  b = decide (policy, "@T/scope/p/b");
  c = decide (policy, "@T/scope/p/a/x");
  a = walk_t (policy, ("@T/scope/p/a"));
  b = walk_t (policy, ("@T/scope/p/b"));
  c = walk_t (policy, ("@T/scope/p/a/x"));
  git = walk_t (policy, ("@T/scope/p/.git"));
  q = walk_t (policy, ("@T/scope/q"));
  qa = walk_t (policy, ("@T/scope/q/a"));
  qb = walk_t (policy, ("@T/scope/q/b"));
  deep1 = walk_t (policy, ("@T/scope/q/a/b/c"));
  deep2 = walk_t (policy, ("@T/scope/q/x"));
  /* moving p/a to p/b keeps every rule's reach */
  g_assert_true (fsg_path_state_same_scope (&a, &b));
  g_assert_true (fsg_path_state_same_scope (&a, &a));
  /* p/a is under "p/ * /secret", p/a/x is not */
  g_assert_false (fsg_path_state_same_scope (&a, &c));
  /* .git is on the way to .git/hooks */
  g_assert_false (fsg_path_state_same_scope (&a, &git));
  g_assert_false (fsg_path_state_same_scope (&qa, &git));
  g_assert_true (fsg_path_state_same_scope (&qa, &qb));
  g_assert_true (fsg_path_state_same_scope (&deep1, &deep2));
  /* a root is not the same scope as a plain directory */
  g_assert_false (fsg_path_state_same_scope (&q, &qa));
}

static void
test_synthetic_children (void)
{
  const char *const tree[] = { "kids/a/b", "kids/a/c", "kids/d", "kids/e/f", NULL };
  const char *const cli[] = { "--ro=@T/kids/a/c", "--rw=@T/kids/a/b", "--ro=@T/kids/d",
                              "--deny-read=@T/kids/e/f", NULL };
  g_autoptr(FsgPolicy) policy = NULL;
  g_auto (GStrv) comps = NULL;

  make_tree (tree);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  comps = fsg_path_split (tmp_root);
  {
    FsgPathState s = fsg_policy_root_state (policy);
    g_autofree const char **names = fsg_policy_synthetic_children (policy, &s);
    g_assert_cmpuint (g_strv_length ((char **) names), ==, 1);
    g_assert_cmpstr (names[0], ==, comps[0]);
  }
  {
    FsgPathState s = walk_t (policy, ("@T/kids"));
    g_autofree const char **names = fsg_policy_synthetic_children (policy, &s);
    g_autofree char *joined = g_strjoinv (",", (char **) names);
    /* "e" only leads to a deny rule, not to a root */
    g_assert_cmpstr (joined, ==, "a,d");
  }
  {
    FsgPathState s = walk_t (policy, ("@T/kids/a"));
    g_autofree const char **names = fsg_policy_synthetic_children (policy, &s);
    g_autofree char *joined = g_strjoinv (",", (char **) names);
    g_assert_cmpstr (joined, ==, "b,c");
    g_assert_cmpint (s.flags, ==, SYN);
    g_assert_true (s.rule == fsg_policy_rules (policy, NULL)[0]);
  }
  {
    FsgPathState s = walk_t (policy, ("@T/kids/d"));
    g_autofree const char **names = fsg_policy_synthetic_children (policy, &s);
    g_assert_nonnull (names);
    g_assert_null (names[0]);
  }
}

/* ---- Profiles and layering --------------------------------------------- */

static const char *const profile_tree[] = {
  "prof/cwd/.git/hooks", "prof/cwd/src", "prof/home/.ssh", "prof/home/.config/gcloud", "prof/run",
  NULL,
};

static guint
rule_index (const FsgPolicy *policy, FsgRuleKind kind, const char *pattern_in)
{
  g_autofree char *pattern = subst (pattern_in);
  guint n;
  const FsgRule *const *rules = fsg_policy_rules (policy, &n);

  for (guint i = 0; i < n; i++)
    if (rules[i]->kind == kind && strcmp (rules[i]->pattern, pattern) == 0)
      return i;
  g_test_fail_printf ("no %s rule '%s'", fsg_rule_kind_to_key (kind), pattern);
  return 0;
}

/* The secret-names rule for @name that covers @path_in: the one of scope
 * "/" ("/ ** /NAME"), exactly, wherever the test tree lives (/tmp,
 * $TMPDIR...): a narrower scope that happens to cover the tree (as /tmp did)
 * is a failure. */
static guint
secret_index (const FsgPolicy *policy, const char *name, const char *path_in)
{
  g_autofree char *pattern = g_strconcat ("/**/", name, NULL);

  (void) path_in;
  return rule_index (policy, FSG_RULE_DENY_READ, pattern);
}

/* A built-in profile's decisions outside any tree the test makes: paths
 * need not exist. */
static void
check_secrets_everywhere (const FsgPolicy *policy)
{
  static const struct
  {
    const char *path, *name;
  } secrets[] = {
    { "/home/ann/.ssh/id_ed25519", NULL }, /* ~ann/.ssh when HOME is not ann's */
    { "/home/ann/.env", ".env" },
    { "/home/ann/proj/server.key", "*.key" },
    { "/srv/app/.env", ".env" },
    { "/var/www/html/.env", ".env" },
    { "/opt/app/.env", ".env" },
    { "/etc/letsencrypt/live/example.org/privkey.pem", "*.pem" },
    { "/etc/kubernetes/pki/ca.key", "*.key" },
    { "/etc/pki/tls/private/localhost.key", "*.key" },
    { "/var/lib/kubelet/pki/kubelet-client-current.pem", "*.pem" },
    { "/etc/docker/certs.d/registry:5000/client.key", "*.key" },
    { "/etc/openvpn/server.key", "*.key" },
    { "/var/lib/postgresql/15/main/server.key", "*.key" },
    { "/etc/ssl/server.key", "*.key" },
    { "/x.pem", "*.pem" },
    { "/etc/x.key", "*.key" },
    { "/root/.bash_history", ".bash_history" },
  };
  static const char *const public[] = {
    "/etc/ssl/certs/ISRG_Root_X1.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ca-certificates/update.d/x.pem",
    "/usr/local/share/ca-certificates/corp.pem",
    "/usr/share/ca-certificates/mozilla/X.crt",
    "/usr/lib/ssl/cert.pem",
    "/usr/lib/python3/dist-packages/certifi/cacert.pem",
    "/lib/x86_64-linux-gnu/x.pem",
    "/lib64/x.key",
    "/lib32/x.key",
    "/libx32/x.key",
    "/bin/x.pem",
    "/sbin/x.pem",
    "/usr/.env",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/pki/ca-trust/source/anchors/corp.pem",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/pki/tls/certs/localhost.pem",
    "/srv/app/node_modules/tls/test/agent.key",
    "/opt/venv/lib/python3.11/site-packages/certifi/cacert.pem",
  };
  guint root_ro = rule_index (policy, FSG_RULE_READONLY, "/");
  guint ssh = rule_index (policy, FSG_RULE_DENY_READ, "/**/id_ed25519*");

  for (guint i = 0; i < G_N_ELEMENTS (secrets); i++)
    check (policy, secrets[i].path, FSG_ACCESS_DENY,
           (int) (secrets[i].name ? secret_index (policy, secrets[i].name, NULL) : ssh), P);
  for (guint i = 0; i < G_N_ELEMENTS (public); i++)
    check (policy, public[i], FSG_ACCESS_RO, (int) root_ro, 0);
  /* the pruned trees themselves and the ones next to them */
  check (policy, "/etc/ssl/certs", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "/etc/ssl/certs2/x.pem", FSG_ACCESS_DENY, (int) secret_index (policy, "*.pem", NULL), P);
  check (policy, "/etc/pki/tls/x.key", FSG_ACCESS_DENY, (int) secret_index (policy, "*.key", NULL), P);
  check (policy, "/usrx/x.key", FSG_ACCESS_DENY, (int) secret_index (policy, "*.key", NULL), P);
  check (policy, "/home/usr/x.key", FSG_ACCESS_DENY, (int) secret_index (policy, "*.key", NULL), P);
}

/* HIGH: secret names apply everywhere but the public system trees, for
 * every filesystem profile and whatever HOME is (sudo: HOME=/root while the
 * project and its keys are in /home/u). */
static void
test_secret_names_everywhere (void)
{
  const char *const profiles[] = { "workspace-write", "read-only" };

  make_tree (profile_tree);
  for (guint i = 0; i < G_N_ELEMENTS (profiles); i++)
    {
      g_autoptr(FsgPolicy) policy = build (profiles[i], "prof/cwd", "prof/home", NULL, NULL, NULL);
      g_autofree char *cwd = subst ("@T/prof/cwd");
      g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (cwd, "/root", NULL);
      g_autoptr(FsgPolicy) sudo = NULL;
      g_autoptr(GError) error = NULL;

      check_secrets_everywhere (policy);
      g_assert_true (fsg_policy_builder_set_profile (b, profiles[i], &error));
      sudo = fsg_policy_builder_finish (b, &error);
      g_assert_no_error (error);
      check_secrets_everywhere (sudo);
      check (sudo, "/home/u/.ssh/id_ed25519", FSG_ACCESS_DENY,
             (int) secret_index (sudo, "id_ed25519*", NULL), P);
      check (sudo, "/home/u/.env", FSG_ACCESS_DENY, (int) secret_index (sudo, ".env", NULL), P);
      check (sudo, "/home/u/proj/.env", FSG_ACCESS_DENY, (int) secret_index (sudo, ".env", NULL), P);
      /* the working directory's parent: cat ../.env */
      check (sudo, "@T/prof/.env", FSG_ACCESS_DENY, (int) secret_index (sudo, ".env", NULL), P);
      check (sudo, "@T/prof/cwd/.env", FSG_ACCESS_DENY, (int) secret_index (sudo, ".env", NULL), P);
    }
}

/* A writable root inside a pruned tree is a scope of its own. */
static void
test_secret_names_writable_in_system_tree (void)
{
  g_autoptr(FsgPolicy) policy = NULL;
  char tmpl[] = "/usr/local/src/fsgate-test-XXXXXX";
  g_autofree char *env = NULL, *pattern = NULL, *pkg = NULL;

  if (mkdtemp (tmpl) == NULL)
    {
      g_test_skip ("cannot make a directory under /usr/local/src");
      return;
    }
  {
    g_autofree char *rw = g_strconcat ("--rw=", tmpl, NULL);
    const char *const cli[] = { rw, NULL };
    policy = build ("none", "prof/cwd", "prof/home", NULL, "[filesystem]\nsecret-names = .env\n", cli);
  }
  env = g_strconcat (tmpl, "/sub/.env", NULL);
  pattern = g_strconcat (tmpl, "/**/.env", NULL);
  pkg = g_strconcat (tmpl, "/node_modules/.env", NULL);
  check (policy, env, FSG_ACCESS_DENY, (int) rule_index (policy, FSG_RULE_DENY_READ, pattern), P);
  check (policy, pkg, FSG_ACCESS_RW, (int) rule_index (policy, FSG_RULE_WRITABLE, tmpl), 0);
  rmdir (tmpl);
}

static void
test_profile_workspace_write (void)
{
  g_autoptr(FsgPolicy) policy = NULL;
  g_autofree char *runtime = subst ("@T/prof/run");
  guint root_ro, cwd_rw, ssh, pem, env, envx, idrsa, shadow, proc, run, varrun, rt;

  make_tree (profile_tree);
  policy = build (NULL, "prof/cwd", "prof/home", runtime, NULL, NULL);
  g_assert_cmpstr (fsg_policy_profile (policy), ==, "workspace-write");
  g_assert_false (fsg_policy_network_allowed (policy));
  root_ro = rule_index (policy, FSG_RULE_READONLY, "/");
  cwd_rw = rule_index (policy, FSG_RULE_WRITABLE, "@T/prof/cwd");
  ssh = rule_index (policy, FSG_RULE_DENY_READ, "@T/prof/home/.ssh");
  pem = secret_index (policy, "*.pem", "@T/prof/cwd");
  env = secret_index (policy, ".env", "@T/prof/cwd");
  envx = secret_index (policy, ".env.*", "@T/prof/cwd");
  idrsa = secret_index (policy, "id_rsa*", "@T/prof/cwd");
  shadow = rule_index (policy, FSG_RULE_DENY_READ, "/etc/shadow");
  proc = rule_index (policy, FSG_RULE_DENY_READ, "/proc");
  run = rule_index (policy, FSG_RULE_DENY_READ, "/run");
  varrun = rule_index (policy, FSG_RULE_DENY_READ, "/var/run/*");
  rt = rule_index (policy, FSG_RULE_DENY_READ, "@T/prof/run");
  g_assert_true (fsg_policy_git_protect (policy));
  g_assert_cmpstr (fsg_policy_rules (policy, NULL)[ssh]->origin, ==, "profile workspace-write");
  g_assert_cmpint (fsg_policy_rules (policy, NULL)[ssh]->origin_kind, ==, FSG_ORIGIN_PROFILE);

  check (policy, "/", FSG_ACCESS_RO, (int) root_ro, ROOT);
  check (policy, "/usr/bin", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "/etc/passwd", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "/etc/shadow", FSG_ACCESS_DENY, (int) shadow, P);
  check (policy, "/proc/self/environ", FSG_ACCESS_DENY, (int) proc, 0);
  check (policy, "/run/dbus", FSG_ACCESS_DENY, (int) run, 0);
  /* /var/run itself (a symlink to /run on most hosts) stays readable, so
   * that it leads to the (denied, or under fsgate-run empty) /run */
  check (policy, "/var/run", FSG_ACCESS_RO, (int) root_ro, P);
  check (policy, "/var/run/x", FSG_ACCESS_DENY, (int) varrun, P);
  check (policy, "@T/prof/run/bus", FSG_ACCESS_DENY, (int) rt, 0);
  check (policy, "@T/prof/cwd", FSG_ACCESS_RW, (int) cwd_rw, ROOT);
  check (policy, "@T/prof/cwd/src/main.c", FSG_ACCESS_RW, (int) cwd_rw, 0);
  check (policy, "@T/prof/cwd/.env", FSG_ACCESS_DENY, (int) env, P);
  check (policy, "@T/prof/cwd/src/.env.local", FSG_ACCESS_DENY, (int) envx, P);
  check (policy, "@T/prof/cwd/certs/server.pem", FSG_ACCESS_DENY, (int) pem, P);
  check (policy, "/etc/ssl/private/x.pem", FSG_ACCESS_DENY,
         (int) rule_index (policy, FSG_RULE_DENY_READ, "/etc/ssl/private"), 0);
  /* issue 12: public trust stores and system trees are not secrets */
  check (policy, "/etc/ssl/certs/ISRG_Root_X1.pem", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "/usr/lib/ssl/cert.pem", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "/usr/share/ca-certificates/mozilla/X.crt", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "/usr/lib/python3/dist-packages/certifi/cacert.pem", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "/usr/lib/python3/dist-packages/grpc/_cython/_credentials/roots.pem",
         FSG_ACCESS_RO, (int) root_ro, 0);
  /* secret names do not go into package trees (venv: pip's certifi) */
  check (policy, "@T/prof/cwd/.v/lib/python3.11/site-packages/pip/_vendor/certifi/cacert.pem",
         FSG_ACCESS_RW, (int) cwd_rw, 0);
  check (policy, "@T/prof/cwd/node_modules/tls/test/fixtures/agent.key", FSG_ACCESS_RW, (int) cwd_rw, 0);
  check (policy, "@T/prof/home/.local/lib/python3.11/site-packages/certifi/cacert.pem",
         FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "@T/prof/cwd/site-packages.pem", FSG_ACCESS_DENY, (int) pem, P);
  check (policy, "@T/prof/cwd/src/site-packages-x/a.pem", FSG_ACCESS_DENY, (int) pem, P);
  /* ... but secrets where they live, and the host's own */
  check (policy, "/root/.bash_history", FSG_ACCESS_DENY,
         (int) secret_index (policy, ".bash_history", "/root"), P);
  check (policy, "/root/proj/server.key", FSG_ACCESS_DENY,
         (int) secret_index (policy, "*.key", "/root"), P);
  check (policy, "/tmp/build/.env", FSG_ACCESS_DENY, (int) secret_index (policy, ".env", "/tmp"), P);
  check (policy, "@T/prof/home/.python_history", FSG_ACCESS_DENY,
         (int) secret_index (policy, ".python_history", "@T/prof/home"), P);
  check (policy, "@T/prof/cwd/.env~", FSG_ACCESS_DENY,
         (int) secret_index (policy, ".env~", "@T/prof/cwd"), P);
  check (policy, "@T/prof/cwd/tls/a.pem~", FSG_ACCESS_DENY,
         (int) secret_index (policy, "*.pem~", "@T/prof/cwd"), P);
  check (policy, "/etc/ssh/ssh_host_ed25519_key", FSG_ACCESS_DENY,
         (int) rule_index (policy, FSG_RULE_DENY_READ, "/etc/ssh/ssh_host_*_key"), P);
  check (policy, "/etc/ssh/ssh_host_ed25519_key.pub", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "/etc/kubernetes/admin.conf", FSG_ACCESS_DENY,
         (int) rule_index (policy, FSG_RULE_DENY_READ, "/etc/kubernetes/admin.conf"), P);
  check (policy, "@T/prof/home/.config/containers/auth.json", FSG_ACCESS_DENY,
         (int) rule_index (policy, FSG_RULE_DENY_READ, "@T/prof/home/.config/containers/auth.json"), P);
  check (policy, "@T/prof/cwd/id_rsa.pub", FSG_ACCESS_DENY, (int) idrsa, P);
  /* git protection is decided in the view, per operation: the paths of a
   * git dir are plain writable paths for the rules */
  check (policy, "@T/prof/cwd/.git/hooks/pre-commit", FSG_ACCESS_RW, (int) cwd_rw, 0);
  check (policy, "@T/prof/cwd/.git/config", FSG_ACCESS_RW, (int) cwd_rw, 0);
  check (policy, "@T/prof/cwd/.git/HEAD", FSG_ACCESS_RW, (int) cwd_rw, 0);
  check (policy, "@T/prof/home/.ssh/id_ed25519", FSG_ACCESS_DENY, (int) ssh, 0);
  check (policy, "@T/prof/home/.bashrc", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "@T/prof/home/.config/gcloud",
         FSG_ACCESS_DENY, (int) rule_index (policy, FSG_RULE_DENY_READ, "@T/prof/home/.config/gcloud"), P);
  check (policy, "@T/prof/home/.config", FSG_ACCESS_RO, (int) root_ro, P);
  check (policy, "@T/prof/home/.config/other", FSG_ACCESS_RO, (int) root_ro, 0);
}

static void
test_profile_read_only (void)
{
  g_autoptr(FsgPolicy) policy = NULL;
  guint root_ro;

  make_tree (profile_tree);
  policy = build ("read-only", "prof/cwd", "prof/home", NULL, NULL, NULL);
  g_assert_cmpstr (fsg_policy_profile (policy), ==, "read-only");
  root_ro = rule_index (policy, FSG_RULE_READONLY, "/");
  check (policy, "@T/prof/cwd", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "@T/prof/cwd/src/main.c", FSG_ACCESS_RO, (int) root_ro, 0);
  check (policy, "@T/prof/cwd/.env", FSG_ACCESS_DENY,
         (int) secret_index (policy, ".env", "@T/prof/cwd"), P);
  check (policy, "@T/prof/home/.aws/credentials", FSG_ACCESS_DENY,
         (int) rule_index (policy, FSG_RULE_DENY_READ, "@T/prof/home/.aws"), 0);
  g_assert_false (fsg_policy_network_allowed (policy));
}

static void
test_profile_none (void)
{
  g_autoptr(FsgPolicy) policy = NULL;
  guint n;

  policy = build ("none", "prof/cwd", "prof/home", NULL, NULL, NULL);
  fsg_policy_rules (policy, &n);
  g_assert_cmpuint (n, ==, 0);
  g_assert_cmpstr (fsg_policy_profile (policy), ==, "none");
  check (policy, "/", FSG_ACCESS_RO, -1, SYN);
  check (policy, "/etc", FSG_ACCESS_ABSENT, -1, 0);
  check (policy, "@T/prof/cwd", FSG_ACCESS_ABSENT, -1, 0);
  {
    FsgPathState s = fsg_policy_root_state (policy);
    g_autofree const char **names = fsg_policy_synthetic_children (policy, &s);
    g_assert_null (names[0]);
  }
}

static void
test_profile_table (void)
{
  const char *const *names = fsg_policy_profile_names ();

  g_assert_cmpuint (g_strv_length ((char **) names), ==, 3);
  g_assert_cmpstr (names[0], ==, "workspace-write");
  g_assert_cmpstr (names[1], ==, "read-only");
  g_assert_cmpstr (names[2], ==, "none");
  for (guint i = 0; names[i]; i++)
    {
      g_assert_nonnull (fsg_policy_profile_text (names[i]));
      g_assert_nonnull (fsg_policy_profile_summary (names[i]));
    }
  g_assert_null (fsg_policy_profile_text ("bogus"));
  g_assert_null (fsg_policy_profile_summary ("bogus"));
  g_assert_null (fsg_policy_profile_text (NULL));
}

static void
test_layering (void)
{
  make_tree (profile_tree);
  /* a file's root at the profile's path wins over the profile; the command
   * line wins over the file */
  {
    g_autoptr(FsgPolicy) policy = build (NULL, "prof/cwd", "prof/home", NULL,
                                         "[filesystem]\nreadonly = ${CWD}\n", NULL);
    guint n;
    const FsgRule *const *rules = fsg_policy_rules (policy, &n);
    FsgPathState s = decide (policy, "@T/prof/cwd/x");

    g_assert_cmpint (s.access, ==, FSG_ACCESS_RO);
    g_assert_cmpint (s.rule->origin_kind, ==, FSG_ORIGIN_FILE);
    g_assert_cmpstr (s.rule->origin, ==, "test.ini:2");
    /* rules come in layer order */
    for (guint i = 1; i < n; i++)
      g_assert_cmpint (rules[i - 1]->origin_kind, <=, rules[i]->origin_kind);
    for (guint i = 0; i < n; i++)
      g_assert_cmpuint (rules[i]->index, ==, i);
  }
  {
    const char *const cli[] = { "--rw=@T/prof/cwd", NULL };
    g_autoptr(FsgPolicy) policy = build (NULL, "prof/cwd", "prof/home", NULL,
                                         "[filesystem]\nreadonly = ${CWD}\n", cli);
    FsgPathState s = decide (policy, "@T/prof/cwd/x");

    g_assert_cmpint (s.access, ==, FSG_ACCESS_RW);
    g_assert_cmpstr (s.rule->origin, ==, "--rw");
  }
  /* the command line is the last layer even when given before the file */
  {
    g_autofree char *cwd = subst ("@T/prof/cwd");
    g_autofree char *home = subst ("@T/prof/home");
    g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (cwd, home, NULL);
    g_autoptr(FsgPolicy) policy = NULL;
    g_autoptr(GError) error = NULL;
    FsgPathState s;

    g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, ".", "--ro", &error));
    g_assert_true (fsg_policy_builder_set (b, "timeout", "20s", "--timeout", &error));
    g_assert_true (fsg_policy_builder_set (b, "allow", "false", "--no-net", &error));
    g_assert_true (fsg_policy_builder_add_data (b, "late.ini",
                                                "[filesystem]\nwritable = ${CWD}\n"
                                                "[process]\ntimeout = 10s\n[network]\nallow = true\n",
                                                -1, &error));
    g_assert_no_error (error);
    policy = fsg_policy_builder_finish (b, &error);
    g_assert_no_error (error);
    s = decide (policy, "@T/prof/cwd/x");
    g_assert_cmpint (s.access, ==, FSG_ACCESS_RO);
    g_assert_cmpstr (s.rule->origin, ==, "--ro");
    g_assert_cmpuint (fsg_policy_timeout_ms (policy), ==, 20000);
    g_assert_false (fsg_policy_network_allowed (policy));
  }
  /* a file setting alone changes the profile's */
  {
    g_autoptr(FsgPolicy) policy = build (NULL, "prof/cwd", "prof/home", NULL,
                                         "[network]\nallow = true\n", NULL);
    g_assert_true (fsg_policy_network_allowed (policy));
  }
  /* nothing a later layer says weakens a deny-read */
  {
    const char *const cli[] = { "--rw=@T/prof/home/.ssh", "--rw=@T/prof/home", NULL };
    g_autoptr(FsgPolicy) policy = build (NULL, "prof/cwd", "prof/home", NULL,
                                         "[filesystem]\nwritable = ~/.ssh\n", cli);
    FsgPathState s = decide (policy, "@T/prof/home/.ssh/id_rsa");

    g_assert_cmpint (s.access, ==, FSG_ACCESS_DENY);
    g_assert_cmpint (s.rule->origin_kind, ==, FSG_ORIGIN_PROFILE);
    s = decide (policy, "@T/prof/home/.ssh");
    g_assert_cmpint (s.access, ==, FSG_ACCESS_DENY);
  }
}

static void
test_profile_override (void)
{
  const char *file = "[policy]\nprofile = none\n[filesystem]\nreadonly = ${CWD}\n";

  make_tree (profile_tree);
  {
    g_autoptr(FsgPolicy) policy = build (NULL, "prof/cwd", "prof/home", NULL, file, NULL);
    guint n;

    g_assert_cmpstr (fsg_policy_profile (policy), ==, "none");
    fsg_policy_rules (policy, &n);
    g_assert_cmpuint (n, ==, 1);
    check (policy, "/etc", FSG_ACCESS_ABSENT, -1, 0);
  }
  /* --profile overrides the file's `profile =` (set before or after) */
  {
    g_autoptr(FsgPolicy) policy = build ("read-only", "prof/cwd", "prof/home", NULL, file, NULL);
    FsgPathState s;

    g_assert_cmpstr (fsg_policy_profile (policy), ==, "read-only");
    s = decide (policy, "/etc/passwd");
    g_assert_cmpint (s.access, ==, FSG_ACCESS_RO);
    g_assert_cmpstr (s.rule->origin, ==, "profile read-only");
  }
  {
    g_autofree char *cwd = subst ("@T/prof/cwd");
    g_autofree char *home = subst ("@T/prof/home");
    g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (cwd, home, NULL);
    g_autoptr(FsgPolicy) policy = NULL;
    g_autoptr(GError) error = NULL;

    g_assert_true (fsg_policy_builder_add_data (b, "f.ini", file, -1, &error));
    g_assert_true (fsg_policy_builder_set_profile (b, "workspace-write", &error));
    policy = fsg_policy_builder_finish (b, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (fsg_policy_profile (policy), ==, "workspace-write");
    /* the file's readonly ${CWD} still comes after the profile's writable */
    g_assert_cmpint (decide (policy, "@T/prof/cwd/x").access, ==, FSG_ACCESS_RO);
  }
}

/* ---- Literal deny-read canonicalisation -------------------------------- */

static void
test_literal_canonical (void)
{
  const char *const tree[] = { "lit/home/real/present", "lit/home/link->real", "lit/cwd", NULL };
  const char *const cli[] = { "--deny-read=~/link/secret", "--deny-read=~/link/present",
                              "--deny-read=~/link", "--deny-read=*.pem", "--deny-read=~/link/*.key",
                              NULL };
  g_autoptr(FsgPolicy) policy = NULL;
  const char *const *literal;
  g_autofree char *joined = NULL;
  g_autofree char *expected = NULL;

  make_tree (tree);
  policy = build ("read-only", "lit/cwd", "lit/home", NULL, NULL, cli);
  check (policy, "@T/lit/home/link/secret", FSG_ACCESS_DENY,
         (int) rule_index (policy, FSG_RULE_DENY_READ, "@T/lit/home/link"), 0);
  check (policy, "@T/lit/home/link", FSG_ACCESS_DENY,
         (int) rule_index (policy, FSG_RULE_DENY_READ, "@T/lit/home/link"), P);
  /* the canonical paths are denied too */
  {
    guint n;
    fsg_policy_rules (policy, &n);
    check (policy, "@T/lit/home/real/secret", FSG_ACCESS_DENY, (int) n - 3, 0);
    check (policy, "@T/lit/home/real", FSG_ACCESS_DENY, (int) n - 3, P);
    check (policy, "@T/lit/home/real/x.key", FSG_ACCESS_DENY, (int) n - 3, 0);
  }
  literal = fsg_policy_literal_deny_read (policy);
  joined = g_strjoinv ("\n", (char **) literal);
  g_test_message ("%s", joined);
  expected = subst ("@T/lit/home/real/secret\n@T/lit/home/real/present\n@T/lit/home/real");
  g_assert_nonnull (strstr (joined, expected));
  g_assert_null (strstr (joined, "*.pem"));
  g_assert_null (strstr (joined, ".key"));
  g_assert_nonnull (strstr (joined, "/etc/shadow\n"));
  /* /var/run is a symlink to /run on Debian: listed canonical */
  g_assert_null (strstr (joined, "/var/run"));
}

/* ---- The key property: incremental == whole-path ----------------------- */

static const char *const disk_names[] = { "a", "b", ".git", "secrets", "hooks", "config" };
static const char *const walk_names[] = { "a", "b", ".env", "x.pem", "secrets", ".git", "hooks",
                                          "config", "link", "lnk", "zz", "id_rsa", "node_modules",
                                          "site-packages", "dist-packages", "s.key", "ab" };
/* Walked from "/": the trees secret-names prune (/usr, /etc/ssl/certs,
 * /etc/pki/...), their neighbours, package trees and secret-like names. */
static const char *const sys_walk_names[] = { "usr", "lib", "etc", "ssl", "certs", "pki", "tls",
                                              "ca-trust", "source", "anchors", "extracted", "local",
                                              "share", "ca-certificates", "a", ".env", "x.pem",
                                              "node_modules", "site-packages", "private" };
/* Values of random secret-names. */
static const char *const secret_name_values[] = { ".env", "*.pem", "x.*", "id_rsa*", "*s", "[ab]",
                                                  "secrets", "*.key", "?", "certs", "a", "usr" };
static const char *const pattern_comps[] = {
  "a", "b", ".env", "x.pem", "secrets", ".git", "hooks", "config", "link", "*", "?", "*.pem", "x.*",
  "[ab]", "[!a]*", ".e?v", "se*ts", "*s", "**", "**", "id_rsa*", "c?nfig", "\\*", "conf*",
  "h?oks", ".e*", "*.*", "[.x]*", "*g",
};

typedef struct
{
  char *base; /* the on-disk tree */
  GPtrArray *rules_text; /* "flag value" of the current set, for messages */
  guint paths;
  guint failures;
  guint uniform;       /* uniform states met */
  guint below_uniform; /* paths checked below them */
} PropCtx;

static void
make_prop_tree (const char *base, guint depth)
{
  if (depth == 3)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (disk_names); i++)
    {
      g_autofree char *p = g_build_filename (base, disk_names[i], NULL);
      g_assert_no_errno (g_mkdir (p, 0755));
      make_prop_tree (p, depth + 1);
    }
}

static const char *
pick (const char *const *v, guint n)
{
  return v[g_test_rand_int_range (0, (gint32) n)];
}

static char *
random_root (PropCtx *ctx)
{
  GString *s = g_string_new (ctx->base);
  guint depth = (guint) g_test_rand_int_range (0, 4);
  guint r = (guint) g_test_rand_int_range (0, 20);

  if (r == 0)
    {
      g_string_free (s, TRUE);
      return g_strdup ("/");
    }
  if (r == 1)
    {
      g_string_append (s, "/zz/missing");
      g_string_prepend_c (s, '?');
      return g_string_free (s, FALSE);
    }
  if (r == 2 || r == 3)
    {
      g_string_append (s, "/link"); /* -> a */
      depth = MIN (depth, 2);
    }
  else if (r == 4)
    {
      g_string_append (s, "/b/lnk"); /* -> ../a/b */
      depth = MIN (depth, 1);
    }
  for (guint i = 0; i < depth; i++)
    {
      g_string_append_c (s, '/');
      g_string_append (s, pick (disk_names, G_N_ELEMENTS (disk_names)));
    }
  return g_string_free (s, FALSE);
}

static char *
random_pattern (PropCtx *ctx)
{
  GString *s = g_string_new (NULL);
  guint shape = (guint) g_test_rand_int_range (0, 10);
  guint n = (guint) g_test_rand_int_range (1, 4);

  if (shape < 3)
    {
      /* a floating name */
      const char *c;
      do
        c = pick (pattern_comps, G_N_ELEMENTS (pattern_comps));
      while (strcmp (c, "**") == 0);
      g_string_append (s, c);
      return g_string_free (s, FALSE);
    }
  if (shape < 5)
    g_string_append (s, "**");
  else if (shape == 5)
    g_string_append_printf (s, "%s/link", ctx->base);
  else
    g_string_append (s, ctx->base);
  for (guint i = 0; i < n; i++)
    {
      g_string_append_c (s, '/');
      g_string_append (s, pick (pattern_comps, G_N_ELEMENTS (pattern_comps)));
    }
  return g_string_free (s, FALSE);
}

static void
describe_rules (const FsgPolicy *policy, GString *out)
{
  guint n;
  const FsgRule *const *rules = fsg_policy_rules (policy, &n);

  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "\n  #%u %s %s (path %s)", i, fsg_rule_kind_to_key (rules[i]->kind),
                            rules[i]->pattern, rules[i]->path);
}

static void
compare_one (PropCtx *ctx, const FsgPolicy *policy, const char *path, const FsgPathState *inc)
{
  FsgPathState whole = fsg_policy_decide (policy, path);

  ctx->paths++;
  if (states_equal (&whole, inc))
    return;
  ctx->failures++;
  if (ctx->failures <= 5)
    {
      g_autoptr(GString) msg = g_string_new (NULL);
      g_autofree char *w = state_to_string (policy, &whole);
      g_autofree char *i = state_to_string (policy, inc);

      g_string_printf (msg, "%s: whole-path %s != incremental %s; rules:", path, w, i);
      describe_rules (policy, msg);
      g_test_fail_printf ("%s", msg->str);
    }
}


/* Below a uniform state, every path, for any names (random ones too, as
 * names created later would be), gets the same access from the incremental
 * engine and from the whole-path one, and is never denied. */
static void
check_uniform_below (PropCtx *ctx, const FsgPolicy *policy, GString *path,
                     const FsgPathState *top, const FsgPathState *parent, guint depth)
{
  if (depth == 3)
    return;
  for (guint j = 0; j < 2; j++)
    {
      char rnd[12];
      const char *name;
      gsize len = path->len;
      FsgPathState child, whole;

      if (j == 0)
        {
          /* a random name of pattern-ish bytes */
          static const char alphabet[] = "abxyz.-_*?[]!eknprsgt0";
          guint n = (guint) g_test_rand_int_range (1, sizeof rnd - 1);
          for (guint k = 0; k < n; k++)
            rnd[k] = alphabet[g_test_rand_int_range (0, sizeof alphabet - 1)];
          rnd[n] = '\0';
          if (strcmp (rnd, ".") == 0 || strcmp (rnd, "..") == 0)
            continue;
          name = rnd;
        }
      else
        name = pick (walk_names, G_N_ELEMENTS (walk_names));
      child = fsg_policy_child_state (policy, parent, name);
      if (path->len > 1)
        g_string_append_c (path, '/');
      g_string_append (path, name);
      whole = fsg_policy_decide (policy, path->str);
      ctx->below_uniform++;
      if (child.access != top->access || whole.access != top->access ||
          !fsg_path_state_uniform (policy, &child))
        {
          ctx->failures++;
          if (ctx->failures <= 5)
            {
              g_autoptr(GString) msg = g_string_new (NULL);
              g_string_printf (msg, "%s: below a uniform %s directory, incremental %s, whole-path %s%s; rules:",
                               path->str, fsg_access_to_string (top->access),
                               fsg_access_to_string (child.access), fsg_access_to_string (whole.access),
                               fsg_path_state_uniform (policy, &child) ? "" : ", and not uniform itself");
              describe_rules (policy, msg);
              g_test_fail_printf ("%s", msg->str);
            }
        }
      else
        check_uniform_below (ctx, policy, path, top, &child, depth + 1);
      g_string_truncate (path, len);
    }
}

static void
walk_random_names (PropCtx *ctx, const FsgPolicy *policy, GString *path,
                   const FsgPathState *parent, guint depth, const char *const *names, guint n)
{
  gboolean used[32] = { FALSE };
  guint k = depth < 2 ? 4 : 3;

  g_assert_cmpuint (n, <=, G_N_ELEMENTS (used));
  if (depth == 5)
    return;
  for (guint j = 0; j < k; j++)
    {
      guint idx = (guint) g_test_rand_int_range (0, (gint32) n);
      gsize len = path->len;
      FsgPathState child;

      if (used[idx])
        continue;
      used[idx] = TRUE;
      child = fsg_policy_child_state (policy, parent, names[idx]);
      if (path->len > 1)
        g_string_append_c (path, '/');
      g_string_append (path, names[idx]);
      compare_one (ctx, policy, path->str, &child);
      if (fsg_path_state_uniform (policy, &child))
        {
          ctx->uniform++;
          /* under AddressSanitizer the whole-path side is slow: every
           * eighth uniform state */
#if defined(__SANITIZE_ADDRESS__)
          if (ctx->uniform % 8 == 0)
#endif
            check_uniform_below (ctx, policy, path, &child, &child, 0);
        }
      walk_random_names (ctx, policy, path, &child, depth + 1, names, n);
      g_string_truncate (path, len);
    }
}

static void
walk_random (PropCtx *ctx, const FsgPolicy *policy, GString *path, const FsgPathState *parent,
             guint depth)
{
  walk_random_names (ctx, policy, path, parent, depth, walk_names, G_N_ELEMENTS (walk_names));
}

static void
check_rule_set (PropCtx *ctx, const FsgPolicy *policy)
{
  g_auto (GStrv) comps = fsg_path_split (ctx->base);
  g_autoptr(GString) path = g_string_new ("/");
  FsgPathState state = fsg_policy_root_state (policy);
  FsgPathState again;

  compare_one (ctx, policy, "/", &state);
  for (guint i = 0; comps[i]; i++)
    {
      FsgPathState sibling = fsg_policy_child_state (policy, &state, "zz-sibling");
      gsize len = path->len;

      if (path->len > 1)
        g_string_append_c (path, '/');
      g_string_append (path, "zz-sibling");
      compare_one (ctx, policy, path->str, &sibling);
      g_string_truncate (path, len);

      state = fsg_policy_child_state (policy, &state, comps[i]);
      if (path->len > 1)
        g_string_append_c (path, '/');
      g_string_append (path, comps[i]);
      compare_one (ctx, policy, path->str, &state);
    }
  walk_random (ctx, policy, path, &state, 0);
  {
    /* from "/": the pruned system trees of secret-names */
    g_autoptr(GString) top = g_string_new ("/");
    FsgPathState root = fsg_policy_root_state (policy);

    walk_random_names (ctx, policy, top, &root, 0, sys_walk_names, G_N_ELEMENTS (sys_walk_names));
  }
  /* states are interned: the same walk gives the same set */
  again = walk (policy, ctx->base);
  g_assert_true (again.set == state.set);
}

static void
test_incremental_equals_whole (void)
{
  PropCtx ctx = { 0 };
  /* several hundred sets; fewer under AddressSanitizer, whose malloc
   * bookkeeping (with fast_unwind_on_malloc=0) dominates the whole-path side */
#if defined(__SANITIZE_ADDRESS__)
  guint n_sets = g_test_slow () ? 2000 : 150;
#else
  guint n_sets = g_test_slow () ? 2000 : 500;
#endif
  gint64 start = g_get_monotonic_time ();
  guint set;

  ctx.base = g_build_filename (tmp_root, "prop", NULL);
  g_assert_no_errno (g_mkdir (ctx.base, 0755));
  make_prop_tree (ctx.base, 0);
  {
    g_autofree char *l1 = g_build_filename (ctx.base, "link", NULL);
    g_autofree char *l2 = g_build_filename (ctx.base, "b", "lnk", NULL);
    g_assert_no_errno (symlink ("a", l1));
    g_assert_no_errno (symlink ("../a/b", l2));
  }
  /* roots through these symlinks are allowed only when the caller could not
   * have planted them (test_planted_symlink) */
  set_mode ("@T/prop", 0555);
  set_mode ("@T/prop/b", 0555);

  for (set = 0; set < n_sets && ctx.failures == 0; set++)
    {
      g_autofree char *cwd = g_build_filename (ctx.base, "a", NULL);
      g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (cwd, ctx.base, NULL);
      g_autoptr(FsgPolicy) policy = NULL;
      g_autoptr(GError) error = NULL;
      /* every fifth set is large, so that nodes get enough glob edges to
       * use the glob index */
      guint n_rules = set % 5 == 4 ? (guint) g_test_rand_int_range (15, 40)
                                   : (guint) g_test_rand_int_range (1, 9);

      g_assert_true (fsg_policy_builder_set_profile (b, "none", NULL));
      if (g_test_rand_int_range (0, 3) == 0)
        {
          /* secret-names (scope "/", pruned system and package trees, and
           * writable roots inside a pruned tree), often with "/" shown */
          g_autoptr(GString) text = g_string_new ("[filesystem]\nsecret-names = ");
          guint k = (guint) g_test_rand_int_range (1, 4);

          for (guint i = 0; i < k; i++)
            g_string_append_printf (text, "%s%s", i ? ";" : "",
                                    pick (secret_name_values, G_N_ELEMENTS (secret_name_values)));
          if (g_test_rand_bit ())
            g_string_append (text, "\nreadonly = /");
          g_string_append_c (text, '\n');
          g_assert_true (fsg_policy_builder_add_data (b, "gen.ini", text->str, -1, NULL));
        }
      if (g_test_rand_int_range (0, 10) > 0)
        {
          g_autofree char *root = random_root (&ctx);
          fsg_policy_builder_add_rule (b, g_test_rand_bit () ? FSG_RULE_WRITABLE : FSG_RULE_READONLY,
                                       root, "--root", NULL);
        }
      for (guint i = 0; i < n_rules; i++)
        {
          guint what = (guint) g_test_rand_int_range (0, 10);
          g_autofree char *value = NULL;
          FsgRuleKind kind;

          if (what < 3)
            {
              value = random_root (&ctx);
              kind = g_test_rand_bit () ? FSG_RULE_WRITABLE : FSG_RULE_READONLY;
            }
          else
            {
              value = random_pattern (&ctx);
              kind = what < 7 ? FSG_RULE_DENY_READ : FSG_RULE_DENY_WRITE;
            }
          /* a few generated patterns are invalid ("**" alone): skip them */
          fsg_policy_builder_add_rule (b, kind, value, "--gen", NULL);
        }
      policy = fsg_policy_builder_finish (b, &error);
      /* a root through prop/link or prop/b/lnk while a writable root
       * contains that symlink is refused (test_planted_symlink): a valid
       * answer for a random set, nothing to compare */
      if (g_error_matches (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_PLANTED_SYMLINK))
        continue;
      g_assert_no_error (error);
      if (policy == NULL)
        break;
      check_rule_set (&ctx, policy);
    }
  g_test_message ("%u rule sets, %u paths compared in %.2f s; %u uniform directories, "
                  "%u paths checked below them", set, ctx.paths,
                  (double) (g_get_monotonic_time () - start) / G_USEC_PER_SEC, ctx.uniform,
                  ctx.below_uniform);
  g_assert_cmpuint (ctx.failures, ==, 0);
#if defined(__SANITIZE_ADDRESS__)
  g_assert_cmpuint (ctx.uniform, >, 100);
#else
  g_assert_cmpuint (ctx.uniform, >, 1000);
#endif
  g_assert_cmpuint (ctx.paths, >, 150 * 300);
  set_mode ("@T/prop/b", 0755);
  set_mode ("@T/prop", 0755);
  g_free (ctx.base);
}

/* A denied directory is not the same scope as a plain one: below it
 * everything is denied, below the other nothing is. */
static void
test_scope_of_denied (void)
{
  const char *const tree[] = { "sdeny/p", NULL };
  const char *const cli[] = { "--rw=@T/sdeny/p", "--deny-read=@T/sdeny/p/secret", NULL };
  g_autoptr(FsgPolicy) policy = NULL;
  FsgPathState secret, plain, below;

  make_tree (tree);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  secret = walk_t (policy, "@T/sdeny/p/secret");
  below = walk_t (policy, "@T/sdeny/p/secret/x");
  plain = walk_t (policy, "@T/sdeny/p/plain");
  g_assert_cmpint (secret.access, ==, FSG_ACCESS_DENY);
  g_assert_cmpint (plain.access, ==, FSG_ACCESS_RW);
  g_assert_false (fsg_path_state_same_scope (&secret, &plain));
  g_assert_false (fsg_path_state_same_scope (&below, &plain));
}

/* More live nodes than the engine keeps on the stack (64): the heap path
 * must give the same answers. */
static void
test_many_live_nodes (void)
{
  g_autofree char *cwd = subst ("@T/many");
  g_autofree char *home = subst ("@T/home");
  g_autoptr(FsgPolicyBuilder) b = NULL;
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) path = g_string_new (NULL);
  FsgPathState state;
  guint n_rules;

  fsg_test_mkdir (tmp_root, "many");
  b = fsg_policy_builder_new (cwd, home, NULL);
  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, cwd, "--rw", &error));
  for (guint i = 0; i < 100; i++)
    {
      g_autofree char *pat = g_strdup_printf ("**/d%u/**/e%u", i, i);
      g_assert_true (fsg_policy_builder_add_rule (b, i == 99 ? FSG_RULE_DENY_READ : FSG_RULE_DENY_WRITE,
                                                  pat, "--deny", &error));
    }
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  fsg_policy_rules (policy, &n_rules);
  g_assert_cmpuint (n_rules, ==, 101);

  g_string_append (path, cwd);
  state = walk (policy, cwd);
  for (guint i = 0; i < 100; i++)
    {
      g_autofree char *name = g_strdup_printf ("d%u", i);
      FsgPathState whole;

      state = fsg_policy_child_state (policy, &state, name);
      g_string_append_printf (path, "/%s", name);
      whole = fsg_policy_decide (policy, path->str);
      if (!states_equal (&whole, &state))
        {
          g_test_fail_printf ("%s: whole-path and incremental differ", path->str);
          return;
        }
      g_assert_cmpint (state.access, ==, FSG_ACCESS_RW);
    }
  /* every "**" is live now: e50 matches rule 50 (deny-write), e99 is denied */
  {
    FsgPathState e50 = fsg_policy_child_state (policy, &state, "e50");
    FsgPathState e99 = fsg_policy_child_state (policy, &state, "e99");
    FsgPathState other = fsg_policy_child_state (policy, &state, "zz");
    g_autofree char *p50 = g_strconcat (path->str, "/e50", NULL);
    g_autofree char *p99 = g_strconcat (path->str, "/e99", NULL);
    FsgPathState w50 = fsg_policy_decide (policy, p50);
    FsgPathState w99 = fsg_policy_decide (policy, p99);

    g_assert_cmpint (e50.access, ==, FSG_ACCESS_RO);
    g_assert_cmpuint (e50.rule->index, ==, 51);
    g_assert_cmpint (e99.access, ==, FSG_ACCESS_DENY);
    g_assert_cmpint (other.access, ==, FSG_ACCESS_RW);
    g_assert_true (states_equal (&e50, &w50));
    g_assert_true (states_equal (&e99, &w99));
    /* the interned set is shared */
    g_assert_true (fsg_policy_child_state (policy, &state, "zz").set == other.set);
  }
}

/* Many threads query one policy at once (the intern table is shared). */
typedef struct
{
  const FsgPolicy *policy;
  const char *base;
  guint seed;
  guint mismatches;
} ThreadData;

static gpointer
thread_walk (gpointer data)
{
  ThreadData *td = data;
  GRand *rand = g_rand_new_with_seed (td->seed);
  FsgPathState base = walk (td->policy, td->base);

  for (guint i = 0; i < 3000; i++)
    {
      g_autoptr(GString) path = g_string_new (td->base);
      FsgPathState s = base;
      guint depth = (guint) g_rand_int_range (rand, 1, 6);

      for (guint d = 0; d < depth; d++)
        {
          const char *name = walk_names[g_rand_int_range (rand, 0, G_N_ELEMENTS (walk_names))];
          s = fsg_policy_child_state (td->policy, &s, name);
          g_string_append_printf (path, "/%s", name);
        }
      {
        FsgPathState w = fsg_policy_decide (td->policy, path->str);
        FsgPathState again = walk (td->policy, path->str);
        if (!states_equal (&w, &s) || again.set != s.set)
          td->mismatches++;
      }
    }
  g_rand_free (rand);
  return NULL;
}

/* Run @data (a GTestFunc) with "@T" in a directory on the trusted system
 * chain (root-owned, not group/other-writable up to /; see
 * fsg_test_trusted_tmpdir_new). /tmp is world-writable, so a symlink under
 * it is never trusted as a root (issue 14 item 1). */
static void
run_in_trusted_tree (gconstpointer data)
{
  char *dir = fsg_test_trusted_tmpdir_new ("decide");
  char *saved = tmp_root;

  if (dir == NULL)
    return;
  tmp_root = dir;
  ((GTestFunc) data) ();
  tmp_root = saved;
  fsg_test_tmpdir_free (dir);
}

static void
test_threads (void)
{
  const char *const tree[] = { "thr/a/b", "thr/.git", NULL };
  const char *const cli[] = { "--ro=@T/thr", "--rw=@T/thr/a", "--deny-read=*.pem", "--deny-read=.env",
                              "--deny-write=**/.git/hooks", "--deny-read=@T/thr/**/secrets",
                              "--deny-write=@T/thr/a/*/config", "--deny-read=x.*", NULL };
  g_autoptr(FsgPolicy) policy = NULL;
  g_autofree char *base = subst ("@T/thr");
  ThreadData td[6];
  GThread *threads[G_N_ELEMENTS (td)];

  make_tree (tree);
  policy = build ("none", NULL, NULL, NULL, NULL, cli);
  for (guint i = 0; i < G_N_ELEMENTS (td); i++)
    {
      td[i] = (ThreadData) { policy, base, g_test_rand_int (), 0 };
      threads[i] = g_thread_new ("walker", thread_walk, &td[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (td); i++)
    {
      g_thread_join (threads[i]);
      g_assert_cmpuint (td[i].mismatches, ==, 0);
    }
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  g_test_set_nonfatal_assertions ();

  tmp_root = (char *) fsg_test_scratch_dir ("decide");
  fsg_test_mkdir (tmp_root, "home");

  g_test_add_func ("/policy/decide/deny-wins", test_deny_wins);
  g_test_add_func ("/policy/decide/deny-rule-choice", test_deny_rule_choice);
  g_test_add_func ("/policy/decide/longest-root-wins", test_longest_root_wins);
  g_test_add_func ("/policy/decide/same-path-later-wins", test_same_path_later_wins);
  g_test_add_func ("/policy/decide/deny-write", test_deny_write);
  g_test_add_func ("/policy/decide/absent-and-synthetic", test_absent_and_synthetic);
  g_test_add_func ("/policy/decide/deny-on-synthetic", test_deny_on_synthetic);
  g_test_add_data_func ("/policy/decide/alias", test_alias, run_in_trusted_tree);
  g_test_add_data_func ("/policy/decide/alias-under-root", test_alias_under_root, run_in_trusted_tree);
  g_test_add_data_func ("/policy/decide/planted-symlink", test_planted_symlink, run_in_trusted_tree);
  g_test_add_func ("/policy/decide/protected-and-scope", test_protected_and_scope);
  g_test_add_func ("/policy/decide/synthetic-children", test_synthetic_children);
  g_test_add_func ("/policy/decide/profile/workspace-write", test_profile_workspace_write);
  g_test_add_func ("/policy/decide/profile/read-only", test_profile_read_only);
  g_test_add_func ("/policy/decide/profile/none", test_profile_none);
  g_test_add_func ("/policy/decide/secret-names/everywhere", test_secret_names_everywhere);
  g_test_add_func ("/policy/decide/secret-names/writable-in-system-tree",
                   test_secret_names_writable_in_system_tree);
  g_test_add_func ("/policy/decide/profile/table", test_profile_table);
  g_test_add_func ("/policy/decide/layering", test_layering);
  g_test_add_func ("/policy/decide/profile-override", test_profile_override);
  g_test_add_func ("/policy/decide/literal-canonical", test_literal_canonical);
  g_test_add_func ("/policy/decide/scope-of-denied", test_scope_of_denied);
  g_test_add_func ("/policy/decide/many-live-nodes", test_many_live_nodes);
  g_test_add_func ("/policy/decide/threads", test_threads);
  g_test_add_data_func ("/policy/decide/incremental-equals-whole", test_incremental_equals_whole, run_in_trusted_tree);

  ret = g_test_run ();
  fsg_test_scratch_cleanup ();
  return ret;
}
