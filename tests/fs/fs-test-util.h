/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Helpers for the policy-view tests: a host tree in a temporary directory,
 * `fsgate mount -f` started as a child with that tree's policy, and
 * cleanup that unmounts and kills even when an assertion aborts the test.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

typedef struct
{
  char *tmp;    /* canonical temporary directory */
  char *host;   /* tmp/host: the host tree */
  char *mnt;    /* tmp/mnt: the mount point */
  char *audit;  /* tmp/audit.jsonl */
  GPid pid;     /* the fsgate daemon, 0 when not running */
} FsgView;

void fsg_view_init (int *argc, char ***argv);
const char *fsg_view_fsgate (void);
FsgView *fsg_view_new (const char *tag);
/* Mount with the policy flags (NULL-terminated); extra flags go before the
 * mount point. Returns FALSE (test failed) if the mount did not appear. */
gboolean fsg_view_mount (FsgView *v, const char *const *flags);
/* Path in the host tree / the same path inside the view. (transfer full) */
char *fsg_view_h (FsgView *v, const char *rel);
char *fsg_view_v (FsgView *v, const char *rel);
gboolean fsg_view_is_mounted (const char *path);
void fsg_view_free (FsgView *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FsgView, fsg_view_free)

/* errno of an operation, 0 on success. */
#define FSG_ERRNO(expr) ((expr) < 0 ? errno : 0)
