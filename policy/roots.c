/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Planted symlinks in root paths (issue 14 item 1). Roots are canonicalised
 * with realpath(), so a symlink that an earlier run's command left in a
 * directory it could write (`rm -r build; ln -s / build`) would silently
 * widen the next run's root (`--rw ./build`). Before a root is resolved,
 * every symlink met on the way, in the path as written and in the targets,
 * is checked: one that is not trusted is refused.
 *
 * A symlink is trusted only when it is the system's: its directory and
 * every ancestor are owned by root and writable by neither group nor others
 * (so not /tmp, not a user's home, not a CI workspace owned by another
 * user; root's own /root is root-owned and so on the chain), it
 * lies outside every writable root of this policy (a command of this very
 * run could replace it), and for a non-root caller, its directory is not
 * one the caller can write (owner u+w, a group's g+w, o+w; with the sticky
 * bit, only when the symlink is the caller's own). The system's own
 * symlinks (/bin -> usr/bin, /lib64, /var/run -> /run) keep working.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean
in_group (gid_t gid)
{
  gid_t groups[NGROUPS_MAX];
  int n;

  if (gid == getgid () || gid == getegid ())
    return TRUE;
  n = getgroups (G_N_ELEMENTS (groups), groups);
  for (int i = 0; i < n; i++)
    if (groups[i] == gid)
      return TRUE;
  return FALSE;
}

static gboolean
is_under (const char *path, const char *dir)
{
  gsize n;

  if (dir == NULL || dir[0] != '/')
    return FALSE;
  if (strcmp (dir, "/") == 0)
    return TRUE;
  n = strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Could the (non-root) caller have created (or replaced) the symlink
 * @link_st in the directory whose stat is @st? */
static gboolean
caller_could_plant (const struct stat *st, const struct stat *link_st)
{
  uid_t uid = getuid ();

  if ((st->st_mode & S_IWOTH) != 0)
    return (st->st_mode & S_ISVTX) == 0 || link_st->st_uid == uid;
  return (st->st_uid == uid && (st->st_mode & S_IWUSR) != 0)
         || ((st->st_mode & S_IWGRP) != 0 && in_group (st->st_gid));
}

/* The trusted system chain: @dir and every ancestor up to / are owned by
 * root and writable by neither group nor others (a sticky world-writable
 * directory such as /tmp is not trusted). @dir is a resolved path (no
 * symlinks in it: the walk below replaces each one by its target). */
static gboolean
in_trusted_chain (const char *dir)
{
  g_autofree char *p = g_strdup (dir[0] != '\0' ? dir : "/");

  for (;;)
    {
      struct stat st;
      char *slash;

      if (lstat (p, &st) < 0 || !S_ISDIR (st.st_mode))
        return FALSE;
      if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return FALSE;
      if (strcmp (p, "/") == 0)
        return TRUE;
      slash = strrchr (p, '/');
      if (slash == p)
        slash[1] = '\0';
      else
        *slash = '\0';
    }
}

/* Is @link (a resolved path) inside one of @writable (roots as written;
 * compared canonicalised, as written only when they do not resolve: a
 * root written through the very symlink being checked is not "inside"
 * itself)? */
static gboolean
in_writable_root (const char *link, const char *const *writable)
{
  for (guint i = 0; writable != NULL && writable[i] != NULL; i++)
    {
      g_autofree char *real = realpath (writable[i], NULL);

      if (is_under (link, real != NULL ? real : writable[i]))
        return TRUE;
    }
  return FALSE;
}

/* Is the symlink @link (in the directory @dir) one this run can trust to
 * choose what a root is? Only a system one: @dir on the trusted chain,
 * outside every writable root of this policy (a command of this run could
 * replace it), and, for a non-root caller, in a directory it cannot write. */
static gboolean
symlink_trusted (const char *dir, const char *link, const struct stat *link_st,
                 const char *const *writable)
{
  struct stat st;

  if (!in_trusted_chain (dir))
    return FALSE;
  if (in_writable_root (link, writable))
    return FALSE;
  if (getuid () != 0 && (stat (dir, &st) < 0 || caller_could_plant (&st, link_st)))
    return FALSE;
  return TRUE;
}

gboolean
fsg_root_find_planted_symlink (const char *path, const char *const *writable,
                               char **out_link, char **out_target)
{
  g_autoptr(GPtrArray) todo = g_ptr_array_new_with_free_func (g_free); /* components, reversed */
  g_autoptr(GString) cur = g_string_new ("");
  g_auto (GStrv) comps = fsg_path_split (path);
  guint links = 0;
  guint n = g_strv_length (comps);

  for (guint i = n; i > 0; i--)
    g_ptr_array_add (todo, g_strdup (comps[i - 1]));
  while (todo->len > 0)
    {
      g_autofree char *comp = g_ptr_array_steal_index (todo, todo->len - 1);
      gsize save = cur->len;
      struct stat st;
      char buf[PATH_MAX];
      ssize_t len;

      if (strcmp (comp, ".") == 0 || comp[0] == '\0')
        continue;
      if (strcmp (comp, "..") == 0)
        {
          char *slash = strrchr (cur->str, '/');
          if (slash != NULL)
            g_string_truncate (cur, slash - cur->str);
          continue;
        }
      g_string_append_c (cur, '/');
      g_string_append (cur, comp);
      if (lstat (cur->str, &st) < 0)
        return FALSE; /* missing: realpath() reports it */
      if (!S_ISLNK (st.st_mode))
        continue;
      len = readlink (cur->str, buf, sizeof buf - 1);
      if (len <= 0 || ++links > 40)
        return FALSE; /* realpath() reports ELOOP and the like */
      buf[len] = '\0';
      {
        g_autofree char *dir = g_strndup (cur->str, save);

        if (!symlink_trusted (save > 0 ? dir : "/", cur->str, &st, writable))
          {
            *out_link = g_strdup (cur->str);
            *out_target = g_strdup (buf);
            return TRUE;
          }
      }
      g_string_truncate (cur, save);
      if (buf[0] == '/')
        g_string_truncate (cur, 0);
      {
        g_auto (GStrv) tcomps = g_strsplit (buf, "/", -1);
        guint tn = g_strv_length (tcomps);

        for (guint i = tn; i > 0; i--)
          g_ptr_array_add (todo, g_strdup (tcomps[i - 1]));
      }
    }
  return FALSE;
}

gboolean
fsg_policy_find_untrusted_symlink (const FsgPolicy *policy, const char *path, char **out_link,
                                   char **out_target)
{
  g_autoptr(GPtrArray) writable = g_ptr_array_new ();
  guint n = 0;
  const FsgRule *const *rules = fsg_policy_rules (policy, &n);

  for (guint i = 0; i < n; i++)
    if (rules[i]->kind == FSG_RULE_WRITABLE && rules[i]->path != NULL)
      g_ptr_array_add (writable, (gpointer) rules[i]->path);
  g_ptr_array_add (writable, NULL);
  return fsg_root_find_planted_symlink (path, (const char *const *) writable->pdata, out_link,
                                        out_target);
}
