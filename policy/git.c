/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Git protection, the policy side (docs/security.md, "Git"):
 *
 *  - a parser for git's config syntax (a port of git's own config.c rules:
 *    sections, subsections, continuation lines, quoting, escapes) and the
 *    list of keys that make git run a program; the view refuses to install
 *    a config file of a git directory that sets one of them;
 *  - the hook names git runs;
 *  - discovery at policy build time: the repositories that contain a
 *    writable root, so that a linked worktree or a submodule whose git
 *    directory and common directory live outside the workspace can commit,
 *    and core.hooksPath directories named by existing config files become
 *    deny-write.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

gboolean
fsg_policy_git_protect (const FsgPolicy *policy)
{
  return policy->git_protect;
}

gboolean
fsg_rule_denies_a_name (const FsgRule *rule)
{
  const FsgRuleImpl *r = (const FsgRuleImpl *) rule;

  return rule != NULL && rule->kind == FSG_RULE_DENY_READ &&
         (!rule->anchored || r->secret_name != NULL);
}

/* ---- The config parser --------------------------------------------------- */

typedef struct
{
  const char *p;
  const char *end;
  gboolean eof;
  guint line;
} Src;

/* git's get_next_char(): "\r\n" reads as "\n", the end of input as "\n". */
static int
next_char (Src *s)
{
  int c;

  if (s->p >= s->end)
    {
      s->eof = TRUE;
      return '\n';
    }
  c = (guchar) *s->p++;
  if (c == '\r' && s->p < s->end && *s->p == '\n')
    c = (guchar) *s->p++;
  if (c == '\n')
    s->line++;
  return c;
}

/* git's isspace() (sane_ctype): space, \t, \n and \r only; \v and \f
 * are part of a value ("true\f" is not a boolean for git). */
static gboolean
git_isspace (int c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static gboolean
iskeychar (int c)
{
  return g_ascii_isalnum (c) || c == '-';
}

/* git's parse_value(): NULL on a syntax error. */
static char *
parse_value (Src *s)
{
  GString *v = g_string_new (NULL);
  gboolean quote = FALSE, comment = FALSE;
  guint space = 0;

  for (;;)
    {
      int c = next_char (s);

      if (c == '\n')
        {
          if (quote)
            break;
          return g_string_free (v, FALSE);
        }
      if (comment)
        continue;
      if (git_isspace (c) && !quote)
        {
          if (v->len)
            space++;
          continue;
        }
      if (!quote && (c == ';' || c == '#'))
        {
          comment = TRUE;
          continue;
        }
      for (; space; space--)
        g_string_append_c (v, ' ');
      if (c == '\\')
        {
          c = next_char (s);
          switch (c)
            {
            case '\n':
              continue;
            case 't':
              c = '\t';
              break;
            case 'b':
              c = '\b';
              break;
            case 'n':
              c = '\n';
              break;
            case '\\':
            case '"':
              break;
            default:
              goto fail;
            }
          g_string_append_c (v, (char) c);
          continue;
        }
      if (c == '"')
        {
          quote = !quote;
          continue;
        }
      g_string_append_c (v, (char) c);
    }
fail:
  g_string_free (v, TRUE);
  return NULL;
}

/* git's get_extended_base_var(): [section "sub"] */
static gboolean
parse_subsection (Src *s, GString *name, int c)
{
  do
    {
      if (c == '\n')
        return FALSE;
      c = next_char (s);
    }
  while (git_isspace (c));
  if (c != '"')
    return FALSE;
  g_string_append_c (name, '.');
  for (;;)
    {
      c = next_char (s);
      if (c == '\n')
        return FALSE;
      if (c == '"')
        break;
      if (c == '\\')
        {
          c = next_char (s);
          if (c == '\n')
            return FALSE;
        }
      g_string_append_c (name, (char) c);
    }
  return next_char (s) == ']';
}

/* git's get_base_var(): the section header after '['. */
static gboolean
parse_section (Src *s, GString *name)
{
  for (;;)
    {
      int c = next_char (s);

      if (s->eof)
        return FALSE;
      if (c == ']')
        return name->len > 0;
      if (git_isspace (c))
        return name->len > 0 && parse_subsection (s, name, c);
      if (!iskeychar (c) && c != '.')
        return FALSE;
      g_string_append_c (name, (char) g_ascii_tolower (c));
    }
}

static gboolean
is_bool_value (const char *v)
{
  static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "1", "0", "" };

  if (v == NULL) /* "key" alone means true */
    return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (words); i++)
    if (g_ascii_strcasecmp (v, words[i]) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
has_suffix (const char *s, const char *suffix)
{
  gsize n = strlen (s), m = strlen (suffix);

  return n >= m && strcmp (s + n - m, suffix) == 0;
}

/* Keys (the last part of a variable name, lower case) that name a program
 * or a command git runs, wherever they appear. */
static const char *const program_keys[] = {
  "hookspath", "askpass", "gitproxy", "sshcommand", "textconv", "clean", "smudge",
  "process", "driver", "external", "receivepack", "uploadpack", "vcs", "difffilter",
  "smtpserver", "httpd", "fsmonitor", "path", "tunnel", "authorsprog", "modulepath", NULL
};
/* Key suffixes with the same meaning: core.editor, sequence.editor,
 * credential.helper, gpg.program, mergetool.*.cmd, hook.*.command,
 * uploadpack.packObjectsHook, core.pager, pager.<cmd> ... */
static const char *const program_suffixes[] = {
  "cmd", "command", "program", "editor", "helper", "hook", "pager", NULL
};
/* Sections refused as a whole: include files are not checked, aliases
 * can run shell commands or pass -c options to git, trace2 targets are
 * files git writes to. */
static const char *const program_sections[] = { "include", "includeif", "alias", "trace2", NULL };

/* Is the variable @var ("section.sub.key", section and key lower case) with
 * @value (NULL for a bare key) a program-running setting? */
gboolean
fsg_git_config_var_runs_program (const char *var, const char *value)
{
  const char *dot = strchr (var, '.');
  const char *key = strrchr (var, '.');
  g_autofree char *section = NULL;

  if (dot == NULL || key == NULL)
    return FALSE;
  section = g_strndup (var, (gsize) (dot - var));
  key++;

  for (guint i = 0; program_sections[i]; i++)
    if (strcmp (section, program_sections[i]) == 0)
      return TRUE;
  if (strcmp (section, "protocol") == 0 && strcmp (key, "allow") == 0)
    return TRUE; /* would re-enable the ext:: transport, which runs commands */
  if (strcmp (section, "submodule") == 0)
    {
      if (strcmp (key, "update") == 0)
        return value != NULL && value[0] == '!';
      if (strcmp (key, "path") == 0)
        return FALSE;
    }
  if (value != NULL && value[0] == '\0')
    return FALSE; /* an empty value resets to git's default */
  /* booleans: core.fsmonitor = true is git's own daemon; pager.status =
   * false, color.pager = true */
  if ((strcmp (key, "fsmonitor") == 0 || has_suffix (key, "pager")) && is_bool_value (value))
    return FALSE;
  if (strcmp (section, "pager") == 0)
    return !is_bool_value (value);
  for (guint i = 0; program_keys[i]; i++)
    if (strcmp (key, program_keys[i]) == 0)
      return TRUE;
  for (guint i = 0; program_suffixes[i]; i++)
    if (has_suffix (key, program_suffixes[i]))
      return TRUE;
  return FALSE;
}

gboolean
fsg_git_config_scan (const char *data, gsize len, FsgGitConfigFunc func, gpointer user_data,
                     guint *out_line)
{
  Src s = { data, data + len, FALSE, 1 };
  g_autoptr(GString) var = g_string_new (NULL);
  gsize baselen = 0;
  gboolean comment = FALSE;

  /* a UTF-8 byte order mark */
  if (len >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    s.p += 3;
  for (;;)
    {
      int c = next_char (&s);

      if (c == '\n')
        {
          if (s.eof)
            return TRUE;
          comment = FALSE;
          continue;
        }
      if (comment || git_isspace (c))
        continue;
      if (c == '#' || c == ';')
        {
          comment = TRUE;
          continue;
        }
      if (c == '[')
        {
          g_string_truncate (var, 0);
          if (!parse_section (&s, var))
            break;
          g_string_append_c (var, '.');
          baselen = var->len;
          continue;
        }
      if (!g_ascii_isalpha (c))
        break;
      g_string_truncate (var, baselen);
      g_string_append_c (var, (char) g_ascii_tolower (c));
      for (;;)
        {
          c = next_char (&s);
          if (s.eof || !iskeychar (c))
            break;
          g_string_append_c (var, (char) g_ascii_tolower (c));
        }
      while (c == ' ' || c == '\t')
        c = next_char (&s);
      if (c == '\n')
        {
          if (func)
            func (var->str, NULL, user_data);
          if (s.eof)
            return TRUE;
          continue;
        }
      if (c != '=')
        break;
      {
        g_autofree char *value = parse_value (&s);

        if (value == NULL)
          break;
        if (func)
          func (var->str, value, user_data);
      }
      if (s.eof)
        return TRUE;
    }
  if (out_line)
    *out_line = s.line;
  return FALSE;
}

typedef struct
{
  char *first;
} FindProgram;

static void
find_program_cb (const char *var, const char *value, gpointer data)
{
  FindProgram *f = data;

  if (f->first == NULL && fsg_git_config_var_runs_program (var, value))
    f->first = g_strdup (var);
}

char *
fsg_git_config_find_program (const char *data, gsize len)
{
  FindProgram f = { NULL };
  guint line = 0;

  if (!fsg_git_config_scan (data, len, find_program_cb, &f, &line))
    {
      g_free (f.first);
      return g_strdup_printf ("a syntax error on line %u", line);
    }
  return f.first;
}

gboolean
fsg_git_is_sample_name (const char *name)
{
  return has_suffix (name, ".sample");
}

/* ---- Discovery at build time ---------------------------------------------- */

static char *
read_small (const char *path)
{
  char *data = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &data, &len, NULL))
    return NULL;
  if (len > 1024 * 1024)
    {
      g_free (data);
      return NULL;
    }
  return data;
}

/* "gitdir: X" of a .git file, resolved against @dir. (transfer full) */
static char *
read_gitfile (const char *file, const char *dir)
{
  g_autofree char *data = read_small (file);
  char *p;

  if (data == NULL || !g_str_has_prefix (data, "gitdir: "))
    return NULL;
  p = data + strlen ("gitdir: ");
  p[strcspn (p, "\r\n")] = '\0';
  if (*p == '\0')
    return NULL;
  return g_canonicalize_filename (p, dir);
}

/* The common dir of the git dir @gitdir. (transfer full) */
static char *
common_dir_of (const char *gitdir)
{
  g_autofree char *file = g_build_filename (gitdir, "commondir", NULL);
  g_autofree char *data = read_small (file);

  if (data == NULL)
    return g_strdup (gitdir);
  data[strcspn (data, "\r\n")] = '\0';
  return g_canonicalize_filename (data, gitdir);
}

static gboolean
under_writable (const FsgPolicy *policy, const char *path)
{
  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *r = policy->rules->pdata[i];
      const char *root = r->pub.path;
      gsize n = strlen (root);

      if (r->pub.kind != FSG_RULE_WRITABLE)
        continue;
      if (strcmp (root, "/") == 0 ||
          (strncmp (path, root, n) == 0 && (path[n] == '/' || path[n] == '\0')))
        return TRUE;
    }
  return FALSE;
}

typedef struct
{
  GPtrArray *hooks_paths;
} HooksPaths;

static void
hooks_path_cb (const char *var, const char *value, gpointer data)
{
  HooksPaths *h = data;

  /* init.templateDir: the hooks of every repository the host creates
   * later are copied from there */
  if (value && *value &&
      (strcmp (var, "core.hookspath") == 0 || strcmp (var, "init.templatedir") == 0))
    g_ptr_array_add (h->hooks_paths, g_strdup (value));
}

static void
collect_hooks_paths (const char *config, GPtrArray *out)
{
  g_autofree char *data = read_small (config);
  HooksPaths h = { out };

  if (data != NULL)
    fsg_git_config_scan (data, strlen (data), hooks_path_cb, &h, NULL);
}

static char *
expand_home (const char *path, const char *home)
{
  if (strcmp (path, "~") == 0)
    return g_strdup (home);
  if (g_str_has_prefix (path, "~/"))
    return g_build_filename (home, path + 2, NULL);
  return g_strdup (path);
}

gboolean
fsg_policy_git_discover (FsgPolicy *policy, const char *home, FsgGitAddRule add, gpointer data,
                         GError **error)
{
  g_autoptr(GPtrArray) globals = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) global_hooks = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) writable = g_ptr_array_new ();
  const char *xdg = g_getenv ("XDG_CONFIG_HOME");

  if (!policy->git_protect)
    return TRUE;

  /* The config files git reads for every repository. */
  g_ptr_array_add (globals, g_strdup ("/etc/gitconfig"));
  g_ptr_array_add (globals, g_build_filename (home, ".gitconfig", NULL));
  if (xdg && g_path_is_absolute (xdg))
    g_ptr_array_add (globals, g_build_filename (xdg, "git", NULL));
  g_ptr_array_add (globals, g_build_filename (home, ".config", "git", NULL));
  for (guint i = 0; i < globals->len; i++)
    {
      const char *g = globals->pdata[i];
      g_autofree char *cfg = g_str_has_suffix (g, "/git") ? g_build_filename (g, "config", NULL)
                                                         : g_strdup (g);

      if (under_writable (policy, g) && !add (data, FSG_RULE_DENY_WRITE, g,
                                              "git-protect: global git config", error))
        return FALSE;
      collect_hooks_paths (cfg, global_hooks);
    }

  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *r = policy->rules->pdata[i];
      if (r->pub.kind == FSG_RULE_WRITABLE)
        g_ptr_array_add (writable, (gpointer) r->pub.path);
    }

  for (guint i = 0; i < writable->len; i++)
    {
      g_autofree char *dir = g_strdup (writable->pdata[i]);

      /* the repositories that contain this root: core.hooksPath of each;
       * git dirs of the one whose working tree is the root */
      for (;;)
        {
          g_autofree char *dotgit = g_build_filename (dir, ".git", NULL);
          g_autofree char *gitdir = NULL;
          g_autofree char *common = NULL;
          g_autoptr(GPtrArray) hooks = NULL;
          g_autofree char *cfg = NULL;
          g_autofree char *wcfg = NULL;
          struct stat st;
          char *parent;

          if (lstat (dotgit, &st) == 0)
            {
              if (S_ISDIR (st.st_mode))
                gitdir = g_strdup (dotgit);
              else if (S_ISREG (st.st_mode))
                gitdir = read_gitfile (dotgit, dir);
            }
          if (gitdir != NULL && !g_hash_table_contains (seen, gitdir))
            {
              g_hash_table_add (seen, g_strdup (gitdir));
              common = common_dir_of (gitdir);
              /* The working tree is this writable root (a linked worktree,
               * a submodule): its git dirs outside the workspace become
               * writable, with the same protection as any git dir in the
               * view. Not for a repository above the root (a dotfiles
               * repository in ~): its other files are outside the
               * workspace, and a command able to move its refs could
               * have the host's next checkout write them. */
              if (strcmp (dir, writable->pdata[i]) == 0)
                {
                  if (!under_writable (policy, gitdir) && g_file_test (gitdir, G_FILE_TEST_IS_DIR) &&
                      !add (data, FSG_RULE_WRITABLE, gitdir,
                            "git-protect: git dir of the repository of a writable root", error))
                    return FALSE;
                  if (!under_writable (policy, common) && g_file_test (common, G_FILE_TEST_IS_DIR) &&
                      !add (data, FSG_RULE_WRITABLE, common,
                            "git-protect: common dir of the repository of a writable root", error))
                    return FALSE;
                }
              hooks = g_ptr_array_new_with_free_func (g_free);
              cfg = g_build_filename (common, "config", NULL);
              wcfg = g_build_filename (gitdir, "config.worktree", NULL);
              collect_hooks_paths (cfg, hooks);
              collect_hooks_paths (wcfg, hooks);
              for (guint j = 0; j < global_hooks->len; j++)
                g_ptr_array_add (hooks, g_strdup (global_hooks->pdata[j]));
              for (guint j = 0; j < hooks->len; j++)
                {
                  g_autofree char *e = expand_home (hooks->pdata[j], home);
                  g_autofree char *abs = g_canonicalize_filename (e, dir);

                  if (under_writable (policy, abs) &&
                      !add (data, FSG_RULE_DENY_WRITE, abs, "git-protect: core.hooksPath", error))
                    return FALSE;
                }
            }
          if (strcmp (dir, "/") == 0)
            break;
          parent = g_path_get_dirname (dir);
          g_free (dir);
          dir = parent;
        }
    }

  /* A relative core.hooksPath in a global config applies to every
   * repository, also the ones the command creates: its name is
   * deny-write at any depth. */
  for (guint j = 0; j < global_hooks->len; j++)
    {
      const char *h = global_hooks->pdata[j];
      g_autofree char *pattern = NULL;

      if (g_path_is_absolute (h) || h[0] == '~')
        {
          g_autofree char *e = expand_home (h, home);
          g_autofree char *abs = g_canonicalize_filename (e, "/");

          if (under_writable (policy, abs) &&
              !add (data, FSG_RULE_DENY_WRITE, abs,
                    "git-protect: core.hooksPath or init.templateDir of the global git config", error))
            return FALSE;
          continue;
        }
      if (h[0] == '\0')
        continue;
      if (strstr (h, "..") != NULL)
        continue; /* resolved per repository above */
      pattern = g_str_has_prefix (h, "./") ? g_strdup (h + 2) : g_strdup (h);
      if (strchr (pattern, '/') != NULL)
        {
          char *p = g_strconcat ("**/", pattern, NULL);
          g_free (pattern);
          pattern = p;
        }
      if (!add (data, FSG_RULE_DENY_WRITE, pattern, "git-protect: core.hooksPath", error))
        return FALSE;
    }
  return TRUE;
}

/* ---- Explaining ------------------------------------------------------------ */

static gboolean
exists_in (const char *dir, const char *name)
{
  g_autofree char *p = g_build_filename (dir, name, NULL);
  struct stat st;

  return lstat (p, &st) == 0;
}

/* The daemon's test (fsgate/git.c): named .git, or a shape git accepts. */
static gboolean
looks_gitdir (const char *dir)
{
  g_autofree char *base = g_path_get_basename (dir);

  return strcmp (base, ".git") == 0 ||
         (exists_in (dir, "objects") && exists_in (dir, "refs")) ||
         (exists_in (dir, "HEAD") && exists_in (dir, "commondir"));
}

char *
fsg_policy_git_explain (const FsgPolicy *policy, const char *path)
{
  g_autofree char *dir = NULL;
  g_autofree char *base = NULL;
  g_autofree char *dbase = NULL;
  g_autofree char *gdir = NULL;

  if (!policy->git_protect || strcmp (path, "/") == 0)
    return NULL;
  dir = g_path_get_dirname (path);
  base = g_path_get_basename (path);
  dbase = g_path_get_basename (dir);
  gdir = g_path_get_dirname (dir);

  if (strcmp (dbase, "hooks") == 0 && looks_gitdir (gdir))
    {
      if (fsg_git_is_sample_name (base))
        return g_strdup_printf ("git-protect: hooks/%s: a sample, git never runs it", base);
      return g_strdup_printf ("git-protect: hooks/%s: a hook git would run: never executable, "
                              "no symlink, no hard link (files made here lose their execute bits)",
                              base);
    }
  if (!looks_gitdir (dir))
    {
      if (strcmp (base, "HEAD") == 0 || strcmp (base, "objects") == 0 || strcmp (base, "refs") == 0 ||
          strcmp (base, "commondir") == 0)
        return g_strdup_printf ("git-protect: %s/%s: if it makes %s a git dir, its config and hooks "
                                "are checked first", dbase, base, dir);
      if (strcmp (base, ".git") == 0)
        return g_strdup ("git-protect: .git: a git dir made here gets the same protection; "
                         "a .git dir renamed here is checked first");
      return NULL;
    }
  if (strcmp (base, "config") == 0 || strcmp (base, "config.worktree") == 0)
    return g_strdup_printf ("git-protect: %s/%s: written only by renaming a checked file over it "
                            "(git's %s.lock), never with a program-running key; no link, no "
                            "symlink", dbase, base, base);
  if (strcmp (base, "hooks") == 0)
    return g_strdup_printf ("git-protect: %s/hooks: never a symlink, never an executable hook",
                            dbase);
  if (strcmp (base, "commondir") == 0 || strcmp (base, "gitdir") == 0)
    return g_strdup_printf ("git-protect: %s/%s: a redirection, written only in a linked "
                            "worktree's worktrees/<id>/", dbase, base);
  return NULL;
}
