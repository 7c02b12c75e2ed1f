/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * try-syscall: make one raw system call and print its outcome ("OK" or the
 * errno name, e.g. "EACCES"), for the runner's shell tests. Raw syscalls, no
 * libc wrappers that might fall back to something else; built without
 * sanitizers (their runtimes make syscalls of their own).
 *
 *   try-syscall CASE [ARG]
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef AF_VSOCK
# define AF_VSOCK 40
#endif
#ifndef AF_ALG
# define AF_ALG 38
#endif
#ifndef AF_BLUETOOTH
# define AF_BLUETOOTH 31
#endif
#ifndef __X32_SYSCALL_BIT
# define __X32_SYSCALL_BIT 0x40000000
#endif

static const char *
errname (int e)
{
  switch (e)
    {
    case 0: return "OK";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case ENOSYS: return "ENOSYS";
    case EINVAL: return "EINVAL";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    case EBADF: return "EBADF";
    case EFAULT: return "EFAULT";
    case ECONNREFUSED: return "ECONNREFUSED";
    case ENETUNREACH: return "ENETUNREACH";
    case EIO: return "EIO";
    case EROFS: return "EROFS";
    case ENOTTY: return "ENOTTY";
    case ESRCH: return "ESRCH";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case ESOCKTNOSUPPORT: return "ESOCKTNOSUPPORT";
    case ENOTDIR: return "ENOTDIR";
    case EBUSY: return "EBUSY";
    case ENOMEM: return "ENOMEM";
    default:
      {
        static char buf[32];
        snprintf (buf, sizeof buf, "E%d", e);
        return buf;
      }
    }
}

static int
result (long r)
{
  printf ("%s\n", r < 0 ? errname (errno) : "OK");
  return 0;
}

static long
do_socket (int family, int type)
{
  long r = syscall (SYS_socket, family, type, 0);
  if (r >= 0)
    close (r);
  return r;
}

static long
do_socketpair (int family)
{
  int sv[2];
  long r = syscall (SYS_socketpair, family, SOCK_STREAM, 0, sv);
  if (r >= 0)
    {
      close (sv[0]);
      close (sv[1]);
    }
  return r;
}

#if defined(__x86_64__)
/* i386 ABI through int $0x80 (registers ebx, ecx, edx, ...). */
static long
int80 (long nr, long a, long b, long c)
{
  long ret;
  __asm__ volatile ("int $0x80"
                    : "=a"(ret)
                    : "a"(nr), "b"(a), "c"(b), "d"(c)
                    : "memory", "r8", "r9", "r10", "r11");
  if (ret < 0 && ret > -4096)
    {
      errno = -ret;
      return -1;
    }
  return ret;
}
#endif

int
main (int argc, char **argv)
{
  const char *c = argc > 1 ? argv[1] : "";
  const char *arg = argc > 2 ? argv[2] : NULL;

  if (!strcmp (c, "socket-inet"))
    return result (do_socket (AF_INET, SOCK_STREAM));
  if (!strcmp (c, "socket-inet-dgram"))
    return result (do_socket (AF_INET, SOCK_DGRAM));
  if (!strcmp (c, "socket-inet6"))
    return result (do_socket (AF_INET6, SOCK_STREAM));
  if (!strcmp (c, "socket-netlink"))
    return result (do_socket (AF_NETLINK, SOCK_RAW));
  if (!strcmp (c, "socket-packet"))
    return result (do_socket (AF_PACKET, SOCK_RAW));
  if (!strcmp (c, "socket-vsock"))
    return result (do_socket (AF_VSOCK, SOCK_STREAM));
  if (!strcmp (c, "socket-alg"))
    return result (do_socket (AF_ALG, SOCK_SEQPACKET));
  if (!strcmp (c, "socket-bluetooth"))
    return result (do_socket (AF_BLUETOOTH, SOCK_STREAM));
  if (!strcmp (c, "socket-unix"))
    return result (do_socket (AF_UNIX, SOCK_STREAM));
  if (!strcmp (c, "socket-inet-highbits"))
    return result (syscall (SYS_socket, 0x100000000L | AF_INET, SOCK_STREAM, 0));
  if (!strcmp (c, "socketpair-unix"))
    return result (do_socketpair (AF_UNIX));
  if (!strcmp (c, "socketpair-inet"))
    return result (do_socketpair (AF_INET));
  if (!strcmp (c, "connect-inet") && arg)
    {
      struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (atoi (arg)),
                                .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
      long fd = syscall (SYS_socket, AF_INET, SOCK_STREAM, 0);
      if (fd < 0)
        return result (fd);
      return result (connect (fd, (struct sockaddr *) &sa, sizeof sa));
    }
  if (!strcmp (c, "connect-abstract") && arg)
    {
      struct sockaddr_un sa = { .sun_family = AF_UNIX };
      long fd = syscall (SYS_socket, AF_UNIX, SOCK_STREAM, 0);
      size_t len = strlen (arg);
      if (fd < 0)
        return result (fd);
      memcpy (sa.sun_path + 1, arg, len);
      return result (connect (fd, (struct sockaddr *) &sa, offsetof (struct sockaddr_un, sun_path) + 1 + len));
    }
#if defined(__x86_64__)
  if (!strcmp (c, "x32-socket"))
    return result (syscall (__X32_SYSCALL_BIT | 41, AF_INET, SOCK_STREAM, 0));
  if (!strcmp (c, "x32-socket-unix"))
    return result (syscall (__X32_SYSCALL_BIT | 41, AF_UNIX, SOCK_STREAM, 0));
  if (!strcmp (c, "int80-socketcall"))
    {
      /* socketcall(SYS_SOCKET=1, args) with args in 32-bit memory */
      unsigned int *args = mmap ((void *) 0x100000, 4096, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
      if (args == MAP_FAILED)
        return result (-1);
      args[0] = AF_INET;
      args[1] = SOCK_STREAM;
      args[2] = 0;
      return result (int80 (102, 1, (long) (uintptr_t) args, 0));
    }
  if (!strcmp (c, "int80-socket"))
    return result (int80 (359, AF_INET, SOCK_STREAM, 0));
  if (!strcmp (c, "int80-socket-unix"))
    return result (int80 (359, AF_UNIX, SOCK_STREAM, 0));
#endif
  if (!strcmp (c, "io_uring_setup"))
    {
      char params[120] = { 0 };
      long r = syscall (425, 4, params);
      if (r >= 0)
        close (r);
      return result (r);
    }
  if (!strcmp (c, "mount-tmpfs"))
    return result (mount ("x", arg ? arg : "/tmp", "tmpfs", 0, NULL));
  if (!strcmp (c, "remount-ro") && arg)
    return result (mount (NULL, arg, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL));
  if (!strcmp (c, "umount") && arg)
    return result (umount2 (arg, MNT_DETACH));
  if (!strcmp (c, "unshare-user"))
    return result (syscall (SYS_unshare, CLONE_NEWUSER));
  if (!strcmp (c, "unshare-mount"))
    return result (syscall (SYS_unshare, CLONE_NEWNS));
  if (!strcmp (c, "clone-newuser"))
    {
      long r = syscall (SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
      if (r == 0)
        _exit (0);
      if (r > 0)
        waitpid (r, NULL, 0);
      return result (r);
    }
  if (!strcmp (c, "clone3"))
    {
      uint64_t args[11] = { 0 };
      long r;
      args[0] = CLONE_NEWUSER; /* flags */
      args[4] = SIGCHLD;       /* exit_signal */
      r = syscall (435, args, sizeof args);
      if (r == 0)
        _exit (0);
      if (r > 0)
        waitpid (r, NULL, 0);
      return result (r);
    }
  if (!strcmp (c, "setns"))
    {
      int fd = open ("/proc/self/ns/mnt", O_RDONLY);
      return result (syscall (SYS_setns, fd, 0));
    }
  if (!strcmp (c, "pivot_root"))
    return result (syscall (SYS_pivot_root, "/tmp", "/tmp"));
  if (!strcmp (c, "chroot"))
    return result (chroot ("/tmp"));
  if (!strcmp (c, "open_tree"))
    return result (syscall (428, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
  if (!strcmp (c, "fsopen"))
    return result (syscall (430, "tmpfs", 0));
  if (!strcmp (c, "open_by_handle_at"))
    {
      char buf[128] = { 0 };
      return result (syscall (SYS_open_by_handle_at, AT_FDCWD, buf, O_RDONLY));
    }
  if (!strcmp (c, "name_to_handle_at"))
    {
      char buf[256] = { 0 };
      int mount_id;
      ((unsigned int *) buf)[0] = 128;
      return result (syscall (SYS_name_to_handle_at, AT_FDCWD, "/", buf, &mount_id, 0));
    }
  if (!strcmp (c, "keyctl"))
    return result (syscall (SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -4 /* user */, 0));
  if (!strcmp (c, "add_key"))
    return result (syscall (SYS_add_key, "user", "x", "y", 1, -4));
  if (!strcmp (c, "bpf"))
    {
      union bpf_attr attr;
      memset (&attr, 0, sizeof attr);
      return result (syscall (SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr));
    }
  if (!strcmp (c, "perf_event_open"))
    {
      struct perf_event_attr attr;
      memset (&attr, 0, sizeof attr);
      attr.size = sizeof attr;
      attr.type = PERF_TYPE_SOFTWARE;
      attr.config = PERF_COUNT_SW_CPU_CLOCK;
      return result (syscall (SYS_perf_event_open, &attr, 0, -1, -1, 0));
    }
  if (!strcmp (c, "userfaultfd"))
    return result (syscall (SYS_userfaultfd, 0));
  if (!strcmp (c, "kexec_load"))
    return result (syscall (SYS_kexec_load, 0, 0, NULL, 0));
  if (!strcmp (c, "init_module"))
    return result (syscall (SYS_init_module, NULL, 0, ""));
  if (!strcmp (c, "tiocsti"))
    {
      char ch = 'x';
      int fd = arg ? atoi (arg) : 0;
      return result (ioctl (fd, TIOCSTI, &ch));
    }
  if (!strcmp (c, "tiocsti-highbits"))
    {
      char ch = 'x';
      int fd = arg ? atoi (arg) : 0;
      return result (syscall (SYS_ioctl, fd, 0x100000000UL | TIOCSTI, &ch));
    }
  if (!strcmp (c, "ptrace") && arg)
    {
      long r = ptrace (PTRACE_ATTACH, atoi (arg), NULL, NULL);
      if (r == 0)
        ptrace (PTRACE_DETACH, atoi (arg), NULL, NULL);
      return result (r);
    }
  if (!strcmp (c, "kill") && arg)
    return result (kill (atoi (arg), 0));
  if (!strcmp (c, "fstat-fd") && arg)
    {
      struct stat st;
      return result (fstat (atoi (arg), &st));
    }
  if (!strcmp (c, "openat-fd") && arg && argc > 3)
    {
      long r = openat (atoi (arg), argv[3], O_RDONLY);
      return result (r);
    }
  fprintf (stderr, "try-syscall: unknown case '%s'\n", c);
  return 2;
}
