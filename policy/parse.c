/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Policy files (GLib key files with a fixed schema), command-line rules and
 * the layering of both over a built-in profile, into an FsgPolicy.
 *
 * Parsing happens in two steps. fsg_policy_builder_add_file/_data/_rule check
 * everything that needs no file system (syntax, keys, values, globs, relative
 * paths) at once, so errors name FILE:LINE or the flag. finish() then applies
 * the layers in order (profile, files, flags), canonicalises the roots
 * (realpath) and compiles the engine. GKeyFile parses values (escapes and
 * lists); a scan of our own gives line numbers, which GKeyFile does not keep,
 * and rejects unknown groups, unknown keys and repeated keys.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_INCLUDE_DEPTH 8

typedef struct
{
  gboolean is_setting;
  FsgRuleKind kind;     /* rules */
  char *key;            /* settings: file key ("timeout"); rules: NULL */
  char *value;          /* rules: absolute lexical path or normalised pattern; settings: text */
  char *written;        /* rules: the value after expansion, as shown by explain */
  gboolean optional;
  gboolean anchored;    /* deny rules */
  char *origin;
  FsgOriginKind origin_kind;
} Entry;

struct _FsgPolicyBuilder
{
  char *cwd;
  char *home;
  char *runtime_dir;
  char *profile_cli;
  char *profile_file;
  char *profile_file_origin;
  GPtrArray *file_entries; /* Entry* */
  GPtrArray *cli_entries;  /* Entry* */
  GPtrArray *include_stack; /* canonical paths being parsed */
  GPtrArray *writable_roots; /* char* (borrowed from entries), NULL-terminated: while finishing */
  /* What keeps the policy files read as they are: see
   * fsg_policy_builder_sources(). fsgate-run makes them all deny-write. */
  GPtrArray *sources;
  gboolean finished;
  gboolean git_discover; /* look for repositories around writable roots (git.c) */
};

static void
note_source (FsgPolicyBuilder *b, const char *path)
{
  for (guint i = 0; i < b->sources->len; i++)
    if (strcmp (b->sources->pdata[i], path) == 0)
      return;
  g_ptr_array_add (b->sources, g_strdup (path));
}

/* Note what protects the policy file at @path (relative to the builder's
 * cwd): resolve it one component at a time, as the kernel would, noting
 * every symlink met (a command could point it elsewhere) and the real
 * path; if some component does not exist, note that one and stop (a
 * command could create it, as a file or as a symlink, for the next run). */
static void
add_source (FsgPolicyBuilder *b, const char *path)
{
  g_autofree char *abs = g_path_is_absolute (path) ? g_strdup (path) : g_build_filename (b->cwd, path, NULL);
  g_autoptr(GPtrArray) todo = g_ptr_array_new_with_free_func (g_free); /* components, last first */
  g_autofree char *cur = g_strdup ("/");
  guint links = 0;
  g_auto(GStrv) parts = g_strsplit (abs, "/", -1);

  for (guint i = g_strv_length (parts); i > 0; i--)
    if (parts[i - 1][0] != '\0')
      g_ptr_array_add (todo, g_strdup (parts[i - 1]));
  while (todo->len > 0)
    {
      g_autofree char *comp = g_ptr_array_steal_index (todo, todo->len - 1);
      g_autofree char *next = NULL;
      struct stat st;

      if (strcmp (comp, ".") == 0)
        continue;
      if (strcmp (comp, "..") == 0)
        {
          char *up = g_path_get_dirname (cur);
          g_free (cur);
          cur = up;
          continue;
        }
      next = g_build_filename (cur, comp, NULL);
      if (lstat (next, &st) < 0)
        {
          note_source (b, next);
          return;
        }
      if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (next, NULL);
          g_auto(GStrv) tparts = NULL;

          note_source (b, next);
          if (target == NULL || ++links > 40)
            return;
          tparts = g_strsplit (target, "/", -1);
          for (guint i = g_strv_length (tparts); i > 0; i--)
            if (tparts[i - 1][0] != '\0')
              g_ptr_array_add (todo, g_strdup (tparts[i - 1]));
          if (g_path_is_absolute (target))
            {
              g_free (cur);
              cur = g_strdup ("/");
            }
          continue;
        }
      g_free (cur);
      cur = g_steal_pointer (&next);
    }
  note_source (b, cur);
}

const GPtrArray *
fsg_policy_builder_sources (FsgPolicyBuilder *b)
{
  return b->sources;
}

typedef struct
{
  const char *group;
  const char *key;
  gboolean list;
} SchemaKey;

static const SchemaKey schema[] = {
  { "policy", "profile", FALSE },
  { "policy", "include", TRUE },
  { "filesystem", "writable", TRUE },
  { "filesystem", "readonly", TRUE },
  { "filesystem", "deny-read", TRUE },
  { "filesystem", "deny-write", TRUE },
  { "filesystem", "secret-names", TRUE },
  { "filesystem", "hide-denied", FALSE },
  { "filesystem", "git", FALSE },
  { "filesystem", "devices", FALSE },
  { "filesystem", "setid", FALSE },
  { "filesystem", "hybrid", FALSE },
  { "filesystem", "hybrid-trees", TRUE },
  { "network", "allow", FALSE },
  { "process", "timeout", FALSE },
  { "process", "kill-after", FALSE },
  { "output", "output-cap", FALSE },
  { "environment", "inherit", FALSE },
  { "environment", "exclude", TRUE },
  { "environment", "set", TRUE },
  { "environment", "include-only", TRUE },
};

G_DEFINE_QUARK (fsg-policy-error-quark, fsg_policy_error)

static void
entry_free (gpointer data)
{
  Entry *e = data;

  g_free (e->key);
  g_free (e->value);
  g_free (e->written);
  g_free (e->origin);
  g_free (e);
}

FsgPolicyBuilder *
fsg_policy_builder_new (const char *cwd, const char *home, const char *runtime_dir)
{
  FsgPolicyBuilder *b = g_new0 (FsgPolicyBuilder, 1);

  g_return_val_if_fail (cwd != NULL && g_path_is_absolute (cwd), NULL);
  g_return_val_if_fail (home != NULL && g_path_is_absolute (home), NULL);
  b->cwd = g_canonicalize_filename (cwd, "/");
  b->home = g_canonicalize_filename (home, "/");
  b->runtime_dir = runtime_dir && *runtime_dir ? g_strdup (runtime_dir) : NULL;
  b->file_entries = g_ptr_array_new_with_free_func (entry_free);
  b->cli_entries = g_ptr_array_new_with_free_func (entry_free);
  b->include_stack = g_ptr_array_new_with_free_func (g_free);
  b->sources = g_ptr_array_new_with_free_func (g_free);
  return b;
}

FsgPolicyBuilder *
fsg_policy_builder_new_for_process (void)
{
  g_autofree char *cwd = g_get_current_dir ();
  const char *home = g_getenv ("HOME");
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  FsgPolicyBuilder *b;

  if (home == NULL || !g_path_is_absolute (home))
    {
      struct passwd *pw = getpwuid (getuid ());
      home = pw && pw->pw_dir && g_path_is_absolute (pw->pw_dir) ? pw->pw_dir : "/";
    }
  if (runtime && !g_path_is_absolute (runtime))
    runtime = NULL;
  b = fsg_policy_builder_new (cwd, home, runtime);
  b->git_discover = TRUE;
  return b;
}

void
fsg_policy_builder_free (FsgPolicyBuilder *b)
{
  if (b == NULL)
    return;
  g_free (b->cwd);
  g_free (b->home);
  g_free (b->runtime_dir);
  g_free (b->profile_cli);
  g_free (b->profile_file);
  g_free (b->profile_file_origin);
  g_ptr_array_unref (b->file_entries);
  g_ptr_array_unref (b->cli_entries);
  g_ptr_array_unref (b->include_stack);
  g_ptr_array_unref (b->sources);
  if (b->writable_roots != NULL)
    g_ptr_array_unref (b->writable_roots);
  g_free (b);
}

void
fsg_policy_builder_set_git_discovery (FsgPolicyBuilder *b, gboolean discover)
{
  b->git_discover = discover;
}

/* ---- Values ------------------------------------------------------------ */

gboolean
fsg_parse_duration (const char *text, guint64 *out_ms, GError **error)
{
  static const struct
  {
    const char *unit;
    guint64 ms;
  } units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 } };
  const char *p = text;
  guint64 total = 0;

  if (text == NULL || *text == '\0')
    goto bad;
  if (strcmp (text, "none") == 0 || strcmp (text, "0") == 0)
    {
      *out_ms = 0;
      return TRUE;
    }
  while (*p)
    {
      guint64 n = 0, unit = 0;
      const char *start = p;
      gsize ulen = 0;

      while (g_ascii_isdigit (*p))
        {
          if (n > G_MAXUINT64 / 10 - 10)
            goto bad;
          n = n * 10 + (guint64) (*p++ - '0');
        }
      if (p == start)
        goto bad;
      for (guint i = 0; i < G_N_ELEMENTS (units); i++)
        {
          gsize l = strlen (units[i].unit);
          if (strncmp (p, units[i].unit, l) == 0 && l > ulen &&
              !g_ascii_isalpha (p[l]))
            {
              unit = units[i].ms;
              ulen = l;
            }
        }
      if (unit == 0)
        goto bad;
      p += ulen;
      if (n > (G_GUINT64_CONSTANT (365) * 86400000) / unit)
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "'%s' is too long (at most 365d)", text);
          return FALSE;
        }
      total += n * unit;
    }
  if (total > G_GUINT64_CONSTANT (365) * 86400000)
    {
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                   "'%s' is too long (at most 365d)", text);
      return FALSE;
    }
  *out_ms = total;
  return TRUE;

bad:
  g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
               "'%s' is not a duration (write a number with a unit: 500ms, 10s, 2m, 1h, 1m30s; or none)",
               text ? text : "");
  return FALSE;
}

gboolean
fsg_parse_size (const char *text, guint64 *out_bytes, GError **error)
{
  static const struct
  {
    const char *unit;
    guint64 mult;
  } units[] = {
    { "", 1 }, { "B", 1 }, { "KiB", 1024 }, { "MiB", 1024 * 1024 }, { "GiB", 1024 * 1024 * 1024 },
    { "kB", 1000 }, { "KB", 1000 }, { "MB", 1000 * 1000 }, { "GB", 1000 * 1000 * 1000 },
  };
  const char *p = text;
  guint64 n = 0;

  if (text == NULL || !g_ascii_isdigit (*p))
    goto bad;
  while (g_ascii_isdigit (*p))
    {
      if (n > G_MAXUINT64 / 10 - 10)
        goto too_big;
      n = n * 10 + (guint64) (*p++ - '0');
    }
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (strcmp (p, units[i].unit) == 0)
      {
        if (n > (G_GUINT64_CONSTANT (1) << 40) / units[i].mult)
          goto too_big;
        *out_bytes = n * units[i].mult;
        return TRUE;
      }

bad:
  g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
               "'%s' is not a size (write bytes or a number with a unit: 4096, 64KiB, 1MiB, 1GiB)",
               text ? text : "");
  return FALSE;
too_big:
  g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
               "'%s' is too large (at most 1TiB)", text);
  return FALSE;
}

/* Booleans as people write them in INI files, in any case. */
#define BOOL_WORDS "true, false, yes, no, on, off, 1, 0 (in any case)"

static gboolean
parse_bool (const char *text, gboolean *out)
{
  static const char *const yes[] = { "true", "yes", "on", "1" };
  static const char *const no[] = { "false", "no", "off", "0" };

  for (guint i = 0; text != NULL && i < G_N_ELEMENTS (yes); i++)
    {
      if (g_ascii_strcasecmp (text, yes[i]) == 0)
        {
          *out = TRUE;
          return TRUE;
        }
      if (g_ascii_strcasecmp (text, no[i]) == 0)
        {
          *out = FALSE;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
valid_env_name (const char *name, gsize len)
{
  if (len == 0 || !(g_ascii_isalpha (name[0]) || name[0] == '_'))
    return FALSE;
  for (gsize i = 1; i < len; i++)
    if (!(g_ascii_isalnum (name[i]) || name[i] == '_'))
      return FALSE;
  return TRUE;
}

/* Expand a leading '?' (optional), '~', ${CWD}, ${HOME}, ${XDG_RUNTIME_DIR}
 * and '$$'. Sets *out_skip when an optional entry refers to an unset
 * variable. (transfer full) */
static void
append_value (GString *s, const char *val, gboolean escape)
{
  for (const char *q = val; *q; q++)
    {
      if (escape && (*q == '*' || *q == '?' || *q == '[' || *q == '\\'))
        g_string_append_c (s, '\\');
      g_string_append_c (s, *q);
    }
}

/* @escape: the result is a glob pattern, so what a variable or '~' expands
 * to is escaped and always matches literally. */
static char *
expand (FsgPolicyBuilder *b, const char *value, gboolean escape, gboolean *out_optional,
        gboolean *out_skip, GError **error)
{
  GString *s = g_string_new (NULL);
  const char *p = value, *start;

  *out_optional = FALSE;
  *out_skip = FALSE;
  if (p[0] == '?' && (p[1] == '/' || p[1] == '~' || p[1] == '$'))
    {
      *out_optional = TRUE;
      p++;
    }
  if (p[0] == '~' && (p[1] == '\0' || p[1] == '/'))
    {
      append_value (s, b->home, escape);
      p++;
    }
  start = p;
  while (*p)
    {
      if (p[0] == '$' && p[1] == '$')
        {
          g_string_append_c (s, '$');
          p += 2;
        }
      else if (p == start && p[0] == '$' && (g_ascii_isalpha (p[1]) || p[1] == '_'))
        {
          /* "$HOME/x" would otherwise be a relative path; elsewhere a '$'
           * not followed by '{' is literal ("a$b") */
          gsize n = 1;
          g_autofree char *name = NULL;

          while (g_ascii_isalnum (p[n]) || p[n] == '_')
            n++;
          name = g_strndup (p + 1, n - 1);
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "'%s': write '${%s}' with braces (known: ${CWD}, ${HOME}, "
                       "${XDG_RUNTIME_DIR}; '$$' is a literal '$')", value, name);
          g_string_free (s, TRUE);
          return NULL;
        }
      else if (p[0] == '$' && p[1] == '{')
        {
          const char *end = strchr (p, '}');
          g_autofree char *name = NULL;
          const char *val;

          if (end == NULL)
            {
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                           "'%s': unclosed '${' (write '$$' for a literal '$')", value);
              g_string_free (s, TRUE);
              return NULL;
            }
          name = g_strndup (p + 2, (gsize) (end - p - 2));
          if (strcmp (name, "CWD") == 0)
            val = b->cwd;
          else if (strcmp (name, "HOME") == 0)
            val = b->home;
          else if (strcmp (name, "XDG_RUNTIME_DIR") == 0)
            {
              val = b->runtime_dir;
              if (val == NULL)
                {
                  if (*out_optional)
                    {
                      *out_skip = TRUE;
                      return g_string_free (s, FALSE);
                    }
                  g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                               "'%s': ${XDG_RUNTIME_DIR} is not set (start the entry with '?' to skip it when unset)",
                               value);
                  g_string_free (s, TRUE);
                  return NULL;
                }
            }
          else
            {
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                           "'%s': unknown variable ${%s} (known: ${CWD}, ${HOME}, ${XDG_RUNTIME_DIR}; '$$' is a literal '$')",
                           value, name);
              g_string_free (s, TRUE);
              return NULL;
            }
          append_value (s, val, escape);
          p = end + 1;
        }
      else
        g_string_append_c (s, *p++);
    }
  return g_string_free (s, FALSE);
}

/* A trailing "**" matches one or more names: x, "**" becomes x, "*", "**"
 * (with "**" meaning zero or more everywhere else). Done when the rule is
 * compiled, so the normalised text keeps the form the user wrote. */
static void
expand_trailing_star (char ***comps)
{
  guint n = g_strv_length (*comps);

  if (n == 0 || strcmp ((*comps)[n - 1], "**") != 0)
    return;
  *comps = g_renew (char *, *comps, n + 2);
  g_free ((*comps)[n - 1]);
  (*comps)[n - 1] = g_strdup ("*");
  (*comps)[n] = g_strdup ("**");
  (*comps)[n + 1] = NULL;
}

/* Normalise a deny pattern into components. Returns the normalised text:
 * "/a/b*" for anchored patterns, "name" or "**" + "/a/b" for floating ones. */
static char *
normalise_pattern (const char *pattern, gboolean *out_anchored, GError **error)
{
  g_autofree char *p = g_strdup (pattern);
  g_auto (GStrv) parts = NULL;
  GPtrArray *comps = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) owned = comps;
  gboolean anchored, floating_multi = FALSE;
  gsize len = strlen (p);
  GString *out;

  while (len > 1 && p[len - 1] == '/')
    p[--len] = '\0';
  if (len == 0)
    {
      g_set_error_literal (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                           "empty pattern");
      return NULL;
    }
  anchored = p[0] == '/';
  if (!anchored && strchr (p, '/') != NULL)
    {
      if (g_str_has_prefix (p, "**/"))
        floating_multi = TRUE;
      else
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_RELATIVE_PATH,
                       "pattern '%s' is relative; a pattern with '/' needs an absolute path "
                       "(/..., ~/..., ${CWD}/...) or a leading '**/' to match at any depth",
                       pattern);
          return NULL;
        }
    }

  parts = g_strsplit (p, "/", -1);
  if (!anchored)
    g_ptr_array_add (comps, g_strdup ("**"));
  for (guint i = 0; parts[i]; i++)
    {
      const char *c = parts[i];
      if (c[0] == '\0' || strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "pattern '%s': '..' is not allowed in patterns", pattern);
          return NULL;
        }
      if (strcmp (c, "**") == 0)
        {
          if (comps->len > 0 && strcmp (comps->pdata[comps->len - 1], "**") == 0)
            continue;
        }
      else
        {
          g_autoptr(GError) local = NULL;
          if (!fsg_glob_validate (c, &local))
            {
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                           "pattern '%s': %s", pattern, local->message);
              return NULL;
            }
        }
      g_ptr_array_add (comps, g_strdup (c));
    }
  if (comps->len == 0 || (comps->len == 1 && strcmp (comps->pdata[0], "**") == 0))
    {
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                   "pattern '%s' matches the whole view; name what to deny", pattern);
      return NULL;
    }
  out = g_string_new (NULL);
  for (guint i = 0; i < comps->len; i++)
    {
      if (i == 0 && !anchored)
        {
          /* floating: drop the implicit leading "**" for single names */
          if (comps->len == 2 && !floating_multi)
            continue;
          g_string_append (out, "**");
          continue;
        }
      if (out->len > 0 || anchored)
        g_string_append_c (out, '/');
      g_string_append (out, comps->pdata[i]);
    }
  *out_anchored = anchored;
  return g_string_free (out, FALSE);
}

/* ---- Entries ----------------------------------------------------------- */

static Entry *
entry_new_rule (FsgRuleKind kind, char *value, char *written, gboolean optional,
                gboolean anchored, const char *origin, FsgOriginKind okind)
{
  Entry *e = g_new0 (Entry, 1);

  e->kind = kind;
  e->value = value;
  e->written = written;
  e->optional = optional;
  e->anchored = anchored;
  e->origin = g_strdup (origin);
  e->origin_kind = okind;
  return e;
}

static Entry *
entry_new_setting (const char *key, const char *value, const char *origin, FsgOriginKind okind)
{
  Entry *e = g_new0 (Entry, 1);

  e->is_setting = TRUE;
  e->key = g_strdup (key);
  e->value = g_strdup (value);
  e->origin = g_strdup (origin);
  e->origin_kind = okind;
  return e;
}

/* List items are stripped of surrounding whitespace, so a value that ends
 * in whitespace once normalised ("/a /" is "/a ") could not be written back. */
static gboolean
check_ends (const char *value, const char *where, GError **error)
{
  gsize len = strlen (value);

  if (len > 0 && (g_ascii_isspace (value[0]) || g_ascii_isspace (value[len - 1])))
    {
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                   "%s: '%s' starts or ends with a space, which a policy list cannot hold",
                   where, value);
      return FALSE;
    }
  return TRUE;
}

/* Check one rule value and append it to @out. @where prefixes errors
 * ("policy.ini:3: key 'writable' in [filesystem]" or "--rw"). */
static gboolean
add_rule_value (FsgPolicyBuilder *b, GPtrArray *out, FsgRuleKind kind, const char *raw,
                gboolean from_cli, const char *where, const char *origin,
                FsgOriginKind okind, GError **error)
{
  g_autoptr(GError) local = NULL;
  g_autofree char *value = NULL;
  gboolean optional, skip, anchored = TRUE;

  if (raw[0] == '\0')
    {
      if (from_cli)
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "%s: empty value", where);
          return FALSE;
        }
      return TRUE; /* "a;;b" or a trailing ';' */
    }
  value = expand (b, raw, kind == FSG_RULE_DENY_READ || kind == FSG_RULE_DENY_WRITE,
                  &optional, &skip, &local);
  if (value == NULL)
    {
      g_set_error (error, FSG_POLICY_ERROR, local->code, "%s: %s", where, local->message);
      return FALSE;
    }
  if (skip)
    return TRUE;

  if (kind == FSG_RULE_WRITABLE || kind == FSG_RULE_READONLY)
    {
      g_autofree char *abs = NULL;

      if (!g_path_is_absolute (value))
        {
          if (!from_cli)
            {
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_RELATIVE_PATH,
                           "%s: '%s' is relative; policy files need absolute paths "
                           "(/..., ~/..., ${CWD}/...)", where, raw);
              return FALSE;
            }
          abs = g_canonicalize_filename (value, b->cwd);
        }
      else
        abs = g_canonicalize_filename (value, "/");
      if (!check_ends (abs, where, error))
        return FALSE;
      g_ptr_array_add (out, entry_new_rule (kind, g_strdup (abs), g_strdup (abs), optional,
                                            TRUE, origin, okind));
      return TRUE;
    }
  else
    {
      g_autofree char *pat = NULL;
      g_autofree char *norm = NULL;

      if (from_cli && value[0] != '/' && strchr (value, '/') != NULL &&
          !g_str_has_prefix (value, "**/"))
        {
          g_autofree char *cwd = fsg_glob_escape (b->cwd);
          pat = g_build_filename (cwd, value, NULL);
        }
      else
        pat = g_strdup (value);
      norm = normalise_pattern (pat, &anchored, &local);
      if (norm == NULL)
        {
          g_set_error (error, FSG_POLICY_ERROR, local->code, "%s: %s", where, local->message);
          return FALSE;
        }
      if (!check_ends (norm, where, error))
        return FALSE;
      g_ptr_array_add (out, entry_new_rule (kind, g_steal_pointer (&norm), g_strdup (value),
                                            optional, anchored, origin, okind));
      return TRUE;
    }
}

static gboolean
check_setting (const char *key, const char *value, const char *where, GError **error)
{
  g_autoptr(GError) local = NULL;
  guint64 v;
  gboolean bval;

  if (strcmp (key, "timeout") == 0 || strcmp (key, "kill-after") == 0)
    {
      if (!fsg_parse_duration (value, &v, &local))
        goto fail;
    }
  else if (strcmp (key, "output-cap") == 0)
    {
      if (!fsg_parse_size (value, &v, &local))
        goto fail;
      if (v > FSG_POLICY_OUTPUT_CAP_MAX)
        {
          /* each captured stream is held in memory and in the report */
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "%s: '%s' is larger than fsgate-run can capture (at most 1GiB per stream)",
                       where, value);
          return FALSE;
        }
    }
  else if (strcmp (key, "allow") == 0 || strcmp (key, "hide-denied") == 0 ||
           strcmp (key, "hybrid") == 0)
    {
      if (!parse_bool (value, &bval))
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "%s: '%s' is not a boolean (accepted: " BOOL_WORDS ")", where, value);
          return FALSE;
        }
    }
  else if (strcmp (key, "git") == 0)
    {
      if (strcmp (value, "protect") != 0 && strcmp (value, "off") != 0)
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "%s: '%s' is not one of protect, off", where, value);
          return FALSE;
        }
    }
  else if (strcmp (key, "devices") == 0 || strcmp (key, "setid") == 0)
    {
      const char *a = key[0] == 'd' ? "refuse" : "strip", *b = key[0] == 'd' ? "allow" : "keep";

      if (strcmp (value, a) != 0 && strcmp (value, b) != 0)
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "%s: '%s' is not one of %s, %s", where, value, a, b);
          return FALSE;
        }
    }
  else if (strcmp (key, "inherit") == 0)
    {
      if (strcmp (value, "core") != 0 && strcmp (value, "all") != 0 && strcmp (value, "none") != 0)
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "%s: '%s' is not one of core, all, none", where, value);
          return FALSE;
        }
    }
  else if (strcmp (key, "exclude") == 0 || strcmp (key, "include-only") == 0)
    {
      if (value[0] == '\0' || strchr (value, '=') != NULL)
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "%s: '%s' is not a variable-name glob (such as AWS_* or *_TOKEN)", where, value);
          return FALSE;
        }
      if (!fsg_glob_validate (value, &local))
        goto fail;
    }
  else if (strcmp (key, "set") == 0)
    {
      const char *eq = strchr (value, '=');
      if (eq == NULL || !valid_env_name (value, (gsize) (eq - value)))
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "%s: '%s' is not NAME=VALUE with a valid variable name", where, value);
          return FALSE;
        }
    }
  else
    g_assert_not_reached ();
  return TRUE;

fail:
  g_set_error (error, FSG_POLICY_ERROR, local->code, "%s: %s", where, local->message);
  return FALSE;
}

/* ---- Files ------------------------------------------------------------- */

typedef struct
{
  char *group;
  char *key;
  guint line;
} KeyLine;

static void
key_line_free (gpointer data)
{
  KeyLine *kl = data;

  g_free (kl->group);
  g_free (kl->key);
  g_free (kl);
}

static const SchemaKey *
schema_lookup (const char *group, const char *key)
{
  for (guint i = 0; i < G_N_ELEMENTS (schema); i++)
    if (strcmp (schema[i].group, group) == 0 && (key == NULL || strcmp (schema[i].key, key) == 0))
      return &schema[i];
  return NULL;
}

static char *
schema_keys_of (const char *group)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (schema); i++)
    if (strcmp (schema[i].group, group) == 0)
      g_string_append_printf (s, "%s%s", s->len ? ", " : "", schema[i].key);
  return g_string_free (s, FALSE);
}

/* Scan lines: syntax, groups and keys against the schema, repeated keys.
 * Returns the keys in file order with their line numbers. */
static GPtrArray *
scan_lines (const char *name, const char *data, gsize len, GError **error)
{
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (key_line_free);
  g_autofree char *group = NULL;
  const char *p = data, *end = data + len;
  guint line = 0;

  while (p < end)
    {
      const char *nl = memchr (p, '\n', (gsize) (end - p));
      const char *eol = nl ? nl : end;
      g_autofree char *text = g_strndup (p, (gsize) (eol - p));
      char *t;

      line++;
      p = nl ? nl + 1 : end;
      t = g_strstrip (text);
      if (*t == '\0' || *t == '#')
        continue;
      if (*t == '[')
        {
          char *close = strchr (t, ']');
          if (close == NULL || close[1] != '\0')
            {
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX,
                           "%s:%u: malformed group header '%s' (write [name])", name, line, t);
              return NULL;
            }
          *close = '\0';
          g_free (group);
          group = g_strdup (t + 1);
          if (schema_lookup (group, NULL) == NULL)
            {
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_UNKNOWN_KEY,
                           "%s:%u: unknown group [%s] (known: [policy], [filesystem], [network], "
                           "[process], [output], [environment])", name, line, group);
              return NULL;
            }
          continue;
        }
      {
        char *eq = strchr (t, '=');
        g_autofree char *key = NULL;
        KeyLine *kl;

        if (eq == NULL)
          {
            g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX,
                         "%s:%u: expected 'key = value', '[group]' or a '#' comment, found '%s'",
                         name, line, t);
            return NULL;
          }
        key = g_strstrip (g_strndup (t, (gsize) (eq - t)));
        if (group == NULL)
          {
            g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX,
                         "%s:%u: key '%s' before any [group]", name, line, key);
            return NULL;
          }
        if (schema_lookup (group, key) == NULL)
          {
            g_autofree char *known = schema_keys_of (group);
            g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_UNKNOWN_KEY,
                         "%s:%u: unknown key '%s' in [%s] (known: %s)", name, line, key, group, known);
            return NULL;
          }
        for (guint i = 0; i < keys->len; i++)
          {
            KeyLine *o = keys->pdata[i];
            if (strcmp (o->group, group) == 0 && strcmp (o->key, key) == 0)
              {
                g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX,
                             "%s:%u: key '%s' in [%s] repeats line %u (write one list: a;b;c)",
                             name, line, key, group, o->line);
                return NULL;
              }
          }
        kl = g_new0 (KeyLine, 1);
        kl->group = g_strdup (group);
        kl->key = g_steal_pointer (&key);
        kl->line = line;
        g_ptr_array_add (keys, kl);
      }
    }
  return g_steal_pointer (&keys);
}

static gboolean parse_file_at (FsgPolicyBuilder *b, const char *path, const char *shown,
                               guint depth, GError **error);

static gboolean
parse_text (FsgPolicyBuilder *b, const char *name, const char *dir, const char *data,
            gssize slen, FsgOriginKind okind, const char *profile, guint depth,
            GPtrArray *out, GError **error)
{
  gsize len = slen < 0 ? strlen (data) : (gsize) slen;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GPtrArray) keys = NULL;
  g_autoptr(GError) local = NULL;

  if (memchr (data, '\0', len) != NULL)
    {
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX,
                   "%s: contains a NUL byte; not a policy file", name);
      return FALSE;
    }
  if (!g_utf8_validate (data, (gssize) len, NULL))
    {
      const char *bad = NULL;
      guint line = 1;
      g_utf8_validate (data, (gssize) len, &bad);
      for (const char *q = data; q < bad; q++)
        line += *q == '\n';
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX,
                   "%s:%u: not valid UTF-8", name, line);
      return FALSE;
    }
  keys = scan_lines (name, data, len, error);
  if (keys == NULL)
    return FALSE;
  if (!g_key_file_load_from_data (kf, data, len, G_KEY_FILE_NONE, &local))
    {
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX, "%s: %s", name, local->message);
      return FALSE;
    }

  for (guint i = 0; i < keys->len; i++)
    {
      KeyLine *kl = keys->pdata[i];
      const SchemaKey *sk = schema_lookup (kl->group, kl->key);
      g_autofree char *where = g_strdup_printf ("%s:%u: key '%s' in [%s]", name, kl->line, kl->key, kl->group);
      g_autofree char *origin = okind == FSG_ORIGIN_PROFILE
                                    ? g_strdup_printf ("profile %s", profile)
                                    : g_strdup_printf ("%s:%u", name, kl->line);
      g_auto (GStrv) values = NULL;

      if (sk->list)
        values = g_key_file_get_string_list (kf, kl->group, kl->key, NULL, &local);
      else
        {
          char *v = g_key_file_get_string (kf, kl->group, kl->key, &local);
          if (v)
            {
              values = g_new0 (char *, 2);
              values[0] = g_strstrip (v);
            }
        }
      if (values == NULL)
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX, "%s: %s", where, local->message);
          return FALSE;
        }

      if (strcmp (kl->key, "profile") == 0)
        {
          if (fsg_policy_profile_text (values[0]) == NULL)
            {
              g_autofree char *known = g_strjoinv (", ", (char **) fsg_policy_profile_names ());
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_UNKNOWN_PROFILE,
                           "%s: unknown profile '%s' (known: %s)", where, values[0], known);
              return FALSE;
            }
          if (okind == FSG_ORIGIN_PROFILE)
            continue;
          if (b->profile_file && strcmp (b->profile_file, values[0]) != 0)
            {
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_CONFLICT,
                           "%s: profile '%s' conflicts with profile '%s' set at %s "
                           "(choose one, or pass --profile)", where, values[0], b->profile_file,
                           b->profile_file_origin);
              return FALSE;
            }
          if (b->profile_file == NULL)
            {
              b->profile_file = g_strdup (values[0]);
              b->profile_file_origin = g_strdup (origin);
            }
        }
      else if (strcmp (kl->key, "include") == 0)
        {
          for (guint j = 0; values[j]; j++)
            {
              g_autofree char *expanded = NULL;
              g_autofree char *full = NULL;
              gboolean optional, skip;

              const char *v = values[j];
              gboolean opt_include = FALSE;

              if (v[0] == '\0')
                continue;
              /* any include may be optional, relative names too */
              if (v[0] == '?')
                {
                  opt_include = TRUE;
                  v++;
                }
              expanded = expand (b, v, FALSE, &optional, &skip, &local);
              if (expanded == NULL)
                {
                  g_set_error (error, FSG_POLICY_ERROR, local->code, "%s: %s", where, local->message);
                  return FALSE;
                }
              if (skip)
                continue;
              if (g_path_is_absolute (expanded))
                full = g_strdup (expanded);
              else if (dir != NULL)
                full = g_build_filename (dir, expanded, NULL);
              else
                {
                  g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_RELATIVE_PATH,
                               "%s: '%s' is relative and %s has no directory", where, values[j], name);
                  return FALSE;
                }
              if ((optional || opt_include) && !g_file_test (full, G_FILE_TEST_EXISTS))
                {
                  /* absent now (perhaps a dangling symlink), but a command
                   * could create it for the next run */
                  add_source (b, full);
                  continue;
                }
              if (!parse_file_at (b, full, full, depth + 1, &local))
                {
                  if (local->code == FSG_POLICY_ERROR_NOT_FOUND)
                    g_set_error (error, FSG_POLICY_ERROR, local->code, "%s: %s", where, local->message);
                  else
                    g_propagate_error (error, g_steal_pointer (&local));
                  return FALSE;
                }
            }
        }
      else if (strcmp (kl->key, "secret-names") == 0)
        {
          for (guint j = 0; values[j]; j++)
            {
              g_autoptr(GError) gerr = NULL;

              g_strstrip (values[j]);
              if (values[j][0] == '\0')
                continue;
              if (strchr (values[j], '/') != NULL || strcmp (values[j], "**") == 0)
                {
                  g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                               "%s: '%s' is not a file name glob (no '/': the name is denied "
                               "at any depth but in the system trees; "
                               "use deny-read for paths)", where, values[j]);
                  return FALSE;
                }
              if (!fsg_glob_validate (values[j], &gerr))
                {
                  g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                               "%s: pattern '%s': %s", where, values[j], gerr->message);
                  return FALSE;
                }
              g_ptr_array_add (out, entry_new_setting (kl->key, values[j], origin, okind));
            }
        }
      else if (strcmp (kl->key, "hybrid-trees") == 0)
        {
          for (guint j = 0; values[j]; j++)
            {
              g_autofree char *expanded = NULL;
              gboolean optional, skip;

              g_strstrip (values[j]);
              if (values[j][0] == '\0')
                continue;
              expanded = expand (b, values[j], FALSE, &optional, &skip, &local);
              if (expanded == NULL)
                {
                  g_set_error (error, FSG_POLICY_ERROR, local->code, "%s: %s", where, local->message);
                  return FALSE;
                }
              if (skip)
                continue;
              if (!g_path_is_absolute (expanded))
                {
                  g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_RELATIVE_PATH,
                               "%s: '%s' is not an absolute path (hybrid-trees names host "
                               "directories such as /opt/toolchains)", where, values[j]);
                  return FALSE;
                }
              {
                g_autofree char *norm = g_canonicalize_filename (expanded, "/");

                if (strcmp (norm, "/") == 0)
                  {
                    g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                                 "%s: '/' cannot be a hybrid tree: it holds the host's sockets "
                                 "and FIFOs (/run, /var/lib), which a bind would make reachable; "
                                 "name the trees that hold none, such as /opt/toolchains", where);
                    return FALSE;
                  }
                if (!check_ends (norm, where, error))
                  return FALSE;
                g_ptr_array_add (out, entry_new_setting (kl->key, norm, origin, okind));
              }
            }
        }
      else if (strcmp (kl->group, "filesystem") == 0 && sk->list)
        {
          FsgRuleKind kind = strcmp (kl->key, "writable") == 0   ? FSG_RULE_WRITABLE
                             : strcmp (kl->key, "readonly") == 0 ? FSG_RULE_READONLY
                             : strcmp (kl->key, "deny-read") == 0 ? FSG_RULE_DENY_READ
                                                                  : FSG_RULE_DENY_WRITE;
          for (guint j = 0; values[j]; j++)
            {
              g_strstrip (values[j]);
              if (!add_rule_value (b, out, kind, values[j], FALSE, where, origin, okind, error))
                return FALSE;
            }
        }
      else
        {
          for (guint j = 0; values[j]; j++)
            {
              if (sk->list)
                {
                  g_strstrip (values[j]);
                  if (values[j][0] == '\0')
                    continue;
                }
              if (!check_setting (kl->key, values[j], where, error))
                return FALSE;
              g_ptr_array_add (out, entry_new_setting (kl->key, values[j], origin, okind));
            }
        }
    }
  return TRUE;
}

static gboolean
parse_file_at (FsgPolicyBuilder *b, const char *path, const char *shown, guint depth, GError **error)
{
  g_autofree char *contents = NULL;
  g_autofree char *canon = NULL;
  g_autofree char *dir = NULL;
  g_autoptr(GError) local = NULL;
  gsize len;
  gboolean ok;

  if (depth > MAX_INCLUDE_DEPTH)
    {
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_TOO_DEEP,
                   "%s: includes nest deeper than %d files", shown, MAX_INCLUDE_DEPTH);
      return FALSE;
    }
  canon = realpath (path, NULL);
  if (canon == NULL)
    {
      int errsv = errno;
      g_set_error (error, FSG_POLICY_ERROR,
                   errsv == ENOENT || errsv == ENOTDIR ? FSG_POLICY_ERROR_NOT_FOUND : FSG_POLICY_ERROR_SYNTAX,
                   "cannot read policy file '%s': %s", shown, g_strerror (errsv));
      return FALSE;
    }
  for (guint i = 0; i < b->include_stack->len; i++)
    if (strcmp (b->include_stack->pdata[i], canon) == 0)
      {
        g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_TOO_DEEP,
                     "%s: includes itself (through %s)", shown,
                     (const char *) b->include_stack->pdata[b->include_stack->len - 1]);
        return FALSE;
      }
  if (g_file_test (canon, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX,
                   "cannot read policy file '%s': is a directory", shown);
      return FALSE;
    }
  if (!g_file_get_contents (canon, &contents, &len, &local))
    {
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX,
                   "cannot read policy file '%s': %s", shown, local->message);
      return FALSE;
    }
  if (len > 4 * 1024 * 1024)
    {
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_SYNTAX,
                   "policy file '%s' is larger than 4 MiB", shown);
      return FALSE;
    }
  add_source (b, path);
  dir = g_path_get_dirname (canon);
  g_ptr_array_add (b->include_stack, g_strdup (canon));
  ok = parse_text (b, shown, dir, contents, (gssize) len, FSG_ORIGIN_FILE, NULL, depth,
                   b->file_entries, error);
  g_ptr_array_remove_index (b->include_stack, b->include_stack->len - 1);
  return ok;
}

gboolean
fsg_policy_builder_add_file (FsgPolicyBuilder *b, const char *path, GError **error)
{
  g_return_val_if_fail (!b->finished, FALSE);
  if (path == NULL || path[0] == '\0')
    {
      g_set_error_literal (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_NOT_FOUND,
                           "--policy: empty file name");
      return FALSE;
    }
  return parse_file_at (b, path, path, 0, error);
}

gboolean
fsg_policy_builder_add_data (FsgPolicyBuilder *b, const char *name, const char *data,
                             gssize len, GError **error)
{
  g_return_val_if_fail (!b->finished, FALSE);
  return parse_text (b, name, NULL, data, len, FSG_ORIGIN_FILE, NULL, 0, b->file_entries, error);
}

gboolean
fsg_policy_builder_set_profile (FsgPolicyBuilder *b, const char *name, GError **error)
{
  if (name == NULL || fsg_policy_profile_text (name) == NULL)
    {
      g_autofree char *known = g_strjoinv (", ", (char **) fsg_policy_profile_names ());
      g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_UNKNOWN_PROFILE,
                   "--profile: unknown profile '%s' (known: %s)", name ? name : "", known);
      return FALSE;
    }
  g_free (b->profile_cli);
  b->profile_cli = g_strdup (name);
  return TRUE;
}

gboolean
fsg_policy_builder_add_rule (FsgPolicyBuilder *b, FsgRuleKind kind, const char *value,
                             const char *flag, GError **error)
{
  g_autofree char *where = g_strdup_printf ("%s '%s'", flag, value ? value : "");

  g_return_val_if_fail (!b->finished, FALSE);
  return add_rule_value (b, b->cli_entries, kind, value ? value : "", TRUE, where, flag,
                         FSG_ORIGIN_CLI, error);
}

gboolean
fsg_policy_builder_set (FsgPolicyBuilder *b, const char *key, const char *value,
                        const char *flag, GError **error)
{
  g_autofree char *where = g_strdup (flag);
  static const char *const keys[] = { "timeout", "kill-after", "output-cap", "allow",
                                      "hide-denied", "inherit", "exclude", "set", "include-only",
                                      "git", "hybrid" };
  gboolean known = FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    known |= strcmp (keys[i], key) == 0;
  g_return_val_if_fail (known, FALSE);
  if (!check_setting (key, value ? value : "", where, error))
    return FALSE;
  g_ptr_array_add (b->cli_entries, entry_new_setting (key, value, flag, FSG_ORIGIN_CLI));
  return TRUE;
}

/* ---- Finishing --------------------------------------------------------- */

/* Resolve the longest existing prefix of the literal path in @comps[0..n)
 * through symlinks; the rest is kept as written. (transfer full) or NULL
 * when nothing changes. */
static char **
canonical_comps (char **comps)
{
  guint n = 0, lit = 0;
  g_autoptr(GPtrArray) out = NULL;

  while (comps[n])
    n++;
  while (lit < n && strcmp (comps[lit], "**") != 0 && !fsg_glob_has_magic (comps[lit]))
    lit++;
  for (guint k = lit; k > 0; k--)
    {
      g_autoptr(GString) path = g_string_new (NULL);
      g_autofree char *real = NULL;
      g_auto (GStrv) rcomps = NULL;

      for (guint i = 0; i < k; i++)
        {
          g_autofree char *u = fsg_glob_unescape (comps[i]);
          g_string_append_c (path, '/');
          g_string_append (path, u);
        }
      real = realpath (path->str, NULL);
      if (real == NULL)
        continue;
      if (strcmp (real, path->str) == 0)
        return NULL;
      out = g_ptr_array_new_with_free_func (g_free);
      rcomps = fsg_path_split (real);
      for (guint i = 0; rcomps[i]; i++)
        g_ptr_array_add (out, fsg_glob_escape (rcomps[i]));
      for (guint i = k; i < n; i++)
        g_ptr_array_add (out, g_strdup (comps[i]));
      g_ptr_array_add (out, NULL);
      return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
    }
  return NULL;
}

/* The first component of @path that is a symlink on the host, and its
 * target. */
static gboolean
find_alias (const char *path, char **out_alias, char **out_target)
{
  g_auto (GStrv) comps = fsg_path_split (path);
  g_autoptr(GString) prefix = g_string_new (NULL);

  for (guint i = 0; comps[i]; i++)
    {
      struct stat st;

      g_string_append_c (prefix, '/');
      g_string_append (prefix, comps[i]);
      if (lstat (prefix->str, &st) == 0 && S_ISLNK (st.st_mode))
        {
          char buf[PATH_MAX];
          ssize_t n = readlink (prefix->str, buf, sizeof buf - 1);
          if (n <= 0)
            return FALSE;
          buf[n] = '\0';
          *out_alias = g_strdup (prefix->str);
          *out_target = g_strdup (buf);
          return TRUE;
        }
    }
  return FALSE;
}

static void
rule_impl_free (gpointer data)
{
  FsgRuleImpl *r = data;

  g_free ((char *) r->pub.pattern);
  g_free ((char *) r->pub.path);
  g_free ((char *) r->pub.origin);
  g_strfreev (r->comps);
  g_strfreev (r->comps_canon);
  g_free (r->alias_path);
  g_strfreev (r->alias_comps);
  g_free (r->alias_target);
  g_free (r->secret_name);
  g_free (r);
}

static gboolean
apply_rule (FsgPolicyBuilder *b, FsgPolicy *policy, const Entry *e, GError **error)
{
  FsgRuleImpl *r = g_new0 (FsgRuleImpl, 1);

  r->pub.kind = e->kind;
  r->pub.origin = g_strdup (e->origin);
  r->pub.origin_kind = e->origin_kind;
  r->pub.pattern = g_strdup (e->written);
  r->optional = e->optional;

  if (e->kind == FSG_RULE_WRITABLE || e->kind == FSG_RULE_READONLY)
    {
      g_autofree char *link = NULL, *target = NULL;
      char *real;

      /* issue 14 item 1: a symlink an earlier run could have planted must
       * not choose what this root is, optional or not */
      if (fsg_root_find_planted_symlink (e->value,
                                         b && b->writable_roots
                                           ? (const char *const *) b->writable_roots->pdata
                                           : NULL,
                                         &link, &target))
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_PLANTED_SYMLINK,
                       "%s: %s root '%s' goes through the symlink '%s' -> '%s', which is not a "
                       "system symlink (its directory is writable by someone other than root, "
                       "or lies in a writable root: a sandboxed command could have planted it). "
                       "Fix: name the directory you mean without the symlink, or remove the "
                       "symlink",
                       e->origin, fsg_rule_kind_to_key (e->kind), e->value, link, target);
          rule_impl_free (r);
          return FALSE;
        }
      real = realpath (e->value, NULL);
      if (real == NULL)
        {
          int errsv = errno;
          rule_impl_free (r);
          if (e->optional && (errsv == ENOENT || errsv == ENOTDIR))
            return TRUE;
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_MISSING_ROOT,
                       "%s: %s root '%s': %s%s", e->origin, fsg_rule_kind_to_key (e->kind),
                       e->value, g_strerror (errsv),
                       errsv == ENOENT ? " (create it, or start the path with '?' to make it optional)" : "");
          return FALSE;
        }
      r->pub.path = real;
      r->comps = fsg_path_split (real);
      if (strcmp (real, e->value) != 0 &&
          find_alias (e->value, &r->alias_path, &r->alias_target))
        r->alias_comps = fsg_path_split (r->alias_path);
    }
  else
    {
      r->pub.path = g_strdup (e->value);
      r->pub.anchored = e->anchored;
      r->comps = e->anchored ? fsg_path_split (e->value) : NULL;
      if (!e->anchored)
        {
          if (g_str_has_prefix (e->value, "**/"))
            r->comps = fsg_path_split (e->value);
          else
            {
              r->comps = g_new0 (char *, 3);
              r->comps[0] = g_strdup ("**");
              r->comps[1] = g_strdup (e->value);
            }
        }
      /* the implicit leading "**" of a floating name does not make it a glob */
      for (guint i = e->anchored || g_str_has_prefix (e->value, "**/") ? 0 : 1; r->comps[i]; i++)
        r->pub.is_glob |= strcmp (r->comps[i], "**") == 0 || fsg_glob_has_magic (r->comps[i]);
      expand_trailing_star (&r->comps);
      if (e->anchored)
        r->comps_canon = canonical_comps (r->comps);
    }
  r->pub.index = policy->rules->len;
  g_ptr_array_add (policy->rules, r);
  return TRUE;
}

static void
apply_setting (FsgPolicy *policy, const Entry *e)
{
  const char *k = e->key, *v = e->value;
  guint64 n = 0;

  if (strcmp (k, "timeout") == 0)
    fsg_parse_duration (v, &policy->timeout_ms, NULL);
  else if (strcmp (k, "kill-after") == 0)
    fsg_parse_duration (v, &policy->kill_after_ms, NULL);
  else if (strcmp (k, "output-cap") == 0)
    {
      fsg_parse_size (v, &n, NULL);
      policy->output_cap = n;
    }
  else if (strcmp (k, "allow") == 0)
    parse_bool (v, &policy->network);
  else if (strcmp (k, "hide-denied") == 0)
    parse_bool (v, &policy->hide_denied);
  else if (strcmp (k, "git") == 0)
    policy->git_protect = strcmp (v, "off") != 0;
  else if (strcmp (k, "devices") == 0)
    policy->devices_allowed = strcmp (v, "allow") == 0;
  else if (strcmp (k, "setid") == 0)
    policy->setid_kept = strcmp (v, "keep") == 0;
  else if (strcmp (k, "hybrid") == 0)
    parse_bool (v, &policy->hybrid);
  else if (strcmp (k, "hybrid-trees") == 0)
    {
      for (guint i = 0; i < policy->hybrid_trees->len; i++)
        if (strcmp (policy->hybrid_trees->pdata[i], v) == 0)
          return;
      g_ptr_array_add (policy->hybrid_trees, g_strdup (v));
    }
  else if (strcmp (k, "inherit") == 0)
    policy->env.inherit = strcmp (v, "all") == 0    ? FSG_ENV_INHERIT_ALL
                          : strcmp (v, "none") == 0 ? FSG_ENV_INHERIT_NONE
                                                    : FSG_ENV_INHERIT_CORE;
  else if (strcmp (k, "exclude") == 0)
    g_ptr_array_add (policy->env.exclude, g_strdup (v));
  else if (strcmp (k, "include-only") == 0)
    g_ptr_array_add (policy->env.include_only, g_strdup (v));
  else if (strcmp (k, "set") == 0)
    g_ptr_array_add (policy->env.set, g_strdup (v));
}

static gboolean
apply_entries (FsgPolicyBuilder *b, FsgPolicy *policy, GPtrArray *entries, GError **error)
{
  for (guint i = 0; i < entries->len; i++)
    {
      const Entry *e = entries->pdata[i];
      if (e->is_setting)
        apply_setting (policy, e);
      else if (!apply_rule (b, policy, e, error))
        return FALSE;
    }
  return TRUE;
}

typedef struct
{
  FsgPolicyBuilder *b;
  FsgPolicy *policy;
} GitAdd;

/* Git discovery (git.c) adds its rules as the last layer. */
static gboolean
git_add_rule (gpointer data, FsgRuleKind kind, const char *path, const char *origin, GError **error)
{
  GitAdd *g = data;
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func (entry_free);
  g_autofree char *raw = kind == FSG_RULE_DENY_WRITE && path[0] == '/' ? fsg_glob_escape (path)
                                                                        : g_strdup (path);

  return add_rule_value (g->b, entries, kind, raw, FALSE, origin, origin, FSG_ORIGIN_PROFILE, error) &&
         apply_entries (g->b, g->policy, entries, error);
}

/* Where secret-names apply: everywhere ("/"), fail closed, but for the
 * public system trees (fsg_policy_secret_pruned: system software, trust
 * stores), whose *.pem and *.key are public; a writable root of any layer
 * inside one of those is a scope of its own. */
static GPtrArray *
secret_scopes (FsgPolicyBuilder *b, GPtrArray *const *layers, guint n_layers)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);

  (void) b;
  g_ptr_array_add (out, g_strdup ("/"));
  for (guint l = 0; l < n_layers; l++)
    for (guint i = 0; i < layers[l]->len; i++)
      {
        const Entry *e = layers[l]->pdata[i];
        g_autofree char *real = NULL;
        gboolean inside = FALSE, dup = FALSE;

        if (e->is_setting || e->kind != FSG_RULE_WRITABLE)
          continue;
        real = realpath (e->value, NULL);
        if (real == NULL)
          continue;
        for (guint p = 0; fsg_policy_secret_pruned[p] != NULL && !inside; p++)
          {
            gsize pl = strlen (fsg_policy_secret_pruned[p]);
            inside = strncmp (real, fsg_policy_secret_pruned[p], pl) == 0 &&
                     (real[pl] == '/' || real[pl] == '\0');
          }
        for (guint j = 0; j < out->len && !dup; j++)
          dup = strcmp (out->pdata[j], real) == 0;
        if (inside && !dup)
          g_ptr_array_add (out, g_steal_pointer (&real));
      }
  return out;
}

/* `secret-names` of one layer: each name becomes an anchored deny-read rule
 * SCOPE/ ** /NAME for every scope, whose "**" does not enter package trees
 * (site-packages, dist-packages, node_modules: certifi's cacert.pem, test
 * keys of installed packages). */
static gboolean
apply_secret_names (FsgPolicy *policy, GPtrArray *entries, GPtrArray *scopes, GError **error)
{
  for (guint i = 0; i < entries->len; i++)
    {
      const Entry *e = entries->pdata[i];

      if (!e->is_setting || strcmp (e->key, "secret-names") != 0)
        continue;
      for (guint k = 0; k < scopes->len; k++)
        {
          const char *scope = scopes->pdata[k];
          gboolean top = strcmp (scope, "/") == 0;
          g_autofree char *esc = fsg_glob_escape (scope);
          g_autofree char *pat = g_strconcat (top ? "" : esc, "/**/", e->value, NULL);
          g_autofree char *written = g_strconcat (top ? "" : scope, "/**/", e->value, NULL);
          g_autofree char *norm = NULL;
          g_autoptr(GError) local = NULL;
          gboolean anchored = TRUE;
          Entry rule = { 0 };

          norm = normalise_pattern (pat, &anchored, &local);
          if (norm == NULL)
            {
              g_set_error (error, FSG_POLICY_ERROR, local->code, "%s: secret-names: %s",
                           e->origin, local->message);
              return FALSE;
            }
          rule.kind = FSG_RULE_DENY_READ;
          rule.value = norm;
          rule.written = written;
          rule.anchored = anchored;
          rule.origin = e->origin;
          rule.origin_kind = e->origin_kind;
          if (!apply_rule (NULL, policy, &rule, error)) /* a deny rule: no builder needed */
            return FALSE;
          /* the "**" after the scope does not go into package trees, nor,
           * from "/", into the public system trees */
          {
            FsgRuleImpl *r = policy->rules->pdata[policy->rules->len - 1];
            char **lists[] = { r->comps, r->comps_canon };

            r->secret_name = g_strdup (e->value);
            for (guint v = 0; v < G_N_ELEMENTS (lists); v++)
              for (guint c = 0; lists[v] != NULL && lists[v][c] != NULL; c++)
                if (strcmp (lists[v][c], "**") == 0)
                  {
                    g_free (lists[v][c]);
                    lists[v][c] = g_strdup (top && c == 0 ? FSG_COMP_SYS_STAR : FSG_COMP_PKG_STAR);
                  }
          }
        }
    }
  return TRUE;
}

FsgPolicy *
fsg_policy_builder_finish (FsgPolicyBuilder *b, GError **error)
{
  GitAdd git_add = { b, NULL };
  g_autoptr(FsgPolicy) policy = fsg_policy_new_empty ();
  g_autoptr(GPtrArray) profile_entries = g_ptr_array_new_with_free_func (entry_free);
  g_autoptr(GPtrArray) literal = g_ptr_array_new ();
  const char *profile;

  g_return_val_if_fail (!b->finished, NULL);
  b->finished = TRUE;
  g_ptr_array_set_free_func (policy->rules, rule_impl_free);

  profile = b->profile_cli ? b->profile_cli
            : b->profile_file ? b->profile_file
                              : fsg_policy_profile_names ()[0];
  policy->profile = g_strdup (profile);
  if (!parse_text (b, profile, NULL, fsg_policy_profile_text (profile), -1, FSG_ORIGIN_PROFILE,
                   profile, 0, profile_entries, error))
    return NULL;
  {
    GPtrArray *layers[] = { profile_entries, b->file_entries, b->cli_entries };
    g_autoptr(GPtrArray) scopes = secret_scopes (b, layers, G_N_ELEMENTS (layers));

    /* issue 14 item 1: a symlink inside any writable root of this policy
     * is never trusted to choose a root */
    b->writable_roots = g_ptr_array_new ();
    for (guint l = 0; l < G_N_ELEMENTS (layers); l++)
      for (guint i = 0; i < layers[l]->len; i++)
        {
          const Entry *e = layers[l]->pdata[i];
          if (!e->is_setting && e->kind == FSG_RULE_WRITABLE && e->value != NULL)
            g_ptr_array_add (b->writable_roots, e->value);
        }
    g_ptr_array_add (b->writable_roots, NULL);
    for (guint l = 0; l < G_N_ELEMENTS (layers); l++)
      if (!apply_entries (b, policy, layers[l], error) ||
          !apply_secret_names (policy, layers[l], scopes, error))
        return NULL;
  }
  git_add.policy = policy;
  if (b->git_discover && !fsg_policy_git_discover (policy, b->home, git_add_rule, &git_add, error))
    return NULL;

  policy->pub_rules = g_new0 (const FsgRule *, policy->rules->len + 1);
  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *r = policy->rules->pdata[i];
      policy->pub_rules[i] = &r->pub;
      if (r->pub.kind == FSG_RULE_DENY_READ && r->pub.anchored && !r->pub.is_glob)
        {
          char **comps = r->comps_canon ? r->comps_canon : r->comps;
          GString *s = g_string_new (NULL);
          for (guint j = 0; comps[j]; j++)
            {
              g_autofree char *u = fsg_glob_unescape (comps[j]);
              g_string_append_c (s, '/');
              g_string_append (s, u);
            }
          g_ptr_array_add (literal, g_string_free (s, FALSE));
        }
    }
  g_ptr_array_add (literal, NULL);
  policy->literal_deny_read = (char **) g_ptr_array_free (g_steal_pointer (&literal), FALSE);

  fsg_policy_compile (policy);
  return g_steal_pointer (&policy);
}

void
fsg_policy_free (FsgPolicy *policy)
{
  if (policy == NULL)
    return;
  fsg_policy_engine_clear (policy);
  g_mutex_clear (&policy->intern_lock);
  g_mutex_clear (&policy->denied_lock);
  fsg_denied_links_free (policy->denied_links);
  g_strfreev (policy->hybrid_tree_list);
  g_strfreev (policy->hybrid_hole_list);
  g_free (policy->profile);
  g_ptr_array_unref (policy->rules);
  g_free (policy->pub_rules);
  g_strfreev (policy->literal_deny_read);
  g_ptr_array_unref (policy->hybrid_trees);
  fsg_env_policy_clear (&policy->env);
  g_free (policy);
}
