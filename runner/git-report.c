/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The report keys git_dirs_created and git_redirects_created (issue 11): the
 * git directories and the .git redirections the command made through the
 * view. The daemon process sends each one on the audit pipe as
 * {"source": "git-dir-created", "path": ...}; the runner keeps them apart
 * from the denials.
 */
#include "config.h"

#include "runner/git-report.h"

#include <string.h>

#define MAX_GIT_PATHS 2000

void
fsg_git_report_init (FsgGitReport *report)
{
  report->dirs = g_ptr_array_new_with_free_func (g_free);
  report->redirects = g_ptr_array_new_with_free_func (g_free);
  report->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

void
fsg_git_report_clear (FsgGitReport *report)
{
  g_clear_pointer (&report->dirs, g_ptr_array_unref);
  g_clear_pointer (&report->redirects, g_ptr_array_unref);
  g_clear_pointer (&report->seen, g_hash_table_unref);
}

char *
fsg_git_report_line (const FsgAuditEvent *event)
{
  g_autoptr(FsgJsonObject) o = fsg_json_object_new ();
  g_autofree char *text = NULL;

  fsg_json_object_set_string (o, "source",
                              g_strcmp0 (event->op, FSG_GIT_REDIRECT_CREATED) == 0
                                ? FSG_GIT_REDIRECT_CREATED : FSG_GIT_DIR_CREATED);
  fsg_json_object_set_string (o, "path", event->path ? event->path : "");
  text = fsg_json_object_to_string (o);
  return g_strconcat (text, "\n", NULL);
}

gboolean
fsg_git_report_take (FsgGitReport *report, const FsgJsonObject *record)
{
  const char *source = fsg_json_object_get_string (record, "source");
  const char *path = fsg_json_object_get_string (record, "path");
  gboolean redirect = g_strcmp0 (source, FSG_GIT_REDIRECT_CREATED) == 0;
  g_autofree char *key = NULL;

  if (!redirect && g_strcmp0 (source, FSG_GIT_DIR_CREATED) != 0)
    return FALSE;
  if (path == NULL)
    path = "";
  key = g_strconcat (redirect ? "r" : "d", path, NULL);
  if (g_hash_table_contains (report->seen, key) ||
      report->dirs->len + report->redirects->len >= MAX_GIT_PATHS)
    return TRUE; /* once each, and a bounded report */
  g_hash_table_add (report->seen, g_steal_pointer (&key));
  g_ptr_array_add (redirect ? report->redirects : report->dirs, g_strdup (path));
  return TRUE;
}

void
fsg_git_report_write (FsgJsonWriter *w, const FsgGitReport *report)
{
  for (int pass = 0; pass < 2; pass++)
    {
      GPtrArray *paths = pass == 0 ? report->dirs : report->redirects;

      fsg_json_key (w, pass == 0 ? "git_dirs_created" : "git_redirects_created");
      fsg_json_begin_array (w);
      for (guint i = 0; paths != NULL && i < paths->len; i++)
        fsg_json_string (w, paths->pdata[i]);
      fsg_json_end_array (w);
    }
}
