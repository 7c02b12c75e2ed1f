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

#include "common/fsg-util.h"
#include "fsgate/audit.h"
#include "fsgate/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
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
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

extern char **environ;

#define DRAIN_TIMEOUT_US (2 * G_USEC_PER_SEC)
#define DAEMON_READY_TIMEOUT_MS 10000
#define MAX_DENIALS 1000

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

  pid_t setup_pid, init_pid, daemon_pid;
  gboolean setup_reaped;
  gboolean daemon_reaped;
  int daemon_wait_status;

  gboolean have_status;
  int cmd_status;
  gboolean exec_failed;
  int exec_err;
  gboolean setup_failed;
  FsgStage setup_stage;
  int setup_err;
  char *failure; /* runner-side setup failure, printed as is */
  gboolean daemon_died;
  gboolean daemon_killed;   /* R itself killed D (abort after the kill deadline) */
  gboolean timed_out;
  int interrupted; /* signal that arrived before the command existed */
  gboolean notify_unavailable;
  FsgProcKind proc_kind; /* which /proc the view got (FSG_MSG_PROC) */
  gboolean mount_tmp;     /* private /tmp with no root below it: the daemon stubs /tmp */
  GPtrArray *stubs;       /* more directories the daemon shows empty (/run, /sys) */

  gint64 start_us, go_us, end_us;
  gint64 timeout_deadline, kill_deadline, drain_deadline, abort_deadline;

  FsgCapture cap_out, cap_err;
  gboolean capturing;
  gboolean live_dropped; /* our stdout/stderr stopped taking output */
  GString *audit_buf;
  JsonArray *denials;
  guint64 n_denials;

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

static GMutex audit_lock;


static void
daemon_audit (const FsgAuditEvent *event, gpointer user_data)
{
  int fd = GPOINTER_TO_INT (user_data);
  g_autofree char *text = NULL;
  g_autofree char *line = NULL;

  if (!event->denied)
    return;
  text = fsg_audit_event_to_json (event, FSG_AUDIT_FORMAT_REPORT);
  line = g_strconcat (text, "\n", NULL);
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

  fs = fsg_fs_new (run->policy, &fo, &error);
  if (fs == NULL || !fsg_fs_take_fuse_fd (fs, fuse_fd, &error) || !fsg_fs_start (fs, &error))
    {
      g_autofree char *msg = g_strdup_printf ("%s\n", error ? error->message : "unknown error");
      fsg_write_all (ready_wr, msg, strlen (msg));
      _exit (1);
    }
  fsg_write_all (ready_wr, "ok\n", 3);
  close (ready_wr);
  fsg_fs_wait (fs);
  _exit (0);
}

static gboolean
start_daemon (FsgRun *run, int fuse_fd, GError **error)
{
  int audit[2], ready[2];
  char buf[1024];
  gsize got = 0;
  struct pollfd pfd;
  gint64 deadline;

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

  deadline = g_get_monotonic_time () + DAEMON_READY_TIMEOUT_MS * 1000;
  pfd.fd = ready[0];
  pfd.events = POLLIN;
  while (got < sizeof buf - 1)
    {
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
      long n;

      if (left <= 0)
        break;
      if (poll (&pfd, 1, left) < 0 && errno != EINTR)
        break;
      n = FSG_RETRY (read (ready[0], buf + got, sizeof buf - 1 - got));
      if (n <= 0)
        break;
      got += n;
      if (memchr (buf, '\n', got) != NULL)
        break;
    }
  close (ready[0]);
  buf[got] = 0;
  if (g_str_equal (buf, "ok\n"))
    return TRUE;
  g_strchomp (buf);
  return fsg_throw (error, "the FUSE daemon did not start: %s",
                    got > 0 ? buf : "no answer (it died or hung)");
}

/* ---- Reporting helpers ---------------------------------------------------- */

static void
add_denial (FsgRun *run, JsonNode *node)
{
  run->n_denials++;
  if (json_array_get_length (run->denials) < MAX_DENIALS)
    json_array_add_element (run->denials, node);
  else
    json_node_unref (node);
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
      g_autoptr(JsonParser) parser = json_parser_new ();

      if (json_parser_load_from_data (parser, run->audit_buf->str, len, NULL)
          && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        add_denial (run, json_node_copy (json_parser_get_root (parser)));
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
  JsonObject *obj;
  JsonNode *node;

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
  obj = json_object_new ();
  json_object_set_string_member (obj, "source", "seccomp");
  json_object_set_string_member (obj, "operation", name ? name : "socket");
  json_object_set_string_member (obj, "path", family);
  json_object_set_string_member (obj, "rule", "network denied (network = false / --no-net)");
  json_object_set_int_member (obj, "errno", EACCES);
  json_object_set_int_member (obj, "pid", req->pid);
  if (comm)
    {
      /* the command sets its own name (PR_SET_NAME): never trust its bytes */
      g_autofree char *valid = g_utf8_make_valid (comm, -1);
      json_object_set_string_member (obj, "command", valid);
    }
  else
    json_object_set_null_member (obj, "command");
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (node, obj);
  add_denial (run, node);
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
 * terminal's own VEOF, as the command would have seen it natively. */
static void
drain_canonical_input (FsgRun *run)
{
  int fl = fcntl (0, F_GETFL);
  guint8 buf[4096];

  if (!(run->saved_tio.c_lflag & ICANON) || fl < 0 || fcntl (0, F_SETFL, fl | O_NONBLOCK) < 0)
    return;
  for (int i = 0; i < 64; i++)
    {
      long n = FSG_RETRY (read (0, buf, sizeof buf));

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
  fcntl (0, F_SETFL, fl);
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

static void on_deadlines (FsgRun *run, gint64 now);
static gint64 next_deadline (FsgRun *run);

/* Copy output to our own stdout/stderr without ever blocking the loop: a
 * reader that stops reading must not stop the timeout. Wait for room only
 * until the next deadline, write at most PIPE_BUF bytes per wake-up (a pipe
 * that polls writable takes that much without blocking), and once the run
 * is over its time or the reader is gone, drop the live copy (the capture,
 * if any, keeps everything up to its cap). */
static void
write_live (FsgRun *run, int out_fd, const guint8 *buf, gsize len)
{
  while (len > 0 && !run->live_dropped)
    {
      struct pollfd pfd = { .fd = out_fd, .events = POLLOUT };
      gint64 now = g_get_monotonic_time ();
      gint64 next = next_deadline (run);
      int timeout_ms = next == G_MAXINT64 ? -1 : (int) MAX (0, (next - now + 999) / 1000);
      int r = poll (&pfd, 1, timeout_ms);
      long n;

      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0)
        {
          on_deadlines (run, g_get_monotonic_time ());
          if (run->timed_out || run->setup_reaped)
            run->live_dropped = TRUE;
          continue;
        }
      if (r < 0 || (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
        {
          run->live_dropped = TRUE;
          break;
        }
      n = write (out_fd, buf, MIN (len, (gsize) PIPE_BUF));
      if (n < 0)
        {
          if (errno == EINTR || errno == EAGAIN)
            continue;
          run->live_dropped = TRUE;
          break;
        }
      buf += n;
      len -= (gsize) n;
    }
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
      write_live (run, out_fd, buf, (gsize) n);
      return;
    }
  if (n < 0 && errno == EAGAIN)
    return;
  clear_fd (fdp); /* EOF, or EIO on a pty whose slaves are gone */
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

static void
kill_sandbox (FsgRun *run)
{
  /* S takes I (PDEATHSIG), and I's death takes the pid namespace. */
  if (run->init_pid > 0 && !run->setup_reaped)
    kill (run->init_pid, SIGKILL);
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

static void
handle_ctl (FsgRun *run)
{
  FsgCtlMsg msg;
  int fd = -1;
  int r = fsg_ctl_recv (run->ctl, &msg, &fd);

  if (r <= 0)
    {
      if (r == 0 || (r != -EAGAIN && r != -EINTR))
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
        if (fsg_ctl_send (run->ctl, &go, -1) < 0)
          runner_fail (run, g_strdup_printf ("control socket: %s", g_strerror (errno)));
        break;
      }
    case FSG_MSG_INIT_PID:
      run->init_pid = msg.value;
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
      if (fd >= 0 && run->listener < 0)
        {
          run->listener = fd;
          fd = -1;
        }
      break;
    case FSG_MSG_NO_LISTENER:
      run->notify_unavailable = TRUE;
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
        }
      break;
    case FSG_MSG_EXEC_ERROR:
      run->exec_failed = TRUE;
      run->exec_err = msg.err;
      break;
    case FSG_MSG_STATUS:
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
          run->setup_reaped = TRUE;
          if (run->end_us == 0)
            run->end_us = g_get_monotonic_time ();
          run->drain_deadline = g_get_monotonic_time () + DRAIN_TIMEOUT_US;
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
  if (run->ctl >= 0)
    {
      struct pollfd pfd = { run->ctl, POLLIN, 0 };
      while (run->ctl >= 0 && poll (&pfd, 1, 0) > 0)
        handle_ctl (run);
    }
  /* A daemon killed by a signal R did not send died under the command, even
   * when the command has already exited: it exited because its view broke
   * (ECONNABORTED), so its status must not pass for its own. */
  if (!run->timed_out && run->failure == NULL && !run->setup_failed &&
      ((WIFSIGNALED (run->daemon_wait_status) && !run->daemon_killed) ||
       (!run->setup_reaped && !run->have_status)))
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
          if (run->setup_reaped)
            break;
          if (run->init_pid > 0)
            kill (run->init_pid, sig);
          else
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
  if (run->timeout_deadline && now >= run->timeout_deadline && !run->setup_reaped)
    {
      run->timeout_deadline = 0;
      run->timed_out = TRUE;
      if (run->init_pid > 0)
        kill (run->init_pid, SIGUSR1);
      else
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
      if (!run->setup_reaped && run->daemon_pid > 0 && !run->daemon_reaped)
        {
          run->daemon_killed = TRUE;
          kill (run->daemon_pid, SIGKILL);
        }
    }
}

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
  if (run->setup_reaped)
    next = MIN (next, run->drain_deadline);
  return next;
}

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
      struct pollfd pfds[8];
      int idx_ctl = -1, idx_sig, idx_lis = -1, idx_aud = -1, idx_out = -1, idx_err = -1,
          idx_pty = -1, idx_in = -1;
      int n = 0;
      gint64 now = g_get_monotonic_time ();
      gint64 next;
      int timeout_ms;

      on_deadlines (run, now);
      if (run->setup_reaped)
        {
          if (!outputs_open (run) || now >= run->drain_deadline)
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
      if (run->ctl >= 0 && !run->setup_reaped)
        WATCH (idx_ctl, run->ctl, POLLIN);
      if (run->listener >= 0)
        WATCH (idx_lis, run->listener, POLLIN);
      if (run->audit_rd >= 0)
        WATCH (idx_aud, run->audit_rd, POLLIN);
      if (run->out_rd >= 0)
        WATCH (idx_out, run->out_rd, POLLIN);
      if (run->err_rd >= 0)
        WATCH (idx_err, run->err_rd, POLLIN);
      if (run->pty_master >= 0)
        WATCH (idx_pty, run->pty_master, POLLIN | (run->to_pty->len > 0 ? POLLOUT : 0));
      if (run->pty_master >= 0 && run->stdin_open && run->to_pty->len == 0 && !run->setup_reaped)
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
  /* The view's mount namespace is gone with the sandbox, so the daemon has
   * nothing left to serve; it keeps no state worth a graceful stop. */
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
add_capture (JsonBuilder *b, const char *key, const FsgCapture *c)
{
  g_autofree char *text = fsg_capture_to_utf8 (c->data->data, c->data->len);
  g_autofree char *dropped = g_strconcat (key, "_dropped_bytes", NULL);

  json_builder_set_member_name (b, key);
  json_builder_add_string_value (b, text);
  json_builder_set_member_name (b, dropped);
  json_builder_add_int_value (b, c->dropped);
}

static void
add_policy_summary (JsonBuilder *b, const FsgPolicy *policy)
{
  guint n = 0;
  const FsgRule *const *rules = fsg_policy_rules (policy, &n);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "profile");
  json_builder_add_string_value (b, fsg_policy_profile (policy));
  json_builder_set_member_name (b, "network");
  json_builder_add_boolean_value (b, fsg_policy_network_allowed (policy));
  json_builder_set_member_name (b, "timeout_ms");
  json_builder_add_int_value (b, fsg_policy_timeout_ms (policy));
  json_builder_set_member_name (b, "kill_after_ms");
  json_builder_add_int_value (b, fsg_policy_kill_after_ms (policy));
  json_builder_set_member_name (b, "output_cap");
  json_builder_add_int_value (b, fsg_policy_output_cap (policy));
  json_builder_set_member_name (b, "rules");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "kind");
      json_builder_add_string_value (b, fsg_rule_kind_to_key (rules[i]->kind));
      json_builder_set_member_name (b, "pattern");
      json_builder_add_string_value (b, rules[i]->path ? rules[i]->path : rules[i]->pattern);
      json_builder_set_member_name (b, "origin");
      json_builder_add_string_value (b, rules[i]->origin ? rules[i]->origin : "");
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static gboolean
write_report (FsgRun *run, int exit_code, int signal_no, const char *reason,
              const char *message, GError **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  gint64 end = run->end_us ? run->end_us : g_get_monotonic_time ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "exit_code");
  json_builder_add_int_value (b, exit_code);
  json_builder_set_member_name (b, "signal");
  if (signal_no > 0)
    json_builder_add_int_value (b, signal_no);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "timed_out");
  json_builder_add_boolean_value (b, run->timed_out);
  json_builder_set_member_name (b, "duration_ms");
  json_builder_add_int_value (b, (end - run->start_us) / 1000);
  json_builder_set_member_name (b, "reason");
  json_builder_add_string_value (b, reason);
  json_builder_set_member_name (b, "error");
  if (message)
    json_builder_add_string_value (b, message);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "sandbox_denied");
  json_builder_add_boolean_value (b, run->n_denials > 0);
  json_builder_set_member_name (b, "denials");
  json_builder_add_value (b, json_node_init_array (json_node_alloc (), run->denials));
  json_builder_set_member_name (b, "denials_total");
  json_builder_add_int_value (b, run->n_denials);
  json_builder_set_member_name (b, "seccomp_notify");
  json_builder_add_boolean_value (b, !run->notify_unavailable);
  json_builder_set_member_name (b, "proc");
  if (fsg_proc_kind_name (run->proc_kind) != NULL)
    json_builder_add_string_value (b, fsg_proc_kind_name (run->proc_kind));
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "policy");
  add_policy_summary (b, run->policy);
  if (run->capturing)
    {
      g_autoptr(GByteArray) agg = NULL;
      g_autofree char *agg_text = NULL;

      fsg_capture_finish (&run->cap_out);
      fsg_capture_finish (&run->cap_err);
      agg = fsg_capture_aggregate (&run->cap_out, &run->cap_err, fsg_policy_output_cap (run->policy));
      agg_text = fsg_capture_to_utf8 (agg->data, agg->len);

      add_capture (b, "stdout", &run->cap_out);
      add_capture (b, "stderr", &run->cap_err);
      json_builder_set_member_name (b, "aggregated_output");
      json_builder_add_string_value (b, agg_text);
    }
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  text = json_generator_to_data (gen, NULL);
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
    return g_file_set_contents (run->opts->json_path, line, -1, error);
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
  g_clear_pointer (&run->denials, json_array_unref);
  g_clear_pointer (&run->stubs, g_ptr_array_unref);
  g_clear_pointer (&run->to_pty, g_byte_array_unref);
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

int
fsg_run (const FsgRunOptions *opts)
{
  FsgRun run_storage = { 0 };
  FsgRun *run = &run_storage;
  g_autoptr(GError) error = NULL;
  g_autofree char *cwd = NULL;
  g_autofree char *fuse_data = NULL;
  g_autofree char *uid_map = NULL, *gid_map = NULL;
  gboolean net = fsg_policy_network_allowed (opts->policy);
  gboolean mount_tmp;
  sigset_t mask;
  int ctl[2];
  int flags;
  int exit_code = FSG_EXIT_SETUP, signal_no = 0;
  const char *reason = "setup-error";
  g_autofree char *message = NULL;

  run->opts = opts;
  run->policy = opts->policy;
  run->start_us = g_get_monotonic_time ();
  run->ctl = run->sigfd = run->listener = run->audit_rd = -1;
  run->out_rd = run->err_rd = run->pty_master = run->reserved_fd = -1;
  run->spec.ctl_fd = run->spec.runner_ctl_fd = -1;
  run->spec.stdout_fd = run->spec.stderr_fd = -1;
  run->strings = g_ptr_array_new_with_free_func (g_free);
  run->stubs = g_ptr_array_new_with_free_func (g_free);
  run->steps = g_array_new (FALSE, TRUE, sizeof (FsgMountStep));
  run->audit_buf = g_string_new (NULL);
  run->denials = json_array_new ();
  run->to_pty = g_byte_array_new ();

  /* Fail before anything starts when the basics are missing. */
  cwd = resolve_cwd (opts, &error);
  if (cwd == NULL)
    {
      return early_fail (run, "%s. Fix: use -C DIR with an existing directory", error->message);
    }
  if (fsg_policy_decide (opts->policy, cwd).access < FSG_ACCESS_RO)
    {
      FsgPathState st = fsg_policy_decide (opts->policy, cwd);
      g_autofree char *why = fsg_path_state_describe (opts->policy, &st);
      if (st.access == FSG_ACCESS_DENY)
        return early_fail (run, "working directory '%s' is denied in the view (%s), and no "
                           "--ro/--rw can reopen a denied path. Fix: run from another directory "
                           "(-C DIR), or build the policy without that rule (a copy of the "
                           "profile with -p, see fsgate-policy(5))", cwd, why);
      return early_fail (run, "working directory '%s' is not in the view (%s). "
                         "Fix: add it with --ro DIR or --rw DIR, or choose another one with -C DIR",
                         cwd, why);
    }
  {
    fsg_autofd int fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0)
      {
        g_autofree char *line = NULL;
        fsg_doctor_check_fuse (&line);
        return early_fail (run, "%s", line);
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
  run->spec.envp = build_environ (opts->policy, opts->verbose > 0);
  for (char *const *e = run->spec.envp; *e; e++)
    if (g_str_has_prefix (*e, "PATH="))
      run->spec.path_env = *e + 5;
  run->spec.last_cap = read_last_cap ();
  if (opts->pass_fds != NULL)
    {
      run->spec.pass_fds = (const int *) opts->pass_fds->data;
      run->spec.n_pass_fds = opts->pass_fds->len;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (run->spec.close_in_sandbox); i++)
    run->spec.close_in_sandbox[i] = -1;

  if (!fsg_syscall_filter_build (net, &run->spec.prog_notify, &run->spec.prog_plain, &error))
    {
      g_autofree char *line = NULL;
      fsg_doctor_check_seccomp (&line);
      return early_fail (run, "building the seccomp filter: %s (%s)", error->message, line);
    }
  if (run->spec.prog_notify.len > 0
      && syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &run->notif_sizes) < 0)
    fsg_syscall_filter_clear (&run->spec.prog_notify); /* no notify: plain EACCES */

  /* /tmp is private unless the policy shows the host's /tmp itself; roots
   * below it go on top (extra-mounts.c) */
  mount_tmp = fsg_policy_run_private_tmp (opts->policy);
  {
    g_auto (GStrv) tmp_roots = fsg_policy_run_tmp_roots (opts->policy);
    run->mount_tmp = mount_tmp && tmp_roots[0] == NULL; /* the daemon stubs /tmp */
  }
  if (!plan_host_flags (run, opts->policy, run->mount_tmp, &error))
    return early_fail (run, "%s", error->message);
  build_mount_plan (run, mount_tmp);
  fsg_hybrid_prepare (&run->spec, run->strings, opts->policy, opts->verbose > 0);
  run->spec.steps = (const FsgMountStep *) run->steps->data;
  run->spec.n_steps = run->steps->len;

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
        goto errno_fail;
      run->out_rd = p[0];
      run->spec.stdout_fd = p[1];
      if (pipe2 (p, O_CLOEXEC) < 0)
        goto errno_fail;
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
            goto errno_fail;
          run->out_rd = p[0];
          run->spec.stdout_fd = p[1];
        }
      if (run->err_rd < 0 && isatty (2))
        {
          if (pipe2 (p, O_CLOEXEC) < 0)
            goto errno_fail;
          run->err_rd = p[0];
          run->spec.stderr_fd = p[1];
        }
    }

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0)
    goto errno_fail;
  run->ctl = ctl[0];
  run->spec.ctl_fd = ctl[1];
  run->spec.runner_ctl_fd = ctl[0];

  run->reserved_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (run->reserved_fd < 0)
    goto errno_fail;
  run->spec.fuse_fd_num = run->reserved_fd;
  fuse_data = fsg_fs_mount_data (run->reserved_fd, run->spec.uid, run->spec.gid);
  run->spec.fuse_data = fuse_data;
  uid_map = g_strdup_printf ("%u %u 1\n", (unsigned) run->spec.uid, (unsigned) run->spec.uid);
  gid_map = g_strdup_printf ("%u %u 1\n", (unsigned) run->spec.gid, (unsigned) run->spec.gid);
  /* Root maps every id to itself when /proc shows our own pid namespace
   * (R has to write through /proc/PID); others can only map themselves. */
  {
    g_autofree char *self = g_file_read_link ("/proc/self", NULL);
    g_autofree char *mine = g_strdup_printf ("%d", (int) getpid ());

    run->spec.runner_maps = geteuid () == 0 && self != NULL && g_str_equal (self, mine);
  }
  if (run->spec.runner_maps)
    {
      char *u = identity_map ("/proc/self/uid_map");
      char *g = identity_map ("/proc/self/gid_map");

      if (u != NULL && g != NULL)
        {
          g_free (uid_map);
          g_free (gid_map);
          uid_map = u;
          gid_map = g;
        }
      else
        {
          g_free (u);
          g_free (g);
          run->spec.runner_maps = FALSE;
        }
    }
  run->spec.uid_map = uid_map;
  run->spec.gid_map = gid_map;

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
    goto errno_fail;
  run->spec.close_in_sandbox[3] = run->sigfd;
  fcntl (run->ctl, F_SETFL, O_NONBLOCK);

  /* Always a new user namespace, also as root: capabilities inside it are
   * worthless outside, and the command loses even those. */
  flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
  if (!net)
    flags |= CLONE_NEWNET;
  run->setup_pid = syscall (SYS_clone, (unsigned long) flags, NULL, NULL, NULL, 0);
  if (run->setup_pid == 0)
    {
      sigset_t none;
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      fsg_sandbox_main_async_signal_safe (&run->spec);
    }
  if (run->setup_pid < 0)
    {
      g_autofree char *line = NULL;
      int errsv = errno;

      fsg_doctor_check_userns (&line);
      return early_fail (run, "clone(CLONE_NEWUSER|...): %s. %s", g_strerror (errsv), line);
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

      if (!write_proc (run->setup_pid, "uid_map", uid_map, &map_error)
          || !write_proc (run->setup_pid, "gid_map", gid_map, &map_error))
        runner_fail (run, g_strdup_printf ("writing the id maps: %s. Fix: %s", map_error->message,
                                           fsg_doctor_hint_for_stage (FSG_STAGE_WAIT_MAPS, 0)));
      else if (fsg_ctl_send (run->ctl, &maps, -1) < 0)
        runner_fail (run, g_strdup_printf ("control socket: %s", g_strerror (errno)));
    }

  supervise (run);
  /* The loop ends when S is reaped and output is drained; make sure. */
  kill_sandbox (run);
  while (!run->setup_reaped)
    {
      int st;
      if (waitpid (run->setup_pid, &st, 0) == run->setup_pid || errno == ECHILD)
        run->setup_reaped = TRUE;
    }
  /* Messages sent just before the end (status, exec error). */
  if (run->ctl >= 0)
    {
      struct pollfd p = { run->ctl, POLLIN, 0 };
      while (run->ctl >= 0 && poll (&p, 1, 0) > 0)
        handle_ctl (run);
    }
  stop_daemon (run);
  restore_tty (run);

  if (run->daemon_died || (run->failure != NULL && !run->have_status))
    {
      reason = run->daemon_died ? "daemon-died" : "setup-error";
      exit_code = FSG_EXIT_SETUP;
      message = g_strdup (run->failure);
    }
  else if (run->timed_out)
    {
      reason = "timeout";
      exit_code = FSG_EXIT_TIMEOUT;
      if (run->have_status && WIFSIGNALED (run->cmd_status))
        signal_no = WTERMSIG (run->cmd_status);
      message = g_strdup_printf ("the command ran longer than %" G_GUINT64_FORMAT " ms",
                                 fsg_policy_timeout_ms (run->policy));
    }
  else if (run->setup_failed)
    {
      reason = "setup-error";
      exit_code = FSG_EXIT_SETUP;
      message = g_strdup_printf ("setup failed while %s: %s. Fix: %s",
                                 fsg_stage_describe (run->setup_stage),
                                 g_strerror (run->setup_err),
                                 fsg_doctor_hint_for_stage (run->setup_stage, run->setup_err));
    }
  else if (run->exec_failed)
    {
      reason = "exec-error";
      exit_code = run->exec_err == ENOENT || run->exec_err == ENOTDIR ? FSG_EXIT_NOTFOUND
                                                                      : FSG_EXIT_NOEXEC;
      message = g_strdup_printf ("%s: %s%s", opts->argv[0], g_strerror (run->exec_err),
                                 exit_code == FSG_EXIT_NOTFOUND
                                   ? " (in the sandbox's view and PATH)" : "");
    }
  else if (run->have_status)
    {
      if (WIFEXITED (run->cmd_status))
        {
          reason = "exited";
          exit_code = WEXITSTATUS (run->cmd_status);
        }
      else if (WIFSIGNALED (run->cmd_status))
        {
          reason = "signaled";
          signal_no = WTERMSIG (run->cmd_status);
          exit_code = 128 + signal_no;
        }
    }
  else if (run->interrupted)
    {
      reason = "signaled";
      exit_code = 128 + run->interrupted;
      message = g_strdup_printf ("interrupted by signal %d during setup", run->interrupted);
    }
  else
    {
      reason = "setup-error";
      exit_code = FSG_EXIT_SETUP;
      message = g_strdup ("the sandbox ended before the command reported a status");
    }

  if (message != NULL && !g_str_equal (reason, "timeout"))
    g_printerr ("fsgate-run: %s\n", message);
  if (opts->verbose)
    g_printerr ("fsgate-run: %s, exit %d, %" G_GINT64_FORMAT " ms (setup %" G_GINT64_FORMAT
                " ms), %" G_GUINT64_FORMAT " %s\n",
                reason, exit_code,
                ((run->end_us ? run->end_us : g_get_monotonic_time ()) - run->start_us) / 1000,
                run->go_us ? (run->go_us - run->start_us) / 1000 : -1, run->n_denials,
                run->n_denials == 1 ? "denial" : "denials");
  if (!opts->quiet)
    {
      g_autofree char *summary = fsg_denial_summary (run->denials, run->n_denials, opts->json_path);
      if (summary != NULL)
        g_printerr ("%s", summary);
    }
  if (opts->json_path != NULL
      && !write_report (run, exit_code, signal_no, reason, message, &error))
    {
      g_printerr ("fsgate-run: writing the report: %s\n", error->message);
      if (exit_code == 0)
        exit_code = FSG_EXIT_SETUP;
    }
  run_clear (run);
  return exit_code;

errno_fail:
  {
    int errsv = errno;
    return early_fail (run, "preparing the run: %s", g_strerror (errsv));
  }
}
