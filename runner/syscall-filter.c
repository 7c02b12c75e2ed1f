/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The seccomp filter of the sandboxed command, built with libseccomp in the
 * runner (before any clone) and exported as classic BPF, so the command
 * process only has to call seccomp(2): no allocation after fork. The rules
 * are listed and justified in docs/security.md ("Seccomp filter"); keep both
 * in step.
 */
#include "config.h"

#include "runner/run.h"

#include "common/fsg-util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>

#ifdef FSG_WITH_PRECOMPILED_SECCOMP
# include "runner/seccomp-precompiled.h"
#else
# define FSG_SECCOMP_PRECOMPILED 0
#endif

#ifndef TIOCLINUX
# define TIOCLINUX 0x541C
#endif

static void
filter_release (scmp_filter_ctx *ctx)
{
  if (*ctx != NULL)
    seccomp_release (*ctx);
}
#define fsg_auto_filter __attribute__ ((cleanup (filter_release)))

/* Add a rule for @name on every architecture of @ctx. A syscall that does not
 * exist on any of them is skipped (there is nothing to block); any other
 * failure fails the build, so a rule is never silently missing. */
static gboolean
add_rule (scmp_filter_ctx ctx,
          uint32_t action,
          const char *name,
          unsigned int n_args,
          const struct scmp_arg_cmp *args,
          GError **error)
{
  int nr = seccomp_syscall_resolve_name (name);
  int r;

  if (nr == __NR_SCMP_ERROR)
    return TRUE;
  r = seccomp_rule_add_array (ctx, action, nr, n_args, args);
  if (r < 0 && r != -EDOM)
    return fsg_throw_errno_value (error, -r, "seccomp rule for %s", name);
  return TRUE;
}

static const char *const blocked_eperm[] = {
  /* the mount table is the sandbox: no changes from inside */
  "mount", "umount", "umount2", "pivot_root", "chroot",
  "open_tree", "move_mount", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
  /* namespaces of other processes */
  "setns",
  /* reopen files by handle around the view ("Shocker") */
  "open_by_handle_at", "name_to_handle_at",
  /* kernel attack surface a build never needs */
  "bpf", "perf_event_open", "userfaultfd",
  "keyctl", "add_key", "request_key",
  "kexec_load", "kexec_file_load",
  "init_module", "finit_module", "delete_module",
  "acct", "swapon", "swapoff", "reboot", "quotactl", "quotactl_fd",
  "lookup_dcookie", "vhangup", "syslog",
};

/* io_uring can open and connect sockets without socket(2)
 * (IORING_OP_SOCKET, IORING_OP_CONNECT), so it goes whatever the network
 * setting. ENOSYS makes programs fall back to plain syscalls. */
static const char *const blocked_enosys[] = {
  "io_uring_setup", "io_uring_enter", "io_uring_register",
  /* clone3 passes its flags in a struct seccomp cannot read, so
   * CLONE_NEWUSER could not be refused; ENOSYS makes libc use clone(2). */
  "clone3",
};

static scmp_filter_ctx
build_ctx (gboolean network_allowed, uint32_t socket_action, GError **error)
{
  fsg_auto_filter scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  uint32_t eperm = SCMP_ACT_ERRNO (EPERM);
  int r;

  if (ctx == NULL)
    {
      fsg_throw (error, "seccomp_init failed");
      return NULL;
    }
  /* Cover every ABI a process can switch to on x86_64: i386 (int $0x80)
   * and x32 (syscall numbers with bit 0x40000000). Other architectures are
   * killed by the default bad-arch action. */
  if (seccomp_arch_native () == SCMP_ARCH_X86_64)
    {
      r = seccomp_arch_add (ctx, SCMP_ARCH_X86);
      if (r < 0 && r != -EEXIST)
        {
          fsg_throw_errno_value (error, -r, "seccomp_arch_add(x86)");
          return NULL;
        }
      r = seccomp_arch_add (ctx, SCMP_ARCH_X32);
      if (r < 0 && r != -EEXIST)
        {
          fsg_throw_errno_value (error, -r, "seccomp_arch_add(x32)");
          return NULL;
        }
    }
  /* We set NO_NEW_PRIVS ourselves before loading. */
  seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);

  for (gsize i = 0; i < G_N_ELEMENTS (blocked_eperm); i++)
    if (!add_rule (ctx, eperm, blocked_eperm[i], 0, NULL, error))
      return NULL;
  for (gsize i = 0; i < G_N_ELEMENTS (blocked_enosys); i++)
    if (!add_rule (ctx, SCMP_ACT_ERRNO (ENOSYS), blocked_enosys[i], 0, NULL, error))
      return NULL;

  /* No new user namespace: it would hand the command a full capability set
   * over its own namespaces. Without CLONE_NEWUSER the other CLONE_NEW*
   * flags need CAP_SYS_ADMIN, which the command does not have. */
  {
    struct scmp_arg_cmp newuser = SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);

    if (!add_rule (ctx, eperm, "unshare", 1, &newuser, error)
        || !add_rule (ctx, eperm, "clone", 1, &newuser, error))
      return NULL;
  }

  /* Terminal injection. The kernel compares the request as a 32-bit int,
   * so match the low 32 bits only (CVE-2019-10063). */
  {
    struct scmp_arg_cmp tiocsti = SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSTI);
    struct scmp_arg_cmp tioclinux = SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCLINUX);

    if (!add_rule (ctx, eperm, "ioctl", 1, &tiocsti, error)
        || !add_rule (ctx, eperm, "ioctl", 1, &tioclinux, error))
      return NULL;
  }

  if (!network_allowed)
    {
      /* Every family but AF_UNIX. The comparison is on the whole 64-bit
       * argument although the kernel reads an int: a value with high bits set
       * is refused even when its low 32 bits say AF_UNIX (fail closed), and
       * no value whose low bits name another family can pass. */
      if (!add_rule (ctx, socket_action, "socket", 1,
                     &(struct scmp_arg_cmp) SCMP_A0 (SCMP_CMP_NE, AF_UNIX), error)
          || !add_rule (ctx, socket_action, "socketpair", 1,
                        &(struct scmp_arg_cmp) SCMP_A0 (SCMP_CMP_NE, AF_UNIX), error))
        return NULL;
      /* i386's multiplexer hides the family behind a pointer, which BPF
       * must not judge: refuse it whole (glibc uses socket(2) since 4.3). */
      if (!add_rule (ctx, SCMP_ACT_ERRNO (EACCES), "socketcall", 0, NULL, error))
        return NULL;
    }

  return g_steal_pointer (&ctx);
}

static gboolean
export_prog (scmp_filter_ctx ctx, struct sock_fprog *out, GError **error)
{
  fsg_autofd int fd = memfd_create ("fsgate-seccomp", MFD_CLOEXEC);
  struct stat st;
  struct sock_filter *insns;
  int r;

  if (fd < 0)
    return fsg_throw_errno (error, "memfd_create");
  r = seccomp_export_bpf (ctx, fd);
  if (r < 0)
    return fsg_throw_errno_value (error, -r, "seccomp_export_bpf");
  if (fstat (fd, &st) < 0)
    return fsg_throw_errno (error, "fstat");
  if (st.st_size <= 0 || st.st_size % sizeof (struct sock_filter) != 0
      || st.st_size / sizeof (struct sock_filter) > G_MAXUINT16)
    return fsg_throw (error, "seccomp_export_bpf produced %lld bytes", (long long) st.st_size);
  insns = g_malloc (st.st_size);
  if (pread (fd, insns, st.st_size, 0) != st.st_size)
    {
      g_free (insns);
      return fsg_throw_errno (error, "reading the seccomp program");
    }
  out->len = st.st_size / sizeof (struct sock_filter);
  out->filter = insns;
  return TRUE;
}

#if FSG_SECCOMP_PRECOMPILED
static void
copy_prog (struct sock_fprog *out, const struct sock_filter *insns, gsize n)
{
  out->len = n;
  out->filter = g_memdup2 (insns, n * sizeof *insns);
}
#endif

gboolean
fsg_syscall_filter_build (gboolean network_allowed,
                          struct sock_fprog *out_notify,
                          struct sock_fprog *out_plain,
                          GError **error)
{
  return fsg_syscall_filter_build_full (network_allowed, TRUE, out_notify, out_plain, error);
}

gboolean
fsg_syscall_filter_build_full (gboolean network_allowed,
                               gboolean precompiled,
                               struct sock_fprog *out_notify,
                               struct sock_fprog *out_plain,
                               GError **error)
{
  fsg_auto_filter scmp_filter_ctx plain = NULL;
  fsg_auto_filter scmp_filter_ctx notify = NULL;
  struct sock_fprog p = { 0, NULL }, n = { 0, NULL };

#if FSG_SECCOMP_PRECOMPILED
  /* compiled by gen-seccomp at build time from this file's rules (the unit
   * test /runner/seccomp/precompiled checks that they are the same) */
  if (precompiled)
    {
      if (network_allowed)
        copy_prog (out_plain, fsg_seccomp_net_plain, G_N_ELEMENTS (fsg_seccomp_net_plain));
      else
        {
          copy_prog (out_plain, fsg_seccomp_nonet_plain, G_N_ELEMENTS (fsg_seccomp_nonet_plain));
          copy_prog (out_notify, fsg_seccomp_nonet_notify, G_N_ELEMENTS (fsg_seccomp_nonet_notify));
          return TRUE;
        }
      out_notify->len = 0;
      out_notify->filter = NULL;
      return TRUE;
    }
#endif
  plain = build_ctx (network_allowed, SCMP_ACT_ERRNO (EACCES), error);
  if (plain == NULL || !export_prog (plain, &p, error))
    return FALSE;
  if (!network_allowed)
    {
      notify = build_ctx (network_allowed, SCMP_ACT_NOTIFY, error);
      if (notify == NULL || !export_prog (notify, &n, error))
        {
          fsg_syscall_filter_clear (&p);
          return FALSE;
        }
    }
  *out_plain = p;
  *out_notify = n;
  return TRUE;
}

void
fsg_syscall_filter_clear (struct sock_fprog *prog)
{
  g_clear_pointer (&prog->filter, g_free);
  prog->len = 0;
}

gboolean
fsg_syscall_filter_precompiled (void)
{
  return FSG_SECCOMP_PRECOMPILED;
}
