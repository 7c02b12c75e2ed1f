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
#include <linux/landlock.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

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

int
fsg_landlock_confine_async_signal_safe (void)
{
  /* A ruleset must handle some access; creating block devices needs
   * CAP_MKNOD, which the command never has, so nothing it could do changes. */
  struct landlock_ruleset_attr attr = { .handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_BLOCK };
  int fd = syscall (SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  int r = 0;

  if (fd < 0)
    return -errno;
  if (syscall (SYS_landlock_restrict_self, fd, 0) < 0)
    r = -errno;
  close (fd);
  return r;
}

/* Bind the container's /proc (with the runtime's masks: the bind must be
 * recursive, the kernel refuses to uncover locked mounts) at @target,
 * nosuid, nodev and noexec. Returns 0 or -errno. Async-signal-safe. */
int
fsg_proc_bind_container_async_signal_safe (const char *target)
{
  if (mount ("/proc", target, NULL, MS_BIND | MS_REC, NULL) < 0)
    return -errno;
  if (mount (NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    return -errno;
  return 0;
}
