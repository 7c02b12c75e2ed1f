/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The report keys git_dirs_created and git_redirects_created (git-report.c).
 */
#pragma once

#include <glib.h>

#include "common/fsg-json.h"
#include "fsgate/audit.h"

G_BEGIN_DECLS

/* The audit event op (and record source) of a git dir the command made. */
#define FSG_GIT_DIR_CREATED "git-dir-created"
/* The audit event op of a .git file or symlink the command made (a
 * redirection to another git dir): report key git_redirects_created. */
#define FSG_GIT_REDIRECT_CREATED "git-redirect-created"

/* What the runner keeps: the paths, each once, in the order met, at most
 * 2000 of both together. */
typedef struct
{
  GPtrArray *dirs;      /* char* */
  GPtrArray *redirects; /* char* */
  GHashTable *seen;     /* "d" or "r" + path */
} FsgGitReport;

void fsg_git_report_init (FsgGitReport *report);
void fsg_git_report_clear (FsgGitReport *report);
/* In the daemon process: the audit pipe's record of @event (op
 * FSG_GIT_DIR_CREATED or FSG_GIT_REDIRECT_CREATED), one line with its
 * newline. (transfer full) */
char *fsg_git_report_line (const FsgAuditEvent *event);
/* In the runner: if @record is such a record, note its path and return TRUE. */
gboolean fsg_git_report_take (FsgGitReport *report, const FsgJsonObject *record);
/* The report members "git_dirs_created": [path, ...] and
 * "git_redirects_created": [path, ...]. */
void fsg_git_report_write (FsgJsonWriter *w, const FsgGitReport *report);

G_END_DECLS
