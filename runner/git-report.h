/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The report key git_dirs_created (git-report.c).
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "fsgate/audit.h"

G_BEGIN_DECLS

/* The audit event op (and record source) of a git dir the command made. */
#define FSG_GIT_DIR_CREATED "git-dir-created"
/* The audit event op of a .git file or symlink the command made (a
 * redirection to another git dir): report key git_redirects_created. */
#define FSG_GIT_REDIRECT_CREATED "git-redirect-created"

/* In the daemon process: send @event (op FSG_GIT_DIR_CREATED) on the audit
 * pipe @fd. */
void fsg_git_report_event (int fd, const FsgAuditEvent *event);
/* In the runner: if @node is such a record, add its path to @dirs (once)
 * and return TRUE. */
gboolean fsg_git_report_take (JsonArray *dirs, JsonNode *node);
/* The report members "git_dirs_created": [path, ...] and
 * "git_redirects_created": [path, ...]. */
void fsg_git_report_add (JsonBuilder *b, JsonArray *dirs);

G_END_DECLS
