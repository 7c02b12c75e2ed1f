/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The view's /proc when a fresh one cannot be mounted (docs/security.md,
 * "The /proc fallback"; docs/ci.md).
 *
 * Container runtimes (Podman, Docker, bwrap --proc) cover parts of their
 * /proc with bind mounts (/proc/kcore, /proc/keys, /proc/sys read-only, ...).
 * In a new user namespace those mounts are locked, and the kernel refuses a
 * new procfs unless one is already fully visible (mnt_already_visible()):
 * mount("proc") fails with EPERM and nothing the runner can do unlocks it.
 *
 * Fallback: bind the container's own /proc, with its masks, into the view
 * (the runner then makes /proc/sys and friends read-only exactly as on a
 * fresh /proc). That procfs belongs to the container's pid namespace, so the
 * command can list every process of the container, including fsgate-run and
 * the job that started it. What keeps them out of its reach:
 *  - signals: kill() takes a pid of the caller's namespace, and processes
 *    outside the sandbox's pid namespace have none there;
 *  - /proc/PID/{mem,environ,fd,fdinfo,maps,root,cwd,exe,...} and ptrace are
 *    gated by ptrace_may_access(). A command running as the job's uid passes
 *    its uid check, but the capability rule every kernel applies
 *    (cap_ptrace_access_check) also wants the tracer in the target's user
 *    namespace with the target's permitted capabilities, or CAP_SYS_PTRACE
 *    over it: the command is in a user namespace of its own with no
 *    capabilities, and every process outside the sandbox is in another one
 *    (S and I share the sandbox's, but keep their capabilities). Where the
 *    kernel has Landlock, the command is also put in a Landlock domain,
 *    which refuses every ptrace access check from inside it to a process
 *    outside it: a second layer, not a requirement.
 * What stays visible: the pids, command lines, comm, status and stat of the
 * container's processes, and system-wide files (/proc/cpuinfo, meminfo, ...)
 * that a fresh /proc shows as well.
 */
#include "config.h"

#include "runner/run.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
# define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
# define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

const char *
fsg_proc_kind_name (FsgProcKind kind)
{
  switch (kind)
    {
    case FSG_PROC_FRESH: return "fresh";
    case FSG_PROC_CONTAINER: return "container";
    case FSG_PROC_UNKNOWN: break;
    }
  return NULL;
}

int
fsg_landlock_abi_async_signal_safe (void)
{
  long abi = syscall (SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

  if (abi < 0)
    return -errno;
  return abi >= 1 ? (int) abi : -EOPNOTSUPP;
}

static int
add_beneath (int ruleset, int fd, __u64 access)
{
  struct landlock_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };

  if (syscall (SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
    return -errno;
  return 0;
}

/* Grant @access on every top-level entry of "/" except proc (and
 * symlinks: their targets are entries of their own or beneath one). */
static int
grant_top_level (int ruleset, __u64 access)
{
  char buf[4096] __attribute__ ((aligned (8)));
  int root = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int r = 0;

  if (root < 0)
    return -errno;
  while (r == 0)
    {
      long n = syscall (SYS_getdents64, root, buf, sizeof buf);

      if (n < 0)
        r = -errno;
      if (n <= 0)
        break;
      for (long off = 0; off < n && r == 0;)
        {
          struct { __u64 ino; __s64 off; unsigned short reclen; unsigned char type; char name[]; } *d
            = (void *) (buf + off);
          const char *name = d->name;
          struct stat st;
          int fd;

          off += d->reclen;
          if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0 || strcmp (name, "proc") == 0)
            continue;
          fd = openat (root, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
          if (fd < 0)
            continue; /* gone, or not ours to see: nothing to grant */
          if (fstat (fd, &st) == 0 && !S_ISLNK (st.st_mode))
            r = add_beneath (ruleset, fd, access);
          close (fd);
        }
    }
  close (root);
  return r;
}

int
fsg_landlock_confine_async_signal_safe (void)
{
  int abi = fsg_landlock_abi_async_signal_safe ();
  __u64 write = LANDLOCK_ACCESS_FS_WRITE_FILE;
  struct landlock_ruleset_attr attr = { 0 };
  int fd, root, r;

  if (abi < 0)
    return abi;
  if (abi < 2)
    return -EOPNOTSUPP; /* no REFER: rename/link across directories would break */
  if (abi >= 3)
    write |= LANDLOCK_ACCESS_FS_TRUNCATE;
  /* Handled and granted nowhere: block devices (the command has no
   * CAP_MKNOD anyway). */
  attr.handled_access_fs = write | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_MAKE_BLOCK;
  fd = syscall (SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0)
    return -errno;
  if ((r = grant_top_level (fd, write)) < 0)
    goto out;
  /* The command's stdin/stdout/stderr may be files or terminals outside
   * the view: reopening them (/dev/stdout, /proc/self/fd/1) must keep
   * working. Pipes and sockets need no rule. */
  for (int i = 0; i <= 2; i++)
    {
      struct stat st;
      struct statfs sfs;

      if (fstat (i, &st) == 0 && (S_ISREG (st.st_mode) || S_ISCHR (st.st_mode))
          && fstatfs (i, &sfs) == 0 && sfs.f_type != PROC_SUPER_MAGIC)
        add_beneath (fd, i, S_ISREG (st.st_mode) ? write : LANDLOCK_ACCESS_FS_WRITE_FILE);
    }
  root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    {
      r = -errno;
      goto out;
    }
  r = add_beneath (fd, root, LANDLOCK_ACCESS_FS_REFER);
  close (root);
  if (r == 0 && syscall (SYS_landlock_restrict_self, fd, 0) < 0)
    r = -errno;
out:
  close (fd);
  return r;
}

int
fsg_proc_fallback_pidns_ok_async_signal_safe (void)
{
  struct stat st;
  char buf[4096];
  const char *p;
  int fd, n_fields = 0;
  ssize_t n;

  if (stat ("/proc/self/ns/pid", &st) < 0)
    return -errno;
  if (st.st_ino == FSG_PROC_PID_INIT_INO)
    return -EPERM;
  /* NSpid lists the pid in the namespace of the procfs and every one
   * below it: a single field means /proc is of our own pid namespace. */
  fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -EIO;
  buf[n] = '\0';
  p = strstr (buf, "\nNSpid:");
  if (p == NULL)
    return -EIO;
  for (p += 7; *p != '\0' && *p != '\n'; p++)
    if ((*p >= '0' && *p <= '9') && (p[-1] == '\t' || p[-1] == ' ' || p[-1] == ':'))
      n_fields++;
  return n_fields == 1 ? 0 : -EPERM;
}

/* Bind the container's /proc (with the runtime's masks: the bind must be
 * recursive, the kernel refuses to uncover locked mounts) at @target,
 * nosuid, nodev and noexec. Returns 0 or -errno. Async-signal-safe. */
int
fsg_proc_bind_container_async_signal_safe (const char *target)
{
  struct statfs sfs;
  struct stat st;

  /* Bind only a procfs root, never whatever else sits on /proc. */
  if (statfs ("/proc", &sfs) < 0 || stat ("/proc", &st) < 0)
    return -errno;
  if (sfs.f_type != PROC_SUPER_MAGIC || st.st_ino != 1)
    return -EINVAL;
  if (mount ("/proc", target, NULL, MS_BIND | MS_REC, NULL) < 0)
    return -errno;
  if (mount (NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    return -errno;
  return 0;
}
