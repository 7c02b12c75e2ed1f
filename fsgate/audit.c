/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * JSON Lines encoding of audit events. One object per event, no newline;
 * the caller appends "\n" and writes the line with a single write(2) so
 * that concurrent workers never interleave records in an O_APPEND file.
 */
#include "config.h"

#include "fsgate/audit.h"

#include <json-glib/json-glib.h>

void
fsg_json_add_text (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  if (value == NULL)
    json_builder_add_null_value (b);
  else if (g_utf8_validate (value, -1, NULL))
    json_builder_add_string_value (b, value);
  else
    {
      g_autofree char *valid = g_utf8_make_valid (value, -1);
      json_builder_add_string_value (b, valid);
    }
}

char *
fsg_audit_event_to_json (const FsgAuditEvent *event)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) dt = NULL;
  g_autofree char *stamp = NULL;

  dt = g_date_time_new_from_unix_utc (event->time_us / G_USEC_PER_SEC);
  if (dt != NULL)
    {
      g_autofree char *base = g_date_time_format (dt, "%Y-%m-%dT%H:%M:%S");
      stamp = g_strdup_printf ("%s.%06dZ", base, (int) (event->time_us % G_USEC_PER_SEC));
    }

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "time");
  if (stamp != NULL)
    json_builder_add_string_value (b, stamp);
  else
    json_builder_add_int_value (b, event->time_us);
  json_builder_set_member_name (b, "op");
  json_builder_add_string_value (b, event->op ? event->op : "");
  fsg_json_add_text (b, "path", event->path ? event->path : "");
  if (event->path2 != NULL)
    fsg_json_add_text (b, "path2", event->path2);
  json_builder_set_member_name (b, "decision");
  json_builder_add_string_value (b, event->denied ? "deny" : "allow");
  json_builder_set_member_name (b, "access");
  json_builder_add_string_value (b, fsg_access_to_string (event->access));
  fsg_json_add_text (b, "rule", event->rule);
  json_builder_set_member_name (b, "errno");
  json_builder_add_int_value (b, event->err);
  if (event->err != 0)
    {
      json_builder_set_member_name (b, "error");
      json_builder_add_string_value (b, g_strerror (event->err));
    }
  if (event->mode != NULL)
    {
      json_builder_set_member_name (b, "mode");
      json_builder_add_string_value (b, event->mode);
    }
  json_builder_set_member_name (b, "pid");
  json_builder_add_int_value (b, event->pid);
  fsg_json_add_text (b, "comm", event->comm);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}
