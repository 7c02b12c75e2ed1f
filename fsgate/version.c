/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `--version` for both binaries. It lives in libfsg-fs because that is the
 * lowest module linked with both libfuse and libseccomp; common/ depends on
 * neither. The library versions are the ones loaded at run time, which can
 * differ from the headers the binary was built with.
 */
#include "config.h"

#include "fsgate/version.h"

#include <fuse_lowlevel.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/utsname.h>

void
fsg_print_version (const char *tool)
{
  struct utsname u;
  const struct scmp_version *sv = seccomp_version ();

  printf ("%s %s\n", tool, FSG_VERSION);
  /* fuse_pkgversion() has the micro version too; fuse_version() is
   * FUSE_MAKE_VERSION (major * 100 + minor) */
  printf ("libfuse %s (built with %d.%d)\n", fuse_pkgversion (),
          FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION);
  if (sv != NULL)
    printf ("libseccomp %u.%u.%u\n", sv->major, sv->minor, sv->micro);
  else
    printf ("libseccomp unknown\n");
  if (uname (&u) == 0)
    printf ("kernel %s %s\n", u.release, u.machine);
  else
    printf ("kernel unknown\n");
  fflush (stdout);
}
