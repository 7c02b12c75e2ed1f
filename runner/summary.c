/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The denial summary fsgate-run prints on its stderr after a run with
 * denials (unless --quiet): at most five lines, so a person or an agent
 * reading the terminal sees that the sandbox refused something, what and by
 * which rule, and where the full list is: the exact version of guessing
 * "sandbox denied" from keywords in the output.
 *
 *   fsgate-run: 3 accesses denied by the sandbox:
 *     open /home/ann/.ssh/id_rsa: deny-read /home/ann/.ssh (profile workspace-write) [cat]
 *     socket AF_INET: network denied (network = false / --no-net) [curl] (x2)
 *     ... and 7 more; rerun with --json FILE to list them all
 */
#include "config.h"

#include "runner/run.h"

#include <stdio.h>
#include <string.h>

#define SUMMARY_LINES 5

#define SUMMARY_MAX_CHARS 300

/* One line that cannot drive the terminal (paths and command names come
 * from the sandboxed command): invalid UTF-8 repaired, every control (C0,
 * DEL, C1 such as U+009B CSI) and format code point (U+202E and the other
 * bidi overrides, zero-width ones) and line separators shown as '?', and
 * at most SUMMARY_MAX_CHARS characters, cut on a character boundary.
 * (transfer full) */
static char *
clean (const char *text)
{
  g_autofree char *valid = g_utf8_make_valid (text, -1);
  GString *s = g_string_new (NULL);
  glong n = 0;

  for (const char *p = valid; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      GUnicodeType t = g_unichar_type (c);

      if (n == SUMMARY_MAX_CHARS - 3 && g_utf8_strlen (p, -1) > 3)
        {
          g_string_append (s, "...");
          break;
        }
      if (t == G_UNICODE_CONTROL || t == G_UNICODE_FORMAT || t == G_UNICODE_LINE_SEPARATOR ||
          t == G_UNICODE_PARAGRAPH_SEPARATOR)
        g_string_append_c (s, '?');
      else
        g_string_append_unichar (s, c);
      n++;
    }
  return g_string_free (s, FALSE);
}

char *
fsg_denial_summary (GPtrArray *denials, guint64 n_denials, const char *json_path)
{
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) counts = g_array_new (FALSE, TRUE, sizeof (guint64));
  GString *out;
  guint shown, n = denials ? denials->len : 0;
  guint64 listed = 0, rest;

  if (n_denials == 0)
    return NULL;
  for (guint i = 0; i < n; i++)
    {
      const FsgJsonObject *o = denials->pdata[i];
      const char *op, *path, *path2, *rule, *comm;
      g_autofree char *raw = NULL, *line = NULL;
      guint j;

      op = fsg_json_object_get_string (o, "operation");
      path = fsg_json_object_get_string (o, "path");
      path2 = fsg_json_object_get_string (o, "path2");
      rule = fsg_json_object_get_string (o, "rule");
      comm = fsg_json_object_get_string (o, "command");
      raw = g_strdup_printf ("%s %s%s%s: %s%s%s%s", op && *op ? op : "access", path ? path : "?",
                              path2 ? " -> " : "", path2 ? path2 : "",
                              rule && *rule ? rule : "denied", comm ? " [" : "",
                              comm ? comm : "", comm ? "]" : "");
      line = clean (raw);
      for (j = 0; j < lines->len; j++)
        if (strcmp (lines->pdata[j], line) == 0)
          break;
      {
        /* one record per distinct denial, with its count (run.c) */
        guint64 times = (guint64) MAX (1, fsg_json_object_get_int (o, "count", 1));

        if (j == lines->len)
          {
            g_ptr_array_add (lines, g_steal_pointer (&line));
            g_array_append_val (counts, times);
          }
        else
          g_array_index (counts, guint64, j) += times;
      }
    }

  out = g_string_new (NULL);
  g_string_append_printf (out, "fsgate-run: %" G_GUINT64_FORMAT " %s by the sandbox:\n",
                          n_denials, n_denials == 1 ? "access denied" : "accesses denied");
  /* header + entries (+ one line for the rest) <= SUMMARY_LINES */
  shown = lines->len <= SUMMARY_LINES - 1 ? lines->len : SUMMARY_LINES - 2;
  for (guint i = 0; i < shown; i++)
    {
      guint64 c = g_array_index (counts, guint64, i);

      listed += c;
      if (c > 1)
        g_string_append_printf (out, "  %s (x%" G_GUINT64_FORMAT ")\n",
                                (char *) lines->pdata[i], c);
      else
        g_string_append_printf (out, "  %s\n", (char *) lines->pdata[i]);
    }
  rest = n_denials > listed ? n_denials - listed : 0;
  if (rest > 0)
    {
      g_autofree char *where = NULL;

      if (json_path != NULL && strcmp (json_path, "-") == 0)
        where = g_strdup ("the JSON report on stdout lists them (\"denials\")");
      else if (json_path != NULL)
        {
          g_autofree char *shown_path = clean (json_path);
          where = g_strdup_printf ("the report %s lists them (\"denials\")", shown_path);
        }
      else
        where = g_strdup ("rerun with --json FILE to list them all");
      g_string_append_printf (out, "  ... and %" G_GUINT64_FORMAT " more; %s\n", rest, where);
    }
  return g_string_free (out, FALSE);
}
