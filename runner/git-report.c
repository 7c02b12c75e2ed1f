/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The report key git_dirs_created (issue 11): the git directories the
 * command made through the view. The daemon process sends each one on the
 * audit pipe as {"source": "git-dir-created", "path": ...}; the runner
 * keeps them apart from the denials.
 */
#include "config.h"

#include "runner/git-report.h"

#include "common/fsg-util.h"

#include <string.h>

void
fsg_git_report_event (int fd, const FsgAuditEvent *event)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  g_autofree char *line = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, FSG_GIT_DIR_CREATED);
  fsg_json_add_text (b, "path", event->path ? event->path : "");
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  line = g_strconcat (text, "\n", NULL);
  /* one write of less than PIPE_BUF: never interleaved with a denial */
  fsg_write_all (fd, line, strlen (line));
}

gboolean
fsg_git_report_take (JsonArray *dirs, JsonNode *node)
{
  JsonObject *obj = json_node_get_object (node);
  const char *path;

  if (g_strcmp0 (json_object_get_string_member_with_default (obj, "source", ""),
                 FSG_GIT_DIR_CREATED) != 0)
    return FALSE;
  path = json_object_get_string_member_with_default (obj, "path", "");
  for (guint i = 0; i < json_array_get_length (dirs); i++)
    if (g_strcmp0 (json_array_get_string_element (dirs, i), path) == 0)
      return TRUE;
  json_array_add_string_element (dirs, path);
  return TRUE;
}

void
fsg_git_report_add (JsonBuilder *b, JsonArray *dirs)
{
  json_builder_set_member_name (b, "git_dirs_created");
  json_builder_begin_array (b);
  for (guint i = 0; dirs != NULL && i < json_array_get_length (dirs); i++)
    json_builder_add_string_value (b, json_array_get_string_element (dirs, i));
  json_builder_end_array (b);
}
