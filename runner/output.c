/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Captured output: per-stream head capping, the aggregate of both streams
 * (1/3 stdout, 2/3 stderr, unused share given to the other stream) and
 * UTF-8 repair for the JSON report.
 */
#include "config.h"

#include "runner/run.h"

void
fsg_capture_init (FsgCapture *capture, guint64 cap)
{
  capture->data = g_byte_array_new ();
  capture->cap = cap;
  capture->dropped = 0;
}

void
fsg_capture_clear (FsgCapture *capture)
{
  g_clear_pointer (&capture->data, g_byte_array_unref);
}

void
fsg_capture_append (FsgCapture *capture, const guint8 *buf, gsize len)
{
  guint64 room = capture->cap > capture->data->len ? capture->cap - capture->data->len : 0;
  gsize take = MIN (room, (guint64) len);

  if (take > 0)
    g_byte_array_append (capture->data, buf, take);
  capture->dropped += len - take;
}

GByteArray *
fsg_capture_aggregate (const FsgCapture *out, const FsgCapture *err, guint64 cap)
{
  guint64 lo = out->data->len, le = err->data->len;
  guint64 want_out, err_take, remaining, out_take;
  GByteArray *agg = g_byte_array_new ();

  if (lo + le <= cap)
    {
      out_take = lo;
      err_take = le;
    }
  else
    {
      want_out = MIN (lo, cap / 3);
      err_take = MIN (le, cap - want_out);
      remaining = cap - want_out - err_take;
      out_take = want_out + MIN (remaining, lo - want_out);
    }
  g_byte_array_append (agg, out->data->data, out_take);
  g_byte_array_append (agg, err->data->data, err_take);
  return agg;
}

char *
fsg_capture_to_utf8 (const guint8 *data, gsize len)
{
  /* NUL bytes are valid UTF-8 but would end a C string early in JSON. */
  g_autoptr(GString) s = g_string_sized_new (len);

  for (gsize i = 0; i < len; i++)
    {
      if (data[i] == 0)
        g_string_append (s, "\xEF\xBF\xBD");
      else
        g_string_append_c (s, data[i]);
    }
  return g_utf8_make_valid (s->str, s->len);
}
