/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The sandbox side of a run: the setup process S, the pid-namespace init I
 * and the command C (see the process diagram in run.h). Everything here runs
 * between clone()/fork() and execve(), so it is async-signal-safe: it only
 * reads the FsgSandboxSpec prepared before the clone, formats nothing with
 * the allocator, and reports a failure as a (stage, errno) control message
 * followed by _exit().
 */
#include "config.h"

#include "runner/run.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/fsg-util.h"

#ifndef TIOCGPTPEER
# define TIOCGPTPEER _IO ('T', 0x41)
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
# define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

int
fsg_ctl_send (int fd, const FsgCtlMsg *msg, int pass_fd)
{
  struct iovec iov = { (void *) msg, sizeof *msg };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = { 0 };

  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (pass_fd >= 0)
    {
      struct cmsghdr *cm;

      memset (&u, 0, sizeof u);
      mh.msg_control = u.buf;
      mh.msg_controllen = sizeof u.buf;
      cm = CMSG_FIRSTHDR (&mh);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (cm), &pass_fd, sizeof (int));
    }
  if (FSG_RETRY (sendmsg (fd, &mh, MSG_NOSIGNAL)) < 0)
    return -errno;
  return 0;
}

int
fsg_ctl_recv (int fd, FsgCtlMsg *msg, int *out_fd)
{
  struct iovec iov = { msg, sizeof *msg };
  union
  {
    char buf[CMSG_SPACE (sizeof (int) * 4)];
    struct cmsghdr align;
  } u;
  struct msghdr mh = { 0 };
  struct cmsghdr *cm;
  long n;

  *out_fd = -1;
  memset (msg, 0, sizeof *msg);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = u.buf;
  mh.msg_controllen = sizeof u.buf;
  n = FSG_RETRY (recvmsg (fd, &mh, MSG_CMSG_CLOEXEC));
  if (n < 0)
    return -errno;
  for (cm = CMSG_FIRSTHDR (&mh); cm != NULL; cm = CMSG_NXTHDR (&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      {
        int nfds = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        for (int i = 0; i < nfds; i++)
          {
            int got;
            memcpy (&got, CMSG_DATA (cm) + i * sizeof (int), sizeof (int));
            if (*out_fd < 0)
              *out_fd = got;
            else
              close (got);
          }
      }
  if (n > 0 && n != sizeof *msg)
    {
      if (*out_fd >= 0)
        close (*out_fd);
      *out_fd = -1;
      return -EPROTO;
    }
  return (int) n;
}

#define FSG_PROC_SELF "/proc/self/"

static G_GNUC_NORETURN void
fail_at (const FsgSandboxSpec *spec, FsgStage stage, int err, int value)
{
  FsgCtlMsg msg = { FSG_MSG_SETUP_ERROR, stage, err, value };

  fsg_ctl_send (spec->ctl_fd, &msg, -1);
  _exit (FSG_EXIT_SETUP);
}

static G_GNUC_NORETURN void
fail (const FsgSandboxSpec *spec, FsgStage stage, int err)
{
  fail_at (spec, stage, err, 0);
}

static void
wait_for (const FsgSandboxSpec *spec, FsgMsgType type, FsgStage stage)
{
  FsgCtlMsg msg;
  int fd;
  int r = fsg_ctl_recv (spec->ctl_fd, &msg, &fd);

  if (fd >= 0)
    close (fd);
  if (r <= 0)
    _exit (FSG_EXIT_SETUP); /* the runner is gone or gave up */
  if (msg.type != (gint32) type)
    fail (spec, stage, EPROTO);
}

/* PR_SET_PDEATHSIG, closing the race where the parent died before the call. */
static void
die_with_parent (const FsgSandboxSpec *spec, pid_t expected_parent)
{
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    fail (spec, FSG_STAGE_PDEATHSIG, errno);
  if (getppid () != expected_parent)
    _exit (FSG_EXIT_SETUP);
}

static void
reset_signals (void)
{
  sigset_t all;
  struct sigaction sa;

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++)
    sigaction (s, &sa, NULL); /* EINVAL for SIGKILL/SIGSTOP and RT internals */
  sigemptyset (&all);
  sigprocmask (SIG_SETMASK, &all, NULL);
}

/* ---- C: the command ------------------------------------------------------- */

static int
close_fds_except (const FsgSandboxSpec *spec, int keep_ctl)
{
  /* Keep, in ascending order: pass fds and the (CLOEXEC) control socket. */
  int keep[FSG_MAX_PASS_FDS + 4];
  guint n = 0;
  int from = 3;

  for (guint i = 0; i < spec->n_pass_fds && n < G_N_ELEMENTS (keep) - 1; i++)
    if (spec->pass_fds[i] >= 3)
      keep[n++] = spec->pass_fds[i];
  keep[n++] = keep_ctl;
  /* insertion sort, n is tiny */
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && keep[j - 1] > keep[j]; j--)
      {
        int t = keep[j];
        keep[j] = keep[j - 1];
        keep[j - 1] = t;
      }
  for (guint i = 0; i <= n; i++)
    {
      unsigned int last = i < n ? (unsigned int) keep[i] - 1 : ~0U;

      if (i < n && keep[i] < from)
        continue;
      if ((unsigned int) from <= last)
        {
          if (syscall (SYS_close_range, from, last, 0) < 0)
            {
              if (errno != ENOSYS)
                return -errno;
              /* Kernels before 5.9: close one by one up to the limit. */
              {
                struct rlimit rl;
                unsigned int top = last;

                if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                    && rl.rlim_cur - 1 < top)
                  top = rl.rlim_cur - 1;
                for (unsigned int fd = from; fd <= top && fd >= (unsigned int) from; fd++)
                  close (fd);
              }
            }
        }
      if (i < n)
        from = keep[i] + 1;
    }
  return 0;
}

static int
drop_capabilities (const FsgSandboxSpec *spec)
{
  struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2];

  /* Lock the root-owns-capabilities rules off before the caps go: an
   * execve as uid 0 then gains nothing, whatever the bounding set said. */
  if (prctl (PR_SET_SECUREBITS,
             SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP
             | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED
             | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
             0, 0, 0) < 0)
    return -errno;
  for (int cap = 0; cap <= spec->last_cap; cap++)
    if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
      return -errno;
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return -errno;
  memset (data, 0, sizeof data);
  if (syscall (SYS_capset, &hdr, data) < 0)
    return -errno;
  /* Verify: a capability left by mistake must not reach the command. */
  memset (data, 0xff, sizeof data);
  if (syscall (SYS_capget, &hdr, data) < 0)
    return -errno;
  for (int i = 0; i < 2; i++)
    if (data[i].effective || data[i].permitted || data[i].inheritable)
      return -EPERM;
  for (int cap = 0; cap <= spec->last_cap; cap++)
    if (prctl (PR_CAPBSET_READ, cap, 0, 0, 0) > 0)
      return -EPERM;
  return 0;
}

static int
load_seccomp (const FsgSandboxSpec *spec)
{
  FsgCtlMsg msg = { FSG_MSG_NO_LISTENER, 0, 0, 0 };

  if (spec->prog_notify.len > 0)
    {
      int listener = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                              SECCOMP_FILTER_FLAG_NEW_LISTENER, &spec->prog_notify);
      if (listener >= 0)
        {
          FsgCtlMsg lmsg = { FSG_MSG_LISTENER, 0, 0, 0 };
          int r = fsg_ctl_send (spec->ctl_fd, &lmsg, listener);

          close (listener);
          /* Without the runner holding the listener, refused socket()
           * calls fail with ENOSYS: still refused. */
          if (r < 0)
            return r;
          return 0;
        }
      /* Only "notify is not supported" may fall back to the plain filter,
       * which refuses the same calls with EACCES (docs/security.md). */
      if (errno != EINVAL && errno != EOPNOTSUPP && errno != EBUSY)
        return -errno;
      msg.err = errno;
    }
  if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &spec->prog_plain) < 0)
    return -errno;
  return fsg_ctl_send (spec->ctl_fd, &msg, -1); /* R counts the command as started */
}

static void
exec_command (const FsgSandboxSpec *spec)
{
  const char *file = spec->argv[0];
  int saved = ENOENT;

  if (strchr (file, '/') != NULL)
    {
      execve (file, spec->argv, spec->envp);
      saved = errno;
    }
  else
    {
      const char *p = spec->path_env ? spec->path_env : "/usr/local/bin:/usr/bin:/bin";
      size_t flen = strlen (file);
      char buf[4096 + 256];
      gboolean seen_eacces = FALSE;

      while (TRUE)
        {
          const char *end = strchr (p, ':');
          size_t dlen = end ? (size_t) (end - p) : strlen (p);

          if (dlen + 1 + flen + 1 <= sizeof buf)
            {
              if (dlen == 0)
                {
                  memcpy (buf, file, flen + 1);
                }
              else
                {
                  memcpy (buf, p, dlen);
                  buf[dlen] = '/';
                  memcpy (buf + dlen + 1, file, flen + 1);
                }
              execve (buf, spec->argv, spec->envp);
              if (errno == EACCES)
                seen_eacces = TRUE;
              else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE
                       && errno != ENODEV && errno != ETIMEDOUT && errno != ELOOP
                       && errno != ENAMETOOLONG)
                {
                  saved = errno;
                  break;
                }
            }
          if (end == NULL)
            break;
          p = end + 1;
        }
      if (saved == ENOENT && seen_eacces)
        saved = EACCES;
    }
  {
    FsgCtlMsg msg = { FSG_MSG_EXEC_ERROR, 0, saved, 0 };
    fsg_ctl_send (spec->ctl_fd, &msg, -1);
  }
  _exit (saved == ENOENT || saved == ENOTDIR ? FSG_EXIT_NOTFOUND : FSG_EXIT_NOEXEC);
}

/* Which /proc I mounted (FsgProcKind); C, a fork of I, reads it. */
static int proc_kind;
/* fsg_proc_fallback_pidns_ok_async_signal_safe() in S's pid namespace,
 * before the sandbox's; I, a fork of S, reads it. */
static int proc_pidns_err = -EPERM;

static G_GNUC_NORETURN void
command_main (const FsgSandboxSpec *spec, int pty_slave)
{
  struct rlimit no_core = { 0, 0 };
  int r;

  reset_signals ();
  if (setsid () < 0)
    fail (spec, FSG_STAGE_SETSID, errno);
  die_with_parent (spec, 1);
  if (pty_slave >= 0)
    {
      if (ioctl (pty_slave, TIOCSCTTY, 0) < 0)
        fail (spec, FSG_STAGE_PTY, errno);
      if (dup2 (pty_slave, 0) < 0
          || (spec->stdout_pty && dup2 (pty_slave, 1) < 0)
          || (spec->stderr_pty && dup2 (pty_slave, 2) < 0))
        fail (spec, FSG_STAGE_PTY, errno);
    }
  if ((spec->stdout_fd >= 0 && dup2 (spec->stdout_fd, 1) < 0)
      || (spec->stderr_fd >= 0 && dup2 (spec->stderr_fd, 2) < 0))
    fail (spec, FSG_STAGE_CLOSE_FDS, errno);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    fail (spec, FSG_STAGE_NNP, errno);
  /* The container's /proc lists processes outside the sandbox: the user
   * namespace keeps their memory, files and signals out of reach, the
   * Landlock domain every write under /proc (proc.c). No domain, no run. */
  if (proc_kind == FSG_PROC_CONTAINER)
    {
      FsgCtlMsg msg = { FSG_MSG_LANDLOCK, 0, 0, 1 };

      if ((r = fsg_landlock_confine_async_signal_safe ()) < 0)
        fail (spec, FSG_STAGE_PROC_LANDLOCK, -r);
      fsg_ctl_send (spec->ctl_fd, &msg, -1);
    }
  if (setrlimit (RLIMIT_CORE, &no_core) < 0)
    fail (spec, FSG_STAGE_RLIMIT, errno);
  if ((r = close_fds_except (spec, spec->ctl_fd)) < 0)
    fail (spec, FSG_STAGE_CLOSE_FDS, -r);
  if ((r = drop_capabilities (spec)) < 0)
    fail (spec, FSG_STAGE_CAPS, -r);
  fsg_trace ("C", "exec");
  /* Should be the last thing before execve(). */
  if ((r = load_seccomp (spec)) < 0)
    fail (spec, FSG_STAGE_SECCOMP, -r);
  exec_command (spec);
  _exit (FSG_EXIT_NOEXEC);
}

/* ---- I: pid 1 of the sandbox ---------------------------------------------- */

static volatile sig_atomic_t init_child_pid;

static void
init_on_signal (int sig)
{
  int errsv = errno;
  pid_t c = init_child_pid;

  if (sig == SIGUSR1)
    {
      /* Timeout: the whole namespace (kill(-1) spares only us). */
      kill (-1, SIGTERM);
      kill (-1, SIGCONT);
    }
  else if (c > 0 && kill (-c, sig) < 0)
    kill (c, sig); /* C leads its session, so its group is c; as a terminal's ^C would */
  errno = errsv;
}

/* Bind @s->target onto itself and remount it with exactly @s->flags of
 * noexec/nosymfollow, keeping its other flags (a bind remount replaces
 * them all). A place the view does not show, or denies, needs nothing;
 * once it is there, any failure stops the run (an LSM refusing the bind
 * must not leave the place executable). */
static int
host_flags_step (const FsgMountStep *s)
{
  static const struct { unsigned long st, ms; } keep[] = {
    { ST_RDONLY, MS_RDONLY }, { ST_NOSUID, MS_NOSUID }, { ST_NODEV, MS_NODEV },
    { ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME }, { ST_RELATIME, MS_RELATIME },
  };
  struct stat st;
  struct statfs sfs;
  unsigned long flags = s->flags;

  if (stat (s->target, &st) < 0)
    return errno == ENOENT || errno == EACCES || errno == ENOTDIR ? 0 : -1;
  if (mount (s->target, s->target, NULL, MS_BIND, NULL) < 0)
    return -1;
  if (statfs (s->target, &sfs) < 0)
    return -1;
  for (gsize i = 0; i < G_N_ELEMENTS (keep); i++)
    if (sfs.f_flags & keep[i].st)
      flags |= keep[i].ms;
  return mount (NULL, s->target, NULL, MS_REMOUNT | MS_BIND | flags, NULL);
}

/* FSG_STEP_BIND_FILE: no symlink followed anywhere on the source's path,
 * a regular file, bound through its fd (opened here, in the sandbox's mount
 * namespace: a bind needs a mount of this namespace). */
static int
bind_file_step (const FsgMountStep *s)
{
  struct open_how how = { 0 };
  struct stat st;
  char proc[32] = "/proc/self/fd/";
  char digits[16];
  int fd, r, errsv, n = 0;
  unsigned int v;
  size_t len = strlen (proc);

  how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  fd = (int) syscall (SYS_openat2, AT_FDCWD, s->source, &how, sizeof how);
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      errno = EINVAL;
      return -1;
    }
  v = (unsigned int) fd;
  do
    digits[n++] = (char) ('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0)
    proc[len++] = digits[--n];
  proc[len] = '\0';
  r = mount (proc, s->target, NULL, MS_BIND, NULL);
  errsv = errno;
  close (fd);
  errno = errsv;
  return r;
}

/* The view's /proc: a fresh procfs, or, where the kernel refuses one (EPERM:
 * the container masks parts of its /proc) and the run allows it, the
 * container's own (proc.c). R is told which. Returns 0, or -1 with errno. */
static int
mount_proc (const FsgSandboxSpec *spec, const FsgMountStep *s)
{
  FsgCtlMsg msg = { FSG_MSG_PROC, 0, 0, FSG_PROC_FRESH };
  int r;

  if (mount (s->source, s->target, s->fstype, s->flags, s->data) < 0)
    {
      int abi;

      if (errno != EPERM || !spec->proc_fallback_ok)
        return -1;
      /* Only a container's /proc, and only with Landlock to refuse writes
       * under it (proc.c): otherwise stop here (fail closed). */
      if (proc_pidns_err < 0)
        fail (spec, FSG_STAGE_PROC_HOST, -proc_pidns_err);
      if ((abi = fsg_landlock_abi_async_signal_safe ()) < 2)
        fail (spec, FSG_STAGE_PROC_LANDLOCK, abi < 0 ? -abi : EOPNOTSUPP);
      if ((r = fsg_proc_bind_container_async_signal_safe (s->target)) < 0)
        fail (spec, FSG_STAGE_PROC_FALLBACK, -r);
      msg.value = FSG_PROC_CONTAINER;
    }
  proc_kind = msg.value;
  if ((r = fsg_ctl_send (spec->ctl_fd, &msg, -1)) < 0)
    fail (spec, FSG_STAGE_MOUNT_PROC, -r);
  return 0;
}

static void
run_steps (const FsgSandboxSpec *spec)
{
  for (guint i = 0; i < spec->n_steps; i++)
    {
      const FsgMountStep *s = &spec->steps[i];
      int r = 0;

      switch (s->kind)
        {
        case FSG_STEP_MOUNT:
          if (s->stage == FSG_STAGE_MOUNT_PROC && s->fstype != NULL
              && strcmp (s->fstype, "proc") == 0)
            r = mount_proc (spec, s);
          else
            r = mount (s->source, s->target, s->fstype, s->flags, s->data);
          break;
        case FSG_STEP_MKDIR:
          r = mkdir (s->target, 0755);
          if (r < 0 && errno == EEXIST)
            r = 0;
          break;
        case FSG_STEP_TOUCH:
          {
            int fd = open (s->target, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
            if (fd < 0)
              r = -1;
            else
              close (fd);
          }
          break;
        case FSG_STEP_SYMLINK:
          r = symlink (s->source, s->target);
          break;
        case FSG_STEP_HOST_FLAGS:
          r = host_flags_step (s);
          break;
        case FSG_STEP_BIND_FILE:
          r = bind_file_step (s);
          break;
        case FSG_STEP_READONLY:
          r = mount (s->target, s->target, NULL, MS_BIND | MS_REC, NULL);
          if (r < 0 && errno == ENOENT)
            r = 0; /* not on this kernel */
          else if (r == 0)
            r = mount (NULL, s->target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | s->flags, NULL);
          break;
        }
      if (r < 0)
        fail (spec, proc_kind == FSG_PROC_CONTAINER && s->stage == FSG_STAGE_MOUNT_PROC
                      ? FSG_STAGE_PROC_FALLBACK : s->stage, errno);
    }
}

static G_GNUC_NORETURN void
init_main (const FsgSandboxSpec *spec, int parent_alive_fd)
{
  int pty_slave = -1;
  sigset_t block, old;
  struct sigaction sa;
  pid_t child;
  static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 };

  struct pollfd parent = { .fd = parent_alive_fd, .events = POLLIN };

  /* our parent S lives in the parent namespace, where getppid() cannot see
   * it: its liveness is the write end of a pipe only S holds */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    fail (spec, FSG_STAGE_PDEATHSIG, errno);
  if (poll (&parent, 1, 0) != 0)
    _exit (FSG_EXIT_SETUP);
  prctl (PR_SET_NAME, "fsgate-init", 0, 0, 0);
  /* Keep the command from reading our memory or fds: non-dumpable, and we
   * keep capabilities it will not have. */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);

  fsg_trace ("I", "start");
  run_steps (spec);
  fsg_trace ("I", "mounts made");
  {
    guint bad;
    int r = fsg_hybrid_bind_async_signal_safe (spec, &bad);

    if (r < 0)
      fail_at (spec, FSG_STAGE_HYBRID, -r, bad < spec->n_binds ? (int) bad + 1 : 0); /* R names it */
  }

  fsg_trace ("I", "binds made");
  if (chdir (spec->view_dir) < 0)
    fail (spec, FSG_STAGE_PIVOT, errno);
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    fail (spec, FSG_STAGE_PIVOT, errno);
  if (umount2 (".", MNT_DETACH) < 0)
    fail (spec, FSG_STAGE_PIVOT, errno);
  if (chdir ("/") < 0 || chdir (spec->cwd) < 0)
    fail (spec, FSG_STAGE_CHDIR, errno);

  if (spec->want_pty)
    {
      int master = open ("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
      int unlock = 0;

      if (master < 0 || ioctl (master, TIOCSPTLCK, &unlock) < 0)
        fail (spec, FSG_STAGE_PTY, errno);
      pty_slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
      if (pty_slave < 0)
        fail (spec, FSG_STAGE_PTY, errno);
      {
        FsgCtlMsg msg = { FSG_MSG_PTY_MASTER, 0, 0, 0 };
        int r = fsg_ctl_send (spec->ctl_fd, &msg, master);
        if (r < 0)
          fail (spec, FSG_STAGE_PTY, -r);
      }
      close (master);
    }

  sigemptyset (&block);
  for (gsize i = 0; i < G_N_ELEMENTS (forwarded); i++)
    sigaddset (&block, forwarded[i]);
  sigprocmask (SIG_BLOCK, &block, &old);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = init_on_signal;
  sigfillset (&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (gsize i = 0; i < G_N_ELEMENTS (forwarded); i++)
    sigaction (forwarded[i], &sa, NULL);

  fsg_trace ("I", "pivoted; fork C");
  child = fork ();
  if (child < 0)
    fail (spec, FSG_STAGE_FORK_CMD, errno);
  if (child == 0)
    command_main (spec, pty_slave);

  init_child_pid = child;
  if (pty_slave >= 0)
    close (pty_slave);
  if (spec->stdout_fd >= 0)
    close (spec->stdout_fd);
  if (spec->stderr_fd >= 0)
    close (spec->stderr_fd);
  sigprocmask (SIG_SETMASK, &old, NULL);

  while (TRUE)
    {
      int status = 0;
      pid_t p = waitpid (-1, &status, 0);

      if (p < 0)
        {
          if (errno == EINTR)
            continue;
          _exit (FSG_EXIT_SETUP);
        }
      if (p == child)
        {
          FsgCtlMsg msg = { FSG_MSG_STATUS, 0, 0, status };

          fsg_trace ("I", "C reaped");
          init_child_pid = 0;
          fsg_ctl_send (spec->ctl_fd, &msg, -1);
          /* Our exit kills every other process of the namespace. */
          _exit (0);
        }
    }
}

/* ---- S: namespaces and the FUSE mount -------------------------------------- */

void
fsg_sandbox_main_async_signal_safe (const FsgSandboxSpec *spec)
{
  int fuse_fd;
  pid_t init;
  int s_alive[2];
  int view_fd;

  fsg_trace ("S", "start");
  die_with_parent (spec, spec->runner_pid);
  prctl (PR_SET_NAME, "fsgate-setup", 0, 0, 0);
  /* R is not dumpable, so neither are we: the id maps need our /proc/PID
   * owned by the uid until they are written (then we drop it again). */
  prctl (PR_SET_DUMPABLE, 1, 0, 0, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (spec->close_in_sandbox); i++)
    if (spec->close_in_sandbox[i] >= 0)
      close (spec->close_in_sandbox[i]);

  if (spec->runner_maps)
    wait_for (spec, FSG_MSG_MAPS_DONE, FSG_STAGE_WAIT_MAPS);
  else
  {
    int r;

    if ((r = fsg_write_file_async_signal_safe (FSG_PROC_SELF "setgroups", "deny")) < 0 && r != -ENOENT)
      fail (spec, FSG_STAGE_WAIT_MAPS, -r);
    if ((r = fsg_write_file_async_signal_safe (FSG_PROC_SELF "uid_map", spec->uid_map)) < 0
        || (r = fsg_write_file_async_signal_safe (FSG_PROC_SELF "gid_map", spec->gid_map)) < 0)
      fail (spec, FSG_STAGE_WAIT_MAPS, -r);
  }
  /* Maps written: from now on, nothing of S (its /proc/PID files, the
   * owner-only ones like oom_score_adj included) belongs to the uid. */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);

  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    fail (spec, FSG_STAGE_MAKE_PRIVATE, errno);
  if (mount ("fsgate-scratch", spec->scratch, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0)
    fail (spec, FSG_STAGE_SCRATCH, errno);
  if (mkdir (spec->view_dir, 0755) < 0)
    fail (spec, FSG_STAGE_SCRATCH, errno);

  /* The fd must be opened in this user namespace (the kernel checks the
   * opener's namespace against the mount's) and must carry the number the
   * precomputed mount data names. */
  fuse_fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fuse_fd < 0)
    fail (spec, FSG_STAGE_OPEN_FUSE, errno);
  if (fuse_fd != spec->fuse_fd_num)
    {
      if (dup3 (fuse_fd, spec->fuse_fd_num, O_CLOEXEC) < 0)
        fail (spec, FSG_STAGE_OPEN_FUSE, errno);
      close (fuse_fd);
    }
  if (mount ("fsgate", spec->view_dir, "fuse", MS_NOSUID | MS_NODEV, spec->fuse_data) < 0)
    fail (spec, FSG_STAGE_MOUNT_FUSE, errno);
  fsg_trace ("S", "FUSE mounted");
  {
    FsgCtlMsg msg = { FSG_MSG_FUSE_FD, 0, 0, 0 };
    int r = fsg_ctl_send (spec->ctl_fd, &msg, spec->fuse_fd_num);
    if (r < 0)
      fail (spec, FSG_STAGE_SEND_FUSE, -r);
  }
  close (spec->fuse_fd_num);
  /* R forks D now; making these meanwhile takes them off the critical path.
   * I and every process after it inherit them. */
  if (unshare (spec->late_unshare) < 0)
    fail (spec, FSG_STAGE_UNSHARE_NET, errno);

  wait_for (spec, FSG_MSG_GO, FSG_STAGE_WAIT_GO);
  fsg_trace ("S", "GO; fork I");
  /* The view's root, for syncfs once the sandbox is gone (O_PATH: no
   * request to the daemon now; the path would not resolve after I's
   * pivot_root) */
  view_fd = open (spec->view_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

  proc_pidns_err = fsg_proc_fallback_pidns_ok_async_signal_safe ();
  if (unshare (CLONE_NEWPID) < 0)
    fail (spec, FSG_STAGE_UNSHARE_PID, errno);
  /* I is pid 1 of its namespace, so getppid() cannot tell it that S died
   * before its PR_SET_PDEATHSIG: S holds the write end of this pipe for
   * its whole life, and I sees POLLHUP once S is gone. */
  if (pipe2 (s_alive, O_CLOEXEC) < 0)
    fail (spec, FSG_STAGE_FORK_INIT, errno);
  init = fork ();
  if (init < 0)
    fail (spec, FSG_STAGE_FORK_INIT, errno);
  if (init == 0)
    {
      close (s_alive[1]);
      init_main (spec, s_alive[0]);
    }
  close (s_alive[0]);
  if (spec->stdout_fd >= 0)
    close (spec->stdout_fd);
  if (spec->stderr_fd >= 0)
    close (spec->stderr_fd);
  {
    /* I is our child and not reaped: its pidfd cannot name another process.
     * R signals I through it (timeouts, forwarded signals); -1 where the
     * kernel has no pidfds (before 5.3): R then uses the pid until SYNCED. */
    FsgCtlMsg msg = { FSG_MSG_INIT_PID, 0, 0, init };
    int pidfd = pidfd_open (init, 0);

    fsg_ctl_send (spec->ctl_fd, &msg, pidfd);
    if (pidfd >= 0)
      close (pidfd);
  }
  while (TRUE)
    {
      int status;
      pid_t p = waitpid (init, &status, 0);

      if (p == init)
        {
          fsg_trace ("S", "I reaped");
          /* I's exit took every process of the sandbox with it: nothing
           * writes to the view any more. Their data reached the daemon as
           * they went (FUSE writes dirty pages back at every close and
           * unmap); syncfs makes sure of whatever is left (times). Then R
           * need not wait for this process to tear the namespaces down,
           * which needs no daemon, as bwrap's parent does not wait for its
           * child's. Without the sync, R waits as before. */
          if (view_fd >= 0)
            {
              int dfd = openat (view_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

              if (dfd >= 0 && syncfs (dfd) == 0)
                {
                  FsgCtlMsg msg = { FSG_MSG_SYNCED, 0, 0, 0 };

                  fsg_ctl_send (spec->ctl_fd, &msg, -1);
                  fsg_trace ("S", "view synced");
                }
            }
          _exit (WIFEXITED (status) ? WEXITSTATUS (status) : FSG_EXIT_SETUP);
        }
      if (p < 0 && errno != EINTR)
        _exit (FSG_EXIT_SETUP);
    }
}
