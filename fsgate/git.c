/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Git protection in the view: git works in the sandbox, and nothing the
 * command writes can make the host's git run a program later
 * (docs/security.md, "Git", lists what is covered and why).
 *
 * The decision is taken at every operation that changes a name or a file,
 * from the directory structure seen at that moment on the host, so it
 * covers repositories found at any depth and created at any time:
 *
 *  - a "git dir" is a directory named .git, or one that git itself would
 *    accept as a git dir or a common dir: objects/ and refs/ in it, or HEAD
 *    and commondir. Making a directory a git dir (creating or renaming in
 *    the last of those entries) checks what it already holds;
 *  - config and config.worktree of a git dir are never written in place or
 *    linked: they are installed by rename (git's config.lock protocol),
 *    and only when their content sets no program-running key. The daemon
 *    installs a checked copy, so a descriptor still open on the renamed
 *    file cannot change the installed config afterwards;
 *  - hooks/ of a git dir holds no executable hook: files made there lose
 *    their execute bits (templates), chmod +x, symlinks and hard links are
 *    refused; *.sample names are free, git never runs them;
 *  - redirections (.git files, commondir, gitdir) may point anywhere: every
 *    git dir they can lead to is either one the host had before or one
 *    made through the view, which the rules above keep free of programs.
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
# define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
# define RENAME_EXCHANGE (1 << 1)
#endif

#define CONFIG_MAX (1024 * 1024)
#define GIT_CREATED_MAX 1000

void
fsg_fs_git_init (FsgFs *fs)
{
  fs->git_protect = fsg_policy_git_protect (fs->policy);
  g_mutex_init (&fs->git_lock);
  g_mutex_init (&fs->git_op_lock);
  fs->git_created = g_ptr_array_new_with_free_func (g_free);
}

void
fsg_fs_git_clear (FsgFs *fs)
{
  if (fs->git_created == NULL)
    return;
  g_clear_pointer (&fs->git_created, g_ptr_array_unref);
  g_mutex_clear (&fs->git_lock);
  g_mutex_clear (&fs->git_op_lock);
}

char **
fsg_fs_git_dirs_created (FsgFs *fs)
{
  GPtrArray *out = g_ptr_array_new ();

  g_mutex_lock (&fs->git_lock);
  for (guint i = 0; fs->git_created && i < fs->git_created->len; i++)
    g_ptr_array_add (out, g_strdup (fs->git_created->pdata[i]));
  g_mutex_unlock (&fs->git_lock);
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

/* Is the directory @dir in a git working tree (a .git entry in it or in
 * one of its ancestors in the view)? Walks the view's parent chain, fd by
 * fd; only asked for denied names. */
static gboolean
in_worktree (FsgFs *fs, FsgInode *dir)
{
  FsgInode *cur = dir;
  gboolean found = FALSE;

  g_mutex_lock (&fs->lock);
  cur->pins++;
  g_mutex_unlock (&fs->lock);
  for (guint depth = 0; cur != NULL && depth < 4096 && !found; depth++)
    {
      FsgInode *next;
      int fd = fsg_inode_pin (fs, cur);
      struct stat st;

      if (fd >= 0)
        {
          found = fstatat (fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0;
          fsg_inode_unpin (fs, cur);
        }
      g_mutex_lock (&fs->lock);
      next = fsg_inode_parent_locked (cur);
      if (next != NULL && next->kind == FSG_INODE_HOST)
        next->pins++;
      else
        next = NULL;
      g_mutex_unlock (&fs->lock);
      fsg_inode_unpin (fs, cur);
      cur = next;
    }
  if (cur != NULL)
    fsg_inode_unpin (fs, cur);
  return found;
}

gboolean
fsg_fs_hides (FsgFs *fs, FsgInode *parent, const FsgPathState *s)
{
  if (fs->hide_denied)
    return TRUE;
  /* Names denied by a name pattern or secret-names (.env, *.pem) inside a
   * git working tree: git status, add -A, stash and clean must walk past
   * them. */
  return fs->git_protect && s != NULL && s->access == FSG_ACCESS_DENY &&
         fsg_rule_denies_a_name (s->rule) && parent->kind == FSG_INODE_HOST &&
         in_worktree (fs, parent);
}

/* ---- Shapes ------------------------------------------------------------ */

static gboolean
is_config_name (const char *n)
{
  return strcmp (n, "config") == 0 || strcmp (n, "config.worktree") == 0;
}

static gboolean
is_signature_name (const char *n)
{
  return strcmp (n, "HEAD") == 0 || strcmp (n, "objects") == 0 || strcmp (n, "refs") == 0 ||
         strcmp (n, "commondir") == 0;
}

static gboolean
has_entry (int dfd, const char *name, const char *extra)
{
  struct stat st;

  if (extra != NULL && strcmp (extra, name) == 0)
    return TRUE;
  return fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Would git take @dfd (with @extra counted as present) for a git dir or a
 * common dir? */
static gboolean
gitdir_shape (int dfd, const char *extra)
{
  return (has_entry (dfd, "objects", extra) && has_entry (dfd, "refs", extra)) ||
         (has_entry (dfd, "HEAD", extra) && has_entry (dfd, "commondir", extra));
}

static gboolean
gitdir_like (const char *dirname, int dfd)
{
  return (dirname != NULL && strcmp (dirname, ".git") == 0) || gitdir_shape (dfd, NULL);
}

static char *
inode_name (FsgFs *fs, FsgInode *inode)
{
  char *n;

  g_mutex_lock (&fs->lock);
  n = g_strdup (fsg_inode_name_locked (inode));
  g_mutex_unlock (&fs->lock);
  return n;
}

/* The parent directory of @inode, pinned twice (the pointer, then its fd):
 * release with parent_unpin(). NULL when it has no host parent. */
static FsgInode *
parent_pin (FsgFs *fs, FsgInode *inode, int *out_fd)
{
  FsgInode *p;

  g_mutex_lock (&fs->lock);
  p = fsg_inode_parent_locked (inode);
  if (p != NULL && p->kind == FSG_INODE_HOST)
    p->pins++;
  else
    p = NULL;
  g_mutex_unlock (&fs->lock);
  if (p == NULL)
    return NULL;
  *out_fd = fsg_inode_pin (fs, p);
  if (*out_fd < 0)
    {
      fsg_inode_unpin (fs, p);
      return NULL;
    }
  return p;
}

static void
parent_unpin (FsgFs *fs, FsgInode *p)
{
  if (p == NULL)
    return;
  fsg_inode_unpin (fs, p);
  fsg_inode_unpin (fs, p);
}

/* Is the directory @dir (an inode) the hooks directory of a git dir? */
static gboolean
is_hooks_dir (FsgFs *fs, FsgInode *dir)
{
  g_autofree char *name = inode_name (fs, dir);
  g_autofree char *gname = NULL;
  FsgInode *g;
  gboolean r;
  int gfd = -1;

  if (name == NULL || strcmp (name, "hooks") != 0)
    return FALSE;
  g = parent_pin (fs, dir, &gfd);
  if (g == NULL)
    return FALSE;
  gname = inode_name (fs, g);
  r = gitdir_like (gname, gfd);
  parent_unpin (fs, g);
  return r;
}

/* Rebase and sequencer state: the todo list of `git rebase --continue` and
 * `git cherry-pick --continue`, whose exec (x) lines run shell commands. */
static const char *
todo_name_of (const char *statedir)
{
  if (statedir == NULL)
    return NULL;
  if (strcmp (statedir, "rebase-merge") == 0)
    return "git-rebase-todo";
  if (strcmp (statedir, "sequencer") == 0)
    return "todo";
  return NULL;
}

static gboolean
is_todo_name (const char *statedir, const char *name)
{
  const char *t = todo_name_of (statedir);

  return t != NULL && name != NULL && strcmp (t, name) == 0;
}

/* Is the directory @dir (an inode) rebase-merge/ or sequencer/ of a git dir? */
static gboolean
is_state_dir (FsgFs *fs, FsgInode *dir)
{
  g_autofree char *name = inode_name (fs, dir);
  g_autofree char *gname = NULL;
  FsgInode *g;
  gboolean r;
  int gfd = -1;

  if (todo_name_of (name) == NULL)
    return FALSE;
  g = parent_pin (fs, dir, &gfd);
  if (g == NULL)
    return FALSE;
  gname = inode_name (fs, g);
  r = gitdir_like (gname, gfd);
  parent_unpin (fs, g);
  return r;
}

static gboolean
is_redirect_name (const char *n)
{
  return strcmp (n, "commondir") == 0 || strcmp (n, "gitdir") == 0;
}

/* commondir and gitdir belong in a linked worktree's admin dir,
 * <common>/worktrees/<id>/ (git worktree add writes them there). */
static gboolean
redirect_allowed (FsgFs *fs, FsgInode *dir)
{
  g_autofree char *wname = NULL;

  g_mutex_lock (&fs->lock);
  if (fsg_inode_parent_locked (dir) != NULL)
    wname = g_strdup (fsg_inode_name_locked (fsg_inode_parent_locked (dir)));
  g_mutex_unlock (&fs->lock);
  return wname != NULL && strcmp (wname, "worktrees") == 0;
}

typedef struct
{
  char *value;
} HooksPath;

static void
hooks_path_cb (const char *var, const char *value, gpointer data)
{
  HooksPath *h = data;

  if (strcmp (var, "core.hookspath") == 0 && value != NULL)
    {
      g_free (h->value);
      h->value = g_strdup (value); /* the last one wins, as in git */
    }
}

static char *read_checked (int fd, gsize *out_len);

/* core.hooksPath of the git dir @gfd's config, or NULL. */
static char *
read_hooks_path (int gfd)
{
  fsg_autofd int fd = openat (gfd, "config", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  g_autofree char *data = NULL;
  HooksPath h = { NULL };
  gsize len = 0;

  if (fd < 0 || (data = read_checked (fd, &len)) == NULL)
    return NULL;
  fsg_git_config_scan (data, len, hooks_path_cb, &h, NULL);
  return h.value;
}

/* Is @dir the core.hooksPath directory of the repository whose working
 * tree holds it (the nearest .git directory above it in the view)? The
 * repositories around writable roots were resolved when the policy was
 * built (their hooksPath is deny-write); this covers the ones found deeper,
 * and is asked only when something executable appears. */
static gboolean
is_hookspath_dir (FsgFs *fs, FsgInode *dir)
{
  FsgInode *cur = dir;
  g_autofree char *hp = NULL;
  g_autofree char *wpath = NULL;
  gboolean done = FALSE;

  if (dir->kind != FSG_INODE_HOST)
    return FALSE;
  g_mutex_lock (&fs->lock);
  cur->pins++;
  g_mutex_unlock (&fs->lock);
  for (guint depth = 0; cur != NULL && depth < 4096 && !done; depth++)
    {
      FsgInode *next;
      int fd = fsg_inode_pin (fs, cur);
      struct stat st;

      if (fd >= 0)
        {
          if (fstatat (fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0)
            {
              done = TRUE; /* the nearest working tree */
              if (S_ISDIR (st.st_mode))
                {
                  fsg_autofd int gfd = openat (fd, ".git", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                  if (gfd >= 0 && (hp = read_hooks_path (gfd)) != NULL && hp[0] != '\0')
                    wpath = fsg_inode_path (fs, cur, NULL);
                }
            }
          fsg_inode_unpin (fs, cur);
        }
      if (done)
        break;
      g_mutex_lock (&fs->lock);
      next = fsg_inode_parent_locked (cur);
      if (next != NULL && next->kind == FSG_INODE_HOST)
        next->pins++;
      else
        next = NULL;
      g_mutex_unlock (&fs->lock);
      fsg_inode_unpin (fs, cur);
      cur = next;
    }
  if (cur != NULL)
    fsg_inode_unpin (fs, cur);
  if (wpath != NULL)
    {
      g_autofree char *expanded = g_str_has_prefix (hp, "~/")
                                    ? g_build_filename (g_get_home_dir (), hp + 2, NULL)
                                    : g_strdup (hp);
      g_autofree char *target = g_canonicalize_filename (expanded, wpath);
      g_autofree char *dpath = fsg_inode_path (fs, dir, NULL);

      return strcmp (target, dpath) == 0;
    }
  return FALSE;
}

/* ---- Content checks ------------------------------------------------------ */

/* Read a regular file of at most CONFIG_MAX bytes. */
static char *
read_checked (int fd, gsize *out_len)
{
  GString *s = g_string_new (NULL);
  char buf[16384];
  ssize_t n;

  while ((n = FSG_RETRY (read (fd, buf, sizeof buf))) > 0)
    {
      g_string_append_len (s, buf, n);
      if (s->len > CONFIG_MAX)
        break;
    }
  if (n < 0 || s->len > CONFIG_MAX)
    {
      g_string_free (s, TRUE);
      return NULL;
    }
  *out_len = s->len;
  return g_string_free (s, FALSE);
}

typedef struct
{
  FsgFs *fs;
  const char *gitdir;
  char *problem;
} Worktree;

static void
worktree_cb (const char *var, const char *value, gpointer data)
{
  Worktree *w = data;
  g_autofree char *path = NULL;
  FsgPathState st;

  if (w->problem != NULL || strcmp (var, "core.worktree") != 0 || value == NULL ||
      value[0] == '\0')
    return;
  /* git takes a relative core.worktree relative to the git dir; the value
   * is resolved here without following symlinks (docs/security.md says
   * what that leaves open) */
  if (!g_path_is_absolute (value) && w->gitdir == NULL)
    {
      w->problem = g_strdup ("config sets core.worktree, and the git dir's path is unknown");
      return;
    }
  path = g_canonicalize_filename (value, w->gitdir);
  st = fsg_policy_decide (w->fs->policy, path);
  if (st.access != FSG_ACCESS_RW)
    w->problem = g_strdup_printf ("config sets core.worktree to %s, outside the writable roots "
                                  "(the host's git would write files there)", path);
}

/* The problem with a config file's content, or NULL. @gitdir is the path of
 * the git dir it is (or becomes) the config of, NULL when not known. */
static char *
config_problem (FsgFs *fs, const char *gitdir, const char *data, gsize len)
{
  g_autofree char *key = fsg_git_config_find_program (data, len);
  Worktree w = { fs, gitdir, NULL };

  if (key != NULL && g_str_has_prefix (key, "a syntax error"))
    return g_strdup_printf ("config with %s", key);
  if (key != NULL)
    return g_strdup_printf ("config sets %s, which makes git run a program", key);
  fsg_git_config_scan (data, len, worktree_cb, &w, NULL);
  return w.problem;
}

static int install_copy (int pfd, const char *name, int npfd, const char *newname,
                         const char *data, gsize len, const struct stat *st, unsigned int flags);

static char *todo_problem (const char *data, gsize len);

/* The file @name in @dfd, a git config (@todo FALSE) or a todo list: NULL
 * when absent or safe, after installing a copy of the checked bytes
 * (install_copy(): written beside it and renamed over the name). */
static char *
check_reinstall (FsgFs *fs, const char *gitdir, int dfd, const char *name, gboolean todo)
{
  struct stat st;
  fsg_autofd int fd = -1;
  g_autofree char *data = NULL;
  char *problem;
  gsize len = 0;

  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return NULL;
  if (!S_ISREG (st.st_mode))
    return g_strdup_printf ("%s is not a regular file", name);
  if (st.st_nlink > 1)
    return g_strdup_printf ("%s has another hard link", name);
  fd = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || (data = read_checked (fd, &len)) == NULL)
    return g_strdup_printf ("%s cannot be checked", name);
  problem = todo ? todo_problem (data, len) : config_problem (fs, gitdir, data, len);
  if (problem != NULL)
    return problem;
  if (fstat (fd, &st) < 0 || install_copy (dfd, name, dfd, name, data, len, &st, 0) < 0)
    return g_strdup_printf ("%s cannot be installed again (a descriptor open on it would stay "
                            "writable)", name);
  return NULL;
}

/* @name in @dfd as a config file of a directory becoming a git dir: NULL
 * when absent or safe. A safe one is installed again (a checked copy
 * renamed over the name), so that a descriptor opened on it before, while
 * the directory was not a git dir, is left on an unlinked file: writes,
 * mmap and copy_file_range through it change nothing git reads. */
static char *
check_config_file (FsgFs *fs, const char *gitdir, int dfd, const char *name)
{
  return check_reinstall (fs, gitdir, dfd, name, FALSE);
}

/* An exec (x) line of a todo list, or NULL. */
static char *
todo_problem (const char *data, gsize len)
{
  const char *p = data, *end = data + len;

  while (p < end)
    {
      const char *eol = memchr (p, '\n', (gsize) (end - p));
      const char *w;
      gsize n;

      if (eol == NULL)
        eol = end;
      while (p < eol && (*p == ' ' || *p == '\t'))
        p++;
      for (w = p; w < eol && *w != ' ' && *w != '\t' && *w != '\r'; w++)
        ;
      n = (gsize) (w - p);
      if ((n == 4 && memcmp (p, "exec", 4) == 0) || (n == 1 && *p == 'x'))
        return g_strdup ("todo list with an exec line, which makes git run a command at --continue");
      p = eol + 1;
    }
  return NULL;
}

/* The todo list @name in @dfd (a rebase-merge/ or sequencer/ directory):
 * NULL when absent or safe; a safe one is installed again, as a config. */
static char *
check_todo_file (int dfd, const char *name)
{
  return check_reinstall (NULL, NULL, dfd, name, TRUE);
}

/* The todo list in the state directory @statedir (rebase-merge or
 * sequencer) of the git dir @gfd. */
static char *
check_state_dir (int gfd, const char *statedir)
{
  struct stat st;
  fsg_autofd int sfd = -1;

  if (fstatat (gfd, statedir, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return NULL;
  if (S_ISLNK (st.st_mode))
    return g_strdup_printf ("%s is a symlink", statedir);
  if (!S_ISDIR (st.st_mode))
    return NULL;
  sfd = openat (gfd, statedir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sfd < 0)
    return g_strdup_printf ("%s cannot be checked", statedir);
  return check_todo_file (sfd, todo_name_of (statedir));
}

/* The entries of a hooks directory @hfd: none that git would run. */
static char *
check_hooks_entries (int hfd)
{
  fsg_autofd int dfd = openat (hfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dp;
  struct dirent *de;
  char *problem = NULL;

  if (dfd < 0)
    return g_strdup ("hooks cannot be listed");
  dp = fdopendir (dfd);
  if (dp == NULL)
    return g_strdup ("hooks cannot be listed");
  dfd = -1; /* owned by dp */
  while (problem == NULL && (de = readdir (dp)) != NULL)
    {
      struct stat st;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0 ||
          fsg_git_is_sample_name (de->d_name))
        continue;
      if (fstatat (dirfd (dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISLNK (st.st_mode))
        problem = g_strdup_printf ("hooks/%s is a symlink", de->d_name);
      else if (S_ISREG (st.st_mode) && (st.st_mode & 0111))
        problem = g_strdup_printf ("hooks/%s is an executable hook", de->d_name);
      else if (S_ISREG (st.st_mode) && st.st_nlink > 1)
        problem = g_strdup_printf ("hooks/%s has another hard link", de->d_name);
    }
  closedir (dp);
  return problem;
}

/* Everything git would run from the git dir @dfd: NULL when nothing. */
static char *
check_gitdir_contents (FsgFs *fs, const char *gitdir, int dfd)
{
  struct stat st;
  char *problem;

  if ((problem = check_config_file (fs, gitdir, dfd, "config")) != NULL ||
      (problem = check_config_file (fs, gitdir, dfd, "config.worktree")) != NULL ||
      (problem = check_state_dir (dfd, "rebase-merge")) != NULL ||
      (problem = check_state_dir (dfd, "sequencer")) != NULL)
    return problem;
  if (fstatat (dfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      fsg_autofd int hfd = -1;

      if (S_ISLNK (st.st_mode))
        return g_strdup ("hooks is a symlink");
      if (!S_ISDIR (st.st_mode))
        return NULL;
      hfd = openat (dfd, "hooks", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (hfd < 0)
        return g_strdup ("hooks cannot be checked");
      return check_hooks_entries (hfd);
    }
  return NULL;
}

/* ---- Audit ---------------------------------------------------------------- */

/* ---- Serialising ---------------------------------------------------------- */

static gboolean
is_watched (FsgFs *fs, FsgInode *parent, const char *name)
{
  gboolean hooks;

  if (parent == NULL || name == NULL)
    return FALSE;
  if (is_config_name (name) || is_signature_name (name) || is_redirect_name (name) ||
      strcmp (name, "hooks") == 0 || strcmp (name, ".git") == 0 ||
      todo_name_of (name) != NULL || strcmp (name, "git-rebase-todo") == 0 ||
      strcmp (name, "todo") == 0)
    return TRUE;
  g_mutex_lock (&fs->lock);
  hooks = g_strcmp0 (fsg_inode_name_locked (parent), "hooks") == 0;
  g_mutex_unlock (&fs->lock);
  return hooks;
}

FsgGitLock
fsg_git_lock (FsgFs *fs, FsgInode *parent, const char *name, FsgInode *parent2,
              const char *name2, gboolean always)
{
  FsgGitLock l = { fs, FALSE };

  if (!fs->git_protect)
    return l;
  if (always || is_watched (fs, parent, name) || is_watched (fs, parent2, name2))
    {
      g_mutex_lock (&fs->git_op_lock);
      l.held = TRUE;
    }
  return l;
}

FsgGitLock
fsg_git_lock_open (FsgFs *fs, FsgInode *inode, gboolean write)
{
  FsgGitLock l = { fs, FALSE };
  gboolean watched;

  if (!fs->git_protect || !write || inode->kind != FSG_INODE_HOST)
    return l;
  g_mutex_lock (&fs->lock);
  {
    const char *n = fsg_inode_name_locked (inode);
    watched = n != NULL && (is_config_name (n) || is_redirect_name (n) ||
                            strcmp (n, "git-rebase-todo") == 0 || strcmp (n, "todo") == 0);
  }
  g_mutex_unlock (&fs->lock);
  if (watched)
    {
      g_mutex_lock (&fs->git_op_lock);
      l.held = TRUE;
    }
  return l;
}

void
fsg_git_unlock (FsgGitLock *l)
{
  if (l->held)
    g_mutex_unlock (&l->fs->git_op_lock);
  l->held = FALSE;
}

/* ---- Refusing and recording --------------------------------------------- */

static int
git_deny (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent, const char *dirname,
          const char *name, const char *why, int err)
{
  g_autofree char *rule = g_strdup_printf ("git-protect: %s%s%s: %s", dirname ? dirname : "",
                                           dirname ? "/" : "", name, why);

  fsg_fs_audit_rule (fs, req, op, parent, name, NULL, NULL, FSG_ACCESS_RW, rule, TRUE, err, NULL);
  return -err;
}

static void
record_created (FsgFs *fs, FsgInode *parent, const char *name)
{
  g_autofree char *path = fsg_inode_path (fs, parent, name);

  g_mutex_lock (&fs->git_lock);
  if (fs->git_created->len >= GIT_CREATED_MAX)
    goto out; /* a bounded report: the first ones */
  for (guint i = 0; i < fs->git_created->len; i++)
    if (strcmp (fs->git_created->pdata[i], path) == 0)
      goto out;
  g_ptr_array_add (fs->git_created, g_strdup (path));
  g_mutex_unlock (&fs->git_lock);
  /* for fsgate-run's report (git_dirs_created): an event that is not a
   * denial, sent whatever the audit level */
  if (fs->audit_func != NULL)
    {
      FsgAuditEvent ev = { 0 };

      ev.time_us = g_get_real_time ();
      ev.op = "git-dir-created";
      ev.path = path;
      ev.access = FSG_ACCESS_RW;
      fs->audit_func (&ev, fs->audit_data);
    }
  return;
out:
  g_mutex_unlock (&fs->git_lock);
}

/* A .git file or symlink made as @name in @parent: reported to fsgate-run
 * (git_redirects_created), not refused (submodules and worktrees need it). */
static void
record_redirect (FsgFs *fs, FsgInode *parent, const char *name)
{
  g_autofree char *path = fsg_inode_path (fs, parent, name);

  if (fs->audit_func != NULL)
    {
      FsgAuditEvent ev = { 0 };

      ev.time_us = g_get_real_time ();
      ev.op = "git-redirect-created";
      ev.path = path;
      ev.access = FSG_ACCESS_RW;
      fs->audit_func (&ev, fs->audit_data);
    }
}

/* @name is about to appear in the directory @dir (fd @dfd, name @dirname):
 * if that makes @dir a git dir, check what it holds. */
static int
check_becomes_gitdir (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *dir,
                      const char *dirname, int dfd, const char *name)
{
  g_autofree char *problem = NULL;
  g_autofree char *why = NULL;
  g_autofree char *dirpath = NULL;

  if (!is_signature_name (name) || gitdir_like (dirname, dfd) || !gitdir_shape (dfd, name))
    return 0;
  dirpath = fsg_inode_path (fs, dir, NULL);
  problem = check_gitdir_contents (fs, dirpath, dfd);
  if (problem != NULL)
    {
      why = g_strdup_printf ("would make a git dir whose %s", problem);
      return git_deny (fs, req, op, dir, dirname, name, why, EPERM);
    }
  record_created (fs, dir, NULL);
  return 0;
}

/* ---- The checks ---------------------------------------------------------- */

int
fsg_git_check_create (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent,
                      const char *name, mode_t type, mode_t *mode)
{
  g_autofree char *pname = NULL;
  fsg_autopin FsgPin pin = { 0 };
  gboolean is_link = strcmp (op, "link") == 0;
  int pfd;

  if (!fs->git_protect || parent->kind != FSG_INODE_HOST)
    return 0;
  pname = inode_name (fs, parent);

  if (pname != NULL && strcmp (pname, "hooks") == 0 && !fsg_git_is_sample_name (name) &&
      is_hooks_dir (fs, parent))
    {
      if (type == S_IFLNK || is_link)
        return git_deny (fs, req, op, parent, "hooks", name,
                         "a hook git would run; hooks may only be plain files", EPERM);
      if (mode != NULL && type == S_IFREG && (*mode & 0111))
        {
          /* git init and clone copy template hooks: keep them inert */
          *mode &= ~(mode_t) 0111;
          fsg_fs_audit_rule (fs, req, op, parent, name, NULL, NULL, FSG_ACCESS_RW,
                             "git-protect: hooks: created without execute permission", TRUE, EPERM,
                             NULL);
        }
      return 0;
    }
  if ((type == S_IFLNK || is_link || (type == S_IFREG && mode != NULL && (*mode & 0111))) &&
      is_hookspath_dir (fs, parent))
    {
      if (type == S_IFLNK || is_link)
        return git_deny (fs, req, op, parent, pname, name,
                         "core.hooksPath: a hook git would run; hooks may only be plain files", EPERM);
      *mode &= ~(mode_t) 0111;
      fsg_fs_audit_rule (fs, req, op, parent, name, NULL, NULL, FSG_ACCESS_RW,
                         "git-protect: core.hooksPath: created without execute permission", TRUE, EPERM,
                         NULL);
      return 0;
    }

  if (is_todo_name (pname, name) && is_state_dir (fs, parent))
    return git_deny (fs, req, op, parent, pname, name,
                     "written only by renaming a checked file over it (no exec line)", EPERM);
  if (!is_config_name (name) && !is_signature_name (name) && strcmp (name, "hooks") != 0 &&
      strcmp (name, ".git") != 0 && !is_redirect_name (name) && todo_name_of (name) == NULL)
    return 0;
  if ((pfd = fsg_pin (&pin, fs, parent)) < 0)
    return 0; /* the operation itself will fail */
  if (todo_name_of (name) != NULL)
    {
      if (type == S_IFLNK && gitdir_like (pname, pfd))
        return git_deny (fs, req, op, parent, pname, name, "rebase state may not be a symlink",
                         EPERM);
      return 0;
    }

  if (strcmp (name, ".git") == 0)
    {
      if (type == S_IFDIR && !has_entry (pfd, ".git", NULL))
        record_created (fs, parent, name);
      else if (type != S_IFDIR)
        record_redirect (fs, parent, name);
      return 0;
    }
  if (is_config_name (name) && gitdir_like (pname, pfd))
    return git_deny (fs, req, op, parent, pname, name,
                     "written only by renaming a checked file over it (git's config.lock)", EPERM);
  if (strcmp (name, "hooks") == 0 && type == S_IFLNK && gitdir_like (pname, pfd))
    return git_deny (fs, req, op, parent, pname, name, "the hooks of a git dir may not be a symlink",
                     EPERM);
  if (is_redirect_name (name) && gitdir_like (pname, pfd) && !redirect_allowed (fs, parent))
    return git_deny (fs, req, op, parent, pname, name,
                     "would redirect an existing git dir (allowed only in worktrees/<id>/)", EPERM);
  return check_becomes_gitdir (fs, req, op, parent, pname, pfd, name);
}

int
fsg_git_check_write (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *inode)
{
  g_autofree char *name = NULL;
  g_autofree char *pname = NULL;
  FsgInode *p;
  int pfd = -1, r = 0;

  if (!fs->git_protect || inode->kind != FSG_INODE_HOST || inode->type != S_IFREG)
    return 0;
  name = inode_name (fs, inode);
  if (name == NULL || (!is_config_name (name) && fsg_git_is_sample_name (name)))
    return 0;
  p = parent_pin (fs, inode, &pfd);
  if (p == NULL)
    return 0;
  pname = inode_name (fs, p);
  if (is_config_name (name) && gitdir_like (pname, pfd))
    r = git_deny (fs, req, op, p, pname, name,
                  "written only by renaming a checked file over it (git's config.lock)", EPERM);
  else if (is_todo_name (pname, name) && is_state_dir (fs, p))
    r = git_deny (fs, req, op, p, pname, name,
                  "written only by renaming a checked file over it (no exec line)", EPERM);
  else if (is_redirect_name (name) && gitdir_like (pname, pfd) && !redirect_allowed (fs, p))
    r = git_deny (fs, req, op, p, pname, name,
                  "would redirect an existing git dir (allowed only in worktrees/<id>/)", EPERM);
  else if (pname != NULL && strcmp (pname, "hooks") == 0 && is_hooks_dir (fs, p))
    {
      struct stat st;

      if (fstatat (pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 0111))
        r = git_deny (fs, req, op, p, "hooks", name, "an executable hook git would run", EPERM);
    }
  else
    {
      struct stat st;

      if (fstatat (pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 0111) &&
          is_hookspath_dir (fs, p))
        r = git_deny (fs, req, op, p, pname, name,
                      "core.hooksPath: an executable hook git would run", EPERM);
    }
  parent_unpin (fs, p);
  return r;
}

int
fsg_git_check_chmod (FsgFs *fs, fuse_req_t req, FsgInode *inode, mode_t mode)
{
  g_autofree char *name = NULL;
  g_autofree char *pname = NULL;
  FsgInode *p;
  int pfd = -1, r = 0;
  struct stat st;

  if (!fs->git_protect || inode->kind != FSG_INODE_HOST || inode->type != S_IFREG ||
      !(mode & 0111))
    return 0;
  name = inode_name (fs, inode);
  if (name == NULL || fsg_git_is_sample_name (name))
    return 0;
  p = parent_pin (fs, inode, &pfd);
  if (p == NULL)
    return 0;
  pname = inode_name (fs, p);
  if (fstatat (pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (mode & 0111 & ~st.st_mode) &&
      ((pname != NULL && strcmp (pname, "hooks") == 0 && is_hooks_dir (fs, p)) ||
       is_hookspath_dir (fs, p)))
    r = git_deny (fs, req, "setattr", p, pname, name,
                  "making a hook executable would let git run it", EPERM);
  parent_unpin (fs, p);
  return r;
}

int
fsg_git_check_link_source (FsgFs *fs, fuse_req_t req, FsgInode *inode)
{
  g_autofree char *name = NULL;
  g_autofree char *pname = NULL;
  FsgInode *p;
  int pfd = -1, r = 0;

  if (!fs->git_protect || inode->kind != FSG_INODE_HOST || inode->type != S_IFREG)
    return 0;
  name = inode_name (fs, inode);
  if (name == NULL || (!is_config_name (name) && fsg_git_is_sample_name (name)))
    return 0;
  p = parent_pin (fs, inode, &pfd);
  if (p == NULL)
    return 0;
  pname = inode_name (fs, p);
  if (is_config_name (name) && gitdir_like (pname, pfd))
    r = git_deny (fs, req, "link", p, pname, name,
                  "another name would let it be changed unchecked", EPERM);
  else if ((pname != NULL && strcmp (pname, "hooks") == 0 && is_hooks_dir (fs, p)) ||
           is_hookspath_dir (fs, p))
    r = git_deny (fs, req, "link", p, pname, name,
                  "another name would let the hook be made executable", EPERM);
  parent_unpin (fs, p);
  return r;
}

/* Put a checked copy of the config file (@pfd, @name) in place of
 * (@npfd, @newname) and remove the original. Returns 1 or -errno. */
static int
install_copy (int pfd, const char *name, int npfd, const char *newname, const char *data,
              gsize len, const struct stat *st, unsigned int flags)
{
  char tmp[64];
  fsg_autofd int fd = -1;
  int r;

  for (int i = 0; i < 16 && fd < 0; i++)
    {
      snprintf (tmp, sizeof tmp, ".fsgate-git-%08x", g_random_int ());
      fd = openat (npfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   st->st_mode & 0666);
      if (fd < 0 && errno != EEXIST)
        return -errno;
    }
  if (fd < 0)
    return -EEXIST;
  if (fsg_write_all (fd, data, len) < 0 || fchown (fd, st->st_uid, st->st_gid) < 0 ||
      fchmod (fd, st->st_mode & 0666) < 0)
    {
      r = -errno;
      unlinkat (npfd, tmp, 0);
      return r;
    }
  if (syscall (SYS_renameat2, npfd, tmp, npfd, newname, flags & RENAME_NOREPLACE) < 0)
    {
      r = -errno;
      unlinkat (npfd, tmp, 0);
      return r;
    }
  if (!(pfd == npfd && strcmp (name, newname) == 0))
    (void) unlinkat (pfd, name, 0);
  return 1;
}

int
fsg_git_rename (FsgFs *fs, fuse_req_t req, FsgInode *p, int pfd, const char *name,
                FsgInode *np, int npfd, const char *newname, unsigned int flags)
{
  g_autofree char *pname = NULL;
  g_autofree char *npname = NULL;
  struct stat st;
  gboolean np_hooks;

  if (!fs->git_protect || p->kind != FSG_INODE_HOST || np->kind != FSG_INODE_HOST)
    return 0;
  if (fstatat (pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return 0; /* the rename reports it */
  pname = inode_name (fs, p);
  npname = inode_name (fs, np);
  np_hooks = npname != NULL && strcmp (npname, "hooks") == 0 && is_hooks_dir (fs, np);

  if (flags & RENAME_EXCHANGE)
    {
      gboolean p_hooks = pname != NULL && strcmp (pname, "hooks") == 0 && is_hooks_dir (fs, p);

      if (np_hooks || p_hooks || is_config_name (name) || is_config_name (newname) ||
          is_signature_name (name) || is_signature_name (newname) ||
          strcmp (name, "hooks") == 0 || strcmp (newname, "hooks") == 0 ||
          todo_name_of (name) != NULL || todo_name_of (newname) != NULL ||
          is_state_dir (fs, p) || is_state_dir (fs, np) ||
          strcmp (name, ".git") == 0 || strcmp (newname, ".git") == 0)
        {
          if (gitdir_like (pname, pfd) || gitdir_like (npname, npfd) || np_hooks || p_hooks ||
              is_state_dir (fs, p) || is_state_dir (fs, np) ||
              strcmp (name, ".git") == 0 || strcmp (newname, ".git") == 0)
            return git_deny (fs, req, "rename", np, npname, newname,
                             "an exchange would install content unchecked", EPERM);
        }
      return 0;
    }

  if (is_config_name (newname) && gitdir_like (npname, npfd))
    {
      fsg_autofd int fd = -1;
      g_autofree char *data = NULL;
      g_autofree char *problem = NULL;
      g_autofree char *dirpath = NULL;
      gsize len = 0;

      if (!S_ISREG (st.st_mode))
        return git_deny (fs, req, "rename", np, npname, newname, "not a regular file", EPERM);
      fd = openat (pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 || (data = read_checked (fd, &len)) == NULL)
        return git_deny (fs, req, "rename", np, npname, newname, "cannot be checked", EPERM);
      dirpath = fsg_inode_path (fs, np, NULL);
      problem = config_problem (fs, dirpath, data, len);
      if (problem != NULL)
        return git_deny (fs, req, "rename", np, npname, newname, problem, EPERM);
      return install_copy (pfd, name, npfd, newname, data, len, &st, flags);
    }

  if (is_todo_name (npname, newname) && is_state_dir (fs, np))
    {
      fsg_autofd int fd = -1;
      g_autofree char *data = NULL;
      g_autofree char *problem = NULL;
      gsize len = 0;

      if (!S_ISREG (st.st_mode))
        return git_deny (fs, req, "rename", np, npname, newname, "not a regular file", EPERM);
      fd = openat (pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 || (data = read_checked (fd, &len)) == NULL)
        return git_deny (fs, req, "rename", np, npname, newname, "cannot be checked", EPERM);
      if ((problem = todo_problem (data, len)) != NULL)
        return git_deny (fs, req, "rename", np, npname, newname, problem, EPERM);
      return install_copy (pfd, name, npfd, newname, data, len, &st, flags);
    }

  if (todo_name_of (newname) != NULL && gitdir_like (npname, npfd))
    {
      g_autofree char *problem = NULL;

      if (S_ISLNK (st.st_mode))
        return git_deny (fs, req, "rename", np, npname, newname,
                         "rebase state may not be a symlink", EPERM);
      if (S_ISDIR (st.st_mode))
        {
          /* checked under its old name: the todo name is the new one's */
          fsg_autofd int sfd = openat (pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          problem = sfd < 0 ? g_strdup ("cannot be checked")
                            : check_todo_file (sfd, todo_name_of (newname));
          if (problem != NULL)
            return git_deny (fs, req, "rename", np, npname, newname, problem, EPERM);
        }
      return 0;
    }

  if (np_hooks && !fsg_git_is_sample_name (newname))
    {
      if (S_ISLNK (st.st_mode))
        return git_deny (fs, req, "rename", np, "hooks", newname,
                         "a hook git would run; hooks may only be plain files", EPERM);
      if (S_ISREG (st.st_mode) && (st.st_mode & 0111))
        return git_deny (fs, req, "rename", np, "hooks", newname,
                         "an executable hook git would run", EPERM);
      if (S_ISREG (st.st_mode) && st.st_nlink > 1)
        return git_deny (fs, req, "rename", np, "hooks", newname,
                         "another name would let the hook be made executable", EPERM);
      return 0;
    }

  if ((S_ISLNK (st.st_mode) || (S_ISREG (st.st_mode) && ((st.st_mode & 0111) || st.st_nlink > 1))) &&
      is_hookspath_dir (fs, np))
    return git_deny (fs, req, "rename", np, npname, newname,
                     "core.hooksPath: a hook git would run", EPERM);

  if (strcmp (newname, "hooks") == 0 && gitdir_like (npname, npfd))
    {
      g_autofree char *problem = NULL;

      if (S_ISLNK (st.st_mode))
        return git_deny (fs, req, "rename", np, npname, newname,
                         "the hooks of a git dir may not be a symlink", EPERM);
      if (S_ISDIR (st.st_mode))
        {
          fsg_autofd int hfd = openat (pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          problem = hfd < 0 ? g_strdup ("cannot be checked") : check_hooks_entries (hfd);
          if (problem != NULL)
            return git_deny (fs, req, "rename", np, npname, newname, problem, EPERM);
        }
      return 0;
    }

  if (is_redirect_name (newname) && gitdir_like (npname, npfd) && !redirect_allowed (fs, np))
    return git_deny (fs, req, "rename", np, npname, newname,
                     "would redirect an existing git dir (allowed only in worktrees/<id>/)", EPERM);

  if (strcmp (newname, ".git") == 0 && !S_ISDIR (st.st_mode))
    record_redirect (fs, np, newname);

  if (strcmp (newname, ".git") == 0 && S_ISDIR (st.st_mode))
    {
      fsg_autofd int dfd = openat (pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      g_autofree char *dirpath = fsg_inode_path (fs, np, newname);
      g_autofree char *problem = dfd < 0 ? g_strdup ("cannot be checked")
                                         : check_gitdir_contents (fs, dirpath, dfd);

      if (problem != NULL)
        {
          g_autofree char *why = g_strdup_printf ("a git dir whose %s", problem);
          return git_deny (fs, req, "rename", np, npname, newname, why, EPERM);
        }
      return 0;
    }

  return check_becomes_gitdir (fs, req, "rename", np, npname, npfd, newname);
}
