/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * /proc/self/mountinfo, parsed once for the hybrid plan (uniform.c) and
 * fsgate-run's host mount flags (runner/host-mounts.c).
 */
#include "config.h"

#include "policy/policy.h"

#include <string.h>
#include <sys/sysmacros.h>

static void
mount_clear (gpointer data)
{
  FsgMount *m = data;

  g_free (m->root);
  g_free (m->point);
  g_free (m->options);
  g_free (m->fstype);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *
unescape_octal (const char *s)
{
  GString *out = g_string_new (NULL);

  for (const char *p = s; *p; p++)
    {
      if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
          p[3] >= '0' && p[3] <= '7')
        {
          g_string_append_c (out, (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0')));
          p += 3;
        }
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

GArray *
fsg_mountinfo_parse (const char *text)
{
  GArray *mounts = g_array_new (FALSE, TRUE, sizeof (FsgMount));
  g_auto (GStrv) lines = g_strsplit (text ? text : "", "\n", -1);

  g_array_set_clear_func (mounts, mount_clear);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], " ", -1);
      guint n = g_strv_length (f), dash = 0;
      guint64 id, parent, major, minor;
      char *colon, *end;
      FsgMount m;

      /* ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER */
      for (guint j = 6; j < n; j++)
        if (strcmp (f[j], "-") == 0)
          {
            dash = j;
            break;
          }
      if (n < 7 || dash == 0 || dash + 1 >= n || f[4][0] != '/' ||
          !g_ascii_string_to_unsigned (f[0], 10, 0, G_MAXUINT32, &id, NULL) ||
          !g_ascii_string_to_unsigned (f[1], 10, 0, G_MAXUINT32, &parent, NULL) ||
          (colon = strchr (f[2], ':')) == NULL)
        continue;
      *colon = '\0';
      if (!g_ascii_string_to_unsigned (f[2], 10, 0, G_MAXUINT32, &major, NULL))
        continue;
      minor = g_ascii_strtoull (colon + 1, &end, 10);
      if (end == colon + 1 || *end != '\0')
        continue;
      m.id = (guint) id;
      m.parent = (guint) parent;
      m.dev = makedev ((unsigned) major, (unsigned) minor);
      m.root = unescape_octal (f[3]);
      m.point = unescape_octal (f[4]);
      m.options = g_strdup (f[5]);
      m.fstype = g_strdup (f[dash + 1]);
      g_array_append_val (mounts, m);
    }
  return mounts;
}

const FsgMount *
fsg_mountinfo_find (GArray *mounts, guint id)
{
  for (guint i = 0; mounts != NULL && i < mounts->len; i++)
    if (g_array_index (mounts, FsgMount, i).id == id)
      return &g_array_index (mounts, FsgMount, i);
  return NULL;
}

gboolean
fsg_path_within (const char *path, const char *dir)
{
  gsize n = strlen (dir);

  if (strcmp (dir, "/") == 0)
    return path[0] == '/';
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const FsgMount *
fsg_mountinfo_containing (GArray *mounts, const char *path)
{
  const FsgMount *best = NULL;

  for (guint i = 0; mounts != NULL && i < mounts->len; i++)
    {
      const FsgMount *m = &g_array_index (mounts, FsgMount, i);

      if (fsg_path_within (path, m->point) && (best == NULL || strlen (m->point) >= strlen (best->point)))
        best = m;
    }
  /* Mounts stacked at that point: the one on top, whichever is listed
   * first (a mount moved onto another keeps its place in the list). */
  for (guint steps = 0, moved = best != NULL; moved && steps < mounts->len; steps++)
    {
      moved = FALSE;
      for (guint i = 0; i < mounts->len; i++)
        {
          const FsgMount *m = &g_array_index (mounts, FsgMount, i);

          if (m != best && m->parent == best->id && strcmp (m->point, best->point) == 0)
            {
              best = m;
              moved = TRUE;
              break;
            }
        }
    }
  return best;
}

gboolean
fsg_mount_has_option (const FsgMount *m, const char *option)
{
  gsize n = strlen (option);

  for (const char *p = m->options; p != NULL && *p; )
    {
      const char *comma = strchr (p, ',');
      gsize len = comma ? (gsize) (comma - p) : strlen (p);

      if (len == n && strncmp (p, option, n) == 0)
        return TRUE;
      p = comma ? comma + 1 : NULL;
    }
  return FALSE;
}
