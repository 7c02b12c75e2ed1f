/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The runner process R (see run.h): prepares everything the sandbox side
 * needs before the clone, writes the id maps, starts the FUSE daemon D on
 * the fd that S mounted, then supervises the run from one poll loop
 * (control socket, signalfd, seccomp listener, audit pipe, output pipes, pty)
 * and turns what happened into an exit status and the --json report.
 */
#include "config.h"

#include "runner/run.h"
#include "runner/git-report.h"

#include "common/fsg-util.h"
#include "fsgate/audit.h"
#include "fsgate/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

extern char **environ;

#define DRAIN_TIMEOUT_US (2 * G_USEC_PER_SEC)
#define DAEMON_READY_TIMEOUT_MS 10000
/* Denials are kept per distinct (source, operation, path, path2, rule),
 * each with its count and the time of the first; within these bounds. */
#define MAX_DISTINCT_DENIALS 10000
#define MAX_DENIAL_BYTES (8 * 1024 * 1024)

/* The live copy of the command's output to one of our own fds. The
 * supervisor never waits for it: bytes read from the sandbox wait here until
 * the fd polls writable, and while LIVE_PENDING_MAX are waiting the sandbox
 * side is not read (the command blocks on its write, as it would natively). */
typedef struct
{
  GByteArray *pending;
  gboolean dropped;  /* the reader is gone (EPIPE, error): discard */
  guint64 lost;      /* bytes discarded while the command was still writing */
} FsgLive;

#define LIVE_PENDING_MAX (256 * 1024)
#define LIVE_WRITE_GUARD_US 50000

typedef struct
{
  const FsgRunOptions *opts;
  const FsgPolicy *policy;
  FsgSandboxSpec spec;
  GPtrArray *strings; /* owned strings the spec points to */
  GArray *steps;

  int ctl;
  int sigfd;
  int listener;
  int audit_rd;
  int out_rd, err_rd;
  int pty_master;
  int reserved_fd;
  int report_dirfd; /* --json FILE: its directory, opened before the command starts */
  int daemon_ready_rd; /* the daemon's "ok" (or its error), until it came */
  char *report_name; /* and its last component */

  pid_t setup_pid, init_pid, daemon_pid; /* init_pid stays known after I is gone:
                                          * its records are still setup's */
  int init_pidfd; /* I's pidfd from S: signals never reach a reused pid */
  gboolean init_gone; /* S reaped I (SYNCED), or S itself was reaped */
  gboolean setup_reaped;
  gboolean sandbox_gone; /* S reaped, or S said every process of it is gone and the view synced */
  gboolean daemon_reaped;
  int daemon_wait_status;

  gboolean have_status;
  int cmd_status;
  gboolean exec_failed;
  int exec_err;
  gboolean setup_failed;
  FsgStage setup_stage;
  int setup_err;
  int setup_value; /* FSG_STAGE_HYBRID: 1 + the index of the bind that failed, or 0 */
  char *failure; /* runner-side setup failure, printed as is */
  gboolean daemon_died;
  gboolean daemon_killed;   /* R itself killed D (abort after the kill deadline) */
  gboolean timed_out;
  int abandoned;      /* review M5: INT/TERM/HUP/QUIT seen: once the sandbox ended, drop
                       * live output and end instead of waiting for its reader */
  gint64 abandon_at;  /* when (monotonic us); 0: not yet decided */
  int interrupted; /* signal that arrived before the command existed */
  gboolean notify_unavailable;
  gboolean command_started; /* C loaded its filter (LISTENER or NO_LISTENER):
                             * every mount and bind of I was made */
  FsgProcKind proc_kind; /* which /proc the view got (FSG_MSG_PROC) */
  gboolean landlock;     /* the command is in the fallback's Landlock domain */
  gboolean hybrid_planned; /* the hybrid view was planned (spec.binds) */
  gboolean *bind_skipped;  /* [spec.n_binds]: I left it to the daemon (FSG_MSG_BIND_SKIPPED) */
  const char *hybrid_off;  /* why it is off (static), or NULL */
  gboolean mount_tmp;     /* private /tmp with no root below it: the daemon stubs /tmp */
  GPtrArray *stubs;       /* more directories the daemon shows empty (/run, /sys) */

  gint64 start_us, go_us, end_us;
  gint64 timeout_deadline, kill_deadline, drain_deadline, abort_deadline;

  FsgCapture cap_out, cap_err;
  gboolean capturing;
  FsgLive live[3];         /* copies to our fd 1 and fd 2 (index = fd) */
  gboolean filter_to[3];   /* --filter-terminal and our fd 1/2 is a terminal */
  FsgTermFilter term[3];
  GString *audit_buf;
  GPtrArray *denials;       /* FsgJsonObject: one per distinct denial, with count and first_ms */
  guint64 n_denials;        /* every denial, itemised or not */
  GHashTable *denial_index; /* distinct key -> its FsgJsonObject in denials (borrowed) */
  gsize denial_bytes;       /* memory the distinct records take, roughly */
  guint64 denials_unlisted; /* denials whose distinct record did not fit the bound */
  gboolean denial_bound_hit;
  GPtrArray *setup_denials; /* FsgJsonObject: refusals met by S or I setting the sandbox up */
  FsgGitReport git;         /* git_dirs_created, git_redirects_created (git-report.c) */

  struct termios saved_tio;
  gboolean tio_saved;
  GByteArray *to_pty;
  gboolean stdin_open;

  struct seccomp_notif_sizes notif_sizes;
} FsgRun;

static void
clear_fd (int *fdp)
{
  int fd = g_steal_fd (fdp);

  if (fd >= 0)
    close (fd);
}

static const char *
keep_str (FsgRun *run, char *s)
{
  g_ptr_array_add (run->strings, s);
  return s;
}

static void
add_step (FsgRun *run, FsgStepKind kind, FsgStage stage, const char *source,
          const char *target_rel, const char *fstype, unsigned long flags, const char *data)
{
  FsgMountStep step = { kind, stage, source,
                        keep_str (run, g_build_filename (run->spec.view_dir, target_rel, NULL)),
                        fstype, flags, data };

  g_array_append_val (run->steps, step);
}

/* Host noexec/nosymfollow mounts under the roots keep their flags in the
 * view (host-mounts.c); these steps run before /proc, /dev and /tmp are
 * mounted, so a bind never carries those along. */
static gboolean
plan_host_flags (FsgRun *run, const FsgPolicy *policy, gboolean mount_tmp, GError **error)
{
  g_autofree char *mountinfo = NULL;
  g_autoptr(GArray) places = NULL;

  if (!g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, error))
    return FALSE;
  places = fsg_host_flags_plan (policy, mountinfo, mount_tmp);
  for (guint i = 0; i < places->len; i++)
    {
      const FsgHostFlags *h = &g_array_index (places, FsgHostFlags, i);
      unsigned long flags = h->flags;
      struct statfs sfs;

      /* mountinfo can list a mount that another one covers: what the host
       * really has at the path counts too (never less than planned) */
      if (statfs (h->path, &sfs) == 0)
        flags |= ((sfs.f_flags & ST_NOEXEC) ? MS_NOEXEC : 0) |
                 ((sfs.f_flags & FSG_ST_NOSYMFOLLOW) ? FSG_MS_NOSYMFOLLOW : 0);
      add_step (run, FSG_STEP_HOST_FLAGS, FSG_STAGE_HOST_FLAGS, NULL, h->path, NULL, flags, NULL);
    }
  return TRUE;
}

static void
build_mount_plan (FsgRun *run, gboolean mount_tmp)
{
  static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
  static const char *const proc_readonly[] = { "proc/sys", "proc/sysrq-trigger", "proc/irq",
                                               "proc/bus", "proc/fs", "proc/acpi" };
  const unsigned long nosuid_nodev_noexec = MS_NOSUID | MS_NODEV | MS_NOEXEC;

  add_step (run, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_PROC, "proc", "proc", "proc",
            nosuid_nodev_noexec, NULL);
  /* A root run maps uid 0 to the host's root: without capabilities it is
   * still the owner of the global sysctls (core_pattern, modprobe, ...) and
   * of sysrq-trigger and irq affinities, whose permission checks are on the
   * uid alone. These stay read-only. */
  for (gsize i = 0; i < G_N_ELEMENTS (proc_readonly); i++)
    add_step (run, FSG_STEP_READONLY, FSG_STAGE_MOUNT_PROC, NULL, proc_readonly[i], NULL,
              nosuid_nodev_noexec, NULL);
  add_step (run, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_DEV, "fsgate-dev", "dev", "tmpfs",
            MS_NOSUID | MS_NOEXEC, "mode=0755");
  for (gsize i = 0; i < G_N_ELEMENTS (nodes); i++)
    {
      g_autofree char *rel = g_build_filename ("dev", nodes[i], NULL);

      add_step (run, FSG_STEP_TOUCH, FSG_STAGE_MOUNT_DEV, NULL, rel, NULL, 0, NULL);
      add_step (run, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_DEV,
                keep_str (run, g_build_filename ("/dev", nodes[i], NULL)), rel, NULL,
                MS_BIND, NULL);
    }
  add_step (run, FSG_STEP_MKDIR, FSG_STAGE_MOUNT_DEV, NULL, "dev/pts", NULL, 0, NULL);
  add_step (run, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_DEV, "devpts", "dev/pts", "devpts",
            MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620");
  add_step (run, FSG_STEP_SYMLINK, FSG_STAGE_MOUNT_DEV, "pts/ptmx", "dev/ptmx", NULL, 0, NULL);
  add_step (run, FSG_STEP_MKDIR, FSG_STAGE_MOUNT_DEV, NULL, "dev/shm", NULL, 0, NULL);
  add_step (run, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_DEV, "fsgate-shm", "dev/shm", "tmpfs",
            nosuid_nodev_noexec, "mode=1777");
  add_step (run, FSG_STEP_SYMLINK, FSG_STAGE_MOUNT_DEV, "/proc/self/fd", "dev/fd", NULL, 0, NULL);
  add_step (run, FSG_STEP_SYMLINK, FSG_STAGE_MOUNT_DEV, "/proc/self/fd/0", "dev/stdin", NULL, 0, NULL);
  add_step (run, FSG_STEP_SYMLINK, FSG_STAGE_MOUNT_DEV, "/proc/self/fd/1", "dev/stdout", NULL, 0, NULL);
  add_step (run, FSG_STEP_SYMLINK, FSG_STAGE_MOUNT_DEV, "/proc/self/fd/2", "dev/stderr", NULL, 0, NULL);
  if (mount_tmp)
    fsg_plan_private_tmp (run->steps, run->strings, run->spec.view_dir, run->spec.scratch,
                          run->policy);
  fsg_plan_runtime_dirs (run->steps, run->strings, run->spec.view_dir, run->policy,
                         run->stubs);
}

static char **
build_environ (const FsgPolicy *policy, gboolean verbose)
{
  g_autoptr(GPtrArray) dropped = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) base = fsg_policy_build_environ_full (policy, (const char *const *) environ, dropped);
  GPtrArray *env = g_ptr_array_new ();

  if (verbose && dropped->len > 0)
    {
      g_autofree char *names = NULL;

      g_ptr_array_add (dropped, NULL);
      names = g_strjoinv (" ", (char **) dropped->pdata);
      g_printerr ("fsgate-run: environment: dropped %u %s: %s (exclude/include-only in "
                  "[environment]; pass one with set = NAME=VALUE)\n",
                  dropped->len - 1, dropped->len - 1 == 1 ? "variable" : "variables", names);
    }

  for (char **e = base; e != NULL && *e != NULL; e++)
    if (!g_str_has_prefix (*e, "FSGATE_SANDBOX"))
      g_ptr_array_add (env, g_strdup (*e));
  g_ptr_array_add (env, g_strdup ("FSGATE_SANDBOX=1"));
  if (!fsg_policy_network_allowed (policy))
    g_ptr_array_add (env, g_strdup ("FSGATE_SANDBOX_NETWORK_DISABLED=1"));
  g_ptr_array_add (env, NULL);
  return (char **) g_ptr_array_free (env, FALSE);
}

static int
read_last_cap (void)
{
  g_autofree char *text = NULL;

  if (g_file_get_contents ("/proc/sys/kernel/cap_last_cap", &text, NULL, NULL))
    {
      gint64 v = g_ascii_strtoll (text, NULL, 10);
      if (v > 0 && v < 64)
        return (int) v;
    }
  return 63; /* PR_CAPBSET_DROP of an unknown cap gives EINVAL, ignored */
}

/* ---- The FUSE daemon process D -------------------------------------------- */

/* D and S leave fsgate-run's process group (signals stay blocked until
 * then): a signal sent to the group (^C when stdin is not a terminal, a CI
 * job's cancel, SIGHUP) reaches R alone, which forwards it to the command
 * through I. Async-signal-safe. */
static void
leave_process_group (void)
{
  setpgid (0, 0);
}

static GMutex audit_lock;

/* The daemon's records for R, one line each (denials, git directories and
 * redirections), from any worker thread. A line can exceed PIPE_BUF (a
 * path of PATH_MAX bytes, escaped), and a full pipe splits such a write:
 * every record is written whole under one lock, so none interleaves with
 * another. */
static void
daemon_audit (const FsgAuditEvent *event, gpointer user_data)
{
  int fd = GPOINTER_TO_INT (user_data);
  g_autofree char *line = NULL;

  if (!event->denied)
    {
      if (g_strcmp0 (event->op, FSG_GIT_DIR_CREATED) != 0 &&
          g_strcmp0 (event->op, FSG_GIT_REDIRECT_CREATED) != 0)
        return;
      line = fsg_git_report_line (event);
    }
  else
    {
      g_autofree char *text = fsg_audit_event_to_json (event, FSG_AUDIT_FORMAT_REPORT);

      line = g_strconcat (text, "\n", NULL);
    }
  g_mutex_lock (&audit_lock);
  fsg_write_all (fd, line, strlen (line));
  g_mutex_unlock (&audit_lock);
}

static G_GNUC_NORETURN void
daemon_main (FsgRun *run, int fuse_fd, int audit_wr, int ready_wr)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(FsgFs) fs = NULL;
  const char *stubs[8];
  guint n_stubs = 0;
  FsgFsOptions fo = { 0 };
  sigset_t none;
  int devnull;

  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid () != run->spec.runner_pid)
    _exit (1);
  leave_process_group ();
  /* Only R decides when D ends (SIGKILL); a signal meant for the run (^C
   * without a pty, a CI cancel, a hangup) never reaches it directly. */
  signal (SIGINT, SIG_IGN);
  signal (SIGTERM, SIG_IGN);
  signal (SIGHUP, SIG_IGN);
  signal (SIGQUIT, SIG_IGN);
  signal (SIGTTOU, SIG_IGN); /* a background group writing to the terminal */
  signal (SIGTTIN, SIG_IGN);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_IGN);
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  prctl (PR_SET_NAME, "fsgate-fuse", 0, 0, 0);
  /* Hold nothing of the run: no output pipe, no pty, no control socket. */
  devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0 || dup2 (devnull, 0) < 0 || dup2 (devnull, 1) < 0)
    _exit (1);
  {
    GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
    const char *name;
    GArray *fds = g_array_new (FALSE, FALSE, sizeof (int));

    if (dir == NULL)
      _exit (1);
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        int fd = atoi (name);
        if (fd > 2 && fd != fuse_fd && fd != audit_wr && fd != ready_wr)
          g_array_append_val (fds, fd);
      }
    g_dir_close (dir);
    for (guint i = 0; i < fds->len; i++)
      close (g_array_index (fds, int, i));
    g_array_unref (fds);
  }

  fo.audit_level = FSG_AUDIT_DENIED;
  fo.audit_fd = -1;
  fo.audit_func = daemon_audit;
  fo.audit_data = GINT_TO_POINTER (audit_wr);
  /* what the runner mounts over (extra-mounts.c) */
  stubs[n_stubs++] = "/proc";
  stubs[n_stubs++] = "/dev";
  if (run->mount_tmp)
    stubs[n_stubs++] = "/tmp";
  for (guint i = 0; i < run->stubs->len && n_stubs < G_N_ELEMENTS (stubs) - 1; i++)
    stubs[n_stubs++] = run->stubs->pdata[i];
  stubs[n_stubs] = NULL;
  fo.stub_dirs = stubs;
  fo.debug = run->opts->verbose > 1;
  fo.uid_map = run->spec.uid_map; /* which owners the kernel lets the sandbox write */
  fo.gid_map = run->spec.gid_map;

  fsg_trace ("D", "start");
  fs = fsg_fs_new (run->policy, &fo, &error);
  fsg_trace ("D", "fs made");
  if (fs == NULL || !fsg_fs_take_fuse_fd (fs, fuse_fd, &error) || !fsg_fs_start (fs, &error))
    {
      g_autofree char *msg = g_strdup_printf ("%s\n", error ? error->message : "unknown error");
      fsg_write_all (ready_wr, msg, strlen (msg));
      _exit (1);
    }
  fsg_trace ("D", "serving");
  fsg_write_all (ready_wr, "ok\n", 3);
  close (ready_wr);
  fsg_fs_wait (fs);
  _exit (0);
}

static gboolean
start_daemon (FsgRun *run, int fuse_fd, GError **error)
{
  int audit[2], ready[2];

  if (pipe2 (audit, O_CLOEXEC) < 0)
    return fsg_throw_errno (error, "pipe");
  if (pipe2 (ready, O_CLOEXEC) < 0)
    {
      close (audit[0]);
      close (audit[1]);
      return fsg_throw_errno (error, "pipe");
    }
  fcntl (audit[1], F_SETPIPE_SZ, 1 << 20);
  run->daemon_pid = fork ();
  if (run->daemon_pid == 0)
    daemon_main (run, fuse_fd, audit[1], ready[1]);
  close (audit[1]);
  close (ready[1]);
  if (run->daemon_pid < 0)
    {
      close (audit[0]);
      close (ready[0]);
      return fsg_throw_errno (error, "fork the FUSE daemon");
    }
  run->audit_rd = audit[0];
  fcntl (run->audit_rd, F_SETFL, O_NONBLOCK);
  run->daemon_ready_rd = ready[0];
  return TRUE;
}

/* The daemon's first line: "ok", or why it did not start. The sandbox
 * goes on meanwhile (its first request to the view waits for the daemon in
 * the kernel), so the daemon's start overlaps the pid namespace and init. */
static gboolean
wait_daemon_ready (FsgRun *run, GError **error)
{
  char buf[1024];
  gsize got = 0;
  struct pollfd pfd;
  gint64 deadline;

  deadline = g_get_monotonic_time () + DAEMON_READY_TIMEOUT_MS * 1000;
  pfd.fd = run->daemon_ready_rd;
  pfd.events = POLLIN;
  while (got < sizeof buf - 1)
    {
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
      long n;

      if (left <= 0)
        break;
      if (poll (&pfd, 1, left) < 0 && errno != EINTR)
        break;
      n = FSG_RETRY (read (run->daemon_ready_rd, buf + got, sizeof buf - 1 - got));
      if (n <= 0)
        break;
      got += n;
      if (memchr (buf, '\n', got) != NULL)
        break;
    }
  clear_fd (&run->daemon_ready_rd);
  buf[got] = 0;
  if (g_str_equal (buf, "ok\n"))
    return TRUE;
  g_strchomp (buf);
  return fsg_throw (error, "the FUSE daemon did not start: %s",
                    got > 0 ? buf : "no answer (it died or hung)");
}

/* ---- Reporting helpers ---------------------------------------------------- */

static const char *
denial_member (const FsgJsonObject *obj, const char *name)
{
  const char *v = fsg_json_object_get_string (obj, name);

  return v != NULL ? v : "";
}

/* One denial (a JSON object; transfer full). A flood of the same denial is
 * one record with a count, so the one that matters is never crowded out;
 * distinct records are kept up to MAX_DISTINCT_DENIALS / MAX_DENIAL_BYTES,
 * and past that they are counted (denials_unlisted) and the report says so. */
static void
add_denial (FsgRun *run, FsgJsonObject *obj)
{
  g_autofree char *key = NULL;
  FsgJsonObject *first;
  gsize size;

  run->n_denials++;
  key = g_strjoin ("\x1f", denial_member (obj, "source"), denial_member (obj, "operation"),
                   denial_member (obj, "path"), denial_member (obj, "path2"),
                   denial_member (obj, "rule"), NULL);
  first = g_hash_table_lookup (run->denial_index, key);
  if (first != NULL)
    {
      fsg_json_object_set_int (first, "count", fsg_json_object_get_int (first, "count", 0) + 1);
      fsg_json_object_free (obj);
      return;
    }
  size = 2 * strlen (key) + 256; /* the key, the record's copy of it, the members */
  if (run->denial_bound_hit || run->denials->len >= MAX_DISTINCT_DENIALS
      || run->denial_bytes + size > MAX_DENIAL_BYTES)
    {
      if (!run->denial_bound_hit)
        g_printerr ("fsgate-run: more than %u distinct denials (or %u MiB of them): later "
                    "distinct ones are counted (denials_unlisted in the report), in one record "
                    "per operation and rule (\"past_bound\": true)\n",
                    MAX_DISTINCT_DENIALS, MAX_DENIAL_BYTES >> 20);
      run->denial_bound_hit = TRUE;
      run->denials_unlisted++;
      /* review M8: past the bound, one record per (operation, rule) with a
       * count, so every rule that fired stays listed (a flood of junk paths
       * cannot hide a later ~/.ssh denial); its path is the first one met */
      {
        g_autofree char *okey = g_strjoin ("\x1f", "\x1epast-bound", denial_member (obj, "source"),
                                           denial_member (obj, "operation"),
                                           denial_member (obj, "rule"), NULL);
        FsgJsonObject *agg = g_hash_table_lookup (run->denial_index, okey);

        if (agg != NULL)
          {
            fsg_json_object_set_int (agg, "count", fsg_json_object_get_int (agg, "count", 0) + 1);
            fsg_json_object_free (obj);
            return;
          }
        fsg_json_object_set_int (obj, "count", 1);
        fsg_json_object_set_int (obj, "first_ms", (g_get_monotonic_time () - run->start_us) / 1000);
        fsg_json_object_set_bool (obj, "past_bound", TRUE);
        g_hash_table_insert (run->denial_index, g_steal_pointer (&okey), obj);
        g_ptr_array_add (run->denials, obj);
      }
      return;
    }
  run->denial_bytes += size;
  fsg_json_object_set_int (obj, "count", 1);
  fsg_json_object_set_int (obj, "first_ms", (g_get_monotonic_time () - run->start_us) / 1000);
  g_hash_table_insert (run->denial_index, g_steal_pointer (&key), obj);
  g_ptr_array_add (run->denials, obj); /* the array owns obj from now on */
}

/* The sandbox's own setup (S, and I placing host mount flags, /proc, /dev
 * and pivoting) looks up places of the view that the policy may deny; those
 * refusals are not the command's. Told apart by host pid, never by the
 * command name (the command chooses its own). The audit pipe is read only
 * once I's pid is known (see audit_readable()). */
static gboolean
is_setup_denial (FsgRun *run, const FsgJsonObject *obj)
{
  gint64 pid = fsg_json_object_get_int (obj, "pid", 0);

  return pid > 0 && (pid == run->setup_pid || pid == run->init_pid);
}

static gboolean
audit_readable (FsgRun *run)
{
  return run->audit_rd >= 0 && (run->init_pid > 0 || run->setup_reaped || run->ctl < 0);
}

static void
read_audit (FsgRun *run)
{
  char buf[65536];
  long n;
  char *nl;

  while ((n = FSG_RETRY (read (run->audit_rd, buf, sizeof buf))) > 0)
    g_string_append_len (run->audit_buf, buf, n);
  if (n == 0 || (n < 0 && errno != EAGAIN))
    clear_fd (&run->audit_rd);
  while ((nl = memchr (run->audit_buf->str, '\n', run->audit_buf->len)) != NULL)
    {
      gsize len = nl - run->audit_buf->str;
      FsgJsonObject *obj = fsg_json_object_parse (run->audit_buf->str, len);

      if (obj != NULL)
        {
          if (fsg_git_report_take (&run->git, obj))
            fsg_json_object_free (obj); /* a git dir the command made is not a denial */
          else if (is_setup_denial (run, obj))
            {
              if (run->setup_denials->len < 100)
                g_ptr_array_add (run->setup_denials, obj);
              else
                fsg_json_object_free (obj);
            }
          else
            add_denial (run, obj);
        }
      else
        run->n_denials++; /* never lose a denial, even one we cannot show */
      g_string_erase (run->audit_buf, 0, len + 1);
    }
}

static const char *
family_name (guint64 family)
{
  switch ((int) family)
    {
    case AF_INET: return "AF_INET";
    case AF_INET6: return "AF_INET6";
    case AF_NETLINK: return "AF_NETLINK";
    case AF_PACKET: return "AF_PACKET";
    case AF_VSOCK: return "AF_VSOCK";
    case AF_ALG: return "AF_ALG";
    case AF_BLUETOOTH: return "AF_BLUETOOTH";
    case AF_XDP: return "AF_XDP";
    default: return NULL;
    }
}

static void
handle_notification (FsgRun *run)
{
  g_autofree struct seccomp_notif *req = g_malloc0 (MAX (run->notif_sizes.seccomp_notif,
                                                         sizeof (struct seccomp_notif)));
  g_autofree struct seccomp_notif_resp *resp
    = g_malloc0 (MAX (run->notif_sizes.seccomp_notif_resp, sizeof (struct seccomp_notif_resp)));
  g_autofree char *name = NULL;
  g_autofree char *comm = NULL;
  g_autofree char *family = NULL;
  const char *fname;
  FsgJsonObject *obj;

  if (ioctl (run->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
    {
      if (errno != EINTR && errno != ENOENT)
        clear_fd (&run->listener);
      return;
    }
  /* Read the caller's name before answering, while it is certainly alive. */
  comm = fsg_read_comm (req->pid);
  resp->id = req->id;
  resp->val = 0;
  resp->error = -EACCES; /* the filter only notifies calls it refuses */
  resp->flags = 0;
  if (ioctl (run->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
    g_debug ("SECCOMP_IOCTL_NOTIF_SEND: %s", g_strerror (errno));

  name = seccomp_syscall_resolve_num_arch (req->data.arch, req->data.nr);
  fname = family_name (req->data.args[0]);
  family = fname ? g_strdup (fname) : g_strdup_printf ("family %llu",
                                                       (unsigned long long) req->data.args[0]);
  obj = fsg_json_object_new ();
  fsg_json_object_set_string (obj, "source", "seccomp");
  fsg_json_object_set_string (obj, "operation", name ? name : "socket");
  fsg_json_object_set_string (obj, "path", family);
  fsg_json_object_set_string (obj, "rule", "network denied (network = false / --no-net)");
  fsg_json_object_set_int (obj, "errno", EACCES);
  fsg_json_object_set_int (obj, "pid", req->pid);
  /* the command sets its own name (PR_SET_NAME): never trust its bytes
   * (set_string makes them valid UTF-8) */
  fsg_json_object_set_string (obj, "command", comm);
  add_denial (run, obj);
}

/* ---- Terminal --------------------------------------------------------------- */

static void
sync_winsize (FsgRun *run)
{
  struct winsize ws;

  if (run->pty_master >= 0
      && (ioctl (0, TIOCGWINSZ, &ws) == 0 || ioctl (1, TIOCGWINSZ, &ws) == 0))
    ioctl (run->pty_master, TIOCSWINSZ, &ws);
}

/* Input already queued on a canonical terminal is taken before it turns
 * raw: complete lines go to the command, and an end-of-file (a VEOF the
 * line discipline holds as a 0 byte, which raw mode would hand over as a
 * stray NUL: the "^@" under `script` with no input) becomes the inner
 * terminal's own VEOF, as the command would have seen it natively. Read
 * only while poll() says a read will not block: the shared file
 * description of stdin is never made O_NONBLOCK (a signal in between would
 * leave the shell's terminal so). */
static void
drain_canonical_input (FsgRun *run)
{
  guint8 buf[4096];

  if (!(run->saved_tio.c_lflag & ICANON))
    return;
  for (int i = 0; i < 64; i++)
    {
      struct pollfd pfd = { .fd = 0, .events = POLLIN };
      long n;

      if (FSG_RETRY (poll (&pfd, 1, 0)) != 1 || !(pfd.revents & POLLIN))
        break;
      n = FSG_RETRY (read (0, buf, sizeof buf));
      if (n > 0)
        g_byte_array_append (run->to_pty, buf, n);
      else if (n == 0)
        {
          guint8 eof = run->saved_tio.c_cc[VEOF];
          if (eof != _POSIX_VDISABLE)
            g_byte_array_append (run->to_pty, &eof, 1);
          break;
        }
      else
        break;
    }
}

/* The drained lines were echoed by the outer terminal already: hand them
 * to the inner one with its echo off, and turn echo back on once its line
 * discipline has taken them (a line is readable on the slave side), unless
 * the command changed the settings meanwhile. */
static void
pass_drained_input (FsgRun *run)
{
  struct termios quiet = run->saved_tio, now;
  struct pollfd pfd = { .fd = -1, .events = POLLIN };
  long n;

  if (run->to_pty->len == 0 || !(run->saved_tio.c_lflag & ECHO))
    return;
  quiet.c_lflag &= ~(tcflag_t) (ECHO | ECHONL);
  pfd.fd = ioctl (run->pty_master, TIOCGPTPEER, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (pfd.fd < 0 || tcsetattr (run->pty_master, TCSANOW, &quiet) < 0)
    {
      if (pfd.fd >= 0)
        close (pfd.fd);
      return;
    }
  n = FSG_RETRY (write (run->pty_master, run->to_pty->data, run->to_pty->len));
  if (n > 0)
    g_byte_array_remove_range (run->to_pty, 0, (guint) n);
  if (n > 0)
    FSG_RETRY (poll (&pfd, 1, 5000));
  close (pfd.fd);
  if (tcgetattr (run->pty_master, &now) == 0 && now.c_lflag == quiet.c_lflag)
    {
      now.c_lflag = run->saved_tio.c_lflag;
      tcsetattr (run->pty_master, TCSANOW, &now);
    }
}

static void
setup_pty (FsgRun *run, int master)
{
  run->pty_master = master;
  fcntl (master, F_SETFL, O_NONBLOCK);
  if (tcgetattr (0, &run->saved_tio) == 0)
    {
      struct termios raw = run->saved_tio;

      tcsetattr (master, TCSANOW, &run->saved_tio);
      drain_canonical_input (run);
      pass_drained_input (run);
      cfmakeraw (&raw);
      if (tcsetattr (0, TCSANOW, &raw) == 0)
        run->tio_saved = TRUE;
    }
  sync_winsize (run);
  run->stdin_open = TRUE;
}

static void
restore_tty (FsgRun *run)
{
  if (run->tio_saved)
    tcsetattr (0, TCSAFLUSH, &run->saved_tio);
  run->tio_saved = FALSE;
}

/* ---- Output ------------------------------------------------------------------ */

static void
on_alarm (int sig)
{
  (void) sig; /* only interrupts a write that would block */
}

/* write() to our own stdout/stderr without ever blocking the loop for long.
 * The fd is shared with whoever started us, so it cannot be made
 * non-blocking; it is written only when it polls writable, and a one-shot
 * timer (SIGALRM, no SA_RESTART) interrupts a write that blocks anyway
 * (a terminal or socket with less room than asked for): the bytes written
 * so far count, the rest waits. */
static long
guarded_write (int fd, const guint8 *buf, gsize len)
{
  static gboolean installed;
  struct itimerval arm = { { 0, 0 }, { 0, LIVE_WRITE_GUARD_US } };
  struct itimerval off = { { 0, 0 }, { 0, 0 } };
  long n;
  int errsv;

  if (!installed)
    {
      struct sigaction sa = { 0 };

      sa.sa_handler = on_alarm;
      sigemptyset (&sa.sa_mask);
      sa.sa_flags = 0; /* no SA_RESTART: the blocked write returns */
      sigaction (SIGALRM, &sa, NULL);
      installed = TRUE;
    }
  setitimer (ITIMER_REAL, &arm, NULL);
  n = write (fd, buf, len);
  errsv = errno;
  setitimer (ITIMER_REAL, &off, NULL);
  errno = errsv;
  return n;
}

/* The reader of our fd @fd went away (EPIPE, POLLERR/POLLHUP): drop the
 * live copy, and (review M6) close the read end of the command's matching
 * pipe, so that the command gets EPIPE/SIGPIPE as it would natively
 * (`fsgate-run --capture --json r.json -- yes | head -1` ends). The
 * capture says where the stream was cut. */
static void
live_reader_gone (FsgRun *run, int fd)
{
  static const char note[] = "\n[fsgate-run: the reader of this stream went away; the stream was "
                             "closed here, so the command got EPIPE]\n";
  int *rd = fd == 1 ? &run->out_rd : &run->err_rd;
  FsgCapture *cap = fd == 1 ? &run->cap_out : &run->cap_err;

  run->live[fd].dropped = TRUE;
  g_byte_array_set_size (run->live[fd].pending, 0);
  if (*rd >= 0 && *rd != run->pty_master)
    {
      if (run->capturing)
        fsg_capture_append (cap, (const guint8 *) note, sizeof note - 1);
      clear_fd (rd);
    }
}

/* Our fd @fd polled writable: give it what is pending. */
static void
flush_live (FsgRun *run, int fd)
{
  FsgLive *live = &run->live[fd];
  long n;

  if (live->pending->len == 0)
    return;
  n = guarded_write (fd, live->pending->data, MIN (live->pending->len, 65536u));
  if (n > 0)
    g_byte_array_remove_range (live->pending, 0, (guint) n);
  else if (n < 0 && errno != EINTR && errno != EAGAIN)
    live_reader_gone (run, fd); /* EPIPE: the reader is gone */
}

static gboolean
live_full (FsgRun *run, int fd)
{
  return run->live[fd].pending->len >= LIVE_PENDING_MAX;
}

static gboolean
live_pending (FsgRun *run)
{
  return run->live[1].pending->len > 0 || run->live[2].pending->len > 0;
}

static void
forward_output (FsgRun *run, int *fdp, int out_fd, FsgCapture *capture)
{
  guint8 buf[65536];
  long n = FSG_RETRY (read (*fdp, buf, sizeof buf));

  if (n > 0)
    {
      if (capture != NULL)
        fsg_capture_append (capture, buf, n);
      if (run->live[out_fd].dropped)
        return;
      if (run->filter_to[out_fd])
        fsg_term_filter (&run->term[out_fd], buf, (gsize) n, run->live[out_fd].pending);
      else
        g_byte_array_append (run->live[out_fd].pending, buf, (guint) n);
      return;
    }
  if (n < 0 && errno == EAGAIN)
    return;
  clear_fd (fdp); /* EOF, or EIO on a pty whose slaves are gone */
}

/* The run timed out and its readers have not taken all its output: drop
 * the rest and say how much (stderr may be the stalled one: best effort). */
static void
drop_live (FsgRun *run)
{
  for (int fd = 1; fd <= 2; fd++)
    {
      FsgLive *live = &run->live[fd];

      if (live->pending->len > 0)
        {
          g_autofree char *msg = g_strdup_printf (
              "fsgate-run: %u bytes of the command's %s were not delivered: its reader did "
              "not take them before the run ended\n",
              live->pending->len, fd == 1 ? "standard output" : "standard error");
          struct pollfd pfd = { 2, POLLOUT, 0 };

          live->lost += live->pending->len;
          live->dropped = TRUE; /* and what the pipes still hold */
          g_byte_array_set_size (live->pending, 0);
          if (poll (&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT))
            guarded_write (2, (const guint8 *) msg, strlen (msg));
        }
    }
}

static void
pump_stdin (FsgRun *run)
{
  guint8 buf[4096];
  long n = FSG_RETRY (read (0, buf, sizeof buf));

  if (n <= 0)
    {
      run->stdin_open = FALSE;
      return;
    }
  g_byte_array_append (run->to_pty, buf, n);
}

static void
flush_pty (FsgRun *run)
{
  while (run->to_pty->len > 0 && run->pty_master >= 0)
    {
      long n = FSG_RETRY (write (run->pty_master, run->to_pty->data, run->to_pty->len));

      if (n < 0)
        {
          if (errno != EAGAIN)
            g_byte_array_set_size (run->to_pty, 0);
          return;
        }
      g_byte_array_remove_range (run->to_pty, 0, n);
    }
}

/* ---- Control messages ------------------------------------------------------- */

static void sandbox_ended (FsgRun *run);

/* Signal I, the sandbox's pid 1, while it may live: through its pidfd
 * (S took it before I could be reaped, so it names I and nothing else),
 * or by pid where the kernel has no pidfds, never after S said it reaped I
 * (FSG_MSG_SYNCED) or was reaped itself. FALSE when I is not known. */
static gboolean
signal_init (FsgRun *run, int sig)
{
  if (run->init_pidfd >= 0)
    {
      pidfd_send_signal (run->init_pidfd, sig, NULL, 0);
      return TRUE;
    }
  if (run->init_pid > 0 && !run->init_gone && !run->setup_reaped)
    {
      kill (run->init_pid, sig);
      return TRUE;
    }
  return FALSE;
}

/* I is gone (S reaped it): never signal it again. Its pid is kept: the
 * records of its setup lookups may still be in the audit pipe, and they
 * are told apart by that pid (is_setup_denial()). */
static void
forget_init (FsgRun *run)
{
  run->init_gone = TRUE;
  clear_fd (&run->init_pidfd);
}

static void
kill_sandbox (FsgRun *run)
{
  /* S takes I (PDEATHSIG), and I's death takes the pid namespace. */
  signal_init (run, SIGKILL);
  if (run->setup_pid > 0 && !run->setup_reaped)
    kill (run->setup_pid, SIGKILL);
}

static void
runner_fail (FsgRun *run, char *message)
{
  if (run->failure == NULL)
    run->failure = message;
  else
    g_free (message);
  kill_sandbox (run);
}

/* Send @msg to S. FALSE when it could not be sent: where S is gone (it
 * failed a step of its own after its last message), that is no failure of
 * R's: the SETUP_ERROR S sent before it exited is still in the socket and
 * names the step; without one, the run ends as a sandbox that ended before
 * the command reported a status. */
static gboolean
send_to_setup (FsgRun *run, const FsgCtlMsg *msg)
{
  int r = fsg_ctl_send (run->ctl, msg, -1);

  if (r < 0 && r != -EPIPE && r != -ECONNRESET)
    runner_fail (run, g_strdup_printf ("control socket: %s", g_strerror (-r)));
  return r == 0;
}

static void
handle_ctl (FsgRun *run)
{
  FsgCtlMsg msg;
  int fd = -1;
  int r = fsg_ctl_recv (run->ctl, &msg, &fd);

  /* ECONNRESET: S exited with a message of R's unread (a GO sent just
   * before a step of S failed); the kernel reports that once, ahead of the
   * messages S sent before it exited (its SETUP_ERROR), which the next
   * reads return. */
  if (r <= 0)
    {
      if (r == 0 || (r != -EAGAIN && r != -EINTR && r != -ECONNRESET))
        clear_fd (&run->ctl);
      return;
    }
  switch (msg.type)
    {
    case FSG_MSG_FUSE_FD:
      {
        g_autoptr(GError) error = NULL;
        FsgCtlMsg go = { FSG_MSG_GO, 0, 0, 0 };

        if (fd < 0)
          {
            runner_fail (run, g_strdup ("no FUSE fd received from the sandbox"));
            break;
          }
        clear_fd (&run->reserved_fd);
        fsg_trace ("R", "FUSE fd received; fork D");
        if (!start_daemon (run, fd, &error))
          {
            close (fd);
            runner_fail (run, g_strdup (error->message));
            break;
          }
        close (fd);
        fd = -1;
        run->go_us = g_get_monotonic_time ();
        if (fsg_policy_timeout_ms (run->policy) > 0)
          run->timeout_deadline = run->go_us + fsg_policy_timeout_ms (run->policy) * 1000;
        fsg_trace ("R", "GO");
        if (!send_to_setup (run, &go))
          break;
        if (!wait_daemon_ready (run, &error))
          runner_fail (run, g_strdup (error->message));
        fsg_trace ("R", "D ready");
        break;
      }
    case FSG_MSG_INIT_PID:
      run->init_pid = msg.value;
      if (fd >= 0 && run->init_pidfd < 0)
        {
          run->init_pidfd = fd;
          fd = -1;
        }
      if (run->interrupted)
        kill_sandbox (run);
      break;
    case FSG_MSG_PTY_MASTER:
      if (fd >= 0 && run->pty_master < 0)
        {
          setup_pty (run, fd);
          fd = -1;
        }
      break;
    case FSG_MSG_LISTENER:
      run->command_started = TRUE;
      if (fd >= 0 && run->listener < 0)
        {
          run->listener = fd;
          fd = -1;
        }
      break;
    case FSG_MSG_NO_LISTENER:
      run->command_started = TRUE;
      run->notify_unavailable = TRUE;
      break;
    case FSG_MSG_BIND_SKIPPED:
      if (msg.value >= 0 && (guint) msg.value < run->spec.n_binds && run->bind_skipped != NULL)
        {
          run->bind_skipped[msg.value] = TRUE;
          if (run->opts->verbose)
            g_printerr ("fsgate-run: hybrid view: %s changed since the plan: the daemon serves it\n",
                        run->spec.binds[msg.value].source);
        }
      break;
    case FSG_MSG_LANDLOCK:
      run->landlock = TRUE;
      break;
    case FSG_MSG_SYNCED:
      fsg_trace ("R", "sandbox synced");
      forget_init (run); /* S reaped it before the sync */
      if (run->have_status || run->setup_failed)
        sandbox_ended (run);
      break;
    case FSG_MSG_PROC:
      run->proc_kind = msg.value;
      if (msg.value == FSG_PROC_CONTAINER) /* never silently (proc.c) */
        g_printerr ("fsgate-run: %s\n", FSG_PROC_FALLBACK_WARNING);
      break;
    case FSG_MSG_SETUP_ERROR:
      if (!run->setup_failed)
        {
          run->setup_failed = TRUE;
          run->setup_stage = msg.stage;
          run->setup_err = msg.err;
          run->setup_value = msg.value;
        }
      break;
    case FSG_MSG_EXEC_ERROR:
      run->exec_failed = TRUE;
      run->exec_err = msg.err;
      break;
    case FSG_MSG_STATUS:
      fsg_trace ("R", "status");
      run->have_status = TRUE;
      run->cmd_status = msg.value;
      run->end_us = g_get_monotonic_time ();
      break;
    default:
      break;
    }
  if (fd >= 0)
    close (fd);
}

static void handle_ctl (FsgRun *run);

/* The sandbox is gone: S was reaped, or it said that I (and with it every
 * process of the sandbox) is gone and the view's dirty data is on the host
 * (FSG_MSG_SYNCED), before tearing the namespaces down. */
static void
sandbox_ended (FsgRun *run)
{
  if (run->sandbox_gone)
    return;
  run->sandbox_gone = TRUE;
  if (run->end_us == 0)
    run->end_us = g_get_monotonic_time ();
  run->drain_deadline = g_get_monotonic_time () + DRAIN_TIMEOUT_US;
}

/* Handle every control message already queued. */
static void
drain_ctl (FsgRun *run)
{
  while (run->ctl >= 0)
    {
      struct pollfd pfd = { run->ctl, POLLIN, 0 };

      if (poll (&pfd, 1, 0) <= 0)
        break;
      handle_ctl (run);
    }
}

static void
reap (FsgRun *run)
{
  int status;
  pid_t p;
  gboolean daemon_gone = FALSE;

  while ((p = waitpid (-1, &status, WNOHANG)) > 0)
    {
      if (p == run->setup_pid)
        {
          fsg_trace ("R", "S reaped");
          /* what S sent before it exited first (I's pid among it: the
           * audit pipe is read from now on, and tells I's records apart) */
          drain_ctl (run);
          run->setup_reaped = TRUE;
          forget_init (run);
          sandbox_ended (run);
        }
      else if (p == run->daemon_pid)
        {
          run->daemon_reaped = TRUE;
          run->daemon_wait_status = status;
          daemon_gone = TRUE;
        }
    }
  if (!daemon_gone)
    return;
  /* The daemon also ends, normally, when the sandbox's mount namespace goes
   * away after the command: read what the sandbox sent before deciding. */
  drain_ctl (run);
  /* A daemon killed by a signal R did not send died under the command, even
   * when the command has already exited: it exited because its view broke
   * (ECONNABORTED), so its status must not pass for its own. */
  if (!run->timed_out && run->failure == NULL && !run->setup_failed &&
      ((WIFSIGNALED (run->daemon_wait_status) && !run->daemon_killed) ||
       (!run->sandbox_gone && !run->have_status)))
    {
      status = run->daemon_wait_status;
      run->daemon_died = TRUE;
      run->failure = WIFSIGNALED (status)
        ? g_strdup_printf ("the FUSE daemon (pid %d) was killed by signal %d during the run; "
                           "the command was stopped",
                           (int) run->daemon_pid, WTERMSIG (status))
        : g_strdup_printf ("the FUSE daemon (pid %d) exited with status %d during the run; "
                           "the command was stopped",
                           (int) run->daemon_pid, WEXITSTATUS (status));
      kill_sandbox (run);
    }
}

static void
handle_signals (FsgRun *run)
{
  struct signalfd_siginfo si;

  while (FSG_RETRY (read (run->sigfd, &si, sizeof si)) == sizeof si)
    {
      int sig = si.ssi_signo;

      switch (sig)
        {
        case SIGCHLD:
          reap (run);
          break;
        case SIGWINCH:
          sync_winsize (run);
          break;
        case SIGINT:
        case SIGTERM:
        case SIGHUP:
        case SIGQUIT:
          /* once the sandbox is gone, we only wait for a stalled reader of
           * its output: a signal (now or before the end) ends that wait, as
           * a timeout does */
          run->abandoned = sig;
          if (run->sandbox_gone)
            {
              run->abandon_at = g_get_monotonic_time (); /* now */
              break;
            }
          if (!signal_init (run, sig))
            {
              run->interrupted = sig;
              kill_sandbox (run);
            }
          break;
        default:
          break;
        }
    }
}

static void
on_deadlines (FsgRun *run, gint64 now)
{
  if (run->timeout_deadline && now >= run->timeout_deadline && !run->sandbox_gone)
    {
      run->timeout_deadline = 0;
      run->timed_out = TRUE;
      if (!signal_init (run, SIGUSR1))
        kill_sandbox (run);
      run->kill_deadline = now + fsg_policy_kill_after_ms (run->policy) * 1000;
    }
  if (run->kill_deadline && now >= run->kill_deadline)
    {
      run->kill_deadline = 0;
      kill_sandbox (run);
      run->abort_deadline = now + G_USEC_PER_SEC;
    }
  /* Still there a second after SIGKILL: something waits on a FUSE request
   * the daemon does not answer. Killing the daemon aborts the connection,
   * every such request fails, and the processes can die. */
  if (run->abort_deadline && now >= run->abort_deadline)
    {
      run->abort_deadline = 0;
      if (!run->sandbox_gone && run->daemon_pid > 0 && !run->daemon_reaped)
        {
          run->daemon_killed = TRUE;
          kill (run->daemon_pid, SIGKILL);
        }
    }
}

static gboolean outputs_open (FsgRun *run);

static gint64
next_deadline (FsgRun *run)
{
  gint64 next = G_MAXINT64;

  if (run->timeout_deadline)
    next = MIN (next, run->timeout_deadline);
  if (run->kill_deadline)
    next = MIN (next, run->kill_deadline);
  if (run->abort_deadline)
    next = MIN (next, run->abort_deadline);
  /* after the drain deadline, only a timed-out run's pending output and
   * pipes still open have anything to wait for */
  if (run->sandbox_gone && (outputs_open (run) || run->timed_out))
    next = MIN (next, run->drain_deadline);
  if (run->sandbox_gone && run->abandoned && run->abandon_at > 0 && live_pending (run))
    next = MIN (next, run->abandon_at);
  return next;
}

static void stop_daemon (FsgRun *run);

static gboolean
outputs_open (FsgRun *run)
{
  return run->out_rd >= 0 || run->err_rd >= 0 || run->pty_master >= 0;
}

static void
supervise (FsgRun *run)
{
  while (TRUE)
    {
      struct pollfd pfds[10];
      int idx_ctl = -1, idx_sig, idx_lis = -1, idx_aud = -1, idx_out = -1, idx_err = -1,
          idx_pty = -1, idx_in = -1, idx_live1 = -1, idx_live2 = -1;
      int n = 0;
      gint64 now = g_get_monotonic_time ();
      gint64 next;
      int timeout_ms;

      on_deadlines (run, now);
      if (run->sandbox_gone)
        {
          /* The sandbox is gone: wait for its pipes (at most the drain
           * deadline: a descendant may hold them), then for our readers to
           * take what is pending, as the command would have waited on its
           * write natively; a timed-out run does not wait for its readers. */
          if (outputs_open (run) && now >= run->drain_deadline)
            {
              clear_fd (&run->out_rd);
              clear_fd (&run->err_rd);
              clear_fd (&run->pty_master);
            }
          /* the view's daemon has nothing left to serve: stop it now, not
           * after a wait for our readers */
          if (run->daemon_pid > 0 && !run->daemon_reaped)
            stop_daemon (run);
          /* a signal sent before the end gives the readers 2 s to take
           * what the command wrote last (its trap's output) */
          if (run->abandoned && run->abandon_at == 0)
            run->abandon_at = now + 2 * G_USEC_PER_SEC;
          if (live_pending (run)
              && (run->timed_out || (run->abandoned && now >= run->abandon_at)))
            drop_live (run);
          if (!outputs_open (run) && !live_pending (run))
            break;
        }
      next = next_deadline (run);
      timeout_ms = next == G_MAXINT64 ? -1 : (int) MAX (0, (next - now + 999) / 1000);

#define WATCH(var, fdv, ev)                                                            \
  do                                                                                   \
    {                                                                                  \
      var = n;                                                                         \
      pfds[n].fd = (fdv);                                                              \
      pfds[n].events = (ev);                                                           \
      pfds[n].revents = 0;                                                             \
      n++;                                                                             \
    }                                                                                  \
  while (0)
      idx_sig = n;
      WATCH (idx_sig, run->sigfd, POLLIN);
      if (run->ctl >= 0 && !run->sandbox_gone)
        WATCH (idx_ctl, run->ctl, POLLIN);
      if (run->listener >= 0)
        WATCH (idx_lis, run->listener, POLLIN);
      if (audit_readable (run))
        WATCH (idx_aud, run->audit_rd, POLLIN);
      if (run->out_rd >= 0 && !live_full (run, 1))
        WATCH (idx_out, run->out_rd, POLLIN);
      if (run->err_rd >= 0 && !live_full (run, 2))
        WATCH (idx_err, run->err_rd, POLLIN);
      if (run->pty_master >= 0)
        WATCH (idx_pty, run->pty_master,
               (live_full (run, 1) ? 0 : POLLIN) | (run->to_pty->len > 0 ? POLLOUT : 0));
      if (run->live[1].pending->len > 0)
        WATCH (idx_live1, 1, POLLOUT);
      if (run->live[2].pending->len > 0)
        WATCH (idx_live2, 2, POLLOUT);
      if (run->pty_master >= 0 && run->stdin_open && run->to_pty->len == 0 && !run->sandbox_gone)
        WATCH (idx_in, 0, POLLIN);
#undef WATCH

      if (poll (pfds, n, timeout_ms) < 0)
        {
          if (errno == EINTR)
            continue;
          runner_fail (run, g_strdup_printf ("poll: %s", g_strerror (errno)));
          break;
        }
      if (pfds[idx_sig].revents)
        handle_signals (run);
      if (idx_ctl >= 0 && pfds[idx_ctl].revents)
        handle_ctl (run);
      if (idx_lis >= 0 && pfds[idx_lis].revents)
        {
          if (pfds[idx_lis].revents & POLLIN)
            handle_notification (run);
          else
            clear_fd (&run->listener); /* every filtered process is gone */
        }
      if (idx_aud >= 0 && pfds[idx_aud].revents && run->audit_rd >= 0)
        read_audit (run);
      if (idx_out >= 0 && pfds[idx_out].revents && run->out_rd >= 0)
        forward_output (run, &run->out_rd, 1, run->capturing ? &run->cap_out : NULL);
      if (idx_err >= 0 && pfds[idx_err].revents && run->err_rd >= 0)
        forward_output (run, &run->err_rd, 2, run->capturing ? &run->cap_err : NULL);
      if (idx_in >= 0 && pfds[idx_in].revents)
        pump_stdin (run);
      if (idx_pty >= 0 && run->pty_master >= 0)
        {
          if (pfds[idx_pty].revents & (POLLIN | POLLHUP | POLLERR))
            forward_output (run, &run->pty_master, 1, NULL);
        }
      if (idx_live1 >= 0 && pfds[idx_live1].revents)
        {
          if (pfds[idx_live1].revents & POLLOUT)
            flush_live (run, 1);
          else
            live_reader_gone (run, 1); /* POLLERR/POLLHUP */
        }
      if (idx_live2 >= 0 && pfds[idx_live2].revents)
        {
          if (pfds[idx_live2].revents & POLLOUT)
            flush_live (run, 2);
          else
            live_reader_gone (run, 2); /* POLLERR/POLLHUP */
        }
      if (run->pty_master >= 0 && run->to_pty->len > 0)
        flush_pty (run);
    }
}

/* ---- The daemon after the run ----------------------------------------------- */

static void
stop_daemon (FsgRun *run)
{
  gint64 deadline;

  if (run->daemon_pid <= 0 || run->daemon_reaped)
    goto drain;
  /* Every process of the sandbox is gone and the view is synced (or S was
   * reaped, and the view's mount namespace with it): the daemon has nothing
   * left to serve and keeps no state worth a graceful stop. S may still be
   * tearing its namespaces down; unmounting needs no daemon. */
  fsg_trace ("R", "kill D");
  kill (run->daemon_pid, SIGKILL);
  deadline = g_get_monotonic_time () + G_USEC_PER_SEC;
  while (!run->daemon_reaped && g_get_monotonic_time () < deadline)
    {
      int status;
      pid_t p = waitpid (run->daemon_pid, &status, 0);

      if (p == run->daemon_pid || (p < 0 && errno == ECHILD))
        run->daemon_reaped = TRUE;
    }
drain:
  if (run->audit_rd >= 0)
    {
      fcntl (run->audit_rd, F_SETFL, 0);
      read_audit (run);
      if (run->audit_rd >= 0)
        read_audit (run);
    }
}

/* ---- Report ------------------------------------------------------------------ */

static void
write_records (FsgJsonWriter *w, GPtrArray *records)
{
  fsg_json_begin_array (w);
  for (guint i = 0; i < records->len; i++)
    fsg_json_write_object (w, records->pdata[i]);
  fsg_json_end_array (w);
}

static void
add_capture (FsgJsonWriter *w, const char *key, const FsgCapture *c)
{
  g_autofree char *text = fsg_capture_to_utf8 (c->data->data, c->data->len);
  g_autofree char *dropped = g_strconcat (key, "_dropped_bytes", NULL);

  fsg_json_key (w, key);
  fsg_json_string (w, text);
  fsg_json_key (w, dropped);
  fsg_json_int (w, c->dropped);
}

static void
add_policy_summary (FsgJsonWriter *w, const FsgPolicy *policy)
{
  guint n = 0;
  const FsgRule *const *rules = fsg_policy_rules (policy, &n);

  fsg_json_begin_object (w);
  fsg_json_key (w, "profile");
  fsg_json_string (w, fsg_policy_profile (policy));
  fsg_json_key (w, "network");
  fsg_json_bool (w, fsg_policy_network_allowed (policy));
  fsg_json_key (w, "timeout_ms");
  fsg_json_int (w, fsg_policy_timeout_ms (policy));
  fsg_json_key (w, "kill_after_ms");
  fsg_json_int (w, fsg_policy_kill_after_ms (policy));
  fsg_json_key (w, "output_cap");
  fsg_json_int (w, fsg_policy_output_cap (policy));
  fsg_json_key (w, "rules");
  fsg_json_begin_array (w);
  for (guint i = 0; i < n; i++)
    {
      fsg_json_begin_object (w);
      fsg_json_key (w, "kind");
      fsg_json_string (w, fsg_rule_kind_to_key (rules[i]->kind));
      fsg_json_key (w, "pattern");
      fsg_json_string (w, rules[i]->path ? rules[i]->path : rules[i]->pattern);
      fsg_json_key (w, "origin");
      fsg_json_string (w, rules[i]->origin ? rules[i]->origin : "");
      fsg_json_end_object (w);
    }
  fsg_json_end_array (w);
  fsg_json_end_object (w);
}

/* The report goes into the directory opened before the command started,
 * never through a path the command could have changed: a new file there
 * (O_EXCL, O_NOFOLLOW), renamed over the report's name (a symlink the
 * command put there is replaced, not followed). */
static gboolean
write_report_file (FsgRun *run, const char *text, GError **error)
{
  g_autofree char *tmp = NULL;
  fsg_autofd int fd = -1;
  int r;

  if (run->report_dirfd < 0)
    return fsg_throw (error, "its directory was never opened");
  for (int i = 0; i < 100 && fd < 0; i++)
    {
      g_free (tmp);
      tmp = g_strdup_printf (".%.200s.%08x", run->report_name, g_random_int ());
      fd = openat (run->report_dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0666);
      if (fd < 0 && errno != EEXIST)
        return fsg_throw_errno (error, "create a file in the report's directory");
    }
  if (fd < 0)
    return fsg_throw_errno (error, "create a file in the report's directory");
  r = fsg_write_all (fd, text, strlen (text));
  if (r == 0 && fsync (fd) < 0)
    r = -errno;
  if (r == 0 && renameat (run->report_dirfd, tmp, run->report_dirfd, run->report_name) < 0)
    r = -errno;
  if (r < 0)
    {
      unlinkat (run->report_dirfd, tmp, 0);
      return fsg_throw_errno_value (error, -r, "write '%s'", run->report_name);
    }
  return TRUE;
}

static gboolean
write_report (FsgRun *run, int exit_code, int signal_no, const char *reason,
              const char *message, GError **error)
{
  GString *out = g_string_new (NULL);
  g_autofree char *text = NULL;
  gint64 end = run->end_us ? run->end_us : g_get_monotonic_time ();
  FsgJsonWriter writer, *w = &writer;

  fsg_json_writer_init (w, out, TRUE);

  fsg_json_begin_object (w);
  fsg_json_key (w, "exit_code");
  fsg_json_int (w, exit_code);
  fsg_json_key (w, "signal");
  if (signal_no > 0)
    fsg_json_int (w, signal_no);
  else
    fsg_json_null (w);
  fsg_json_key (w, "timed_out");
  fsg_json_bool (w, run->timed_out);
  fsg_json_key (w, "duration_ms");
  fsg_json_int (w, (end - run->start_us) / 1000);
  fsg_json_key (w, "reason");
  fsg_json_string (w, reason);
  fsg_json_key (w, "error");
  if (message)
    fsg_json_string (w, message);
  else
    fsg_json_null (w);
  fsg_json_key (w, "sandbox_denied");
  fsg_json_bool (w, run->n_denials > 0);
  fsg_json_key (w, "denials");
  write_records (w, run->denials);
  fsg_json_key (w, "denials_total");
  fsg_json_int (w, run->n_denials);
  fsg_git_report_write (w, &run->git);
  fsg_json_key (w, "denials_unlisted");
  fsg_json_int (w, run->denials_unlisted);
  fsg_json_key (w, "setup_denials");
  write_records (w, run->setup_denials);
  if (run->opts->filter_terminal)
    {
      fsg_json_key (w, "terminal_sequences_filtered");
      fsg_json_int (w, (run->term[1].seq ? run->term[1].dropped : 0)
                                       + (run->term[2].seq ? run->term[2].dropped : 0));
    }
  fsg_json_key (w, "seccomp_notify");
  fsg_json_bool (w, !run->notify_unavailable);
  fsg_json_key (w, "proc");
  if (fsg_proc_kind_name (run->proc_kind) != NULL)
    fsg_json_string (w, fsg_proc_kind_name (run->proc_kind));
  else
    fsg_json_null (w);
  fsg_json_key (w, "landlock");
  fsg_json_bool (w, run->landlock);
  fsg_json_key (w, "hybrid");
  if (!run->hybrid_planned)
    fsg_json_null (w);
  else
    {
      fsg_json_begin_object (w);
      fsg_json_key (w, "bound");
      fsg_json_begin_array (w);
      /* only when I made them all: a run that failed before has none */
      for (guint i = 0; run->command_started && i < run->spec.n_binds; i++)
        if (!run->bind_skipped[i])
          fsg_json_string (w, run->spec.binds[i].source);
      fsg_json_end_array (w);
      if (run->hybrid_off != NULL)
        {
          fsg_json_key (w, "off");
          fsg_json_string (w, run->hybrid_off);
        }
      fsg_json_end_object (w);
    }
  fsg_json_key (w, "policy");
  add_policy_summary (w, run->policy);
  if (run->capturing)
    {
      g_autoptr(GByteArray) agg = NULL;
      g_autofree char *agg_text = NULL;

      fsg_capture_finish (&run->cap_out);
      fsg_capture_finish (&run->cap_err);
      agg = fsg_capture_aggregate (&run->cap_out, &run->cap_err, fsg_policy_output_cap (run->policy));
      agg_text = fsg_capture_to_utf8 (agg->data, agg->len);

      add_capture (w, "stdout", &run->cap_out);
      add_capture (w, "stderr", &run->cap_err);
      fsg_json_key (w, "aggregated_output");
      fsg_json_string (w, agg_text);
    }
  fsg_json_end_object (w);
  text = g_string_free (out, FALSE);
  if (g_str_equal (run->opts->json_path, "-"))
    {
      g_autofree char *line = g_strconcat (text, "\n", NULL);
      int r = fsg_write_all (1, line, strlen (line));
      if (r < 0)
        return fsg_throw_errno_value (error, -r, "writing the report to stdout");
      return TRUE;
    }
  {
    g_autofree char *line = g_strconcat (text, "\n", NULL);
    return write_report_file (run, line, error);
  }
}

/* ---- fsg_run ----------------------------------------------------------------- */

static gboolean write_report (FsgRun *run, int exit_code, int signal_no, const char *reason,
                              const char *message, GError **error);
static void run_clear (FsgRun *run);

/* A failure before the sandbox exists: one line, the report, 125. */
static int
early_fail (FsgRun *run, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static int
early_fail (FsgRun *run, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;
  g_autoptr(GError) error = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_printerr ("fsgate-run: %s\n", msg);
  if (run->opts->json_path != NULL
      && !write_report (run, FSG_EXIT_SETUP, 0, "setup-error", msg, &error))
    g_printerr ("fsgate-run: writing the report: %s\n", error->message);
  run_clear (run);
  return FSG_EXIT_SETUP;
}

/* Every id that exists in our own user namespace, mapped to itself. */
static char *
identity_map (const char *path)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  GString *map = g_string_new (NULL);

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return g_string_free (map, TRUE), NULL;
  lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      unsigned long inner, outer, count;

      if (sscanf (*l, "%lu %lu %lu", &inner, &outer, &count) == 3)
        g_string_append_printf (map, "%lu %lu %lu\n", inner, inner, count);
    }
  if (map->len == 0)
    return g_string_free (map, TRUE), NULL;
  return g_string_free (map, FALSE);
}

static gboolean
write_proc (pid_t pid, const char *file, const char *text, GError **error)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/%s", (int) pid, file);
  fsg_autofd int fd = open (path, O_WRONLY | O_CLOEXEC);
  int r;

  if (fd < 0)
    return fsg_throw_errno (error, "open '%s'", path);
  r = fsg_write_all (fd, text, strlen (text));
  if (r < 0)
    return fsg_throw_errno_value (error, -r, "write '%s'", path);
  return TRUE;
}

static void
run_clear (FsgRun *run)
{
  restore_tty (run);
  clear_fd (&run->ctl);
  clear_fd (&run->sigfd);
  clear_fd (&run->listener);
  clear_fd (&run->audit_rd);
  clear_fd (&run->out_rd);
  clear_fd (&run->err_rd);
  clear_fd (&run->pty_master);
  clear_fd (&run->reserved_fd);
  clear_fd (&run->report_dirfd);
  clear_fd (&run->daemon_ready_rd);
  clear_fd (&run->init_pidfd);
  g_clear_pointer (&run->bind_skipped, g_free);
  g_clear_pointer (&run->report_name, g_free);
  clear_fd (&run->spec.ctl_fd);
  if (run->spec.stdout_fd >= 0)
    clear_fd (&run->spec.stdout_fd);
  if (run->spec.stderr_fd >= 0)
    clear_fd (&run->spec.stderr_fd);
  fsg_syscall_filter_clear (&run->spec.prog_notify);
  fsg_syscall_filter_clear (&run->spec.prog_plain);
  g_strfreev ((char **) run->spec.envp);
  g_clear_pointer (&run->strings, g_ptr_array_unref);
  g_clear_pointer (&run->steps, g_array_unref);
  if (run->audit_buf != NULL)
    g_string_free (g_steal_pointer (&run->audit_buf), TRUE);
  g_clear_pointer (&run->denial_index, g_hash_table_unref);
  g_clear_pointer (&run->denials, g_ptr_array_unref);
  fsg_git_report_clear (&run->git);
  g_clear_pointer (&run->setup_denials, g_ptr_array_unref);
  g_clear_pointer (&run->stubs, g_ptr_array_unref);
  g_clear_pointer (&run->to_pty, g_byte_array_unref);
  fsg_term_filter_clear (&run->term[1]);
  fsg_term_filter_clear (&run->term[2]);
  g_clear_pointer (&run->live[1].pending, g_byte_array_unref);
  g_clear_pointer (&run->live[2].pending, g_byte_array_unref);
  if (run->capturing)
    {
      fsg_capture_clear (&run->cap_out);
      fsg_capture_clear (&run->cap_err);
    }
  g_clear_pointer (&run->failure, g_free);
}

static char *
resolve_cwd (const FsgRunOptions *opts, GError **error)
{
  g_autofree char *cwd = opts->cwd ? g_strdup (opts->cwd) : g_get_current_dir ();
  char *real = realpath (cwd, NULL);

  if (real == NULL)
    {
      g_autofree char *shown = g_strescape (cwd, NULL); /* one line, whatever the bytes */
      fsg_throw_errno (error, "working directory '%s'", shown);
      return NULL;
    }
  return real;
}

/* ---- fsg_run: prepare, spawn, supervise, report ------------------------------
 *
 * Each guarantee of a run lives in one of these four steps:
 *   prepare    everything that can fail before a process exists (working
 *              directory, /dev/fuse, filter, mount plan, pipes, id maps,
 *              signals, the report's directory): a failure is 125, nothing ran
 *   spawn      clone S and hand it the id maps
 *   supervise  the poll loop until the sandbox is gone and output drained,
 *              then the daemon stopped and the terminal restored
 *   report     the exit status, its reason, stderr and the --json report
 */

static gboolean
prepare_output (FsgRun *run, GError **error)
{
  const FsgRunOptions *opts = run->opts;

  for (int fd = 1; fd <= 2; fd++)
    if (opts->filter_terminal && isatty (fd))
      {
        run->filter_to[fd] = TRUE;
        fsg_term_filter_init (&run->term[fd]);
      }
  run->spec.want_pty = isatty (0);
  run->spec.stdout_pty = run->spec.want_pty && !opts->capture && isatty (1);
  run->spec.stderr_pty = run->spec.want_pty && !opts->capture && isatty (2);
  if (opts->capture)
    {
      int p[2];
      guint64 cap = fsg_policy_output_cap (opts->policy);

      fsg_capture_init (&run->cap_out, cap);
      fsg_capture_init (&run->cap_err, cap);
      run->capturing = TRUE;
      if (pipe2 (p, O_CLOEXEC) < 0)
        return fsg_throw_errno (error, "preparing the run: pipe");
      run->out_rd = p[0];
      run->spec.stdout_fd = p[1];
      if (pipe2 (p, O_CLOEXEC) < 0)
        return fsg_throw_errno (error, "preparing the run: pipe");
      run->err_rd = p[0];
      run->spec.stderr_fd = p[1];
    }

  /* Never hand a host terminal to the command: it could read what the user
   * types or answer terminal queries in the user's shell. Without a pty of
   * its own (stdin is not a terminal), a terminal on fd 1 or 2 becomes a
   * pipe that the runner forwards. */
  if (!run->spec.want_pty)
    {
      int p[2];

      if (run->out_rd < 0 && isatty (1))
        {
          if (pipe2 (p, O_CLOEXEC) < 0)
            return fsg_throw_errno (error, "preparing the run: pipe");
          run->out_rd = p[0];
          run->spec.stdout_fd = p[1];
        }
      if (run->err_rd < 0 && isatty (2))
        {
          if (pipe2 (p, O_CLOEXEC) < 0)
            return fsg_throw_errno (error, "preparing the run: pipe");
          run->err_rd = p[0];
          run->spec.stderr_fd = p[1];
        }
    }
  return TRUE;
}

/* The id maps S gets: root maps every id to itself when /proc shows our own
 * pid namespace (R has to write through /proc/PID); others can only map
 * themselves. */
static void
prepare_id_maps (FsgRun *run)
{
  g_autofree char *self = g_file_read_link ("/proc/self", NULL);
  g_autofree char *mine = g_strdup_printf ("%d", (int) getpid ());
  char *u = NULL, *g = NULL;

  run->spec.runner_maps = geteuid () == 0 && self != NULL && g_str_equal (self, mine);
  if (run->spec.runner_maps)
    {
      u = identity_map ("/proc/self/uid_map");
      g = identity_map ("/proc/self/gid_map");
      if (u == NULL || g == NULL)
        {
          g_clear_pointer (&u, g_free);
          g_clear_pointer (&g, g_free);
          run->spec.runner_maps = FALSE;
        }
    }
  if (u == NULL)
    {
      u = g_strdup_printf ("%u %u 1\n", (unsigned) run->spec.uid, (unsigned) run->spec.uid);
      g = g_strdup_printf ("%u %u 1\n", (unsigned) run->spec.gid, (unsigned) run->spec.gid);
    }
  run->spec.uid_map = keep_str (run, u);
  run->spec.gid_map = keep_str (run, g);
}

/* --json FILE: open FILE's directory now, before the command can replace
 * it (or a component of its path) by a symlink. */
static gboolean
prepare_report (FsgRun *run, GError **error)
{
  const char *path = run->opts->json_path;
  g_autofree char *dir = NULL;

  if (path == NULL || g_str_equal (path, "-"))
    return TRUE;
  dir = g_path_get_dirname (path);
  run->report_name = g_path_get_basename (path);
  /* component by component, never following a symlink: main.c refused a
   * path through an untrusted symlink, so the trusted ones (/var/run ->
   * /run) are resolved by realpath() and what is opened is that real path;
   * a symlink that appears there meanwhile is ELOOP/ENOTDIR, not followed */
  {
    g_autofree char *real = realpath (dir, NULL);
    g_auto (GStrv) comps = NULL;
    int fd;

    if (real == NULL)
      return fsg_throw_errno (error, "--json: the report's directory '%s'", dir);
    fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    comps = g_strsplit (real, "/", -1);
    for (guint i = 0; fd >= 0 && comps[i] != NULL; i++)
      {
        int next;

        if (comps[i][0] == '\0')
          continue;
        next = openat (fd, comps[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close (fd);
        fd = next;
      }
    if (fd < 0)
      return fsg_throw_errno (error, "--json: the report's directory '%s' (opened without "
                              "following symlinks)", dir);
    run->report_dirfd = fd;
  }
  return TRUE;
}

/* Everything that can fail before a process exists. On failure, @error is
 * the one line to print (with the fix); nothing has run. */
static gboolean
run_prepare (FsgRun *run, GError **error)
{
  const FsgRunOptions *opts = run->opts;
  gboolean net = fsg_policy_network_allowed (opts->policy);
  g_autoptr(GError) local = NULL;
  const char *cwd;
  sigset_t mask;
  int ctl[2];
  gboolean mount_tmp;

  if (!prepare_report (run, error))
    return FALSE;
  /* Fail before anything starts when the basics are missing. */
  cwd = resolve_cwd (opts, &local);
  if (cwd == NULL)
    return fsg_throw (error, "%s. Fix: use -C DIR with an existing directory", local->message);
  keep_str (run, (char *) cwd); /* the spec points to it */
  if (fsg_policy_walk (opts->policy, cwd).access < FSG_ACCESS_RO)
    {
      FsgPathState st = fsg_policy_walk (opts->policy, cwd);
      g_autofree char *why = fsg_path_state_describe (opts->policy, &st);
      if (st.access == FSG_ACCESS_DENY)
        return fsg_throw (error, "working directory '%s' is denied in the view (%s), and no "
                          "--ro/--rw can reopen a denied path. Fix: run from another directory "
                          "(-C DIR), or build the policy without that rule (a copy of the "
                          "profile with -p, see fsgate-policy(5))", cwd, why);
      return fsg_throw (error, "working directory '%s' is not in the view (%s). "
                        "Fix: add it with --ro DIR or --rw DIR, or choose another one with -C DIR",
                        cwd, why);
    }
  {
    fsg_autofd int fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0)
      {
        g_autofree char *line = NULL;
        fsg_doctor_check_fuse (&line);
        return fsg_throw (error, "%s", line);
      }
  }

  run->spec.uid = getuid ();
  run->spec.gid = getgid ();
  run->spec.runner_pid = getpid ();
  run->spec.scratch = "/tmp";
  run->spec.view_dir = "/tmp/root";
  run->spec.cwd = cwd;
  run->spec.proc_fallback_ok = !opts->no_proc_fallback;
  run->spec.argv = opts->argv;
  fsg_trace ("R", "prepare: cwd, /dev/fuse");
  run->spec.envp = build_environ (opts->policy, opts->verbose > 0);
  fsg_trace ("R", "prepare: environment");
  for (char *const *e = run->spec.envp; *e; e++)
    if (g_str_has_prefix (*e, "PATH="))
      run->spec.path_env = *e + 5;
  run->spec.last_cap = read_last_cap ();
  if (opts->pass_fds != NULL)
    {
      run->spec.pass_fds = (const int *) opts->pass_fds->data;
      run->spec.n_pass_fds = opts->pass_fds->len;
    }

  if (!fsg_syscall_filter_build (net, &run->spec.prog_notify, &run->spec.prog_plain, &local))
    {
      g_autofree char *line = NULL;
      fsg_doctor_check_seccomp (&line);
      return fsg_throw (error, "building the seccomp filter: %s (%s)", local->message, line);
    }
  if (run->spec.prog_notify.len > 0
      && syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &run->notif_sizes) < 0)
    fsg_syscall_filter_clear (&run->spec.prog_notify); /* no notify: plain EACCES */

  /* /tmp is private unless the policy shows the host's /tmp itself; roots
   * below it go on top (extra-mounts.c) */
  fsg_trace ("R", "prepare: seccomp");
  mount_tmp = fsg_policy_run_private_tmp (opts->policy);
  {
    g_auto (GStrv) tmp_roots = fsg_policy_run_tmp_roots (opts->policy);
    run->mount_tmp = mount_tmp && tmp_roots[0] == NULL; /* the daemon stubs /tmp */
  }
  if (!plan_host_flags (run, opts->policy, run->mount_tmp, error))
    return FALSE;
  fsg_trace ("R", "prepare: host flags");
  build_mount_plan (run, mount_tmp);
  fsg_trace ("R", "prepare: mount plan");
  run->hybrid_off = fsg_hybrid_prepare (&run->spec, run->strings, opts->policy,
                                        opts->verbose > 0);
  run->hybrid_planned = TRUE;
  run->bind_skipped = g_new0 (gboolean, run->spec.n_binds + 1);
  run->spec.steps = (const FsgMountStep *) run->steps->data;
  run->spec.n_steps = run->steps->len;

  fsg_trace ("R", "prepare: hybrid plan");
  if (!prepare_output (run, error))
    return FALSE;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0)
    return fsg_throw_errno (error, "preparing the run: socketpair");
  run->ctl = ctl[0];
  run->spec.ctl_fd = ctl[1];
  run->spec.runner_ctl_fd = ctl[0];

  run->reserved_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (run->reserved_fd < 0)
    return fsg_throw_errno (error, "preparing the run: open '/dev/null'");
  run->spec.fuse_fd_num = run->reserved_fd;
  run->spec.fuse_data = keep_str (run, fsg_fs_mount_data (run->reserved_fd, run->spec.uid,
                                                          run->spec.gid));
  prepare_id_maps (run);

  run->spec.close_in_sandbox[0] = run->ctl;
  run->spec.close_in_sandbox[1] = run->out_rd;
  run->spec.close_in_sandbox[2] = run->err_rd;

  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGHUP);
  sigaddset (&mask, SIGQUIT);
  sigaddset (&mask, SIGWINCH);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  signal (SIGPIPE, SIG_IGN);
  run->sigfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (run->sigfd < 0)
    return fsg_throw_errno (error, "preparing the run: signalfd");
  run->spec.close_in_sandbox[3] = run->sigfd;
  fcntl (run->ctl, F_SETFL, O_NONBLOCK);
  return TRUE;
}

/* Clone S (see run.h) and give it its id maps. FALSE (with @error) when no
 * sandbox could be created; later failures go through runner_fail(). */
static gboolean
run_spawn (FsgRun *run, GError **error)
{
  int flags;

  /* Always a new user namespace, also as root: capabilities inside it are
   * worthless outside, and the command loses even those. The network, IPC
   * and UTS namespaces S makes after it has passed the FUSE fd, while D
   * starts (a network namespace takes about 0.5 ms to create); the command
   * is only started after them. */
  flags = CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD;
  run->spec.late_unshare = CLONE_NEWIPC | CLONE_NEWUTS;
  if (!fsg_policy_network_allowed (run->policy))
    run->spec.late_unshare |= CLONE_NEWNET;
  fsg_trace ("R", "prepared; clone S");
  run->setup_pid = syscall (SYS_clone, (unsigned long) flags, NULL, NULL, NULL, 0);
  if (run->setup_pid == 0)
    {
      sigset_t none;
      leave_process_group ();
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      fsg_sandbox_main_async_signal_safe (&run->spec);
    }
  if (run->setup_pid < 0)
    {
      g_autofree char *line = NULL;
      int errsv = errno;

      fsg_doctor_check_userns (&line);
      return fsg_throw (error, "clone(CLONE_NEWUSER|...): %s. %s", g_strerror (errsv), line);
    }
  clear_fd (&run->spec.ctl_fd);
  if (run->spec.stdout_fd >= 0)
    clear_fd (&run->spec.stdout_fd);
  if (run->spec.stderr_fd >= 0)
    clear_fd (&run->spec.stderr_fd);
  if (run->out_rd >= 0)
    fcntl (run->out_rd, F_SETFL, O_NONBLOCK);
  if (run->err_rd >= 0)
    fcntl (run->err_rd, F_SETFL, O_NONBLOCK);

  if (run->spec.runner_maps)
    {
      g_autoptr(GError) map_error = NULL;
      FsgCtlMsg maps = { FSG_MSG_MAPS_DONE, 0, 0, 0 };

      if (!write_proc (run->setup_pid, "uid_map", run->spec.uid_map, &map_error)
          || !write_proc (run->setup_pid, "gid_map", run->spec.gid_map, &map_error))
        runner_fail (run, g_strdup_printf ("writing the id maps: %s. Fix: %s", map_error->message,
                                           fsg_doctor_hint_for_stage (FSG_STAGE_WAIT_MAPS, 0)));
      else
        send_to_setup (run, &maps);
    }
  return TRUE;
}

/* Serve the run until the sandbox is gone and its output drained; then stop
 * the daemon (reading its last denials) and give the terminal back. */
static void
run_supervise (FsgRun *run)
{
  supervise (run);
  /* The loop ends when the sandbox is gone and output is drained; make
   * sure. S, once it said the sandbox is gone and synced, may still be
   * tearing its namespaces down: not waited for (they are private, and
   * nothing of the run is left in them). */
  kill_sandbox (run);
  while (!run->setup_reaped)
    {
      int st;
      pid_t p = waitpid (run->setup_pid, &st, run->sandbox_gone ? WNOHANG : 0);

      if (p == run->setup_pid || (p < 0 && errno == ECHILD))
        {
          run->setup_reaped = TRUE;
          forget_init (run);
        }
      else if (p == 0)
        break;
    }
  /* Messages sent just before the end (status, exec error). */
  drain_ctl (run);
  stop_daemon (run);
  restore_tty (run);
}

/* What the run ended with: the exit status of fsgate-run and why. */
typedef struct
{
  int exit_code;
  int signal_no;
  const char *reason;
  char *message; /* printed on stderr unless a timeout; NULL for none */
} FsgRunOutcome;

static void
run_outcome (FsgRun *run, FsgRunOutcome *out)
{
  out->exit_code = FSG_EXIT_SETUP;
  out->signal_no = 0;
  out->reason = "setup-error";
  out->message = NULL;

  if (run->daemon_died || (run->failure != NULL && !run->have_status))
    {
      out->reason = run->daemon_died ? "daemon-died" : "setup-error";
      out->exit_code = FSG_EXIT_SETUP;
      out->message = g_strdup (run->failure);
    }
  else if (run->timed_out)
    {
      out->reason = "timeout";
      out->exit_code = FSG_EXIT_TIMEOUT;
      if (run->have_status && WIFSIGNALED (run->cmd_status))
        out->signal_no = WTERMSIG (run->cmd_status);
      out->message = g_strdup_printf ("the command ran longer than %" G_GUINT64_FORMAT " ms",
                                      fsg_policy_timeout_ms (run->policy));
    }
  else if (run->setup_failed)
    {
      const char *where = "";

      out->reason = "setup-error";
      out->exit_code = FSG_EXIT_SETUP;
      if (run->setup_stage == FSG_STAGE_HYBRID && run->setup_value > 0
          && (guint) run->setup_value <= run->spec.n_binds)
        where = run->spec.binds[run->setup_value - 1].source;
      out->message = g_strdup_printf ("setup failed while %s%s%s: %s. Fix: %s",
                                      fsg_stage_describe (run->setup_stage),
                                      *where ? ", at " : "", where,
                                      g_strerror (run->setup_err),
                                      fsg_doctor_hint_for_stage (run->setup_stage,
                                                                 run->setup_err));
    }
  else if (run->exec_failed)
    {
      out->reason = "exec-error";
      out->exit_code = run->exec_err == ENOENT || run->exec_err == ENOTDIR ? FSG_EXIT_NOTFOUND
                                                                           : FSG_EXIT_NOEXEC;
      out->message = g_strdup_printf ("%s: %s%s", run->opts->argv[0], g_strerror (run->exec_err),
                                      out->exit_code == FSG_EXIT_NOTFOUND
                                        ? " (in the sandbox's view and PATH)" : "");
    }
  else if (run->have_status)
    {
      if (WIFEXITED (run->cmd_status))
        {
          out->reason = "exited";
          out->exit_code = WEXITSTATUS (run->cmd_status);
        }
      else if (WIFSIGNALED (run->cmd_status))
        {
          out->reason = "signaled";
          out->signal_no = WTERMSIG (run->cmd_status);
          out->exit_code = 128 + out->signal_no;
        }
    }
  else if (run->interrupted)
    {
      out->reason = "signaled";
      out->exit_code = 128 + run->interrupted;
      out->message = g_strdup_printf ("interrupted by signal %d during setup", run->interrupted);
    }
  else
    {
      out->reason = "setup-error";
      out->exit_code = FSG_EXIT_SETUP;
      out->message = g_strdup ("the sandbox ended before the command reported a status");
    }
}

/* review M7 (a): the command may have moved the report's directory away
 * and put another in its place (`mv out out.old; mkdir out; forge
 * out/report.json`). The report was written in the directory opened before
 * the command started; when the path names another one now, say where the
 * report really is. */
static void
report_where (FsgRun *run)
{
  g_autofree char *dir = g_path_get_dirname (run->opts->json_path);
  struct stat now, opened;
  char proc[64], buf[PATH_MAX];
  ssize_t n;

  if (fstat (run->report_dirfd, &opened) < 0)
    return;
  if (stat (dir, &now) == 0 && now.st_dev == opened.st_dev && now.st_ino == opened.st_ino)
    return;
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", run->report_dirfd);
  n = readlink (proc, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  g_printerr ("fsgate-run: warning: '%s' is no longer the directory the report was written in "
              "(the command moved or replaced it): the report is '%s/%s'%s; anything at '%s' "
              "was not written by fsgate-run\n",
              dir, n > 0 ? buf : "(unknown)", run->report_name,
              opened.st_nlink == 0 ? " (the directory was removed)" : "", run->opts->json_path);
}

/* Tell what happened (stderr, --json) and return fsgate-run's exit status. */
static int
run_report (FsgRun *run)
{
  const FsgRunOptions *opts = run->opts;
  g_autoptr(GError) error = NULL;
  FsgRunOutcome out;
  int exit_code;

  run_outcome (run, &out);
  exit_code = out.exit_code;
  if (out.message != NULL && !g_str_equal (out.reason, "timeout"))
    g_printerr ("fsgate-run: %s\n", out.message);
  if (opts->verbose)
    g_printerr ("fsgate-run: %s, exit %d, %" G_GINT64_FORMAT " ms (setup %" G_GINT64_FORMAT
                " ms), %" G_GUINT64_FORMAT " %s\n",
                out.reason, exit_code,
                ((run->end_us ? run->end_us : g_get_monotonic_time ()) - run->start_us) / 1000,
                run->go_us ? (run->go_us - run->start_us) / 1000 : -1, run->n_denials,
                run->n_denials == 1 ? "denial" : "denials");
  if (!opts->quiet)
    {
      g_autofree char *summary = fsg_denial_summary (run->denials, run->n_denials, opts->json_path);
      if (summary != NULL)
        g_printerr ("%s", summary);
    }
  /* A report that cannot be written (the command removed its directory,
   * made a directory of its name, filled the disk) never changes the exit
   * status: the command's status is the one thing the caller must get. */
  if (opts->json_path != NULL
      && !write_report (run, exit_code, out.signal_no, out.reason, out.message, &error))
    g_printerr ("fsgate-run: the report could not be written to '%s': %s; "
                "the exit status (%d) is the run's own\n",
                opts->json_path, error->message, exit_code);
  else if (opts->json_path != NULL && run->report_dirfd >= 0)
    report_where (run);
  g_free (out.message);
  return exit_code;
}

int
fsg_run (const FsgRunOptions *opts)
{
  FsgRun run_storage = { 0 };
  FsgRun *run = &run_storage;
  g_autoptr(GError) error = NULL;
  int exit_code;

  run->opts = opts;
  run->policy = opts->policy;
  run->start_us = g_get_monotonic_time ();
  run->ctl = run->sigfd = run->listener = run->audit_rd = -1;
  run->out_rd = run->err_rd = run->pty_master = run->reserved_fd = run->report_dirfd = -1;
  run->init_pidfd = -1;
  run->daemon_ready_rd = -1;
  run->spec.ctl_fd = run->spec.runner_ctl_fd = -1;
  run->spec.stdout_fd = run->spec.stderr_fd = -1;
  for (gsize i = 0; i < G_N_ELEMENTS (run->spec.close_in_sandbox); i++)
    run->spec.close_in_sandbox[i] = -1;
  run->strings = g_ptr_array_new_with_free_func (g_free);
  run->stubs = g_ptr_array_new_with_free_func (g_free);
  run->steps = g_array_new (FALSE, TRUE, sizeof (FsgMountStep));
  run->audit_buf = g_string_new (NULL);
  run->denials = g_ptr_array_new_with_free_func ((GDestroyNotify) fsg_json_object_free);
  run->setup_denials = g_ptr_array_new_with_free_func ((GDestroyNotify) fsg_json_object_free);
  fsg_git_report_init (&run->git);
  run->denial_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  run->to_pty = g_byte_array_new ();
  run->live[1].pending = g_byte_array_new ();
  run->live[2].pending = g_byte_array_new ();

  if (!run_prepare (run, &error) || !run_spawn (run, &error))
    return early_fail (run, "%s", error->message);
  run_supervise (run);
  fsg_trace ("R", "sandbox gone, daemon stopped");
  exit_code = run_report (run);
  run_clear (run);
  return exit_code;
}
