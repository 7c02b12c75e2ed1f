/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host mount flags that the view must keep. The view is one FUSE mount, so
 * a root that lives on a noexec or nosymfollow mount of the host would lose
 * that protection inside the sandbox (bwrap's bind mounts keep it). I gives
 * each such place a bind mount of the view onto itself with the host's
 * flags (FSG_STEP_HOST_FLAGS); this file decides the places from the
 * host's /proc/self/mountinfo.
 */
#include "config.h"

#include "runner/run.h"

#include <string.h>
#include <sys/mount.h>

typedef struct
{
  char *path;
  unsigned long flags; /* MS_NOEXEC | MS_NOSYMFOLLOW subset */
} HostMount;

static void
host_mount_clear (gpointer data)
{
  g_free (((HostMount *) data)->path);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *
unescape (const char *s)
{
  GString *out = g_string_new (NULL);

  for (const char *p = s; *p; p++)
    {
      if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7')
        {
          g_string_append_c (out, (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0')));
          p += 3;
        }
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static GArray *
parse_mountinfo (const char *text)
{
  GArray *mounts = g_array_new (FALSE, TRUE, sizeof (HostMount));
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  g_array_set_clear_func (mounts, host_mount_clear);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", 7);
      g_auto(GStrv) opts = NULL;
      HostMount m = { NULL, 0 };

      if (g_strv_length (f) < 7 || f[4][0] != '/')
        continue;
      opts = g_strsplit (f[5], ",", -1);
      for (guint j = 0; opts[j] != NULL; j++)
        {
          if (strcmp (opts[j], "noexec") == 0)
            m.flags |= MS_NOEXEC;
          else if (strcmp (opts[j], "nosymfollow") == 0)
            m.flags |= FSG_MS_NOSYMFOLLOW;
        }
      m.path = unescape (f[4]);
      g_array_append_val (mounts, m);
    }
  return mounts;
}

/* @path is @dir or below it. */
static gboolean
path_within (const char *path, const char *dir)
{
  size_t n = strlen (dir);

  if (strcmp (dir, "/") == 0)
    return TRUE;
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The mount @path is on: the deepest mount point above it, the last one
 * listed when several are stacked on the same point. */
static const HostMount *
containing (GArray *mounts, const char *path)
{
  const HostMount *best = NULL;

  for (guint i = 0; i < mounts->len; i++)
    {
      const HostMount *m = &g_array_index (mounts, HostMount, i);

      if (path_within (path, m->path) && (best == NULL || strlen (m->path) >= strlen (best->path)))
        best = m;
    }
  return best;
}

static gboolean
excluded (const char *path, gboolean private_tmp)
{
  /* the runner mounts its own /proc, /dev (and /tmp) over these */
  return path_within (path, "/proc") || path_within (path, "/sys") || path_within (path, "/dev") ||
         (private_tmp && path_within (path, "/tmp"));
}

static int
by_depth (gconstpointer a, gconstpointer b)
{
  const FsgHostFlags *x = a, *y = b;
  guint dx = 0, dy = 0;

  for (const char *p = x->path; *p; p++)
    dx += *p == '/';
  for (const char *p = y->path; *p; p++)
    dy += *p == '/';
  if (dx != dy)
    return dx < dy ? -1 : 1;
  return strcmp (x->path, y->path);
}

static void
add_place (GArray *out, const char *path, unsigned long flags)
{
  FsgHostFlags h;

  for (guint i = 0; i < out->len; i++)
    if (strcmp (g_array_index (out, FsgHostFlags, i).path, path) == 0)
      return;
  h.path = g_strdup (path);
  h.flags = flags;
  g_array_append_val (out, h);
}

static void
host_flags_clear (gpointer data)
{
  g_free (((FsgHostFlags *) data)->path);
}

/* Left out: the runner's own mounts, and places the policy denies (a bind
 * there would only be refused, and recorded as a denial of the run). */
static gboolean
skip_place (const FsgPolicy *policy, const char *path, gboolean private_tmp)
{
  return excluded (path, private_tmp) || fsg_policy_decide (policy, path).access == FSG_ACCESS_DENY;
}

GArray *
fsg_host_flags_plan (const FsgPolicy *policy, const char *mountinfo, gboolean private_tmp)
{
  g_autoptr(GArray) mounts = parse_mountinfo (mountinfo);
  GArray *out = g_array_new (FALSE, TRUE, sizeof (FsgHostFlags));
  const FsgRule *const *rules;
  guint n = 0;

  g_array_set_clear_func (out, host_flags_clear);
  rules = fsg_policy_rules (policy, &n);
  /* Each root starts with no such flag in the view: give it its mount's. */
  for (guint i = 0; i < n; i++)
    {
      const FsgRule *r = rules[i];
      const HostMount *c;

      if ((r->kind != FSG_RULE_WRITABLE && r->kind != FSG_RULE_READONLY) || r->path == NULL ||
          skip_place (policy, r->path, private_tmp))
        continue;
      c = containing (mounts, r->path);
      if (c != NULL && c->flags != 0)
        add_place (out, r->path, c->flags);
    }
  /* Below a root, every mount point whose flags differ from those of the
   * mount it sits on (flags set, or cleared again under a noexec parent). */
  for (guint i = 0; i < mounts->len; i++)
    {
      const HostMount *m = &g_array_index (mounts, HostMount, i);
      g_autofree char *parent = NULL;
      const HostMount *p;
      gboolean in_view = FALSE;

      if (strcmp (m->path, "/") == 0 || containing (mounts, m->path) != m)
        continue;
      for (guint j = 0; j < n && !in_view; j++)
        in_view = (rules[j]->kind == FSG_RULE_WRITABLE || rules[j]->kind == FSG_RULE_READONLY) &&
                  rules[j]->path != NULL && path_within (m->path, rules[j]->path);
      if (!in_view || skip_place (policy, m->path, private_tmp))
        continue;
      parent = g_path_get_dirname (m->path);
      p = containing (mounts, parent);
      if (m->flags != (p != NULL ? p->flags : 0))
        add_place (out, m->path, m->flags);
    }
  g_array_sort (out, by_depth);
  return out;
}
