/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The glob table: pattern/path pairs run through the real engine. Each row
 * builds a policy with `readonly = /` plus one deny-read rule (and again
 * `writable = /` plus one deny-write rule) through FsgPolicyBuilder, then
 * checks the whole-path decision and the incremental walk from "/" for the
 * path and each of its ancestors. Below that, direct cases for the
 * one-component matcher (fsg_glob_match, its case-insensitive twin, the
 * compiled pre-filter) and for fsg_glob_validate on malformed patterns.
 */
#include "config.h"

#include <string.h>

#include "policy/policy-private.h"
#include "tests/lib/testlib.h"

#define FAKE_HOME "/home/fsgate-tester"
#define FAKE_CWD "/fsgate-test-cwd"

typedef struct
{
  const char *pattern;
  const char *path;
  gboolean match; /* the path (or an ancestor) matches */
} EngineCase;

static const EngineCase engine_cases[] = {
  /* floating names: a pattern without '/' matches a name at any depth */
  { ".env", "/w/.env", TRUE },
  { ".env", "/.env", TRUE },
  { ".env", "/w/a/b/c/d/.env", TRUE },
  { ".env", "/w/.env.local", FALSE },
  { ".env", "/w/x.env", FALSE },
  { ".env", "/w/.env/inside", TRUE }, /* a denied directory denies below */
  { "*.pem", "/w/key.pem", TRUE },
  { "*.pem", "/w/a/b/key.pem", TRUE },
  { "*.pem", "/w/.pem", TRUE },          /* '*' matches a leading dot */
  { "*.pem", "/w/key.pem.bak", FALSE },
  { "*.pem", "/w/keypem", FALSE },
  { "*.pem", "/w/key.pem/x/y", TRUE },
  { "id_rsa*", "/w/.ssh/id_rsa", TRUE },
  { "id_rsa*", "/w/.ssh/id_rsa.pub", TRUE },
  { "id_rsa*", "/w/my_id_rsa", FALSE },
  { ".env.*", "/w/.env.production", TRUE },
  { ".env.*", "/w/.env", FALSE },
  { "*", "/w", TRUE },
  /* '?' is exactly one byte, never '/' */
  { "?.txt", "/w/a.txt", TRUE },
  { "?.txt", "/w/ab.txt", FALSE },
  { "?.txt", "/w/.txt", FALSE },
  { "/w/a?c", "/w/abc", TRUE },
  { "/w/a?c", "/w/a/c", FALSE },
  { "/w/a?c", "/w/a.c/d", TRUE },
  /* bracket expressions */
  { "[abc].c", "/w/b.c", TRUE },
  { "[abc].c", "/w/d.c", FALSE },
  { "[!a].c", "/w/b.c", TRUE },
  { "[!a].c", "/w/a.c", FALSE },
  { "[^a].c", "/w/a.c", FALSE },
  { "[a-z]1", "/w/q1", TRUE },
  { "[a-z]1", "/w/Q1", FALSE },
  { "[a-z]1", "/w/-1", FALSE },
  { "[]]x", "/w/]x", TRUE },
  { "[]]x", "/w/ax", FALSE },
  { "[!]]x", "/w/ax", TRUE },
  { "[a-]x", "/w/-x", TRUE },
  { "/w/[ab]*.y", "/w/bx.y", TRUE },
  { "/w/[ab]*.y", "/w/cx.y", FALSE },
  /* escapes */
  { "\\*", "/w/*", TRUE },
  { "\\*", "/w/a", FALSE },
  { "a\\?", "/w/a?", TRUE },
  { "a\\?", "/w/ab", FALSE },
  { "\\[x]", "/w/[x]", TRUE },
  { "\\[x]", "/w/x", FALSE },
  /* anchored: '*' never crosses '/' */
  { "/w/a/*/c", "/w/a/b/c", TRUE },
  { "/w/a/*/c", "/w/a/b/x/c", FALSE },
  { "/w/a/*/c", "/w/a/c", FALSE },
  { "/w/*/x", "/w/.hidden/x", TRUE },
  { "/w/a*", "/w/a/b", TRUE },
  { "/w/a*", "/w/abc", TRUE },
  { "/w/a*", "/w/b/a", FALSE },
  { "/w/a*", "/w", FALSE },
  { "/w/*.d/conf", "/w/x.d/conf", TRUE },
  { "/w/*.d/conf", "/w/x.d/y/conf", FALSE },
  /* "**" in the middle: zero or more directories */
  { "/w/a/**/b", "/w/a/b", TRUE },
  { "/w/a/**/b", "/w/a/x/b", TRUE },
  { "/w/a/**/b", "/w/a/x/y/b", TRUE },
  { "/w/a/**/b", "/w/a/x/b/z", TRUE },
  { "/w/a/**/b", "/w/a/xb", FALSE },
  { "/w/a/**/b", "/w/c/a/b", FALSE },
  { "/w/a/**/b", "/w/a", FALSE },
  { "/w/a/**/b/**/c", "/w/a/b/c", TRUE },
  { "/w/a/**/b/**/c", "/w/a/1/b/2/3/c", TRUE },
  { "/w/a/**/b/**/c", "/w/a/c", FALSE },
  { "/w/a/**/**/b", "/w/a/b", TRUE },
  { "/srv/**/secrets", "/srv/secrets", TRUE },
  { "/srv/**/secrets", "/srv/a/b/secrets", TRUE },
  { "/srv/**/secrets", "/srv/a/b/secrets/key", TRUE },
  { "/srv/**/secrets", "/w/srv/secrets", FALSE },
  { "/srv/**/secrets", "/srv/a/secrets.txt", FALSE },
  /* trailing "**": everything below, not the directory itself */
  { "/w/**", "/w/x", TRUE },
  { "/w/**", "/w/x/y/z", TRUE },
  { "/w/**", "/w", FALSE },
  { "/w/**", "/wx", FALSE },
  /* leading "**": a floating multi-component pattern */
  { "**/secrets", "/secrets", TRUE },
  { "**/secrets", "/w/x/secrets", TRUE },
  { "**/secrets", "/w/secretsx", FALSE },
  { "**/.git/hooks", "/w/p/.git/hooks", TRUE },
  { "**/.git/hooks", "/w/p/.git/hooks/pre-commit", TRUE },
  { "**/.git/hooks", "/w/p/.git/hooksx", FALSE },
  { "**/.git/hooks", "/w/p/.git", FALSE },
  { "**/.git/hooks", "/w/.git/x/hooks", FALSE },
  { "**/a/*/c", "/x/y/a/b/c", TRUE },
  { "/**/x", "/x", TRUE },
  { "/**/x", "/a/b/x", TRUE },
  /* '~' expands to the home directory of the builder */
  { "~/.ssh", FAKE_HOME "/.ssh", TRUE },
  { "~/.ssh", FAKE_HOME "/.ssh/id_ed25519", TRUE },
  { "~/.ssh", FAKE_HOME "/.sshx", FALSE },
  { "~/.ssh", "/home/other/.ssh", FALSE },
  { "~/.config/*.json", FAKE_HOME "/.config/a.json", TRUE },
  { "~/.config/*.json", FAKE_HOME "/.config/sub/a.json", FALSE },
  { "${HOME}/.aws", FAKE_HOME "/.aws/credentials", TRUE },
  { "${CWD}/*.o", FAKE_CWD "/main.o", TRUE },
  { "${CWD}/*.o", "/elsewhere/main.o", FALSE },
  /* trailing slashes and "." components are normalised away */
  { "/w/a/./b/", "/w/a/b", TRUE },
  { "/w//a", "/w/a", TRUE },
};

static FsgPolicy *
build_one (FsgRuleKind root_kind, FsgRuleKind deny_kind, const char *pattern)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (FAKE_CWD, FAKE_HOME, NULL);
  g_autoptr(GError) error = NULL;
  FsgPolicy *policy;

  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  g_assert_no_error (error);
  g_assert_true (fsg_policy_builder_add_rule (b, root_kind, "/", "--root", &error));
  g_assert_no_error (error);
  fsg_policy_builder_add_rule (b, deny_kind, pattern, "--deny", &error);
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  g_assert_nonnull (policy);
  return policy;
}

/* Walk @path from "/" and compare each step with the whole-path decision. */
static FsgPathState
walk_and_compare (const FsgPolicy *policy, const char *path)
{
  g_auto (GStrv) comps = fsg_path_split (path);
  g_autoptr(GString) prefix = g_string_new ("/");
  FsgPathState state = fsg_policy_root_state (policy);

  for (guint i = 0; comps[i]; i++)
    {
      FsgPathState whole;

      state = fsg_policy_child_state (policy, &state, comps[i]);
      if (prefix->len > 1)
        g_string_append_c (prefix, '/');
      g_string_append (prefix, comps[i]);
      whole = fsg_policy_decide (policy, prefix->str);
      if (whole.access != state.access || whole.flags != state.flags || whole.rule != state.rule ||
          whole.depth != state.depth)
        g_test_fail_printf ("%s: incremental (%s, flags %u, rule %p, depth %u) != whole-path "
                            "(%s, flags %u, rule %p, depth %u)",
                            prefix->str, fsg_access_to_string (state.access), state.flags,
                            (void *) state.rule, state.depth, fsg_access_to_string (whole.access),
                            whole.flags, (void *) whole.rule, whole.depth);
    }
  return state;
}

static void
test_engine_table (gconstpointer data)
{
  const FsgRuleKind deny_kind = GPOINTER_TO_INT (data);
  const FsgRuleKind root_kind = deny_kind == FSG_RULE_DENY_READ ? FSG_RULE_READONLY : FSG_RULE_WRITABLE;
  const FsgAccess hit = deny_kind == FSG_RULE_DENY_READ ? FSG_ACCESS_DENY : FSG_ACCESS_RO;
  const FsgAccess miss = deny_kind == FSG_RULE_DENY_READ ? FSG_ACCESS_RO : FSG_ACCESS_RW;

  for (guint i = 0; i < G_N_ELEMENTS (engine_cases); i++)
    {
      const EngineCase *c = &engine_cases[i];
      g_autoptr(FsgPolicy) policy = build_one (root_kind, deny_kind, c->pattern);
      guint n_rules;
      const FsgRule *const *rules = fsg_policy_rules (policy, &n_rules);
      FsgPathState whole = fsg_policy_decide (policy, c->path);
      FsgPathState inc = walk_and_compare (policy, c->path);

      g_test_message ("%s %s on %s", fsg_rule_kind_to_key (deny_kind), c->pattern, c->path);
      g_assert_cmpuint (n_rules, ==, 2);
      if (c->match)
        {
          if (whole.access != hit || whole.rule != rules[1])
            g_test_fail_printf ("pattern '%s', path '%s': expected %s by the rule, got %s",
                                c->pattern, c->path, fsg_access_to_string (hit),
                                fsg_access_to_string (whole.access));
        }
      else if (whole.access != miss || whole.rule != rules[0])
        g_test_fail_printf ("pattern '%s', path '%s': expected no match (%s), got %s",
                            c->pattern, c->path, fsg_access_to_string (miss),
                            fsg_access_to_string (whole.access));
      g_assert_cmpint (inc.access, ==, whole.access);
      g_assert_true (inc.rule == whole.rule);
    }
}

/* Anchored patterns are flagged as such, floating ones are not; globs are
 * marked. */
static void
test_rule_shape (void)
{
  static const struct
  {
    const char *pattern;
    const char *normalised;
    gboolean anchored;
    gboolean is_glob;
  } cases[] = {
    { "*.pem", "*.pem", FALSE, TRUE },
    { "**/.git/hooks", "**/.git/hooks", FALSE, TRUE },
    { "**/**/x", "**/x", FALSE, TRUE },
    { "/etc/shadow", "/etc/shadow", TRUE, FALSE },
    { "/w/a/**/b", "/w/a/**/b", TRUE, TRUE },
    { "/w/**", "/w/**", TRUE, TRUE }, /* printed as written, so it parses back the same */
    { "/w/a/", "/w/a", TRUE, FALSE },
    { "~/.ssh", FAKE_HOME "/.ssh", TRUE, FALSE },
    { "/w/\\*", "/w/\\*", TRUE, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(FsgPolicy) policy = build_one (FSG_RULE_READONLY, FSG_RULE_DENY_READ, cases[i].pattern);
      const FsgRule *const *rules = fsg_policy_rules (policy, NULL);

      g_test_message ("%s", cases[i].pattern);
      g_assert_cmpstr (rules[1]->path, ==, cases[i].normalised);
      g_assert_cmpint (rules[1]->anchored, ==, cases[i].anchored);
      g_assert_cmpint (rules[1]->is_glob, ==, cases[i].is_glob);
      g_assert_cmpint (rules[1]->kind, ==, FSG_RULE_DENY_READ);
      g_assert_cmpstr (rules[1]->origin, ==, "--deny");
    }
}

typedef struct
{
  const char *pattern;
  const char *name;
  gboolean match;
} MatchCase;

static const MatchCase match_cases[] = {
  { "abc", "abc", TRUE },
  { "abc", "abd", FALSE },
  { "abc", "ab", FALSE },
  { "abc", "abcd", FALSE },
  { "*", "", TRUE },
  { "*", "anything", TRUE },
  { "*", ".hidden", TRUE },
  { "?", "", FALSE },
  { "?", ".", TRUE },
  { "??", "a", FALSE },
  { "a*", "a", TRUE },
  { "*a", "bba", TRUE },
  { "*a", "bab", FALSE },
  { "*a*a", "aaa", TRUE },
  { "*a*a", "ab", FALSE },
  { "a*b*c", "aXbYc", TRUE },
  { "a*b*c", "aXbYcZ", FALSE },
  { "a*b*c", "abbbc", TRUE },
  { "*.tar.gz", "x.tar.gz", TRUE },
  { "*.tar.gz", "x.tar.gzz", FALSE },
  { "***", "x", TRUE },
  { "[abc]", "b", TRUE },
  { "[abc]", "d", FALSE },
  { "[abc]", "", FALSE },
  { "[!abc]", "d", TRUE },
  { "[!abc]", "a", FALSE },
  { "[^abc]", "a", FALSE },
  { "[a-c]x", "bx", TRUE },
  { "[a-c]x", "dx", FALSE },
  { "[a-cx-z]", "y", TRUE },
  { "[]]", "]", TRUE },
  { "[]a]", "a", TRUE },
  { "[!]]", "]", FALSE },
  { "[a-]", "-", TRUE },
  { "[\\]]", "]", TRUE },
  { "[*]", "*", TRUE },
  { "[*]", "a", FALSE },
  { "\\*", "*", TRUE },
  { "\\*", "a", FALSE },
  { "\\?", "?", TRUE },
  { "\\[a]", "[a]", TRUE },
  { "\\a", "a", TRUE },
  { "a\\*b", "a*b", TRUE },
  { "a\\*b", "axb", FALSE },
  { "A*", "a", FALSE }, /* case-sensitive */
  { "\xc3\xa9*", "\xc3\xa9t\xc3\xa9", TRUE }, /* bytes */
  { "?\xa9", "\xc3\xa9", TRUE },
  { "[", "[", FALSE },  /* malformed: never matches */
};

static void
test_match_table (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (match_cases); i++)
    {
      const MatchCase *c = &match_cases[i];
      g_autofree char *pattern_shown = g_strescape (c->pattern, NULL);
      g_autofree char *name_shown = g_strescape (c->name, NULL);
      FsgGlob glob;

      g_test_message ("'%s' ~ '%s'", pattern_shown, name_shown);
      g_assert_cmpint (fsg_glob_match (c->pattern, c->name), ==, c->match);
      /* the compiled pre-filter never changes the answer */
      fsg_glob_init (&glob, c->pattern);
      g_assert_cmpint (fsg_glob_matches (&glob, c->name, strlen (c->name)), ==, c->match);
      fsg_glob_clear (&glob);
    }
}

static void
test_prefilter (void)
{
  static const struct
  {
    const char *pattern;
    const char *prefix;
    const char *suffix;
    gsize min_len;
  } cases[] = {
    { "*.pem", "", ".pem", 4 },
    { "id_rsa*", "id_rsa", "", 6 },
    { "a?c", "a", "c", 3 },
    { "[ab]*.y", "", ".y", 3 },
    { "x\\*y*z", "x*y", "z", 4 },
    { "*\\*", "", "*", 1 },
    { "plain", "plain", "", 5 },
    { "*", "", "", 0 },
  };
  FsgGlob glob;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      fsg_glob_init (&glob, cases[i].pattern);
      g_test_message ("%s", cases[i].pattern);
      g_assert_cmpstr (glob.pattern, ==, cases[i].pattern);
      g_assert_cmpstr (glob.prefix, ==, cases[i].prefix);
      g_assert_cmpstr (glob.suffix, ==, cases[i].suffix);
      g_assert_cmpuint (glob.prefix_len, ==, strlen (cases[i].prefix));
      g_assert_cmpuint (glob.suffix_len, ==, strlen (cases[i].suffix));
      g_assert_cmpuint (glob.min_len, ==, cases[i].min_len);
      fsg_glob_clear (&glob);
    }
  /* an overlapping prefix and suffix cannot pass a name that is too short */
  fsg_glob_init (&glob, "ab*ba");
  g_assert_false (fsg_glob_matches (&glob, "aba", 3));
  g_assert_true (fsg_glob_matches (&glob, "abba", 4));
  fsg_glob_clear (&glob);
}

static void
test_match_nocase (void)
{
  g_assert_true (fsg_glob_match_nocase ("*KEY*", "my_api_key"));
  g_assert_true (fsg_glob_match_nocase ("*KEY*", "MONKEY"));
  g_assert_true (fsg_glob_match_nocase ("*secret*", "AWS_SECRET_ACCESS"));
  g_assert_false (fsg_glob_match_nocase ("*TOKEN*", "TOKE"));
  g_assert_true (fsg_glob_match_nocase ("[A-Z]x", "qX"));
  g_assert_true (fsg_glob_match_nocase ("[a-z]", "Q"));
  g_assert_false (fsg_glob_match_nocase ("[!a-z]", "Q"));
  g_assert_true (fsg_glob_match_nocase ("aws_*", "AWS_REGION"));
  g_assert_false (fsg_glob_match ("aws_*", "AWS_REGION"));
}

static void
test_has_magic_unescape (void)
{
  static const struct
  {
    const char *comp;
    gboolean magic;
    const char *unescaped;
  } cases[] = {
    { "plain", FALSE, "plain" },
    { "*.pem", TRUE, "*.pem" },
    { "a?", TRUE, "a?" },
    { "[ab]", TRUE, "[ab]" },
    { "\\*", FALSE, "*" },
    { "a\\?b", FALSE, "a?b" },
    { "\\[x]", FALSE, "[x]" },
    { "\\\\", FALSE, "\\" },
    { "\\\\*", TRUE, "\\*" },
    { "x]", FALSE, "x]" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *u = fsg_glob_unescape (cases[i].comp);

      g_test_message ("%s", cases[i].comp);
      g_assert_cmpint (fsg_glob_has_magic (cases[i].comp), ==, cases[i].magic);
      g_assert_cmpstr (u, ==, cases[i].unescaped);
    }
}

static void
test_validate (void)
{
  static const struct
  {
    const char *comp;
    const char *error; /* NULL: valid */
  } cases[] = {
    { "a", NULL },
    { "*.pem", NULL },
    { "[abc]", NULL },
    { "[]]", NULL },
    { "[!a]x", NULL },
    { "\\*", NULL },
    { "\\[", NULL },
    { "a]", NULL },
    { "[", "unclosed '['" },
    { "[abc", "unclosed '['" },
    { "x[!", "unclosed '['" },
    { "[]", "unclosed '['" },
    { "a**b", "'**' must be a whole path component" },
    { "**", "'**' must be a whole path component" },
    { "x**", "'**' must be a whole path component" },
    { "a\\", "lone backslash" },
    { "\\", "lone backslash" },
    { "", "empty path component" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      gboolean ok = fsg_glob_validate (cases[i].comp, &error);

      g_test_message ("'%s'", cases[i].comp);
      if (cases[i].error == NULL)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
        }
      else
        {
          g_assert_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE);
          g_assert_false (ok);
          g_assert_nonnull (strstr (error->message, cases[i].error));
        }
    }
}

/* Malformed globs are rejected where rules are added, naming the pattern. */
static void
test_malformed_in_rules (void)
{
  static const struct
  {
    const char *pattern;
    const char *error;
  } cases[] = {
    { "[abc", "pattern '[abc': '[abc': unclosed '['" },
    { "/w/a**b/c", "pattern '/w/a**b/c': 'a**b': '**' must be a whole path component" },
    { "/w/x\\", "pattern '/w/x\\': 'x\\' ends with a lone backslash" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new (FAKE_CWD, FAKE_HOME, NULL);
      g_autoptr(GError) error = NULL;

      g_assert_false (fsg_policy_builder_add_rule (b, FSG_RULE_DENY_READ, cases[i].pattern,
                                                   "--deny-read", &error));
      g_assert_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE);
      g_test_message ("%s", error->message);
      g_assert_true (g_str_has_prefix (error->message, "--deny-read '"));
      g_assert_nonnull (strstr (error->message, cases[i].error));
    }
}

/* FsgRule.is_glob is documented as "contains *, ? or [...]": a floating
 * literal name such as ".env" contains none of them. */
static void
test_floating_literal_not_glob (void)
{
  g_autoptr(FsgPolicy) policy = build_one (FSG_RULE_READONLY, FSG_RULE_DENY_READ, ".env");
  const FsgRule *const *rules = fsg_policy_rules (policy, NULL);

  g_assert_cmpstr (rules[1]->path, ==, ".env");
  g_assert_false (rules[1]->anchored);
  g_assert_false (rules[1]->is_glob);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* report every failing case and keep running the other tests */
  g_test_set_nonfatal_assertions ();

  g_test_add_data_func ("/policy/glob/engine/deny-read", GINT_TO_POINTER (FSG_RULE_DENY_READ),
                        test_engine_table);
  g_test_add_data_func ("/policy/glob/engine/deny-write", GINT_TO_POINTER (FSG_RULE_DENY_WRITE),
                        test_engine_table);
  g_test_add_func ("/policy/glob/engine/rule-shape", test_rule_shape);
  g_test_add_func ("/policy/glob/engine/floating-literal-not-glob", test_floating_literal_not_glob);
  g_test_add_func ("/policy/glob/match", test_match_table);
  g_test_add_func ("/policy/glob/prefilter", test_prefilter);
  g_test_add_func ("/policy/glob/match-nocase", test_match_nocase);
  g_test_add_func ("/policy/glob/has-magic-unescape", test_has_magic_unescape);
  g_test_add_func ("/policy/glob/validate", test_validate);
  g_test_add_func ("/policy/glob/malformed-in-rules", test_malformed_in_rules);

  return g_test_run ();
}
