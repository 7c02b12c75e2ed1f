/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * fsgate-run --doctor: probe, in a throwaway child, exactly what a run needs
 * (user, mount, pid, ipc, uts and net namespaces with an identity uid map,
 * a fresh /proc, /dev/fuse mounted in that user namespace, seccomp with user
 * notification) and print each check with what to change. A run that fails
 * at setup prints the matching doctor line (fsg_doctor_hint_for_stage).
 */
#include "config.h"

#include "runner/run.h"
#include "fsgate/fs.h"

#include "common/fsg-util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define HINT_USERNS                                                                  \
  "allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 "  \
  "(Debian), user.max_user_namespaces>0, kernel.apparmor_restrict_unprivileged_userns=0 " \
  "(Ubuntu 23.10+) or an AppArmor profile for fsgate-run; in Docker/Podman run with "   \
  "--security-opt seccomp=unconfined --security-opt apparmor=unconfined (docs/ci.md)"
#define HINT_NETNS                                                                   \
  "the kernel must allow new network, IPC and UTS namespaces in a user namespace: "  \
  "sysctl user.max_net_namespaces, user.max_ipc_namespaces and user.max_uts_namespaces " \
  "must be > 0; in Docker/Podman run with --security-opt seccomp=unconfined (docs/ci.md)"
#define HINT_FUSE                                                                    \
  "make /dev/fuse available and usable from a user namespace: modprobe fuse on the " \
  "host; in a container pass --device /dev/fuse (Docker also needs "                 \
  "--security-opt seccomp=unconfined and, with AppArmor, apparmor=unconfined) "      \
  "(docs/ci.md)"
/* /dev/fuse is there, but its mode or owner keeps this user out (EACCES). */
#define HINT_FUSE_ACCESS                                                             \
  "chmod 0666 /dev/fuse (the usual mode; make it last with a udev rule, or as root "  \
  "in the container before dropping privileges), or give this user a group with "     \
  "rw on it (--group-add GID); a container needs the device passed read-write: "      \
  "--device /dev/fuse:/dev/fuse:rwm (docs/ci.md)"
/* The node is there (a bind mount?) but the device cgroup refuses it (EPERM). */
#define HINT_FUSE_CGROUP                                                             \
  "the device node is there but the container's device cgroup refuses it: pass "    \
  "the device itself (--device /dev/fuse:/dev/fuse:rwm), not a bind mount of "        \
  "/dev/fuse (docs/ci.md)"
#define HINT_PROC                                                                    \
  "a fresh /proc cannot be mounted: the container masks parts of /proc (Podman: "  \
  "--security-opt unmask=ALL; Docker: --security-opt systempaths=unconfined), or "   \
  "leave out --no-proc-fallback to run with the container's /proc (docs/ci.md)"
#define HINT_PROC_FALLBACK                                                           \
  "a fresh /proc cannot be mounted (the container masks parts of /proc) and the "   \
  "container's /proc cannot be bound in (or made read-only) either: unmask /proc (Podman: "              \
  "--security-opt unmask=ALL; Docker: --security-opt systempaths=unconfined) "       \
  "(docs/ci.md)"
#define HINT_PROC_HOST                                                               \
  "something covers part of this /proc (a bind mount over /proc/sys or /proc/kcore, "   \
  "systemd ProtectKernelTunables=, a container run with --pid=host or hostPID) and the " \
  "kernel refuses a fresh /proc: remove that mount or setting, or give the container "   \
  "its own pid namespace (docs/ci.md)"
#define HINT_PROC_LANDLOCK                                                           \
  "the container's /proc is only used under a Landlock domain: boot a kernel with "   \
  "Landlock ABI 2 or later (Linux 5.19+, CONFIG_SECURITY_LANDLOCK=y, landlock in lsm=), "\
  "allow landlock_create_ruleset, landlock_add_rule and landlock_restrict_self in the "  \
  "container's seccomp profile, or unmask /proc (Podman: --security-opt unmask=ALL; "     \
  "Docker: --security-opt systempaths=unconfined) (docs/ci.md)"
#define HINT_MOUNT                                                                   \
  "mounts in a new mount namespace are refused: run the container with "           \
  "--security-opt apparmor=unconfined (docs/ci.md)"
/* Docker's default seccomp profile has no pivot_root at all, with or
 * without CAP_SYS_ADMIN (docs/ci.md). */
#define HINT_PIVOT                                                                   \
  "pivot_root is refused: Docker's default seccomp profile does not allow it, "     \
  "even with --cap-add SYS_ADMIN: run the container with --security-opt "             \
  "seccomp=unconfined (or a profile that allows pivot_root) and, with AppArmor, "      \
  "--security-opt apparmor=unconfined (docs/ci.md)"
#define HINT_SECCOMP                                                                 \
  "the kernel needs CONFIG_SECCOMP_FILTER (and libseccomp >= 2.5); without it "    \
  "fsgate-run cannot block the network or dangerous syscalls"

const char *
fsg_stage_describe (FsgStage stage)
{
  switch (stage)
    {
    case FSG_STAGE_PDEATHSIG: return "prctl(PR_SET_PDEATHSIG)";
    case FSG_STAGE_WAIT_MAPS: return "writing the uid/gid maps of the user namespace";
    case FSG_STAGE_MAKE_PRIVATE: return "making / private in the mount namespace";
    case FSG_STAGE_SCRATCH: return "mounting the scratch tmpfs on /tmp";
    case FSG_STAGE_OPEN_FUSE: return "opening /dev/fuse in the user namespace";
    case FSG_STAGE_MOUNT_FUSE: return "mounting the FUSE view";
    case FSG_STAGE_SEND_FUSE: return "passing the FUSE fd to the runner";
    case FSG_STAGE_UNSHARE_NET: return "creating the network, IPC and UTS namespaces";
    case FSG_STAGE_WAIT_GO: return "waiting for the FUSE daemon";
    case FSG_STAGE_UNSHARE_PID: return "creating the pid namespace";
    case FSG_STAGE_FORK_INIT: return "starting the sandbox init";
    case FSG_STAGE_HOST_FLAGS: return "giving the view the host's noexec/nosymfollow mount flags";
    case FSG_STAGE_HYBRID: return "bind-mounting the uniform read-only host directories (hybrid view)";
    case FSG_STAGE_MOUNT_PROC: return "mounting /proc in the view";
    case FSG_STAGE_MOUNT_DEV: return "building /dev in the view";
    case FSG_STAGE_MOUNT_TMP: return "mounting /tmp in the view";
    case FSG_STAGE_PIVOT: return "pivot_root into the view";
    case FSG_STAGE_CHDIR: return "changing to the working directory in the view";
    case FSG_STAGE_PTY: return "allocating the pseudo-terminal";
    case FSG_STAGE_FORK_CMD: return "starting the command";
    case FSG_STAGE_SETSID: return "setsid";
    case FSG_STAGE_NNP: return "prctl(PR_SET_NO_NEW_PRIVS)";
    case FSG_STAGE_RLIMIT: return "setting RLIMIT_CORE";
    case FSG_STAGE_CLOSE_FDS: return "closing inherited file descriptors";
    case FSG_STAGE_CAPS: return "dropping capabilities";
    case FSG_STAGE_SECCOMP: return "loading the seccomp filter";
    case FSG_STAGE_SEND_LISTENER: return "passing the seccomp listener to the runner";
    case FSG_STAGE_PROC_FALLBACK:
      return "binding the container's /proc into the view and making /proc/sys and friends "
             "read-only (a fresh /proc is refused)";
    case FSG_STAGE_PROC_HOST:
      return "mounting /proc in the view (a fresh one is refused, and the /proc here is not a "
             "container's own: falling back to it would show the command every process of the host)";
    case FSG_STAGE_PROC_LANDLOCK:
      return "mounting /proc in the view (a fresh one is refused, and the container's /proc "
             "needs a Landlock domain, ABI 2 or later, to refuse writes under it)";
    case FSG_STAGE_NONE:
    case FSG_STAGE_LAST:
      break;
    }
  return "sandbox setup";
}

const char *
fsg_doctor_hint_for_stage (FsgStage stage, int err)
{
  switch (stage)
    {
    case FSG_STAGE_WAIT_MAPS:
    case FSG_STAGE_UNSHARE_PID:
      return HINT_USERNS;
    case FSG_STAGE_UNSHARE_NET:
      return HINT_NETNS;
    case FSG_STAGE_MAKE_PRIVATE:
    case FSG_STAGE_SCRATCH:
    case FSG_STAGE_MOUNT_DEV:
    case FSG_STAGE_MOUNT_TMP:
    case FSG_STAGE_HOST_FLAGS:
      return HINT_MOUNT;
    case FSG_STAGE_PIVOT:
      return err == EPERM ? HINT_PIVOT : HINT_MOUNT;
    case FSG_STAGE_OPEN_FUSE:
      return err == EACCES ? HINT_FUSE_ACCESS : err == EPERM ? HINT_FUSE_CGROUP : HINT_FUSE;
    case FSG_STAGE_MOUNT_FUSE:
      return HINT_FUSE;
    case FSG_STAGE_MOUNT_PROC:
      /* EPERM reaches here only with --no-proc-fallback (namespaces.c) */
      return err == EPERM ? HINT_PROC : "please report this with the output of fsgate-run --doctor";
    case FSG_STAGE_PROC_FALLBACK:
      return HINT_PROC_FALLBACK;
    case FSG_STAGE_PROC_HOST:
      return HINT_PROC_HOST;
    case FSG_STAGE_PROC_LANDLOCK:
      return HINT_PROC_LANDLOCK;
    case FSG_STAGE_SECCOMP:
      return HINT_SECCOMP;
    case FSG_STAGE_HYBRID:
      return "run with FSGATE_HYBRID=0 (the daemon then serves every path, with the same "
             "decisions), and report this with the output of fsgate-run -v --doctor";
    case FSG_STAGE_CHDIR:
      return "the working directory must be readable in the view: add it with --ro/--rw when it "
             "is outside every root, or use -C DIR when a deny-read rule covers it (nothing "
             "reopens a denied path)";
    default:
      return "please report this with the output of fsgate-run --doctor";
    }
}

/* Probe child results: one byte per step, written to a pipe. */
enum
{
  PROBE_OK = 0,
  PROBE_UNSHARE,
  PROBE_SETGROUPS,
  PROBE_UIDMAP,
  PROBE_GIDMAP,
  PROBE_PRIVATE,
  PROBE_TMPFS,
  PROBE_FORK,
  PROBE_PROC,
  PROBE_FUSE_OPEN,
  PROBE_FUSE_MOUNT,
  PROBE_PIVOT,
};

/* FsgProcKind the probe got, and the Landlock ABI (or -errno) it saw. */
static int probe_child_proc = FSG_PROC_UNKNOWN;

static G_GNUC_NORETURN void
probe_exit (int fd, int step, int err)
{
  unsigned char b[3] = { step, err, probe_child_proc };

  (void) !write (fd, b, 3);
  _exit (0);
}

/* Runs in a forked child; the strings were prepared by the parent. */
static G_GNUC_NORETURN void
probe_child (int out, const char *uid_map, const char *gid_map, const char *fuse_data, int fuse_num)
{
  int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
              | CLONE_NEWNET;
  pid_t pid;
  int r;

  if (unshare (flags) < 0)
    probe_exit (out, PROBE_UNSHARE, errno);
  if ((r = fsg_write_file_async_signal_safe ("/proc/self/setgroups", "deny")) < 0 && r != -ENOENT)
    probe_exit (out, PROBE_SETGROUPS, -r);
  if ((r = fsg_write_file_async_signal_safe ("/proc/self/uid_map", uid_map)) < 0)
    probe_exit (out, PROBE_UIDMAP, -r);
  if ((r = fsg_write_file_async_signal_safe ("/proc/self/gid_map", gid_map)) < 0)
    probe_exit (out, PROBE_GIDMAP, -r);
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    probe_exit (out, PROBE_PRIVATE, errno);
  if (mount ("fsgate-doctor", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0)
    probe_exit (out, PROBE_TMPFS, errno);
  pid = fork ();
  if (pid < 0)
    probe_exit (out, PROBE_FORK, errno);
  if (pid == 0)
    {
      int fd;

      if (mkdir ("/tmp/proc", 0755) < 0)
        probe_exit (out, PROBE_PROC, errno);
      probe_child_proc = FSG_PROC_FRESH;
      if (mount ("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        {
          /* what a run does then (namespaces.c, proc.c) */
          if (errno != EPERM)
            probe_exit (out, PROBE_PROC, errno);
          probe_child_proc = FSG_PROC_CONTAINER;
          if ((r = fsg_proc_bind_container_async_signal_safe ("/tmp/proc")) < 0)
            probe_exit (out, PROBE_PROC, -r);
        }
      fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);
      if (fd < 0)
        probe_exit (out, PROBE_FUSE_OPEN, errno);
      if (fd != fuse_num && (dup3 (fd, fuse_num, O_CLOEXEC) < 0 || close (fd) < 0))
        probe_exit (out, PROBE_FUSE_OPEN, errno);
      if (mkdir ("/tmp/fuse", 0755) < 0
          || mount ("fsgate-doctor", "/tmp/fuse", "fuse", MS_NOSUID | MS_NODEV, fuse_data) < 0)
        probe_exit (out, PROBE_FUSE_MOUNT, errno);
      /* The run's pivot_root, into the probe's tmpfs (a mount point). */
      if (chdir ("/tmp") < 0 || syscall (SYS_pivot_root, ".", ".") < 0)
        probe_exit (out, PROBE_PIVOT, errno);
      /* Nobody answers FUSE_INIT; leaving the namespaces tears it down. */
      probe_exit (out, PROBE_OK, 0);
    }
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  _exit (0);
}

/* Run the namespace probe once per process; the result is cached. */
static gboolean probe_done;
static int probe_step, probe_err, probe_proc;

static void
run_probe (void)
{
  int fds[2];
  pid_t pid;
  unsigned char b[3] = { 0xff, 0, 0 };
  g_autofree char *uid_map = NULL, *gid_map = NULL, *fuse_data = NULL;
  int reserved;

  if (probe_done)
    return;
  probe_done = TRUE;
  uid_map = g_strdup_printf ("%u %u 1", (unsigned) getuid (), (unsigned) getuid ());
  gid_map = g_strdup_printf ("%u %u 1", (unsigned) getgid (), (unsigned) getgid ());
  reserved = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  fuse_data = g_strdup_printf ("fd=%d,rootmode=40000,user_id=%u,group_id=%u", reserved,
                               (unsigned) getuid (), (unsigned) getgid ());
  if (pipe2 (fds, O_CLOEXEC) < 0)
    {
      probe_step = PROBE_FORK;
      probe_err = errno;
      close (reserved);
      return;
    }
  pid = fork ();
  if (pid == 0)
    {
      close (fds[0]);
      probe_child (fds[1], uid_map, gid_map, fuse_data, reserved);
    }
  close (fds[1]);
  close (reserved);
  if (pid < 0)
    {
      probe_step = PROBE_FORK;
      probe_err = errno;
      close (fds[0]);
      return;
    }
  if (FSG_RETRY (read (fds[0], b, 3)) != 3)
    {
      b[0] = PROBE_FORK;
      b[1] = EIO;
    }
  close (fds[0]);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  probe_step = b[0];
  probe_err = b[1];
  probe_proc = b[2];
}

/* "1000,27" or "none": the groups the kernel checks a device's mode with. */
static char *
describe_groups (void)
{
  gid_t groups[64];
  int n = getgroups (G_N_ELEMENTS (groups), groups);
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "%u", (unsigned) getegid ());
  for (int i = 0; i < n; i++)
    if (groups[i] != getegid ())
      g_string_append_printf (s, ",%u", (unsigned) groups[i]);
  return g_string_free (s, FALSE);
}

static char *
read_sysctl (const char *path)
{
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return g_strstrip (text);
}

gboolean
fsg_doctor_check_userns (char **out_line)
{
  run_probe ();
  if (probe_step == PROBE_PIVOT)
    {
      *out_line = g_strdup_printf ("FAIL  pivot_root in a new mount namespace: %s. Fix: %s",
                                   g_strerror (probe_err),
                                   probe_err == EPERM ? HINT_PIVOT : HINT_MOUNT);
      return FALSE;
    }
  if (probe_step == PROBE_OK || probe_step >= PROBE_PROC)
    {
      *out_line = g_strdup ("ok    user, mount, pid, ipc, uts and net namespaces, pivot_root");
      return TRUE;
    }
  {
    g_autofree char *u = read_sysctl ("/proc/sys/kernel/unprivileged_userns_clone");
    g_autofree char *m = read_sysctl ("/proc/sys/user/max_user_namespaces");
    g_autofree char *a = read_sysctl ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    const char *what;

    switch (probe_step)
      {
      case PROBE_UNSHARE: what = "unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|...)"; break;
      case PROBE_SETGROUPS:
      case PROBE_UIDMAP:
      case PROBE_GIDMAP: what = "writing uid_map/gid_map"; break;
      case PROBE_PRIVATE:
      case PROBE_TMPFS: what = "mounting in the new mount namespace"; break;
      default: what = "forking the probe"; break;
      }
    *out_line = g_strdup_printf ("FAIL  user namespaces: %s: %s "
                                 "(kernel.unprivileged_userns_clone=%s, user.max_user_namespaces=%s, "
                                 "kernel.apparmor_restrict_unprivileged_userns=%s). Fix: %s",
                                 what, g_strerror (probe_err), u ? u : "n/a", m ? m : "n/a",
                                 a ? a : "n/a",
                                 probe_step == PROBE_PRIVATE || probe_step == PROBE_TMPFS
                                   ? HINT_MOUNT : HINT_USERNS);
  }
  return FALSE;
}

/* Which /proc a run gets: fresh, the container's (a warning, or a failure
 * with @no_fallback), or none. */
static gboolean
check_proc (gboolean no_fallback, char **out_line)
{
  int abi;

  run_probe ();
  if (probe_step != PROBE_OK && probe_step < PROBE_PROC)
    {
      *out_line = g_strdup ("FAIL  /proc: not tested, user namespaces do not work (see above)");
      return FALSE;
    }
  if (probe_step == PROBE_PROC)
    {
      if (probe_proc == FSG_PROC_CONTAINER)
        *out_line = g_strdup_printf ("FAIL  /proc: a fresh /proc is refused (the container masks "
                                     "parts of /proc) and the container's /proc cannot be used "
                                     "instead: %s. Fix: %s",
                                     g_strerror (probe_err), HINT_PROC_FALLBACK);
      else
        *out_line = g_strdup_printf ("FAIL  fresh /proc in a pid namespace: %s. Fix: %s",
                                     g_strerror (probe_err),
                                     fsg_doctor_hint_for_stage (FSG_STAGE_MOUNT_PROC, probe_err));
      return FALSE;
    }
  if (probe_proc != FSG_PROC_CONTAINER)
    {
      *out_line = g_strdup ("ok    a fresh /proc of the sandbox's pid namespace");
      return TRUE;
    }
  if (no_fallback)
    {
      *out_line = g_strdup_printf ("FAIL  /proc: a fresh /proc is refused here (the container masks "
                                   "parts of /proc) and --no-proc-fallback is given. Fix: %s",
                                   HINT_PROC);
      return FALSE;
    }
  /* what a run checks before it falls back (namespaces.c, proc.c) */
  if (fsg_proc_fallback_pidns_ok_async_signal_safe () < 0)
    {
      *out_line = g_strdup_printf ("FAIL  /proc: a fresh /proc is refused here, and this /proc is "
                                   "not a container's own (its pid namespace is the host's): runs "
                                   "refuse to fall back to it. Fix: %s", HINT_PROC_HOST);
      return FALSE;
    }
  abi = fsg_landlock_abi_async_signal_safe ();
  if (abi < 2)
    {
      *out_line = g_strdup_printf ("FAIL  /proc: a fresh /proc is refused here (the container masks "
                                   "parts of /proc), and the container's /proc is only used under "
                                   "a Landlock domain: %s. Fix: %s",
                                   abi < 0 ? g_strerror (-abi) : "Landlock ABI 1 has no REFER right",
                                   HINT_PROC_LANDLOCK);
      return FALSE;
    }
  *out_line = g_strdup_printf ("warn  /proc: a fresh /proc is refused here (the container masks "
                               "parts of /proc): runs show the command the container's /proc, "
                               "where it can list the container's processes and read their "
                               "command lines, status and mount tables, but not reach their "
                               "memory, files or signals (its own user namespace), and a "
                               "Landlock domain (ABI %d) refuses every write under /proc. For a "
                               "fresh /proc: Podman --security-opt unmask=ALL, Docker "
                               "--security-opt systempaths=unconfined; --no-proc-fallback "
                               "refuses such runs (docs/ci.md)",
                               abi);
  return TRUE;
}

gboolean
fsg_doctor_check_fuse (char **out_line)
{
  int fd;

  fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);
  /* The module is there but the node's mode (crw------- root) or the device
   * cgroup keeps us out: modprobe would not help. */
  if (fd < 0 && (errno == EACCES || errno == EPERM))
    {
      int errsv = errno;
      struct stat st;
      g_autofree char *groups = describe_groups ();
      g_autofree char *node = NULL;

      if (stat ("/dev/fuse", &st) == 0)
        node = g_strdup_printf ("mode %04o, owner %u:%u", (unsigned) (st.st_mode & 07777),
                                (unsigned) st.st_uid, (unsigned) st.st_gid);
      *out_line = g_strdup_printf ("FAIL  /dev/fuse: open: %s (%s; this process: uid %u, "
                                   "groups %s). Fix: %s",
                                   g_strerror (errsv), node ? node : "cannot stat it",
                                   (unsigned) geteuid (), groups,
                                   errsv == EACCES ? HINT_FUSE_ACCESS : HINT_FUSE_CGROUP);
      return FALSE;
    }
  if (fd < 0)
    {
      *out_line = g_strdup_printf ("FAIL  /dev/fuse: open: %s. Fix: %s", g_strerror (errno),
                                   HINT_FUSE);
      return FALSE;
    }
  close (fd);
  run_probe ();
  if (probe_step == PROBE_FUSE_OPEN || probe_step == PROBE_FUSE_MOUNT)
    {
      *out_line = g_strdup_printf ("FAIL  /dev/fuse: %s in a user namespace: %s. Fix: %s",
                                   probe_step == PROBE_FUSE_OPEN ? "open" : "mount",
                                   g_strerror (probe_err), HINT_FUSE);
      return FALSE;
    }
  if (probe_step == PROBE_PROC)
    {
      *out_line = g_strdup ("n/a   /dev/fuse: not tested in a user namespace: the probe stopped "
                            "at the fresh /proc (see above); user namespaces themselves work");
      return FALSE;
    }
  if (probe_step != PROBE_OK && probe_step != PROBE_PIVOT)
    {
      *out_line = g_strdup ("FAIL  /dev/fuse: not tested, user namespaces do not work (see above)");
      return FALSE;
    }
  *out_line = g_strdup ("ok    /dev/fuse opens and mounts in a user namespace");
  return TRUE;
}

gboolean
fsg_doctor_check_seccomp (char **out_line)
{
  unsigned int api = seccomp_api_get ();
  int mode = prctl (PR_GET_SECCOMP, 0, 0, 0, 0);

  if (mode < 0 && errno == EINVAL)
    {
      *out_line = g_strdup_printf ("FAIL  seccomp: the kernel has no seccomp. Fix: %s", HINT_SECCOMP);
      return FALSE;
    }
  if (mode == 1)
    {
      *out_line = g_strdup ("FAIL  seccomp: this process runs in strict seccomp mode");
      return FALSE;
    }
  if (api < 1)
    {
      *out_line = g_strdup_printf ("FAIL  seccomp: libseccomp reports API level %u. Fix: %s", api,
                                   HINT_SECCOMP);
      return FALSE;
    }
  *out_line = g_strdup_printf ("ok    seccomp (libseccomp API level %u, user notification %s)",
                               api,
                               api >= 5 ? "available: refused socket() calls are reported"
                                        : "unavailable: socket() refused without a report");
  return TRUE;
}

static gboolean
check_kernel (char **out_line)
{
  struct utsname u;
  int major = 0, minor = 0;

  if (uname (&u) < 0 || sscanf (u.release, "%d.%d", &major, &minor) != 2)
    {
      *out_line = g_strdup ("FAIL  kernel: cannot read the version");
      return FALSE;
    }
  if (major < 5 || (major == 5 && minor < 9))
    {
      *out_line = g_strdup_printf ("FAIL  kernel %s: fsgate-run needs Linux >= 5.9 (close_range, "
                                   "seccomp user notification with errors). Fix: upgrade the kernel",
                                   u.release);
      return FALSE;
    }
  *out_line = g_strdup_printf ("ok    kernel %s", u.release);
  return TRUE;
}

/* Which data path the view's daemon would get: the daemon runs in this
 * process's (initial) namespaces, so the probe here is the real one. */
static void
info_data_path (char **out_line)
{
  g_autofree char *reason = NULL;

  if (fsg_fs_passthrough_supported (&reason))
    *out_line = g_strdup ("info  data path: kernel passthrough (root daemon): reads, writes "
                          "and mmap go to the host file without the daemon");
  else
    *out_line = g_strdup_printf ("info  data path: through the daemon (no kernel passthrough: %s)",
                                 reason);
}

static void
info_cgroup (char **out_line)
{
  if (g_file_test ("/sys/fs/cgroup/cgroup.controllers", G_FILE_TEST_EXISTS))
    *out_line = g_strdup ("info  cgroup v2 is mounted (not required: fsgate-run sets no "
                          "resource limits yet)");
  else
    *out_line = g_strdup ("info  cgroup v2 not found (not required)");
}

int
fsg_doctor (gboolean verbose, gboolean no_proc_fallback)
{
  gboolean ok = TRUE;
  char *line = NULL;

  ok &= check_kernel (&line);
  g_print ("%s\n", line);
  g_clear_pointer (&line, g_free);
  ok &= fsg_doctor_check_userns (&line);
  g_print ("%s\n", line);
  g_clear_pointer (&line, g_free);
  ok &= check_proc (no_proc_fallback, &line);
  g_print ("%s\n", line);
  g_clear_pointer (&line, g_free);
  ok &= fsg_doctor_check_fuse (&line);
  g_print ("%s\n", line);
  g_clear_pointer (&line, g_free);
  ok &= fsg_doctor_check_seccomp (&line);
  g_print ("%s\n", line);
  g_clear_pointer (&line, g_free);
  info_data_path (&line);
  g_print ("%s\n", line);
  g_clear_pointer (&line, g_free);
  info_cgroup (&line);
  g_print ("%s\n", line);
  g_clear_pointer (&line, g_free);
  if (verbose)
    g_print ("uid %u, gid %u\n", (unsigned) getuid (), (unsigned) getgid ());
  g_print (ok ? "fsgate-run can run here.\n" : "fsgate-run cannot run here: fix the FAIL lines.\n");
  return ok ? 0 : FSG_EXIT_SETUP;
}
