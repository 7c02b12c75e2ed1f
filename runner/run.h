/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * fsgate-run: run one command inside the policy view. This header is the
 * runner module's face (options, fsg_run(), --doctor) plus the pieces its
 * files share (the sandbox spec that crosses clone(), the control messages).
 *
 * Processes of one run
 * --------------------
 *
 *   R  fsgate-run (host namespaces). Single-threaded for its whole life: it
 *      never serves FUSE itself, so fork() is always safe and signals arrive
 *      through one signalfd. R polls: the control socket, the seccomp
 *      listener, the signalfd, the audit pipe, captured output and the pty.
 *   ├─ D  the FUSE daemon (fork of R, host user/mount/pid namespaces). It
 *   │     serves the /dev/fuse fd that S opened and mounted, on libfuse worker
 *   │     threads, and writes one JSON line per denial to the audit pipe. If D
 *   │     dies before the run ends, R kills the sandbox and exits 125.
 *   └─ S  setup process: clone(CLONE_NEWUSER|NEWNS); after passing the FUSE
 *         fd, unshare(CLONE_NEWIPC|NEWUTS[|NEWNET]) while R forks D.
 *         Id maps: as root, R writes full identity maps (every uid and gid maps
 *         to itself, so files of other users keep their owners); otherwise
 *         S maps its own uid and gid to themselves (setgroups deny). S makes / private, mounts a tmpfs scratch on /tmp, opens
 *         /dev/fuse, mounts the view at /tmp/root (nosuid,nodev) and passes
 *         the fd to R (SCM_RIGHTS), waits for "go" (sent as soon as D is
 *         forked: the kernel holds the view's first requests until D
 *         answers INIT), then unshare(CLONE_NEWPID) and forks I. S stays in
 *         the host pid namespace on purpose: the FUSE connection records the
 *         mounter's pid namespace, so D sees host pids and can name the
 *         caller (comm). S waits for I; once I is gone (and with it every
 *         process of the sandbox) it syncs the view and tells R (SYNCED),
 *         which then stops D and ends the run without waiting for S to tear
 *         the namespaces down. PDEATHSIG ties it to R.
 *         └─ I  pid 1 of the new pid namespace: mounts /proc (where a
 *               container masks its own, binds that one: proc.c), a minimal /dev
 *               (bind mounts of null zero full random urandom tty, devpts with
 *               ptmx, tmpfs /dev/shm), a tmpfs /tmp unless /tmp is (under) a
 *               root, pivot_root(".", ".") into the view and detaches the old
 *               root, chdir to the working directory, allocates the pty inside
 *               the sandbox's own devpts when asked (master sent to R), forks
 *               C and reaps everything. When C ends, I sends C's wait status
 *               to R and exits, which kills whatever is left in the namespace.
 *               I stays non-dumpable and keeps its (namespaced) capabilities,
 *               so C cannot ptrace it. Signals from R: INT/TERM/HUP/QUIT are
 *               forwarded to C's process group; USR1 means "timeout": SIGTERM+SIGCONT to every
 *               process of the namespace (kill(-1)). R's SIGKILL to I ends the
 *               namespace.
 *               └─ C  the command: setsid (plus the pty as controlling
 *                     terminal), PDEATHSIG, NO_NEW_PRIVS, RLIMIT_CORE 0, close
 *                     every fd >= 3 but --pass-fd, securebits locked, bounding,
 *                     ambient, effective, permitted and inheritable capability
 *                     sets emptied, seccomp filter last (with a user
 *                     notification listener passed to R), execve with the
 *                     policy environment and a PATH search of our own.
 *                     Exec failures come back as a message (126/127), distinct
 *                     from the command's own exit status.
 *
 * D and S leave R's process group at once (I stays in S's, C makes its own
 * session), so a signal sent to fsgate-run's process group (^C without a
 * pty, a CI cancel, SIGHUP) reaches R alone; D ignores INT/TERM/HUP/QUIT.
 *
 * S, I and C run between clone/fork and execve: they only use memory prepared
 * by R before the clone (FsgSandboxSpec) and report failures as
 * (stage, errno) control messages; no malloc, no GError, no logging.
 *
 * Exit status of fsgate-run: the command's own; 128+N when it died of signal
 * N; 124 on timeout; 125 when the sandbox could not be set up or the FUSE
 * daemon died; 126 not executable; 127 not found; 2 for usage errors.
 */
#pragma once

#include <glib.h>
#include "common/fsg-json.h"
#include <linux/filter.h>
#include <sys/types.h>

#include "policy/policy.h"

G_BEGIN_DECLS

typedef struct
{
  FsgPolicy *policy;      /* borrowed */
  char **argv;            /* command and arguments, borrowed */
  const char *cwd;        /* -C DIR, or NULL for the current directory */
  const char *json_path;  /* --json FILE or "-", NULL for none */
  gboolean capture;       /* --capture */
  gboolean filter_terminal; /* --filter-terminal */
  gboolean no_proc_fallback; /* --no-proc-fallback: a fresh /proc or nothing */
  GArray *pass_fds;       /* int, may be NULL; at most FSG_MAX_PASS_FDS */
  int verbose;
  gboolean quiet;         /* --quiet: no denial summary on stderr */
} FsgRunOptions;

/* The denial summary printed after a run with denials (summary.c): at most
 * five lines (operation, path or socket family, rule, command; where the
 * rest is). NULL when there were none. (transfer full) */
char *fsg_denial_summary (GPtrArray *denials, guint64 n_denials, const char *json_path);

/* Run the command; returns the exit status fsgate-run should exit with.
 * Setup failures are printed as one line (with the fix) and give 125. */
int fsg_run (const FsgRunOptions *options);

/* --doctor: print every check, return 0 when a run would work, else 125.
 * With @no_proc_fallback, a /proc that only the fallback provides fails. */
int fsg_doctor (gboolean verbose, gboolean no_proc_fallback);

/* ---- Shared between the runner's files ----------------------------------- */

/* Where a sandbox-side step failed; R turns it into a message with a fix. */
typedef enum
{
  FSG_STAGE_NONE = 0,
  FSG_STAGE_PDEATHSIG,
  FSG_STAGE_WAIT_MAPS,
  FSG_STAGE_MAKE_PRIVATE,
  FSG_STAGE_SCRATCH,
  FSG_STAGE_OPEN_FUSE,
  FSG_STAGE_MOUNT_FUSE,
  FSG_STAGE_SEND_FUSE,
  FSG_STAGE_UNSHARE_NET,
  FSG_STAGE_WAIT_GO,
  FSG_STAGE_UNSHARE_PID,
  FSG_STAGE_FORK_INIT,
  FSG_STAGE_HOST_FLAGS,
  FSG_STAGE_HYBRID,
  FSG_STAGE_MOUNT_PROC,
  FSG_STAGE_MOUNT_DEV,
  FSG_STAGE_MOUNT_TMP,
  FSG_STAGE_PIVOT,
  FSG_STAGE_CHDIR,
  FSG_STAGE_PTY,
  FSG_STAGE_FORK_CMD,
  FSG_STAGE_SETSID,
  FSG_STAGE_NNP,
  FSG_STAGE_RLIMIT,
  FSG_STAGE_CLOSE_FDS,
  FSG_STAGE_CAPS,
  FSG_STAGE_SECCOMP,
  FSG_STAGE_SEND_LISTENER,
  FSG_STAGE_PROC_FALLBACK,
  FSG_STAGE_PROC_HOST,     /* fallback refused: /proc is not a container's */
  FSG_STAGE_PROC_LANDLOCK, /* fallback refused: no usable Landlock */
  FSG_STAGE_LAST
} FsgStage;

const char *fsg_stage_describe (FsgStage stage);

#ifndef MS_NOSYMFOLLOW
# define FSG_MS_NOSYMFOLLOW 256 /* Linux 5.10 */
#else
# define FSG_MS_NOSYMFOLLOW MS_NOSYMFOLLOW
#endif
#define FSG_ST_NOSYMFOLLOW 0x2000 /* statfs f_flags, Linux 5.10 */

/* A place in the view that needs a host mount's noexec/nosymfollow
 * (host-mounts.c). */
typedef struct
{
  char *path;          /* host absolute path, shown at the same path in the view */
  unsigned long flags; /* exactly these of MS_NOEXEC | FSG_MS_NOSYMFOLLOW */
} FsgHostFlags;

/* From @mountinfo (the text of /proc/self/mountinfo): every root of
 * @policy on a noexec/nosymfollow host mount, and every host mount point
 * below a root whose flags differ from the mount it sits on; shallowest
 * first. /proc, /sys, /dev and (with @private_tmp) /tmp are left out: the
 * runner mounts its own there. (transfer full: an array of FsgHostFlags) */
GArray *fsg_host_flags_plan (const FsgPolicy *policy, const char *mountinfo, gboolean private_tmp);

/* Mount steps for the private /tmp (with the roots below /tmp on top), the
 * denied /run and /sys shown empty and, with the network allowed, the
 * resolver file (extra-mounts.c). Strings go to @strings; the directories
 * the daemon must show as empty stubs are added to @out_stubs. */
void fsg_plan_private_tmp (GArray *steps, GPtrArray *strings, const char *view_dir,
                           const char *scratch, const FsgPolicy *policy);
void fsg_plan_runtime_dirs (GArray *steps, GPtrArray *strings, const char *view_dir,
                            const FsgPolicy *policy, GPtrArray *out_stubs);

typedef enum
{
  FSG_MSG_MAPS_DONE = 1, /* R -> S: R wrote the id maps (root runs) */
  FSG_MSG_GO,            /* R -> S: the daemon is started (the kernel holds the
                          * view's first requests until it answers INIT) */
  FSG_MSG_FUSE_FD,       /* S -> R, with the /dev/fuse fd */
  FSG_MSG_INIT_PID,      /* S -> R: value = host pid of I, with its pidfd (or none) */
  FSG_MSG_PTY_MASTER,    /* I -> R, with the pty master */
  FSG_MSG_LISTENER,      /* C -> R, with the seccomp notification fd */
  FSG_MSG_NO_LISTENER,   /* C -> R: notify unavailable, plain EACCES filter */
  FSG_MSG_SETUP_ERROR,   /* S/I/C -> R: stage, err */
  FSG_MSG_EXEC_ERROR,    /* C -> R: err of the last execve */
  FSG_MSG_STATUS,        /* I -> R: value = wait status of C */
  FSG_MSG_PROC,          /* I -> R: value = FsgProcKind of the view's /proc */
  FSG_MSG_LANDLOCK,      /* C -> R: the command is in the fallback's Landlock domain */
  FSG_MSG_SYNCED,        /* S -> R: I and every process of the sandbox are gone, and
                          * the view's dirty data is on the host (syncfs) */
  FSG_MSG_BIND_SKIPPED,  /* I -> R: value = index of a hybrid bind not made (the
                          * directory changed since the plan): the daemon serves it */
} FsgMsgType;

/* Which /proc the command got (proc.c, docs/security.md "The /proc
 * fallback"). FRESH: a new procfs of the sandbox's pid namespace. CONTAINER:
 * the fresh mount was refused (a container runtime masks parts of its /proc,
 * and the kernel then refuses a new procfs in a user namespace), so the
 * container's own /proc is bound in, read-only where the fresh one is; the
 * processes the command can now list stay out of its reach (its user
 * namespace, plus a Landlock domain where the kernel has Landlock). */
typedef enum
{
  FSG_PROC_UNKNOWN = 0, /* the run did not get that far */
  FSG_PROC_FRESH,
  FSG_PROC_CONTAINER,
} FsgProcKind;

/* The report's name for @kind ("fresh", "container"), NULL for UNKNOWN. */
const char *fsg_proc_kind_name (FsgProcKind kind);
/* The one-line warning fsgate-run prints when a run gets the fallback. */
#define FSG_PROC_FALLBACK_WARNING                                                        \
  "warning: a fresh /proc cannot be mounted here (the container masks parts of "        \
  "/proc); the command sees the container's /proc: it can list the container's "         \
  "processes and read their command lines, status and mount tables, but not their "    \
  "memory, environment, files or roots, nor signal them; a Landlock domain refuses "    \
  "every write under /proc, the command's own /proc/self included "                    \
  "(docs/ci.md; --no-proc-fallback refuses to run instead)"
/* The inode of the initial pid namespace (PROC_PID_INIT_INO). */
#define FSG_PROC_PID_INIT_INO 0xEFFFFFFCU
/* Landlock ABI version (>= 1) or -errno: the fallback needs it. Async-signal-safe. */
int fsg_landlock_abi_async_signal_safe (void);
/* Confine the calling process and its future children to the fallback's
 * Landlock domain: file writes and truncation are allowed beneath every
 * top-level entry of "/" that exists now except /proc, so every write
 * under /proc is refused (other processes' oom_score_adj, clear_refs, ...
 * are checked only against their owner's uid); rename and link across
 * directories stay possible (REFER on "/"). Landlock's ptrace scoping also
 * denies ptrace and /proc/PID/{mem,environ,fd,root,...} of every process
 * outside the domain. Needs NO_NEW_PRIVS and Landlock ABI >= 2 (else
 * -EOPNOTSUPP). Call after pivot_root. Returns 0 or -errno.
 * Async-signal-safe. */
int fsg_landlock_confine_async_signal_safe (void);
/* 0 if the container's /proc may be bound in: the caller's pid namespace
 * is not the initial one and /proc is a procfs of that namespace; -EPERM
 * if not, other -errno if that cannot be told. Async-signal-safe. */
int fsg_proc_fallback_pidns_ok_async_signal_safe (void);
/* Bind the container's /proc at @target (recursively: the runtime's masks
 * come along), nosuid, nodev, noexec; -EINVAL if /proc is not the root of
 * a procfs. Returns 0 or -errno. Async-signal-safe. */
int fsg_proc_bind_container_async_signal_safe (const char *target);

typedef struct
{
  gint32 type;
  gint32 stage;
  gint32 err;
  gint32 value;
} FsgCtlMsg;

/* One step of the mount plan that I executes (paths before pivot_root). */
typedef enum
{
  FSG_STEP_MOUNT,
  FSG_STEP_MKDIR,
  FSG_STEP_TOUCH,
  FSG_STEP_SYMLINK, /* source = link target */
  FSG_STEP_READONLY, /* bind target on itself read-only (+ flags); skipped if missing */
  FSG_STEP_HOST_FLAGS, /* bind target on itself with exactly flags of noexec/nosymfollow;
                        * skipped if the view does not show it */
  FSG_STEP_BIND_FILE, /* bind the regular file source (opened with openat2
                       * RESOLVE_NO_SYMLINKS, bound from /proc/self/fd/N) */
} FsgStepKind;

typedef struct
{
  FsgStepKind kind;
  FsgStage stage;
  const char *source;
  const char *target;
  const char *fstype;
  unsigned long flags;
  const char *data;
} FsgMountStep;

/* One read-only bind of the hybrid view (hybrid.c). */
typedef struct
{
  const char *source;     /* host directory, canonical */
  const char *target_rel; /* the same path below the view */
  guint64 dev, ino;       /* what the plan saw there */
  const char *const *holes_rel; /* below it, served by the daemon: the view's
                                 * own directory is mounted back over each */
  guint n_holes;
} FsgHybridBind;

/* Everything the sandbox side needs, prepared by R before clone(). */
typedef struct
{
  uid_t uid;
  gid_t gid;
  pid_t runner_pid;
  int ctl_fd;              /* sandbox end of the control socket */
  int runner_ctl_fd;       /* R's end, closed by S */
  int fuse_fd_num;         /* the number the /dev/fuse fd must have (mount data) */
  const char *scratch;     /* "/tmp" */
  const char *view_dir;    /* "/tmp/root" */
  const char *fuse_data;   /* fsg_fs_mount_data (fuse_fd_num, uid, gid) */
  const char *uid_map;     /* "UID UID 1": S maps itself (no /proc/PID lookup by R, */
  const char *gid_map;     /* which breaks when R's /proc is of another pid namespace) */
  gboolean runner_maps;    /* R (root) writes full identity maps; S waits for MAPS_DONE */
  gboolean proc_fallback_ok; /* I may bind the container's /proc when a fresh one is refused */
  int late_unshare;        /* CLONE_NEW{NET,IPC,UTS} S unshares once the FUSE fd is sent */
  const FsgMountStep *steps;
  guint n_steps;
  const FsgHybridBind *binds; /* hybrid view, made by I after the steps */
  guint n_binds;
  const char *cwd;
  gboolean want_pty;
  gboolean stdout_pty, stderr_pty;
  int stdout_fd, stderr_fd; /* capture pipe write ends, or -1 */
  int close_in_sandbox[4];  /* R-only fds S closes, -1 terminated slots */
  const int *pass_fds;
  guint n_pass_fds;
  char *const *argv;
  char *const *envp;
  const char *path_env;     /* PATH from envp, for the search */
  int last_cap;
  struct sock_fprog prog_notify; /* len 0 when not wanted */
  struct sock_fprog prog_plain;
} FsgSandboxSpec;

/* Hybrid view (hybrid.c): plan the binds of fsg_policy_hybrid_plan() into
 * @spec (strings kept in @strings); with @verbose, print what is bound and
 * what is served. Returns why the hybrid view is off (static text), or NULL. */
const char *fsg_hybrid_prepare (FsgSandboxSpec *spec, GPtrArray *strings,
                                const FsgPolicy *policy, gboolean verbose);
/* One line: what the hybrid view binds and what the daemon serves.
 * (transfer full) */
char *fsg_hybrid_summary (const FsgPolicy *policy);
/* For --doctor: an "ok" line, or a "warn" line naming the host sockets and
 * FIFOs found below the directories the hybrid view would bind; NULL when
 * it binds none. (transfer full) */
char *fsg_hybrid_doctor_check (const FsgPolicy *policy);
/* In I, before pivot_root: make the binds. 0, or -errno (*out_index: which
 * bind failed, or n_binds when none in particular did). */
int fsg_hybrid_bind_async_signal_safe (const FsgSandboxSpec *spec, guint *out_index);

/* Sandbox side (namespaces.c). Runs in S; never returns. */
G_GNUC_NORETURN void fsg_sandbox_main_async_signal_safe (const FsgSandboxSpec *spec);

/* Control messages (namespaces.c); async-signal-safe. Return 0 or -errno. */
int fsg_ctl_send (int fd, const FsgCtlMsg *msg, int pass_fd);

/* --pass-fd may be given this many times (the sandbox keeps a fixed table). */
#define FSG_MAX_PASS_FDS 60
/* *out_fd is -1 when the message carries none. Returns bytes, 0 on EOF, -errno. */
int fsg_ctl_recv (int fd, FsgCtlMsg *msg, int *out_fd);

/* Seccomp (syscall-filter.c). Builds the BPF programs for C: @out_notify
 * sends refused socket()/socketpair() calls to a user-notification listener,
 * @out_plain fails them with EACCES directly. When the network is allowed,
 * only the always-on rules are present and @out_notify is empty.
 * The programs are g_free()d with fsg_syscall_filter_clear(). */
gboolean fsg_syscall_filter_build (gboolean network_allowed,
                                   struct sock_fprog *out_notify,
                                   struct sock_fprog *out_plain,
                                   GError **error);
void fsg_syscall_filter_clear (struct sock_fprog *prog);
/* The same; @precompiled FALSE compiles them with libseccomp now even when
 * the build precompiled them (gen-seccomp.c). */
gboolean fsg_syscall_filter_build_full (gboolean network_allowed, gboolean precompiled,
                                        struct sock_fprog *out_notify,
                                        struct sock_fprog *out_plain, GError **error);
/* TRUE when the build precompiled the programs. */
gboolean fsg_syscall_filter_precompiled (void);

/* Output capture (output.c): keeps the first and the last half of the cap
 * of a stream. After fsg_capture_finish(), @data is head + a marker line
 * naming the bytes dropped in between + tail, and @dropped counts them. */
typedef struct
{
  GByteArray *data;  /* the head; after finish, what the report shows */
  GByteArray *tail;  /* the newest bytes (trimmed to cap/2 in batches) */
  guint64 cap;
  guint64 dropped;
  gboolean finished;
} FsgCapture;

void fsg_capture_init (FsgCapture *capture, guint64 cap);
void fsg_capture_clear (FsgCapture *capture);
void fsg_capture_append (FsgCapture *capture, const guint8 *buf, gsize len);
void fsg_capture_finish (FsgCapture *capture);
/* The aggregate keeps up to 1/3 stdout and 2/3 stderr of
 * @cap, giving unused share to the other stream. (transfer full) */
GByteArray *fsg_capture_aggregate (const FsgCapture *out, const FsgCapture *err, guint64 cap);
/* Valid UTF-8 with U+FFFD replacements. (transfer full) */
char *fsg_capture_to_utf8 (const guint8 *data, gsize len);

/* --filter-terminal (terminal.c): a streaming filter of escape sequences
 * that act outside the screen or make the terminal answer. */
#define FSG_TERM_SEQ_MAX 4096
typedef struct
{
  int state;
  int utf8;         /* UTF-8 decoding: continuation bytes still due, or -1 after a C2 lead */
  GByteArray *seq;  /* the sequence being read */
  guint64 dropped;  /* sequences removed */
} FsgTermFilter;

void fsg_term_filter_init (FsgTermFilter *f);
void fsg_term_filter_clear (FsgTermFilter *f);
/* Append to @out what of @in may reach the terminal; a sequence cut at the
 * end of @in is held for the next call. */
void fsg_term_filter (FsgTermFilter *f, const guint8 *in, gsize len, GByteArray *out);

/* Doctor checks (doctor.c). Each prints nothing and returns TRUE when the
 * facility works; otherwise *out_line is the doctor line (with the fix). */
gboolean fsg_doctor_check_userns (char **out_line);
gboolean fsg_doctor_check_fuse (char **out_line);
gboolean fsg_doctor_check_seccomp (char **out_line);
/* The fix to print for a sandbox-side failure. (transfer none) */
const char *fsg_doctor_hint_for_stage (FsgStage stage, int err);

G_END_DECLS
