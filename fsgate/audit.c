/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Audit events: their JSON encodings (one object per event, no newline; the
 * caller appends "\n" and writes the line with a single write(2) so that
 * concurrent workers never interleave records in an O_APPEND file), and
 * their emission by the view (fsg_fs_audit(): the view paths, the deciding
 * rule and the caller's pid and command name of a FUSE request).
 */
#include "config.h"

#include "fsgate/audit.h"
#include "fsgate/fs-private.h"

#include "common/fsg-json.h"
#include <string.h>

/* serialises writes of records to the audit fd (audit_emit) */
static GMutex audit_write_lock;

static void
add_log_members (FsgJsonWriter *w, const FsgAuditEvent *event)
{
  g_autoptr(GDateTime) dt = NULL;
  g_autofree char *stamp = NULL;

  dt = g_date_time_new_from_unix_utc (event->time_us / G_USEC_PER_SEC);
  if (dt != NULL)
    {
      g_autofree char *base = g_date_time_format (dt, "%Y-%m-%dT%H:%M:%S");
      stamp = g_strdup_printf ("%s.%06dZ", base, (int) (event->time_us % G_USEC_PER_SEC));
    }

  fsg_json_key (w, "time");
  if (stamp != NULL)
    fsg_json_string (w, stamp);
  else
    fsg_json_int (w, event->time_us);
  fsg_json_key (w, "op");
  fsg_json_string (w, event->op ? event->op : "");
  fsg_json_key (w, "path");
  fsg_json_string (w, event->path ? event->path : "");
  if (event->path2 != NULL)
    {
      fsg_json_key (w, "path2");
      fsg_json_string (w, event->path2);
    }
  fsg_json_key (w, "decision");
  fsg_json_string (w, event->denied ? "deny" : "allow");
  fsg_json_key (w, "access");
  fsg_json_string (w, fsg_access_to_string (event->access));
  fsg_json_key (w, "rule");
  fsg_json_string (w, event->rule);
  fsg_json_key (w, "errno");
  fsg_json_int (w, event->err);
  if (event->err != 0)
    {
      fsg_json_key (w, "error");
      fsg_json_string (w, g_strerror (event->err));
    }
  if (event->mode != NULL)
    {
      fsg_json_key (w, "mode");
      fsg_json_string (w, event->mode);
    }
  fsg_json_key (w, "pid");
  fsg_json_int (w, event->pid);
  fsg_json_key (w, "comm");
  fsg_json_string (w, event->comm);
}

static void
add_report_members (FsgJsonWriter *w, const FsgAuditEvent *event)
{
  fsg_json_key (w, "source");
  fsg_json_string (w, "fuse");
  fsg_json_key (w, "operation");
  fsg_json_string (w, event->op ? event->op : "");
  fsg_json_key (w, "path");
  fsg_json_string (w, event->path ? event->path : "");
  if (event->path2 != NULL)
    {
      fsg_json_key (w, "path2");
      fsg_json_string (w, event->path2);
    }
  fsg_json_key (w, "rule");
  fsg_json_string (w, event->rule ? event->rule : "");
  fsg_json_key (w, "errno");
  fsg_json_int (w, event->err);
  fsg_json_key (w, "pid");
  fsg_json_int (w, event->pid);
  fsg_json_key (w, "command");
  fsg_json_string (w, event->comm);
}

char *
fsg_audit_event_to_json (const FsgAuditEvent *event, FsgAuditFormat format)
{
  GString *s = g_string_new (NULL);
  FsgJsonWriter w;

  fsg_json_writer_init (&w, s, FALSE);
  fsg_json_begin_object (&w);
  if (format == FSG_AUDIT_FORMAT_REPORT)
    add_report_members (&w, event);
  else
    add_log_members (&w, event);
  fsg_json_end_object (&w);
  return g_string_free (s, FALSE);
}

/* ---- Emission by the view ------------------------------------------------ */

/* Count a denial; FALSE when the event goes nowhere. */
static gboolean
audit_wanted (FsgFs *fs, gboolean denied)
{
  if (denied)
    __atomic_fetch_add (&fs->denials, 1, __ATOMIC_RELAXED);
  if (!denied && fs->audit_level != FSG_AUDIT_ALL)
    return FALSE;
  return fs->audit_fd >= 0 || fs->audit_func != NULL;
}

static void
audit_emit (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent,
            const char *name, FsgInode *parent2, const char *name2, FsgAccess access,
            const char *rule, gboolean denied, int err, const char *mode)
{
  FsgAuditEvent ev = { 0 };
  g_autofree char *path = NULL;
  g_autofree char *path2 = NULL;
  g_autofree char *comm = NULL;
  const struct fuse_ctx *ctx = req ? fuse_req_ctx (req) : NULL;

  /* A hard-linked file's view inode has one primary name: its records show
   * that name's path, and the rule the inode was decided by. */
  path = fsg_inode_path (fs, parent, name);
  if (parent2 != NULL)
    path2 = fsg_inode_path (fs, parent2, name2);
  if (ctx != NULL)
    comm = fsg_read_comm (ctx->pid);

  ev.time_us = g_get_real_time ();
  ev.op = op;
  ev.path = path;
  ev.path2 = path2;
  ev.denied = denied;
  ev.access = access;
  ev.rule = rule;
  ev.err = err;
  ev.mode = mode;
  ev.pid = ctx ? ctx->pid : 0;
  ev.comm = comm;

  if (fs->audit_fd >= 0)
    {
      g_autofree char *json = fsg_audit_event_to_json (&ev, FSG_AUDIT_FORMAT_LOG);
      g_autofree char *line = g_strconcat (json, "\n", NULL);

      /* Whole lines also on a pipe (atomic only up to PIPE_BUF, and a
       * record with two long paths is longer) and past partial writes:
       * one writer at a time. */
      g_mutex_lock (&audit_write_lock);
      (void) fsg_write_all (fs->audit_fd, line, strlen (line));
      g_mutex_unlock (&audit_write_lock);
    }
  if (fs->audit_func != NULL)
    fs->audit_func (&ev, fs->audit_data);
}

void
fsg_fs_audit (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent,
              const char *name, FsgInode *parent2, const char *name2,
              const FsgPathState *state, gboolean denied, int err, const char *mode)
{
  g_autofree char *rule = NULL;

  if (!audit_wanted (fs, denied))
    return;
  if (state != NULL)
    rule = fsg_path_state_describe (fs->policy, state);
  audit_emit (fs, req, op, parent, name, parent2, name2,
              state ? state->access : FSG_ACCESS_ABSENT, rule, denied, err, mode);
}

/* fsg_fs_audit() with the rule given as text (the deciding rule of git
 * protection is no policy rule). */
void
fsg_fs_audit_rule (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent,
                   const char *name, FsgInode *parent2, const char *name2,
                   FsgAccess access, const char *rule, gboolean denied, int err,
                   const char *mode)
{
  if (audit_wanted (fs, denied))
    audit_emit (fs, req, op, parent, name, parent2, name2, access, rule, denied, err, mode);
}

int
fsg_fs_deny (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent,
             const char *name, const FsgPathState *state, int err)
{
  fsg_fs_audit (fs, req, op, parent, name, NULL, NULL, state, TRUE, err, NULL);
  return -err;
}
