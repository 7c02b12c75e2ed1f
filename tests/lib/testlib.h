/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Helpers for the GLib test programs: gate tests on facilities (root,
 * /dev/fuse, user namespaces) with a clear skip reason that turns into a
 * failure when FSGATE_TESTS_MUST_RUN is set (CI sets it), and temporary
 * directories that are removed even when a test fails.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Each returns TRUE when the facility is present; otherwise it skips the
 * current test (or fails it under FSGATE_TESTS_MUST_RUN) and returns FALSE,
 * and the test must return at once. */
gboolean fsg_test_require_root (void);
gboolean fsg_test_require_fuse (void);
gboolean fsg_test_require_userns (void);

/* Skip (or fail under FSGATE_TESTS_MUST_RUN) with a reason. */
void fsg_test_skip_or_fail (const char *reason);

/* A new directory under $TMPDIR; removed recursively by fsg_test_tmpdir_free().
 * (transfer full) */
char *fsg_test_tmpdir_new (const char *tag);
/* A new directory on the trusted system chain (root-owned, not
 * group/other-writable up to /), where symlinks may choose roots
 * (policy/roots.c): under $FSGATE_BUILDDIR when run as root and that chain
 * is trusted, else under /var/lib or /run; NULL when none is (the test is
 * skipped, or failed under FSGATE_TESTS_MUST_RUN). Remove it with
 * fsg_test_tmpdir_free(). (transfer full) */
char *fsg_test_trusted_tmpdir_new (const char *tag);
void fsg_test_tmpdir_free (char *path);

/* A scratch directory for the whole test program, canonical (realpath),
 * removed at exit and on SIGABRT, SIGSEGV, SIGPIPE, SIGINT and SIGTERM, so a
 * failing or killed test leaves nothing behind. Created on the first call.
 * (transfer none) */
const char *fsg_test_scratch_dir (const char *tag);
/* Remove the scratch directory now (also done at exit). */
void fsg_test_scratch_cleanup (void);

/* Write @contents to @dir/@relpath, creating parent directories. */
void fsg_test_write_file (const char *dir, const char *relpath, const char *contents);
/* mkdir -p @dir/@relpath */
void fsg_test_mkdir (const char *dir, const char *relpath);
/* rm -rf that never crosses into another filesystem (mount points are skipped). */
void fsg_test_rm_rf (const char *path);

G_END_DECLS
