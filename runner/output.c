/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Captured output: per-stream capping that keeps the head and the tail
 * with a marker saying how much was dropped in between, the aggregate of
 * both streams (1/3 stdout, 2/3 stderr, unused share given to the other
 * stream; head and tail of each, with a marker at each cut) and UTF-8
 * repair for the JSON report.
 */
#include "config.h"

#include "runner/run.h"

#include <string.h>

void
fsg_capture_init (FsgCapture *capture, guint64 cap)
{
  capture->data = g_byte_array_new ();
  capture->tail = g_byte_array_new ();
  capture->cap = cap;
  capture->dropped = 0;
  capture->finished = FALSE;
}

void
fsg_capture_clear (FsgCapture *capture)
{
  g_clear_pointer (&capture->data, g_byte_array_unref);
  g_clear_pointer (&capture->tail, g_byte_array_unref);
}

/* The head gets the first half of the cap, the tail the last half: a CI
 * failure is at the end of the log (issue 12). */
static guint64
head_cap (const FsgCapture *capture)
{
  return capture->cap - capture->cap / 2;
}

static void
trim_tail (FsgCapture *capture, guint64 keep)
{
  if (capture->tail->len > keep)
    {
      guint64 excess = capture->tail->len - keep;
      g_byte_array_remove_range (capture->tail, 0, (guint) excess);
      capture->dropped += excess;
    }
}

void
fsg_capture_append (FsgCapture *capture, const guint8 *buf, gsize len)
{
  guint64 hcap = head_cap (capture);
  guint64 room = hcap > capture->data->len ? hcap - capture->data->len : 0;
  gsize take = MIN (room, (guint64) len);
  guint64 tcap = capture->cap / 2;

  if (take > 0)
    g_byte_array_append (capture->data, buf, take);
  if (len == take)
    return;
  if (tcap == 0)
    {
      capture->dropped += len - take;
      return;
    }
  g_byte_array_append (capture->tail, buf + take, len - take);
  /* trim in batches: each trim moves the whole tail */
  if (capture->tail->len > tcap + MAX (tcap, 65536))
    trim_tail (capture, tcap);
}

void
fsg_capture_finish (FsgCapture *capture)
{
  if (capture->finished)
    return;
  capture->finished = TRUE;
  trim_tail (capture, capture->cap / 2);
  if (capture->dropped > 0)
    {
      g_autofree char *marker = g_strdup_printf ("\n[fsgate-run: %" G_GUINT64_FORMAT
                                                 " bytes dropped here; the first and last "
                                                 "%" G_GUINT64_FORMAT " bytes are kept (--output-cap)]\n",
                                                 capture->dropped, capture->cap / 2);
      g_byte_array_append (capture->data, (const guint8 *) marker, strlen (marker));
    }
  g_byte_array_append (capture->data, capture->tail->data, capture->tail->len);
  g_byte_array_set_size (capture->tail, 0);
}

/* @take bytes of @from (the captured text of stream @name): all of it, or
 * its first and last part with a marker line between them naming the bytes
 * cut out there; the marker counts against @take when it fits. */
static void
append_ends (GByteArray *to, const GByteArray *from, guint64 take, const char *name)
{
  g_autofree char *marker = NULL;
  guint64 budget = take, cut = 0;

  if (take >= from->len)
    {
      g_byte_array_append (to, from->data, from->len);
      return;
    }
  /* the marker's length depends on the count, which depends on the length */
  for (int i = 0; i < 3; i++)
    {
      g_free (marker);
      cut = from->len - budget;
      marker = g_strdup_printf ("\n[fsgate-run: %" G_GUINT64_FORMAT " bytes of %s dropped here "
                                "(aggregated_output)]\n", cut, name);
      budget = take > strlen (marker) ? take - strlen (marker) : 0;
    }
  if (from->len - budget != cut)
    {
      g_free (marker);
      marker = g_strdup_printf ("\n[fsgate-run: %" G_GUINT64_FORMAT " bytes of %s dropped here "
                                "(aggregated_output)]\n", from->len - budget, name);
    }
  g_byte_array_append (to, from->data, (guint) (budget - budget / 2));
  g_byte_array_append (to, (const guint8 *) marker, strlen (marker));
  g_byte_array_append (to, from->data + from->len - budget / 2, (guint) (budget / 2));
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
  append_ends (agg, out->data, out_take, "stdout");
  append_ends (agg, err->data, err_take, "stderr");
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
