/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What fsgate-run shows beyond the policy: its own /proc, a minimal /dev, a
 * private /tmp (with the roots below /tmp on top of it) and, with the
 * network allowed, the host's resolver file when /etc/resolv.conf points
 * into a denied directory such as /run. Shared by the runner, which mounts
 * these, and by `fsgate explain`, which must say the same.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static gboolean
within (const char *path, const char *dir)
{
  gsize n = strlen (dir);

  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

gboolean
fsg_policy_run_private_tmp (const FsgPolicy *policy)
{
  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *r = policy->rules->pdata[i];

      if ((r->pub.kind == FSG_RULE_WRITABLE || r->pub.kind == FSG_RULE_READONLY) &&
          r->pub.path != NULL && strcmp (r->pub.path, "/tmp") == 0)
        return FALSE; /* the host's /tmp itself, as asked */
    }
  return fsg_policy_walk (policy, "/tmp").access != FSG_ACCESS_RW;
}

char **
fsg_policy_run_tmp_roots (const FsgPolicy *policy)
{
  g_autoptr(GPtrArray) all = g_ptr_array_new ();
  GPtrArray *out = g_ptr_array_new ();

  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *r = policy->rules->pdata[i];

      if ((r->pub.kind == FSG_RULE_WRITABLE || r->pub.kind == FSG_RULE_READONLY) &&
          r->pub.path != NULL && g_str_has_prefix (r->pub.path, "/tmp/"))
        g_ptr_array_add (all, (gpointer) r->pub.path);
    }
  for (guint i = 0; i < all->len; i++)
    {
      gboolean covered = FALSE;

      for (guint j = 0; j < all->len && !covered; j++)
        covered = i != j && (strcmp (all->pdata[i], all->pdata[j]) == 0
                               ? j < i
                               : within (all->pdata[i], all->pdata[j]));
      if (!covered)
        g_ptr_array_add (out, g_strdup (all->pdata[i]));
    }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

/* Resolver files that hosts link /etc/resolv.conf to. */
const char *const fsg_policy_resolver_paths[] = {
  "/run/systemd/resolve/stub-resolv.conf",
  "/run/systemd/resolve/resolv.conf",
  "/run/resolvconf/resolv.conf",
  "/run/NetworkManager/resolv.conf",
  "/run/NetworkManager/no-stub-resolv.conf",
  NULL,
};

static const char *const run_denies[] = { "/run", "/var/run/*", NULL };

gboolean
fsg_policy_run_resolver (const FsgPolicy *policy, const char *resolv_conf, char **out_target,
                         char **out_top, char **out_real)
{
  g_autofree char *link = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *target = NULL;
  FsgPathState run;
  gboolean known = FALSE;
  struct stat st;

  if (!policy->network || lstat (resolv_conf, &st) < 0 || !S_ISLNK (st.st_mode))
    return FALSE;
  if (fsg_policy_walk (policy, resolv_conf).access < FSG_ACCESS_RO)
    return FALSE;
  /* the link, resolved once and lexically: never a chain of links */
  link = g_file_read_link (resolv_conf, NULL);
  if (link == NULL)
    return FALSE;
  dir = g_path_get_dirname (resolv_conf);
  target = g_canonicalize_filename (link, dir);
  for (guint i = 0; fsg_policy_resolver_paths[i] != NULL && !known; i++)
    known = strcmp (target, fsg_policy_resolver_paths[i]) == 0;
  if (!known)
    return FALSE;
  if (fsg_policy_walk (policy, target).access >= FSG_ACCESS_RO)
    return FALSE; /* the view shows it already */
  /* denied by the deny of /run alone ("/run", and the profiles'
   * "/var/run/ *", which is "/run/ *" through the /var/run link), not by a rule
   * naming it, a directory on its way or its name */
  run = fsg_policy_walk (policy, "/run");
  if (run.access != FSG_ACCESS_DENY || run.rule == NULL || strcmp (run.rule->pattern, "/run") != 0 ||
      fsg_policy_deny_read_other (policy, target, run_denies) != NULL)
    return FALSE;
  *out_real = g_strdup (target);
  *out_target = g_steal_pointer (&target);
  *out_top = g_strdup ("/run");
  return TRUE;
}

static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty",
                                         "ptmx", "fd", "stdin", "stdout", "stderr", NULL };
static const char *const runtime_dirs[] = { "/run", "/sys", NULL };

gboolean
fsg_policy_run_place (const FsgPolicy *policy, const char *path, FsgAccess *out_access,
                      char **out_why)
{
  if (within (path, "/proc"))
    {
      /* the command's own files (/proc/self/oom_score_adj, comm) are
       * writable as they are anywhere; everything global is not */
      *out_access = FSG_ACCESS_RO;
      *out_why = g_strdup ("proc: fsgate-run mounts the sandbox's own /proc (its processes only; "
                           "/proc/sys and the other global knobs read-only)");
      return TRUE;
    }
  if (within (path, "/dev"))
    {
      const char *rest = path[4] == '/' ? path + 5 : "";
      gboolean shown = rest[0] == '\0' || within (rest, "pts") || within (rest, "shm");

      for (guint i = 0; dev_nodes[i] && !shown; i++)
        shown = strcmp (rest, dev_nodes[i]) == 0;
      *out_access = shown ? FSG_ACCESS_RW : FSG_ACCESS_ABSENT;
      *out_why = g_strdup (shown ? "dev: fsgate-run's minimal /dev (null zero full random urandom "
                                   "tty, its own pts and a private shm)"
                                 : "dev: not in fsgate-run's minimal /dev (null zero full random "
                                   "urandom tty pts ptmx shm fd)");
      return TRUE;
    }
  {
    g_autofree char *target = NULL, *top = NULL, *real = NULL;
    gboolean resolver = fsg_policy_run_resolver (policy, "/etc/resolv.conf", &target, &top, &real);

    if (resolver && within (path, top) && within (target, path))
      {
        *out_access = FSG_ACCESS_RO;
        *out_why = g_strdup_printf ("resolver: with the network allowed, fsgate-run shows %s "
                                    "(the target of /etc/resolv.conf, read-only)", target);
        return TRUE;
      }
    for (guint i = 0; runtime_dirs[i]; i++)
      if (within (path, runtime_dirs[i]) &&
          fsg_policy_walk (policy, runtime_dirs[i]).access == FSG_ACCESS_DENY)
        {
          *out_access = strcmp (path, runtime_dirs[i]) == 0 ? FSG_ACCESS_RO : FSG_ACCESS_ABSENT;
          *out_why = g_strdup_printf ("%s: the policy denies %s; fsgate-run shows an empty "
                                      "read-only directory there (nothing of the host)",
                                      runtime_dirs[i] + 1, runtime_dirs[i]);
          return TRUE;
        }
    if (resolver && within (path, top))
      {
        *out_access = FSG_ACCESS_ABSENT;
        *out_why = g_strdup_printf ("resolver: with the network allowed, fsgate-run shows only "
                                    "%s of %s", target, top);
        return TRUE;
      }
  }
  if (within (path, "/tmp") && fsg_policy_run_private_tmp (policy))
    {
      g_auto (GStrv) roots = fsg_policy_run_tmp_roots (policy);

      for (guint i = 0; roots[i]; i++)
        if (within (path, roots[i]))
          return FALSE; /* a root below /tmp: the policy decides */
      *out_access = FSG_ACCESS_RW;
      *out_why = g_strdup ("tmp (private): fsgate-run mounts a tmpfs of this run only at /tmp; "
                           "the host's /tmp is not shown");
      return TRUE;
    }
  return FALSE;
}
