/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Audit events of the policy view: one record per denied operation (always)
 * and, with FSG_AUDIT_ALL, per allowed open/create/unlink/rename/mkdir. The
 * records are data, not log lines: they go to a JSON Lines file and/or to an
 * in-process callback (the runner collects them for its report). Both
 * encodings are built here (fsg_audit_event_to_json()); the daemon side
 * (fsg_fs_audit(), which fills events from FUSE requests) is in audit.c too.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "policy/policy.h"

G_BEGIN_DECLS

typedef enum
{
  FSG_AUDIT_DENIED, /* denials only (default) */
  FSG_AUDIT_ALL,    /* denials plus allowed open/create/unlink/rename/mkdir/... */
} FsgAuditLevel;

typedef struct
{
  gint64 time_us;       /* wall clock, microseconds since the epoch */
  const char *op;       /* "lookup", "open", "create", "unlink", "rename", "link", ... */
  const char *path;     /* path in the view ("/home/ann/.ssh/id_rsa") */
  const char *path2;    /* rename/link destination, else NULL */
  gboolean denied;      /* TRUE when the operation was refused by the policy */
  FsgAccess access;     /* the policy state of path */
  const char *rule;     /* the deciding rule with origin, e.g. "deny-read ~/.ssh (profile workspace-write)" */
  int err;              /* positive errno returned to the caller, 0 if allowed */
  const char *mode;     /* opens: "r", "w", "rw"; else NULL */
  pid_t pid;            /* caller pid as the daemon sees it (0 if unknown) */
  const char *comm;     /* caller command name from /proc/PID/comm, or NULL */
} FsgAuditEvent;

/* Called from FUSE worker threads, possibly concurrently; must not block and
 * must not touch the view. The event and its strings are valid only during
 * the call. */
typedef void (*FsgAuditFunc) (const FsgAuditEvent *event, gpointer user_data);

typedef enum
{
  /* `--audit-log` lines: time, op, path, [path2], decision, access, rule,
   * errno, [error], [mode], pid, comm. */
  FSG_AUDIT_FORMAT_LOG,
  /* fsgate-run's denial records for its report: source ("fuse"),
   * operation, path, [path2], rule, errno, pid, command. */
  FSG_AUDIT_FORMAT_REPORT,
} FsgAuditFormat;

/* One JSON object (no newline) for @event; bytes from the host or from the
 * command (paths, command names) are made valid UTF-8 (common/fsg-json.h),
 * so the line always parses and no record can hide behind an odd name.
 * (transfer full) */
char *fsg_audit_event_to_json (const FsgAuditEvent *event, FsgAuditFormat format);

G_END_DECLS
