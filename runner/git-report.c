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
  json_builder_add_string_value (b, g_strcmp0 (event->op, FSG_GIT_REDIRECT_CREATED) == 0
                                       ? FSG_GIT_REDIRECT_CREATED
                                       : FSG_GIT_DIR_CREATED);
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
  const char *source = json_object_get_string_member_with_default (obj, "source", "");
  const char *path;
  gboolean redirect = g_strcmp0 (source, FSG_GIT_REDIRECT_CREATED) == 0;

  if (!redirect && g_strcmp0 (source, FSG_GIT_DIR_CREATED) != 0)
    return FALSE;
  path = json_object_get_string_member_with_default (obj, "path", "");
  /* git dirs are string elements, redirections {"redirect": path} */
  for (guint i = 0; i < json_array_get_length (dirs); i++)
    {
      JsonNode *e = json_array_get_element (dirs, i);
      const char *p = JSON_NODE_HOLDS_OBJECT (e)
                        ? json_object_get_string_member_with_default (json_node_get_object (e),
                                                                      "redirect", "")
                        : json_node_get_string (e);

      if (JSON_NODE_HOLDS_OBJECT (e) == redirect && g_strcmp0 (p, path) == 0)
        return TRUE;
    }
  if (json_array_get_length (dirs) >= 2000)
    return TRUE; /* a bounded report */
  if (redirect)
    {
      JsonObject *o = json_object_new ();

      json_object_set_string_member (o, "redirect", path);
      json_array_add_object_element (dirs, o);
    }
  else
    json_array_add_string_element (dirs, path);
  return TRUE;
}

void
fsg_git_report_add (JsonBuilder *b, JsonArray *dirs)
{
  for (int pass = 0; pass < 2; pass++)
    {
      json_builder_set_member_name (b, pass == 0 ? "git_dirs_created" : "git_redirects_created");
      json_builder_begin_array (b);
      for (guint i = 0; dirs != NULL && i < json_array_get_length (dirs); i++)
        {
          JsonNode *e = json_array_get_element (dirs, i);

          if (pass == 0 && !JSON_NODE_HOLDS_OBJECT (e))
            json_builder_add_string_value (b, json_node_get_string (e));
          else if (pass == 1 && JSON_NODE_HOLDS_OBJECT (e))
            json_builder_add_string_value (
              b, json_object_get_string_member_with_default (json_node_get_object (e), "redirect", ""));
        }
      json_builder_end_array (b);
    }
}
