/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `--version` for both binaries: the fsgate version from meson.build and the
 * versions of libfuse, libseccomp and the kernel the process runs with.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * fsg_print_version:
 * @tool: the name printed first ("fsgate" or "fsgate-run")
 *
 * Print four lines to stdout: `TOOL VERSION`, the libfuse version (run time,
 * and the headers it was built with), the libseccomp version (run time) and
 * the kernel release and machine from uname(2).
 */
void fsg_print_version (const char *tool);

G_END_DECLS
