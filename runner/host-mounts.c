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

/* The flags of @m the view must keep: MS_NOEXEC | FSG_MS_NOSYMFOLLOW subset. */
static unsigned long
kept_flags (const FsgMount *m)
{
  return (fsg_mount_has_option (m, "noexec") ? MS_NOEXEC : 0) |
         (fsg_mount_has_option (m, "nosymfollow") ? FSG_MS_NOSYMFOLLOW : 0);
}

static gboolean
excluded (const char *path, gboolean private_tmp)
{
  /* the runner mounts its own /proc, /dev (and /tmp) over these */
  return fsg_path_within (path, "/proc") || fsg_path_within (path, "/sys") || fsg_path_within (path, "/dev") ||
         (private_tmp && fsg_path_within (path, "/tmp"));
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
  return excluded (path, private_tmp) || fsg_policy_walk (policy, path).access == FSG_ACCESS_DENY;
}

GArray *
fsg_host_flags_plan (const FsgPolicy *policy, const char *mountinfo, gboolean private_tmp)
{
  g_autoptr(GArray) mounts = fsg_mountinfo_parse (mountinfo);
  GArray *out = g_array_new (FALSE, TRUE, sizeof (FsgHostFlags));
  const FsgRule *const *rules;
  guint n = 0;

  g_array_set_clear_func (out, host_flags_clear);
  rules = fsg_policy_rules (policy, &n);
  /* Each root starts with no such flag in the view: give it its mount's. */
  for (guint i = 0; i < n; i++)
    {
      const FsgRule *r = rules[i];
      const FsgMount *c;

      if ((r->kind != FSG_RULE_WRITABLE && r->kind != FSG_RULE_READONLY) || r->path == NULL)
        continue;
      c = fsg_mountinfo_containing (mounts, r->path);
      if (c != NULL && kept_flags (c) != 0 && !skip_place (policy, r->path, private_tmp))
        add_place (out, r->path, kept_flags (c));
    }
  /* Below a root, every mount point whose flags differ from those of the
   * mount it sits on (flags set, or cleared again under a noexec parent). */
  for (guint i = 0; i < mounts->len; i++)
    {
      const FsgMount *m = &g_array_index (mounts, FsgMount, i);
      g_autofree char *parent = NULL;
      const FsgMount *p;
      gboolean in_view = FALSE;

      if (strcmp (m->point, "/") == 0 || fsg_mountinfo_containing (mounts, m->point) != m)
        continue;
      parent = g_path_get_dirname (m->point);
      p = fsg_mountinfo_containing (mounts, parent);
      if (kept_flags (m) == (p != NULL ? kept_flags (p) : 0))
        continue; /* the common case, and cheap: decide the policy only where it matters */
      for (guint j = 0; j < n && !in_view; j++)
        in_view = (rules[j]->kind == FSG_RULE_WRITABLE || rules[j]->kind == FSG_RULE_READONLY) &&
                  rules[j]->path != NULL && fsg_path_within (m->point, rules[j]->path);
      if (!in_view || skip_place (policy, m->point, private_tmp))
        continue;
      add_place (out, m->point, kept_flags (m));
    }
  g_array_sort (out, by_depth);
  return out;
}
