/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The policy file parser and the builder: every error case with its error
 * code, message and FILE:LINE (or flag), the duration and size tables, the
 * command-line layer's relative paths, variable expansion ('~', ${CWD},
 * ${HOME}, ${XDG_RUNTIME_DIR}, '$$'), and the key-file round trip:
 * fsg_policy_to_keyfile() of a policy parses back to a policy that prints
 * the same text and decides every path the same way. All files live in a
 * temporary directory, removed at exit (also after a failed assertion); the
 * builder gets a fake cwd and home inside it, so no real home is touched.
 */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy-private.h"
#include "tests/lib/testlib.h"

static char *tmp_root; /* canonical */
static char *fake_cwd;
static char *fake_home;

static FsgPolicyBuilder *
new_builder (const char *runtime_dir)
{
  return fsg_policy_builder_new (fake_cwd, fake_home, runtime_dir);
}

static char *
tmp_path (const char *rel)
{
  return g_build_filename (tmp_root, rel, NULL);
}

/* Replace every "@T" in @text by the temporary root. */
static char *
subst (const char *text)
{
  g_autoptr(GString) s = g_string_new (text);

  g_string_replace (s, "@T", tmp_root, 0);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* ---- Error table ------------------------------------------------------- */

typedef enum
{
  AT_ADD,    /* fsg_policy_builder_add_data fails */
  AT_FINISH, /* add_data succeeds, finish fails */
} ErrorStage;

typedef struct
{
  const char *test;
  const char *text; /* "@T" is the temporary root */
  ErrorStage stage;
  FsgPolicyError code;
  const char *message; /* the start of the message, after substitution */
} ErrorCase;

static const ErrorCase error_cases[] = {
  { "pattern-ends-in-space", "[filesystem]\ndeny-read = /a /\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-read' in [filesystem]: '/a ' starts or ends with a space" },
  { "unknown-group", "# a policy\n[bogus]\nx = 1\n", AT_ADD, FSG_POLICY_ERROR_UNKNOWN_KEY,
    "pol.ini:2: unknown group [bogus] (known: [policy], [filesystem]" },
  { "unknown-key", "[filesystem]\nreadonly = /\nwriteable = /tmp\n", AT_ADD, FSG_POLICY_ERROR_UNKNOWN_KEY,
    "pol.ini:3: unknown key 'writeable' in [filesystem] (known: writable, readonly, deny-read, "
    "deny-write, secret-names, hide-denied, git, devices, setid, hybrid, hybrid-trees)" },
  { "bad-devices", "[filesystem]\ndevices = yes\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'devices' in [filesystem]: 'yes' is not one of refuse, allow" },
  { "bad-setid", "[filesystem]\nsetid = Keep\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'setid' in [filesystem]: 'Keep' is not one of strip, keep" },
  { "bad-hybrid", "[filesystem]\nhybrid = maybe\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'hybrid' in [filesystem]: 'maybe' is not a boolean" },
  { "hybrid-tree-relative", "[filesystem]\nhybrid-trees = /opt/a;opt/b\n", AT_ADD,
    FSG_POLICY_ERROR_RELATIVE_PATH,
    "pol.ini:2: key 'hybrid-trees' in [filesystem]: 'opt/b' is not an absolute path" },
  { "hybrid-tree-root", "[filesystem]\nhybrid-trees = /opt/../\n", AT_ADD,
    FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'hybrid-trees' in [filesystem]: '/' cannot be a hybrid tree" },
  { "unknown-key-in-other-group", "[network]\ntimeout = 1s\n", AT_ADD, FSG_POLICY_ERROR_UNKNOWN_KEY,
    "pol.ini:2: unknown key 'timeout' in [network] (known: allow)" },
  { "localised-key", "[network]\nallow[de] = true\n", AT_ADD, FSG_POLICY_ERROR_UNKNOWN_KEY,
    "pol.ini:2: unknown key 'allow[de]' in [network]" },
  { "repeated-key", "[network]\nallow = true\n\n[process]\ntimeout = 1s\n[network]\nallow = false\n",
    AT_ADD, FSG_POLICY_ERROR_SYNTAX, "pol.ini:7: key 'allow' in [network] repeats line 2" },
  { "key-before-group", "# comment\n\nallow = true\n[network]\n", AT_ADD, FSG_POLICY_ERROR_SYNTAX,
    "pol.ini:3: key 'allow' before any [group]" },
  { "malformed-line", "[network]\nallow true\n", AT_ADD, FSG_POLICY_ERROR_SYNTAX,
    "pol.ini:2: expected 'key = value', '[group]' or a '#' comment, found 'allow true'" },
  { "malformed-group", "[network\nallow = true\n", AT_ADD, FSG_POLICY_ERROR_SYNTAX,
    "pol.ini:1: malformed group header '[network'" },
  { "group-trailing-text", "[network] x\n", AT_ADD, FSG_POLICY_ERROR_SYNTAX,
    "pol.ini:1: malformed group header" },
  { "bad-boolean", "[network]\nallow = maybe\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'allow' in [network]: 'maybe' is not a boolean (accepted: true, false, yes, no, on, off, 1, 0 (in any case))" },
  { "bad-boolean-word", "[filesystem]\nhide-denied = enabled\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'hide-denied' in [filesystem]: 'enabled' is not a boolean (accepted: true, false, yes, no, on, off" },
  { "dollar-home", "[filesystem]\nwritable = $HOME/x\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'writable' in [filesystem]: '$HOME/x': write '${HOME}' with braces" },
  { "dollar-home-pattern", "[filesystem]\ndeny-read = ?$CWD/x\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-read' in [filesystem]: '?$CWD/x': write '${CWD}' with braces" },
  { "secret-names-path", "[filesystem]\nsecret-names = a/b.pem\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'secret-names' in [filesystem]: 'a/b.pem' is not a file name glob" },
  { "secret-names-glob", "[filesystem]\nsecret-names = [x\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'secret-names' in [filesystem]: pattern '[x'" },
  { "bad-duration", "[process]\n\ntimeout = 10 parsecs\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:3: key 'timeout' in [process]: '10 parsecs' is not a duration" },
  { "bad-duration-no-unit", "[process]\nkill-after = 10\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'kill-after' in [process]: '10' is not a duration" },
  { "duration-too-long", "[process]\ntimeout = 400d\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'timeout' in [process]: '400d' is too long (at most 365d)" },
  { "bad-size", "[output]\noutput-cap = 1TB\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'output-cap' in [output]: '1TB' is not a size" },
  { "size-too-large", "[output]\noutput-cap = 2048GiB\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'output-cap' in [output]: '2048GiB' is too large (at most 1TiB)" },
  { "cap-above-capture", "[output]\noutput-cap = 5GiB\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'output-cap' in [output]: '5GiB' is larger than fsgate-run can capture "
    "(at most 1GiB per stream)" },
  { "bad-inherit", "[environment]\ninherit = some\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'inherit' in [environment]: 'some' is not one of core, all, none" },
  { "bad-set", "[environment]\nset = 1X=2\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'set' in [environment]: '1X=2' is not NAME=VALUE with a valid variable name" },
  { "bad-set-no-equals", "[environment]\nset = A=1;B\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'set' in [environment]: 'B' is not NAME=VALUE" },
  { "bad-exclude", "[environment]\nexclude = A=B\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'exclude' in [environment]: 'A=B' is not a variable-name glob" },
  { "bad-include-only-glob", "[environment]\ninclude-only = AWS_[\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'include-only' in [environment]: 'AWS_[': unclosed '['" },
  { "relative-root", "[filesystem]\nreadonly = /\nwritable = src\n", AT_ADD, FSG_POLICY_ERROR_RELATIVE_PATH,
    "pol.ini:3: key 'writable' in [filesystem]: 'src' is relative; policy files need absolute paths" },
  { "relative-root-dot", "[filesystem]\nreadonly = ./src\n", AT_ADD, FSG_POLICY_ERROR_RELATIVE_PATH,
    "pol.ini:2: key 'readonly' in [filesystem]: './src' is relative" },
  { "repeated-key-same-group", "[filesystem]\nreadonly = /\n\nreadonly = @T/nope\n", AT_ADD, FSG_POLICY_ERROR_SYNTAX,
    "pol.ini:4: key 'readonly' in [filesystem] repeats line 2" },
  { "missing-root", "[filesystem]\n# roots\nwritable = @T/nope/deeper\n", AT_FINISH,
    FSG_POLICY_ERROR_MISSING_ROOT,
    "pol.ini:3: writable root '@T/nope/deeper': No such file or directory (create it, or start "
    "the path with '?' to make it optional)" },
  { "malformed-glob", "[filesystem]\ndeny-read = .env;*.[ch\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-read' in [filesystem]: pattern '*.[ch': '*.[ch': unclosed '['" },
  { "malformed-glob-star", "[filesystem]\ndeny-write = /a/b**/c\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-write' in [filesystem]: pattern '/a/b**/c': 'b**': '**' must be a whole "
    "path component" },
  { "relative-pattern", "[filesystem]\ndeny-read = src/secret\n", AT_ADD, FSG_POLICY_ERROR_RELATIVE_PATH,
    "pol.ini:2: key 'deny-read' in [filesystem]: pattern 'src/secret' is relative; a pattern with "
    "'/' needs an absolute path" },
  { "dotdot-pattern", "[filesystem]\ndeny-read = /srv/../etc/shadow\n", AT_ADD,
    FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-read' in [filesystem]: pattern '/srv/../etc/shadow': '..' is not allowed "
    "in patterns" },
  { "whole-view-slash", "[filesystem]\ndeny-read = /\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-read' in [filesystem]: pattern '/' matches the whole view" },
  { "whole-view-starstar", "[filesystem]\ndeny-read = **\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-read' in [filesystem]: pattern '**' matches the whole view" },
  { "whole-view-anchored-starstar", "[filesystem]\ndeny-write = /**\n", AT_ADD,
    FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-write' in [filesystem]: pattern '/**' matches the whole view" },
  { "whole-view-slashes", "[filesystem]\ndeny-read = //./\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-read' in [filesystem]: pattern '//./' matches the whole view" },
  { "unknown-profile", "[policy]\nprofile = yolo\n", AT_ADD, FSG_POLICY_ERROR_UNKNOWN_PROFILE,
    "pol.ini:2: key 'profile' in [policy]: unknown profile 'yolo' (known: workspace-write, "
    "read-only, none)" },
  { "unknown-variable", "[filesystem]\ndeny-read = ${FOO}/x\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'deny-read' in [filesystem]: '${FOO}/x': unknown variable ${FOO}" },
  { "lowercase-variable", "[filesystem]\nreadonly = ${home}\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'readonly' in [filesystem]: '${home}': unknown variable ${home}" },
  { "unclosed-variable", "[filesystem]\nreadonly = ${HOME\n", AT_ADD, FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:2: key 'readonly' in [filesystem]: '${HOME': unclosed '${'" },
  { "unset-runtime-dir", "[filesystem]\n\n\ndeny-read = ${XDG_RUNTIME_DIR}/bus\n", AT_ADD,
    FSG_POLICY_ERROR_INVALID_VALUE,
    "pol.ini:4: key 'deny-read' in [filesystem]: '${XDG_RUNTIME_DIR}/bus': ${XDG_RUNTIME_DIR} is "
    "not set" },
  { "invalid-escape", "[filesystem]\ndeny-read = \\q\n", AT_ADD, FSG_POLICY_ERROR_SYNTAX,
    "pol.ini:2: key 'deny-read' in [filesystem]: " },
  { "include-no-directory", "[policy]\ninclude = other.ini\n", AT_ADD, FSG_POLICY_ERROR_RELATIVE_PATH,
    "pol.ini:2: key 'include' in [policy]: 'other.ini' is relative and pol.ini has no directory" },
  { "include-not-found", "[policy]\ninclude = @T/missing.ini\n", AT_ADD, FSG_POLICY_ERROR_NOT_FOUND,
    "pol.ini:2: key 'include' in [policy]: cannot read policy file '@T/missing.ini'" },
};

static void
test_error_case (gconstpointer data)
{
  const ErrorCase *c = data;
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = subst (c->text);
  g_autofree char *expected = subst (c->message);
  gboolean added = fsg_policy_builder_add_data (b, "pol.ini", text, -1, &error);

  if (c->stage == AT_FINISH)
    {
      g_autoptr(FsgPolicy) policy = NULL;

      g_assert_no_error (error);
      g_assert_true (added);
      policy = fsg_policy_builder_finish (b, &error);
      g_assert_null (policy);
    }
  else
    g_assert_false (added);
  g_assert_error (error, FSG_POLICY_ERROR, (gint) c->code);
  if (error == NULL)
    return;
  g_test_message ("%s", error->message);
  if (!g_str_has_prefix (error->message, expected))
    g_test_fail_printf ("message '%s' does not start with '%s'", error->message, expected);
}

/* ---- Byte-level errors and files --------------------------------------- */

static void
expect_error (GError *error, FsgPolicyError code, const char *prefix)
{
  g_assert_error (error, FSG_POLICY_ERROR, (gint) code);
  if (error == NULL)
    return;
  g_test_message ("%s", error->message);
  if (!g_str_has_prefix (error->message, prefix))
    g_test_fail_printf ("message '%s' does not start with '%s'", error->message, prefix);
}

static void
test_nul_byte (void)
{
  static const char data[] = "[network]\nallow = true\0\n";
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;

  g_assert_false (fsg_policy_builder_add_data (b, "pol.ini", data, sizeof data - 1, &error));
  expect_error (error, FSG_POLICY_ERROR_SYNTAX, "pol.ini: contains a NUL byte; not a policy file");
}

static void
test_invalid_utf8 (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;

  g_assert_false (fsg_policy_builder_add_data (b, "pol.ini", "[network]\n# caf\xe9\nallow = true\n",
                                               -1, &error));
  expect_error (error, FSG_POLICY_ERROR_SYNTAX, "pol.ini:2: not valid UTF-8");
}

static void
test_file_is_directory (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = g_strdup_printf ("cannot read policy file '%s': is a directory", fake_cwd);

  g_assert_false (fsg_policy_builder_add_file (b, fake_cwd, &error));
  expect_error (error, FSG_POLICY_ERROR_SYNTAX, expected);
}

static void
test_file_not_found (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *missing = tmp_path ("no-such.ini");
  g_autofree char *expected = g_strdup_printf ("cannot read policy file '%s': No such file", missing);

  g_assert_false (fsg_policy_builder_add_file (b, missing, &error));
  expect_error (error, FSG_POLICY_ERROR_NOT_FOUND, expected);
  g_clear_error (&error);
  g_assert_false (fsg_policy_builder_add_file (b, "", &error));
  expect_error (error, FSG_POLICY_ERROR_NOT_FOUND, "--policy: empty file name");
}

/* Errors in a file on disk name that file and its line. */
static void
test_file_error_names_file (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = tmp_path ("files/bad.ini");
  g_autofree char *expected = NULL;

  fsg_test_write_file (tmp_root, "files/bad.ini", "[process]\ntimeout = 1s\n\n[network]\nallow = sometimes\n");
  expected = g_strdup_printf ("%s:5: key 'allow' in [network]: 'sometimes' is not a boolean", path);
  g_assert_false (fsg_policy_builder_add_file (b, path, &error));
  expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE, expected);
}

static void
test_optional_missing_root (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = subst ("[policy]\nprofile = none\n[filesystem]\n"
                                 "readonly = ?@T/nope;?~/missing;@T\n"
                                 "writable = ?${HOME}/also-missing\n");
  guint n;
  const FsgRule *const *rules;

  g_assert_true (fsg_policy_builder_add_data (b, "pol.ini", text, -1, &error));
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  g_assert_nonnull (policy);
  if (policy == NULL)
    return;
  rules = fsg_policy_rules (policy, &n);
  g_assert_cmpuint (n, ==, 1);
  if (n != 1)
    return;
  g_assert_cmpstr (rules[0]->path, ==, tmp_root);
  g_assert_cmpstr (rules[0]->origin, ==, "pol.ini:4");
  g_assert_cmpint (rules[0]->origin_kind, ==, FSG_ORIGIN_FILE);
  g_assert_null (rules[n]);
}

static void
test_runtime_dir (void)
{
  const char *text = "[policy]\nprofile = none\n[filesystem]\n"
                     "deny-read = ?${XDG_RUNTIME_DIR};?${XDG_RUNTIME_DIR}/bus\n";
  guint n;

  /* unset: entries with '?' are dropped */
  {
    g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
    g_autoptr(FsgPolicy) policy = NULL;
    g_autoptr(GError) error = NULL;

    g_assert_true (fsg_policy_builder_add_data (b, "pol.ini", text, -1, &error));
    policy = fsg_policy_builder_finish (b, &error);
    g_assert_no_error (error);
    fsg_policy_rules (policy, &n);
    g_assert_cmpuint (n, ==, 0);
    if (n != 0)
      return;
  }
  /* set: both expand */
  {
    g_autoptr(FsgPolicyBuilder) b = new_builder ("/run/user/4242");
    g_autoptr(FsgPolicy) policy = NULL;
    g_autoptr(GError) error = NULL;
    const FsgRule *const *rules;

    g_assert_true (fsg_policy_builder_add_data (b, "pol.ini", text, -1, &error));
    policy = fsg_policy_builder_finish (b, &error);
    g_assert_no_error (error);
    rules = fsg_policy_rules (policy, &n);
    g_assert_cmpuint (n, ==, 2);
    if (n != 2)
      return;
    g_assert_cmpstr (rules[0]->path, ==, "/run/user/4242");
    g_assert_cmpstr (rules[1]->pattern, ==, "/run/user/4242/bus");
  }
  /* an empty XDG_RUNTIME_DIR counts as unset */
  {
    g_autoptr(FsgPolicyBuilder) b = new_builder ("");
    g_autoptr(GError) error = NULL;

    g_assert_false (fsg_policy_builder_add_data (b, "pol.ini",
                                                 "[filesystem]\ndeny-read = ${XDG_RUNTIME_DIR}\n",
                                                 -1, &error));
    expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE,
                  "pol.ini:2: key 'deny-read' in [filesystem]: '${XDG_RUNTIME_DIR}': ${XDG_RUNTIME_DIR} is not set");
  }
}

static void
test_set_profile_unknown (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;

  g_assert_false (fsg_policy_builder_set_profile (b, "yolo", &error));
  expect_error (error, FSG_POLICY_ERROR_UNKNOWN_PROFILE,
                "--profile: unknown profile 'yolo' (known: workspace-write, read-only, none)");
}

static void
test_conflicting_profiles (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (fsg_policy_builder_add_data (b, "a.ini", "# a\n[policy]\nprofile = none\n", -1, &error));
  g_assert_no_error (error);
  /* the same profile again is fine */
  g_assert_true (fsg_policy_builder_add_data (b, "b.ini", "[policy]\nprofile = none\n", -1, &error));
  g_assert_no_error (error);
  g_assert_false (fsg_policy_builder_add_data (b, "c.ini", "[policy]\n\nprofile = read-only\n", -1, &error));
  expect_error (error, FSG_POLICY_ERROR_CONFLICT,
                "c.ini:3: key 'profile' in [policy]: profile 'read-only' conflicts with profile "
                "'none' set at a.ini:3");
}

static void
test_include (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *main_path = tmp_path ("inc/main.ini");
  g_autofree char *sub_path = tmp_path ("inc/sub/part.ini");
  g_autofree char *origin = NULL;
  g_autofree char *text = NULL;
  const FsgRule *const *rules;
  guint n;

  fsg_test_write_file (tmp_root, "inc/sub/part.ini", "[filesystem]\n\ndeny-read = *.secret\n");
  text = subst ("[policy]\nprofile = none\ninclude = sub/part.ini;?@T/inc/optional-missing.ini\n"
                "[filesystem]\nreadonly = /\n");
  fsg_test_write_file (tmp_root, "inc/main.ini", text);
  g_assert_true (fsg_policy_builder_add_file (b, main_path, &error));
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  rules = fsg_policy_rules (policy, &n);
  g_assert_cmpuint (n, ==, 2);
  if (n != 2)
    return;
  /* the include is parsed where it is named, before the rest of main.ini */
  origin = g_strdup_printf ("%s:3", sub_path);
  g_assert_cmpstr (rules[0]->pattern, ==, "*.secret");
  g_assert_cmpstr (rules[0]->origin, ==, origin);
  g_assert_cmpstr (rules[1]->path, ==, "/");
}

/* The sources fsgate-run protects: a file by the name it was given (here a
 * symlink) and by its real path, its includes, and an optional include
 * that does not exist yet, each once, absolute, in the order met. */
static void
test_include_sources (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *root = realpath (tmp_root, NULL);
  g_autofree char *link_path = tmp_path ("src/link.ini");
  g_autofree char *link_target = tmp_path ("src/real/main.ini");
  const GPtrArray *sources;
  const char *want[4];

  fsg_test_write_file (tmp_root, "src/real/part.ini", "[filesystem]\ndeny-read = *.key\n");
  fsg_test_write_file (tmp_root, "src/real/main.ini",
                       "[policy]\ninclude = part.ini;?absent.ini;part.ini\n");
  g_assert_no_errno (symlink (link_target, link_path));
  g_assert_true (fsg_policy_builder_add_file (b, link_path, &error));
  g_assert_no_error (error);
  sources = fsg_policy_builder_sources (b);
  want[0] = g_build_filename (root, "src/link.ini", NULL);
  want[1] = g_build_filename (root, "src/real/main.ini", NULL);
  want[2] = g_build_filename (root, "src/real/part.ini", NULL);
  want[3] = g_build_filename (root, "src/real/absent.ini", NULL);
  g_assert_cmpuint (sources->len, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < G_N_ELEMENTS (want) && i < sources->len; i++)
    g_assert_cmpstr (sources->pdata[i], ==, want[i]);
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    g_free ((char *) want[i]);
}

/* Symlinks at any level are sources (a command could repoint them), and
 * so is the first missing component of an optional include, also behind a
 * dangling symlink (a command could create it). */
static void
test_include_sources_symlinks (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *root = realpath (tmp_root, NULL);
  g_autofree char *dir_link = tmp_path ("src2/cfg");
  g_autofree char *dangling = tmp_path ("src2/real/dangling.ini");
  g_autofree char *main_via_link = tmp_path ("src2/cfg/main.ini");
  const GPtrArray *sources;
  static const char *const rel[] = { "src2/cfg", "src2/real/main.ini", "src2/real/nodir",
                                     "src2/real/dangling.ini", "src2/real/gone" };

  fsg_test_write_file (tmp_root, "src2/real/main.ini",
                       "[policy]\ninclude = ?nodir/x.ini;?dangling.ini\n");
  g_assert_no_errno (symlink ("real", dir_link));
  g_assert_no_errno (symlink ("gone/target.ini", dangling));
  g_assert_true (fsg_policy_builder_add_file (b, main_via_link, &error));
  g_assert_no_error (error);
  sources = fsg_policy_builder_sources (b);
  g_assert_cmpuint (sources->len, ==, G_N_ELEMENTS (rel));
  for (guint i = 0; i < G_N_ELEMENTS (rel) && i < sources->len; i++)
    {
      g_autofree char *want = g_build_filename (root, rel[i], NULL);
      g_assert_cmpstr (sources->pdata[i], ==, want);
    }
}

/* '?' makes an include optional, also when it is relative to the file. */
static void
test_include_optional_relative (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *main_path = tmp_path ("inc-opt/main.ini");

  fsg_test_write_file (tmp_root, "inc-opt/main.ini",
                       "[policy]\ninclude = ?local.ini;?sub/local.ini\n");
  g_assert_true (fsg_policy_builder_add_file (b, main_path, &error));
  g_assert_no_error (error);
}

static void
test_include_errors (void)
{
  g_autofree char *a = tmp_path ("cycle/a.ini");
  g_autofree char *self = tmp_path ("cycle/self.ini");
  g_autofree char *bad_main = tmp_path ("cycle/bad-main.ini");
  g_autofree char *bad_inner = tmp_path ("cycle/bad-inner.ini");

  fsg_test_write_file (tmp_root, "cycle/a.ini", "[policy]\ninclude = b.ini\n");
  fsg_test_write_file (tmp_root, "cycle/b.ini", "# b\n[policy]\ninclude = a.ini\n");
  fsg_test_write_file (tmp_root, "cycle/self.ini", "[policy]\ninclude = ./self.ini\n");
  fsg_test_write_file (tmp_root, "cycle/bad-main.ini", "[policy]\ninclude = bad-inner.ini\n");
  fsg_test_write_file (tmp_root, "cycle/bad-inner.ini", "[network]\n\nallow = perhaps\n");

  {
    g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
    g_autoptr(GError) error = NULL;
    g_autofree char *expected = g_strdup_printf ("%s: includes itself", a);

    g_assert_false (fsg_policy_builder_add_file (b, a, &error));
    expect_error (error, FSG_POLICY_ERROR_TOO_DEEP, expected);
  }
  {
    g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
    g_autoptr(GError) error = NULL;

    g_assert_false (fsg_policy_builder_add_file (b, self, &error));
    g_assert_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_TOO_DEEP);
    g_assert_nonnull (error ? strstr (error->message, "includes itself") : NULL);
  }
  /* an error inside an included file names the included file and its line */
  {
    g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
    g_autoptr(GError) error = NULL;
    g_autofree char *expected = g_strdup_printf ("%s:3: key 'allow' in [network]", bad_inner);

    g_assert_false (fsg_policy_builder_add_file (b, bad_main, &error));
    expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE, expected);
  }
}

/* Includes nest at most 8 deep below the file given. */
static void
test_include_depth (void)
{
  for (guint i = 0; i <= 10; i++)
    {
      g_autofree char *rel = g_strdup_printf ("depth/f%u.ini", i);
      g_autofree char *text = i < 10 ? g_strdup_printf ("[policy]\ninclude = f%u.ini\n", i + 1)
                                     : g_strdup ("[network]\nallow = true\n");
      fsg_test_write_file (tmp_root, rel, text);
    }
  /* f2 -> ... -> f10: 8 includes below f2 */
  {
    g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
    g_autoptr(GError) error = NULL;
    g_autofree char *p = tmp_path ("depth/f2.ini");

    g_assert_true (fsg_policy_builder_add_file (b, p, &error));
    g_assert_no_error (error);
  }
  /* f1 -> ... -> f10: 9 */
  {
    g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
    g_autoptr(GError) error = NULL;
    g_autofree char *p = tmp_path ("depth/f1.ini");

    g_assert_false (fsg_policy_builder_add_file (b, p, &error));
    g_assert_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_TOO_DEEP);
    if (error)
      {
        g_test_message ("%s", error->message);
        g_assert_nonnull (strstr (error->message, "includes nest deeper than 8 files"));
        g_assert_nonnull (strstr (error->message, "f10.ini"));
      }
  }
}

/* ---- Values ------------------------------------------------------------ */

static void
test_durations (void)
{
  static const struct
  {
    const char *text;
    gboolean ok;
    guint64 ms;
    const char *error;
  } cases[] = {
    { "500ms", TRUE, 500, NULL },
    { "10s", TRUE, 10000, NULL },
    { "2m", TRUE, 120000, NULL },
    { "1h", TRUE, 3600000, NULL },
    { "1d", TRUE, 86400000, NULL },
    { "1m30s", TRUE, 90000, NULL },
    { "1h1m1s1ms", TRUE, 3661001, NULL },
    { "0", TRUE, 0, NULL },
    { "0s", TRUE, 0, NULL },
    { "none", TRUE, 0, NULL },
    { "007s", TRUE, 7000, NULL },
    { "365d", TRUE, G_GUINT64_CONSTANT (31536000000), NULL },
    { "364d24h", TRUE, G_GUINT64_CONSTANT (31536000000), NULL },
    { "366d", FALSE, 0, "'366d' is too long (at most 365d)" },
    { "365d1ms", FALSE, 0, "'365d1ms' is too long (at most 365d)" },
    { "8761h", FALSE, 0, "'8761h' is too long" },
    { "31536000001ms", FALSE, 0, "'31536000001ms' is too long" },
    { "18446744073709551615ms", FALSE, 0, "'18446744073709551615ms' is" },
    { "99999999999999999999999999s", FALSE, 0, "'99999999999999999999999999s' is" },
    { "", FALSE, 0, "'' is not a duration" },
    { "10", FALSE, 0, "'10' is not a duration (write a number with a unit: 500ms, 10s, 2m, 1h, 1m30s; or none)" },
    { "s", FALSE, 0, "'s' is not a duration" },
    { "ms", FALSE, 0, "'ms' is not a duration" },
    { "10x", FALSE, 0, "'10x' is not a duration" },
    { "10sec", FALSE, 0, "'10sec' is not a duration" },
    { "10S", FALSE, 0, "'10S' is not a duration" },
    { "-1s", FALSE, 0, "'-1s' is not a duration" },
    { "1.5s", FALSE, 0, "'1.5s' is not a duration" },
    { " 10s", FALSE, 0, "' 10s' is not a duration" },
    { "10s ", FALSE, 0, "'10s ' is not a duration" },
    { "1m30", FALSE, 0, "'1m30' is not a duration" },
    { "Never", FALSE, 0, "'Never' is not a duration" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      guint64 ms = 4242;
      gboolean ok = fsg_parse_duration (cases[i].text, &ms, &error);

      g_test_message ("'%s'", cases[i].text);
      g_assert_cmpint (ok, ==, cases[i].ok);
      if (cases[i].ok)
        {
          g_assert_no_error (error);
          g_assert_cmpuint (ms, ==, cases[i].ms);
        }
      else
        {
          expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE, cases[i].error);
          g_assert_cmpuint (ms, ==, 4242); /* untouched on error */
        }
    }
}

static void
test_sizes (void)
{
  static const struct
  {
    const char *text;
    gboolean ok;
    guint64 bytes;
    const char *error;
  } cases[] = {
    { "0", TRUE, 0, NULL },
    { "4096", TRUE, 4096, NULL },
    { "4096B", TRUE, 4096, NULL },
    { "64KiB", TRUE, 65536, NULL },
    { "1MiB", TRUE, 1048576, NULL },
    { "3GiB", TRUE, G_GUINT64_CONSTANT (3221225472), NULL },
    { "1kB", TRUE, 1000, NULL },
    { "1KB", TRUE, 1000, NULL },
    { "2MB", TRUE, 2000000, NULL },
    { "1GB", TRUE, 1000000000, NULL },
    { "1024GiB", TRUE, G_GUINT64_CONSTANT (1) << 40, NULL },
    { "1099511627776", TRUE, G_GUINT64_CONSTANT (1) << 40, NULL },
    { "1099511627777", FALSE, 0, "'1099511627777' is too large (at most 1TiB)" },
    { "1025GiB", FALSE, 0, "'1025GiB' is too large" },
    { "1048577MiB", FALSE, 0, "'1048577MiB' is too large" },
    { "18446744073709551615", FALSE, 0, "'18446744073709551615' is too large" },
    { "99999999999999999999999KiB", FALSE, 0, "'99999999999999999999999KiB' is too large" },
    { "", FALSE, 0, "'' is not a size (write bytes or a number with a unit: 4096, 64KiB, 1MiB, 1GiB)" },
    { "KiB", FALSE, 0, "'KiB' is not a size" },
    { "1 MiB", FALSE, 0, "'1 MiB' is not a size" },
    { "1TiB", FALSE, 0, "'1TiB' is not a size" },
    { "1mib", FALSE, 0, "'1mib' is not a size" },
    { "1K", FALSE, 0, "'1K' is not a size" },
    { "-1", FALSE, 0, "'-1' is not a size" },
    { "1.5MiB", FALSE, 0, "'1.5MiB' is not a size" },
    { "0x10", FALSE, 0, "'0x10' is not a size" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      guint64 bytes = 4242;
      gboolean ok = fsg_parse_size (cases[i].text, &bytes, &error);

      g_test_message ("'%s'", cases[i].text);
      g_assert_cmpint (ok, ==, cases[i].ok);
      if (cases[i].ok)
        {
          g_assert_no_error (error);
          g_assert_cmpuint (bytes, ==, cases[i].bytes);
        }
      else
        {
          expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE, cases[i].error);
          g_assert_cmpuint (bytes, ==, 4242);
        }
    }
}

static gboolean
strv_has (const char *const *v, const char *s)
{
  for (guint i = 0; v[i] != NULL; i++)
    if (strcmp (v[i], s) == 0)
      return TRUE;
  return FALSE;
}

/* The holes of the hybrid view: /usr/local stays served inside a bind of
 * /usr unless hybrid-trees names it (or a directory above it that is no
 * system tree); a tree listed inside the hole is walked on its own. */
static void
test_hybrid_holes (void)
{
  static const struct
  {
    const char *trees;
    gboolean hole;     /* /usr/local is a hole */
    const char *alone; /* a tree listed on its own */
    const char *gone;  /* a tree walked with another, or NULL */
  } cases[] = {
    { NULL, TRUE, "/usr/local/share/ca-certificates" /* below the hole */, NULL },
    { "/usr/local", FALSE, "/usr", "/usr/local" /* walked with /usr */ },
    { "/usr/local/cuda", TRUE, "/usr/local/cuda", NULL },
    { "/usr", TRUE, "/usr", NULL },
    { "/opt", TRUE, "/opt", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
      g_autoptr(FsgPolicy) policy = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *ini = g_strdup_printf ("[policy]\nprofile = none\n[filesystem]\nreadonly = /\n%s%s\n",
                                              cases[i].trees ? "hybrid-trees = " : "",
                                              cases[i].trees ? cases[i].trees : "");
      const char *const *trees, *const *holes;

      g_assert_true (fsg_policy_builder_add_data (b, "h.ini", ini, -1, &error));
      policy = fsg_policy_builder_finish (b, &error);
      g_assert_no_error (error);
      trees = fsg_policy_hybrid_trees (policy);
      holes = fsg_policy_hybrid_hole_list (policy);
      g_assert_cmpint (strv_has (holes, "/usr/local"), ==, cases[i].hole);
      g_assert_true (strv_has (trees, "/usr"));
      g_assert_true (strv_has (trees, cases[i].alone));
      if (cases[i].gone != NULL)
        g_assert_false (strv_has (trees, cases[i].gone));
    }
}

static void
test_settings (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (fsg_policy_builder_add_data (b, "pol.ini",
                                              "[policy]\nprofile = none\n"
                                              "[network]\nallow = yes\n"
                                              "[filesystem]\nhide-denied = 1\ndevices = allow\nsetid = keep\n"
                                              "hybrid = Off\nhybrid-trees = /opt/b;~/sdk/;/opt/a\n"
                                              "[process]\ntimeout = 1m30s\nkill-after = 500ms\n"
                                              "[output]\noutput-cap = 64KiB\n",
                                              -1, &error));
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  {
    const char *why = NULL;
    const char *const *trees = fsg_policy_hybrid_trees (policy);
    g_autofree char *sdk = g_build_filename (g_get_home_dir (), "sdk", NULL);
    gboolean a = FALSE, b2 = FALSE, s2 = FALSE, usr = FALSE;

    g_unsetenv ("FSGATE_HYBRID");
    g_assert_false (fsg_policy_hybrid_enabled (policy, &why));
    g_assert_cmpstr (why, ==, "the policy says hybrid = off");
    /* the system trees and the listed ones, sorted */
    for (guint i = 0; trees[i] != NULL; i++)
      {
        if (i > 0)
          g_assert_cmpstr (trees[i - 1], <, trees[i]);
        a |= strcmp (trees[i], "/opt/a") == 0;
        b2 |= strcmp (trees[i], "/opt/b") == 0;
        usr |= strcmp (trees[i], "/usr") == 0;
        s2 |= g_str_has_suffix (trees[i], "/sdk");
      }
    g_assert_true (a && b2 && usr && s2);
  }
  g_assert_true (fsg_policy_network_allowed (policy));
  g_assert_true (fsg_policy_hide_denied (policy));
  g_assert_true (fsg_policy_devices_allowed (policy));
  g_assert_true (fsg_policy_setid_kept (policy));
  g_assert_cmpuint (fsg_policy_timeout_ms (policy), ==, 90000);
  g_assert_cmpuint (fsg_policy_kill_after_ms (policy), ==, 500);
  g_assert_cmpuint (fsg_policy_output_cap (policy), ==, 65536);
  g_assert_cmpstr (fsg_policy_profile (policy), ==, "none");
}

/* Files saved with CRLF line ends parse like LF ones. */
static void
test_crlf (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = subst ("[policy]\r\nprofile = none\r\n\r\n[filesystem]\r\n"
                                 "readonly = @T;/\r\ndeny-read = *.pem;.env\r\n"
                                 "[network]\r\nallow = true\r\n[process]\r\ntimeout = 10s\r\n");
  const FsgRule *const *rules;
  guint n;

  g_assert_true (fsg_policy_builder_add_data (b, "crlf.ini", text, -1, &error));
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  rules = fsg_policy_rules (policy, &n);
  g_assert_cmpuint (n, ==, 4);
  if (n != 4)
    return;
  g_assert_cmpstr (rules[0]->path, ==, tmp_root);
  g_assert_cmpstr (rules[1]->path, ==, "/");
  g_assert_cmpstr (rules[3]->path, ==, ".env");
  g_assert_true (fsg_policy_network_allowed (policy));
  g_assert_cmpuint (fsg_policy_timeout_ms (policy), ==, 10000);
}

static void
test_defaults (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  g_assert_false (fsg_policy_network_allowed (policy));
  g_assert_false (fsg_policy_hide_denied (policy));
  g_assert_false (fsg_policy_devices_allowed (policy));
  g_assert_false (fsg_policy_setid_kept (policy));
  /* the hybrid view is on unless FSGATE_HYBRID turns it off */
  g_unsetenv ("FSGATE_HYBRID");
  g_assert_true (fsg_policy_hybrid_enabled (policy, NULL));
  g_setenv ("FSGATE_HYBRID", "0", TRUE);
  g_assert_false (fsg_policy_hybrid_enabled (policy, NULL));
  g_setenv ("FSGATE_HYBRID", "On", TRUE);
  g_assert_true (fsg_policy_hybrid_enabled (policy, NULL));
  g_assert_true (fsg_policy_hybrid_env_check (NULL));
  g_setenv ("FSGATE_HYBRID", "sometimes", TRUE);
  g_assert_false (fsg_policy_hybrid_enabled (policy, NULL));
  g_assert_false (fsg_policy_hybrid_env_check (NULL));
  g_unsetenv ("FSGATE_HYBRID");
  g_assert_cmpuint (fsg_policy_timeout_ms (policy), ==, 0);
  g_assert_cmpuint (fsg_policy_kill_after_ms (policy), ==, 2000);
  g_assert_cmpuint (fsg_policy_output_cap (policy), ==, 1024 * 1024);
  g_assert_nonnull (fsg_policy_literal_deny_read (policy));
  g_assert_null (fsg_policy_literal_deny_read (policy)[0]);
}

/* The command-line layer: settings are checked with the flag as origin. */
static void
test_cli_set_errors (void)
{
  static const struct
  {
    const char *key;
    const char *value;
    const char *flag;
    const char *error;
  } cases[] = {
    { "timeout", "soon", "--timeout", "--timeout: 'soon' is not a duration" },
    { "kill-after", "1", "--kill-after", "--kill-after: '1' is not a duration" },
    { "output-cap", "lots", "--output-cap", "--output-cap: 'lots' is not a size" },
    { "allow", "maybe", "--net", "--net: 'maybe' is not a boolean" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
      g_autoptr(GError) error = NULL;

      g_assert_false (fsg_policy_builder_set (b, cases[i].key, cases[i].value, cases[i].flag, &error));
      expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE, cases[i].error);
    }
  {
    g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
    g_autoptr(GError) error = NULL;

    g_assert_false (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, "", "--rw", &error));
    expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE, "--rw '': empty value");
    g_clear_error (&error);
    g_assert_false (fsg_policy_builder_add_rule (b, FSG_RULE_DENY_READ, "a/../b", "--deny-read", &error));
    expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE, "--deny-read 'a/../b': pattern '");
    g_clear_error (&error);
    g_assert_false (fsg_policy_builder_add_rule (b, FSG_RULE_DENY_READ, "**", "--deny-read", &error));
    expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE, "--deny-read '**': pattern '**' matches the whole view");
    g_clear_error (&error);
    g_assert_false (fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, "${NOPE}", "--ro", &error));
    expect_error (error, FSG_POLICY_ERROR_INVALID_VALUE, "--ro '${NOPE}': '${NOPE}': unknown variable ${NOPE}");
  }
  /* a missing root from the command line names the flag */
  {
    g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
    g_autoptr(FsgPolicy) policy = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree char *expected = g_strdup_printf ("--rw: writable root '%s/gone': No such file or directory",
                                                 fake_cwd);

    g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, "gone", "--rw", &error));
    g_assert_no_error (error);
    policy = fsg_policy_builder_finish (b, &error);
    g_assert_null (policy);
    expect_error (error, FSG_POLICY_ERROR_MISSING_ROOT, expected);
  }
}

/* Relative paths on the command line resolve against the builder's cwd. */
static void
test_cli_relative (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *sub = g_build_filename (fake_cwd, "sub", NULL);
  g_autofree char *sibling = tmp_path ("sibling");
  g_autofree char *secret = g_build_filename (fake_cwd, "sub/secret", NULL);
  const FsgRule *const *rules;
  guint n;

  fsg_test_mkdir (fake_cwd, "sub");
  fsg_test_mkdir (tmp_root, "sibling");
  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, "sub", "--rw", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, "./sub/../../sibling/", "--ro", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, ".", "--ro", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_DENY_READ, "sub/secret", "--deny-read", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_DENY_READ, "*.pem", "--deny-read", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_DENY_WRITE, "**/.git/hooks", "--deny-write", &error));
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  rules = fsg_policy_rules (policy, &n);
  g_assert_cmpuint (n, ==, 6);
  if (n != 6)
    return;
  g_assert_cmpstr (rules[0]->path, ==, sub);
  g_assert_cmpstr (rules[0]->pattern, ==, sub);
  g_assert_cmpstr (rules[0]->origin, ==, "--rw");
  g_assert_cmpint (rules[0]->origin_kind, ==, FSG_ORIGIN_CLI);
  g_assert_cmpstr (rules[1]->path, ==, sibling);
  g_assert_cmpstr (rules[2]->path, ==, fake_cwd);
  g_assert_cmpstr (rules[3]->path, ==, secret);
  g_assert_true (rules[3]->anchored);
  g_assert_cmpstr (rules[4]->path, ==, "*.pem");
  g_assert_false (rules[4]->anchored);
  g_assert_cmpstr (rules[5]->path, ==, "**/.git/hooks");
  g_assert_false (rules[5]->anchored);
  g_assert_cmpint (fsg_policy_decide (policy, secret).access, ==, FSG_ACCESS_DENY);
}

/* '~', ${CWD}, ${HOME} and '$$' in files. */
static void
test_expansion (void)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder ("/run/user/7");
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dollar_dir = tmp_path ("d$x");
  g_autofree char *text = subst ("[policy]\nprofile = none\n[filesystem]\n"
                                 "readonly = ~;${CWD};@T/d$$x\n"
                                 "deny-read = ~/.ssh;${HOME}/.aws;${CWD}/.env;/price$$$$;a$b;"
                                 "${XDG_RUNTIME_DIR}/x;~user\n");
  g_autofree char *e0 = g_build_filename (fake_home, ".ssh", NULL);
  g_autofree char *e1 = g_build_filename (fake_home, ".aws", NULL);
  g_autofree char *e2 = g_build_filename (fake_cwd, ".env", NULL);
  const FsgRule *const *rules;
  guint n;

  fsg_test_mkdir (tmp_root, "d$x");
  g_assert_true (fsg_policy_builder_add_data (b, "pol.ini", text, -1, &error));
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  rules = fsg_policy_rules (policy, &n);
  g_assert_cmpuint (n, ==, 10);
  if (n != 10)
    return;
  g_assert_cmpstr (rules[0]->path, ==, fake_home);
  g_assert_cmpstr (rules[1]->path, ==, fake_cwd);
  g_assert_cmpstr (rules[2]->path, ==, dollar_dir);
  g_assert_cmpstr (rules[2]->pattern, ==, dollar_dir);
  g_assert_cmpstr (rules[3]->pattern, ==, e0);
  g_assert_cmpstr (rules[4]->pattern, ==, e1);
  g_assert_cmpstr (rules[5]->pattern, ==, e2);
  g_assert_cmpstr (rules[6]->pattern, ==, "/price$$");
  g_assert_cmpstr (rules[7]->pattern, ==, "a$b");
  g_assert_cmpstr (rules[8]->pattern, ==, "/run/user/7/x");
  g_assert_cmpstr (rules[9]->pattern, ==, "~user"); /* only "~" and "~/" expand */
  g_assert_false (rules[9]->anchored);
}

/* A home (or cwd) whose name contains glob characters must still be taken
 * literally when it is expanded into a pattern: "~/.ssh" with HOME=/x/h[1]
 * must deny /x/h[1]/.ssh, not /x/h1/.ssh. */
static void
test_expansion_is_literal (void)
{
  g_autofree char *home = tmp_path ("h[1]*");
  g_autofree char *ssh = g_build_filename (home, ".ssh", NULL);
  g_autofree char *env = g_build_filename (home, "proj", ".env.local", NULL);
  g_autofree char *cwd = g_build_filename (home, "proj", NULL);
  g_autofree char *other = tmp_path ("h1x/.ssh");
  g_autoptr(FsgPolicyBuilder) b = NULL;
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  const FsgRule *const *rules;

  fsg_test_mkdir (home, "proj");
  b = fsg_policy_builder_new (cwd, home, NULL);
  g_assert_true (fsg_policy_builder_add_data (b, "pol.ini",
                                              "[policy]\nprofile = none\n[filesystem]\nreadonly = /\n"
                                              "deny-read = ~/.ssh;${CWD}/.env.*\n",
                                              -1, &error));
  g_assert_no_error (error);
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (policy == NULL)
    return;
  rules = fsg_policy_rules (policy, NULL);
  g_assert_cmpint (fsg_policy_decide (policy, ssh).access, ==, FSG_ACCESS_DENY);
  g_assert_cmpint (fsg_policy_decide (policy, env).access, ==, FSG_ACCESS_DENY);
  g_assert_cmpint (fsg_policy_decide (policy, other).access, ==, FSG_ACCESS_RO);
  g_assert_false (rules[1]->is_glob);
  g_assert_cmpstr (fsg_policy_literal_deny_read (policy)[0], ==, ssh);
}

/* ---- Round trip -------------------------------------------------------- */

typedef struct
{
  const char *name;
  const char *profile; /* NULL: the default */
  const char *text;    /* a policy file, "@T" substituted; may be NULL */
} RoundTrip;

static const RoundTrip round_trips[] = {
  { "workspace-write", "workspace-write", NULL },
  { "read-only", "read-only", NULL },
  { "none", "none", NULL },
  { "default", NULL, NULL },
  { "everything", "none",
    "[filesystem]\nreadonly = /;@T/ro\nwritable = @T/rw;?@T/missing\n"
    "deny-read = *.pem;.env;**/secrets;@T/rw/priv;/srv/**/k[ab]y;\\\\*;a\\;b\n"
    "deny-write = **/.git/hooks;@T/rw/.git/config\nhide-denied = true\ndevices = allow\nsetid = keep\n"
    "[network]\nallow = true\n"
    "[process]\ntimeout = 1m30s\nkill-after = 500ms\n"
    "[output]\noutput-cap = 64KiB\n"
    "[environment]\ninherit = all\nexclude = AWS_*;*_PASSWORD\nset = A=1;B=x=y;C=$HOME\n"
    "include-only = PATH;LC_*;A\n" },
  { "dollars", "none", "[filesystem]\nreadonly = @T/d$$x\ndeny-read = /cost$$/*.csv;x$$$$y\n" },
  { "hybrid", "none",
    "[filesystem]\nreadonly = /\nhybrid = off\nhybrid-trees = /opt/tool$$chain;~/sdk;/nix/store/;/opt/a/../b\n" },
  { "shadowed-roots", "none", "[filesystem]\nreadonly = @T/rw;@T/ro\nwritable = @T/rw\n" },
  { "layered", "workspace-write",
    "[filesystem]\nreadonly = @T/ro\ndeny-write = ${CWD}/build\n[process]\ntimeout = 10s\n" },
  { "trailing-starstar", "none",
    "[filesystem]\nwritable = @T/rw\ndeny-read = **/secrets/**;@T/rw/cache/**\n" },
  { "sizes", "none", "[output]\noutput-cap = 1000\n[process]\ntimeout = 1500ms\nkill-after = none\n" },
};

static FsgPolicy *
build_round_trip (const RoundTrip *rt, GError **error)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder ("/run/user/1000");

  if (rt->profile && !fsg_policy_builder_set_profile (b, rt->profile, error))
    return NULL;
  if (rt->text)
    {
      g_autofree char *text = subst (rt->text);
      if (!fsg_policy_builder_add_data (b, "rt.ini", text, -1, error))
        return NULL;
    }
  return fsg_policy_builder_finish (b, error);
}

static FsgPolicy *
reparse (const char *text, GError **error)
{
  g_autoptr(FsgPolicyBuilder) b = new_builder ("/run/user/1000");

  if (!fsg_policy_builder_add_data (b, "printed.ini", text, -1, error))
    return NULL;
  return fsg_policy_builder_finish (b, error);
}

/* Text without the leading '#' comment lines. */
static const char *
body_of (const char *text)
{
  while (text[0] == '#')
    {
      const char *nl = strchr (text, '\n');
      if (nl == NULL)
        return "";
      text = nl + 1;
    }
  return text;
}

static void
prepare_round_trip_tree (void)
{
  fsg_test_mkdir (tmp_root, "ro");
  fsg_test_mkdir (tmp_root, "rw/.git");
  fsg_test_mkdir (tmp_root, "d$x");
}

static void
test_round_trip_body (gconstpointer data)
{
  const RoundTrip *rt = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(FsgPolicy) p1 = NULL;
  g_autoptr(FsgPolicy) p2 = NULL;
  g_autofree char *t1 = NULL;
  g_autofree char *t2 = NULL;

  prepare_round_trip_tree ();
  p1 = build_round_trip (rt, &error);
  g_assert_no_error (error);
  if (p1 == NULL)
    return;
  t1 = fsg_policy_to_keyfile (p1);
  g_test_message ("%s", t1);
  p2 = reparse (t1, &error);
  g_assert_no_error (error);
  if (p2 == NULL)
    return;
  t2 = fsg_policy_to_keyfile (p2);
  g_assert_cmpstr (body_of (t2), ==, body_of (t1));
  g_assert_cmpstr (fsg_policy_profile (p2), ==, "none");
  g_assert_cmpint (fsg_policy_network_allowed (p2), ==, fsg_policy_network_allowed (p1));
  g_assert_cmpint (fsg_policy_hide_denied (p2), ==, fsg_policy_hide_denied (p1));
  g_assert_cmpint (fsg_policy_devices_allowed (p2), ==, fsg_policy_devices_allowed (p1));
  g_assert_cmpint (fsg_policy_setid_kept (p2), ==, fsg_policy_setid_kept (p1));
  g_assert_cmpuint (fsg_policy_timeout_ms (p2), ==, fsg_policy_timeout_ms (p1));
  g_assert_cmpuint (fsg_policy_kill_after_ms (p2), ==, fsg_policy_kill_after_ms (p1));
  g_assert_cmpuint (fsg_policy_output_cap (p2), ==, fsg_policy_output_cap (p1));
}

/* The whole printed text, comments included, is a fixed point: `fsgate
 * policy --profile none --policy OUT` prints OUT again. */
static void
test_round_trip_exact (gconstpointer data)
{
  const RoundTrip *rt = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(FsgPolicy) p1 = NULL;
  g_autoptr(FsgPolicy) p2 = NULL;
  g_autofree char *t1 = NULL;
  g_autofree char *t2 = NULL;

  prepare_round_trip_tree ();
  p1 = build_round_trip (rt, &error);
  g_assert_no_error (error);
  if (p1 == NULL)
    return;
  t1 = fsg_policy_to_keyfile (p1);
  p2 = reparse (t1, &error);
  g_assert_no_error (error);
  if (p2 == NULL)
    return;
  t2 = fsg_policy_to_keyfile (p2);
  g_assert_cmpstr (t2, ==, t1);
}

/* The printed policy decides every path as the original does. */
static void
test_round_trip_decisions (gconstpointer data)
{
  const RoundTrip *rt = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(FsgPolicy) p1 = NULL;
  g_autoptr(FsgPolicy) p2 = NULL;
  g_autofree char *t1 = NULL;
  const char *const rel[] = {
    "", "ro", "ro/x", "rw", "rw/a.pem", "rw/.env", "rw/priv", "rw/priv/x", "rw/.git/config",
    "rw/.git/hooks/pre-commit", "rw/secrets/x", "rw/secrets", "rw/cache", "rw/cache/x", "d$x", "d$x/y", "*", "a;b", "nope",
    "cwd", "cwd/.env.local", "cwd/build/x", "home/.ssh/id_rsa", "home/.bashrc", NULL,
  };
  const char *const abs[] = { "/", "/etc/passwd", "/etc/shadow", "/proc/1", "/run/x", "/srv/a/kay",
                              "/cost$/a.csv", "/run/user/1000/bus", "/usr", NULL };
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);

  prepare_round_trip_tree ();
  p1 = build_round_trip (rt, &error);
  g_assert_no_error (error);
  if (p1 == NULL)
    return;
  t1 = fsg_policy_to_keyfile (p1);
  p2 = reparse (t1, &error);
  g_assert_no_error (error);
  if (p2 == NULL)
    return;
  for (guint i = 0; rel[i]; i++)
    g_ptr_array_add (paths, g_build_filename (tmp_root, rel[i], NULL));
  for (guint i = 0; abs[i]; i++)
    g_ptr_array_add (paths, g_strdup (abs[i]));
  for (guint i = 0; i < paths->len; i++)
    {
      const char *path = paths->pdata[i];
      FsgPathState s1 = fsg_policy_decide (p1, path);
      FsgPathState s2 = fsg_policy_decide (p2, path);

      if (s1.access != s2.access || s1.flags != s2.flags)
        g_test_fail_printf ("%s: %s (flags %u) before printing, %s (flags %u) after", path,
                            fsg_access_to_string (s1.access), s1.flags,
                            fsg_access_to_string (s2.access), s2.flags);
    }
}


/* Run @data (a GTestFunc) with tmp_root in a trusted, root-owned tree: a
 * symlink under /tmp is never trusted to choose a root (policy/roots.c). */
static void
run_in_trusted_tree (gconstpointer data)
{
  char *saved = tmp_root;
  char *dir = fsg_test_trusted_tmpdir_new ("parse");

  if (dir == NULL)
    return;
  tmp_root = dir;
  ((GTestFunc) data) ();
  tmp_root = saved;
  fsg_test_tmpdir_free (dir);
}

/* A root given through a symlink, shadowed by a later root at its canonical
 * path, still shows the symlink: printing must keep it. */
static void
test_round_trip_shadowed_alias (void)
{
  g_autofree char *link = tmp_path ("alias-link");
  g_autofree char *target = tmp_path ("alias-target");
  g_autoptr(FsgPolicyBuilder) b = new_builder (NULL);
  g_autoptr(FsgPolicy) p1 = NULL;
  g_autoptr(FsgPolicy) p2 = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *t1 = NULL;
  FsgPathState s1, s2;

  fsg_test_mkdir (tmp_root, "alias-target");
  if (!g_file_test (link, G_FILE_TEST_IS_SYMLINK))
    g_assert_cmpint (symlink ("alias-target", link), ==, 0);
  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, link, "--ro", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, target, "--rw", &error));
  p1 = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  if (p1 == NULL)
    return;
  s1 = fsg_policy_decide (p1, link);
  g_assert_true (s1.flags & FSG_STATE_ALIAS);
  t1 = fsg_policy_to_keyfile (p1);
  p2 = reparse (t1, &error);
  g_assert_no_error (error);
  if (p2 == NULL)
    return;
  s2 = fsg_policy_decide (p2, link);
  g_assert_cmpint (s2.access, ==, s1.access);
  g_assert_cmpint (s2.flags, ==, s1.flags);
}

/* Booleans as INI files write them, in any case (issue 12). */
static void
test_booleans (void)
{
  static const struct { const char *text; gboolean value; } cases[] = {
    { "true", TRUE }, { "True", TRUE }, { "TRUE", TRUE }, { "yes", TRUE }, { "Yes", TRUE },
    { "on", TRUE }, { "On", TRUE }, { "1", TRUE }, { "false", FALSE }, { "False", FALSE },
    { "no", FALSE }, { "NO", FALSE }, { "off", FALSE }, { "Off", FALSE }, { "0", FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new ("/", "/nonexistent-home", NULL);
      g_autoptr(FsgPolicy) policy = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *text = g_strdup_printf ("[policy]\nprofile = none\n[network]\nallow = %s\n"
                                               "[filesystem]\nhide-denied = %s\n",
                                               cases[i].text, cases[i].text);

      g_assert_true (fsg_policy_builder_add_data (b, "pol.ini", text, -1, &error));
      g_assert_no_error (error);
      policy = fsg_policy_builder_finish (b, &error);
      g_assert_no_error (error);
      if (policy == NULL)
        continue;
      g_assert_cmpint (fsg_policy_network_allowed (policy), ==, cases[i].value);
      g_assert_cmpint (fsg_policy_hide_denied (policy), ==, cases[i].value);
    }
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  g_test_set_nonfatal_assertions ();

  tmp_root = (char *) fsg_test_scratch_dir ("parse");
  fake_cwd = g_build_filename (tmp_root, "cwd", NULL);
  fake_home = g_build_filename (tmp_root, "home", NULL);
  fsg_test_mkdir (tmp_root, "cwd");
  fsg_test_mkdir (tmp_root, "home");

  for (guint i = 0; i < G_N_ELEMENTS (error_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/policy/parse/error/%s", error_cases[i].test);
      g_test_add_data_func (path, &error_cases[i], test_error_case);
    }
  g_test_add_func ("/policy/parse/booleans", test_booleans);
  g_test_add_func ("/policy/parse/error/nul-byte", test_nul_byte);
  g_test_add_func ("/policy/parse/error/invalid-utf8", test_invalid_utf8);
  g_test_add_func ("/policy/parse/error/file-is-directory", test_file_is_directory);
  g_test_add_func ("/policy/parse/error/file-not-found", test_file_not_found);
  g_test_add_func ("/policy/parse/error/file-names-file", test_file_error_names_file);
  g_test_add_func ("/policy/parse/error/set-profile-unknown", test_set_profile_unknown);
  g_test_add_func ("/policy/parse/error/conflicting-profiles", test_conflicting_profiles);
  g_test_add_func ("/policy/parse/error/include", test_include_errors);
  g_test_add_func ("/policy/parse/error/include-depth", test_include_depth);
  g_test_add_func ("/policy/parse/error/cli", test_cli_set_errors);
  g_test_add_func ("/policy/parse/optional-missing-root", test_optional_missing_root);
  g_test_add_func ("/policy/parse/runtime-dir", test_runtime_dir);
  g_test_add_func ("/policy/parse/include", test_include);
  g_test_add_func ("/policy/parse/include-optional-relative", test_include_optional_relative);
  g_test_add_func ("/policy/parse/durations", test_durations);
  g_test_add_func ("/policy/parse/sizes", test_sizes);
  g_test_add_func ("/policy/parse/settings", test_settings);
  g_test_add_func ("/policy/parse/hybrid-holes", test_hybrid_holes);
  g_test_add_func ("/policy/parse/defaults", test_defaults);
  g_test_add_func ("/policy/parse/crlf", test_crlf);
  g_test_add_func ("/policy/parse/include-sources", test_include_sources);
  g_test_add_func ("/policy/parse/include-sources-symlinks", test_include_sources_symlinks);
  g_test_add_func ("/policy/parse/cli-relative", test_cli_relative);
  g_test_add_func ("/policy/parse/expansion", test_expansion);
  g_test_add_func ("/policy/parse/expansion-is-literal", test_expansion_is_literal);
  for (guint i = 0; i < G_N_ELEMENTS (round_trips); i++)
    {
      g_autofree char *p1 = g_strdup_printf ("/policy/parse/round-trip/body/%s", round_trips[i].name);
      g_autofree char *p2 = g_strdup_printf ("/policy/parse/round-trip/exact/%s", round_trips[i].name);
      g_autofree char *p3 = g_strdup_printf ("/policy/parse/round-trip/decisions/%s", round_trips[i].name);
      g_test_add_data_func (p1, &round_trips[i], test_round_trip_body);
      g_test_add_data_func (p2, &round_trips[i], test_round_trip_exact);
      g_test_add_data_func (p3, &round_trips[i], test_round_trip_decisions);
    }
  g_test_add_data_func ("/policy/parse/round-trip/shadowed-alias", test_round_trip_shadowed_alias, run_in_trusted_tree);

  ret = g_test_run ();
  fsg_test_scratch_cleanup ();
  g_free (fake_cwd);
  g_free (fake_home);
  return ret;
}
