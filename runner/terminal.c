/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * --filter-terminal (issue 14 item 11): what an untrusted command may send
 * to the user's terminal. Output that fsgate-run copies to a terminal (the
 * command's pty, or pipes standing for a terminal on fd 1/2) passes a
 * streaming filter that removes escape sequences which act outside the
 * screen or make the terminal answer:
 *
 *   - OSC sequences other than 0, 1, 2 (titles), 7 (working directory),
 *     8 (hyperlinks) and 133 (prompt marks): OSC 52 writes the clipboard,
 *     OSC 4/10-19/104... queries make the terminal reply, OSC 50 sets fonts;
 *   - DCS, SOS, PM and APC strings: DECRQSS, XTGETTCAP and the like ask for
 *     replies, tmux/screen passthrough reaches the outer terminal;
 *   - CSI sequences ending in 'n' (DSR, cursor position report), 'c' (DA1,
 *     DA2, DA3), 't' (window operations and title/size reports), '$p'
 *     (DECRQM) and '?u' (keyboard protocol query).
 *
 * Everything else (text, SGR colours, cursor movement, erasing, modes)
 * passes unchanged. A sequence split across reads is held until it ends; one
 * longer than FSG_TERM_SEQ_MAX is dropped whole. Without the option nothing
 * is filtered: the command's own pty gets what a terminal program needs,
 * and replies to its queries go back to the command, not to the user's
 * shell (fsgate-run discards unread terminal input when it restores the
 * terminal).
 */
#include "config.h"

#include "runner/run.h"

#include <string.h>

enum
{
  ST_TEXT,
  ST_ESC,    /* after ESC */
  ST_CSI,    /* ESC [ ... */
  ST_STRING, /* OSC, DCS, SOS, PM, APC: until BEL (OSC) or ST */
  ST_STR_ESC, /* ESC inside a string: ST is ESC \ */
  ST_DISCARD, /* the rest of a string too long to hold */
  ST_DISCARD_ESC
};

void
fsg_term_filter_init (FsgTermFilter *f)
{
  f->state = ST_TEXT;
  f->seq = g_byte_array_new ();
  f->dropped = 0;
}

void
fsg_term_filter_clear (FsgTermFilter *f)
{
  g_clear_pointer (&f->seq, g_byte_array_unref);
}

static gboolean
keep_osc (const guint8 *body, gsize len)
{
  static const char *const kept[] = { "0", "1", "2", "7", "8", "133" };
  gsize n = 0;

  while (n < len && body[n] >= '0' && body[n] <= '9')
    n++;
  if (n == 0 || (n < len && body[n] != ';'))
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (kept); i++)
    if (strlen (kept[i]) == n && memcmp (kept[i], body, n) == 0)
      return TRUE;
  return FALSE;
}

/* @seq is ESC [ params intermediates final. */
static gboolean
keep_csi (const guint8 *seq, gsize len)
{
  guint8 final = seq[len - 1];
  gboolean dollar = memchr (seq, '$', len) != NULL;
  gboolean question = len > 2 && seq[2] == '?';

  if (final == 'n' || final == 'c' || final == 't')
    return FALSE;
  if (final == 'p' && dollar)
    return FALSE;
  if (final == 'u' && question)
    return FALSE;
  return TRUE;
}

static void
end_sequence (FsgTermFilter *f, GByteArray *out, gboolean keep)
{
  if (keep)
    g_byte_array_append (out, f->seq->data, f->seq->len);
  else
    f->dropped++;
  g_byte_array_set_size (f->seq, 0);
  f->state = ST_TEXT;
}

void
fsg_term_filter (FsgTermFilter *f, const guint8 *in, gsize len, GByteArray *out)
{
  for (gsize i = 0; i < len; i++)
    {
      guint8 c = in[i];

      switch (f->state)
        {
        case ST_TEXT:
          if (c == 0x1b)
            {
              g_byte_array_append (f->seq, &c, 1);
              f->state = ST_ESC;
            }
          else
            g_byte_array_append (out, &c, 1);
          break;
        case ST_ESC:
          g_byte_array_append (f->seq, &c, 1);
          if (c == '[')
            f->state = ST_CSI;
          else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_')
            f->state = ST_STRING;
          else if (c == 0x1b)
            {
              /* ESC ESC: the first one stands alone */
              g_byte_array_set_size (f->seq, 1);
              g_byte_array_append (out, &c, 1);
            }
          else
            end_sequence (f, out, TRUE); /* two-byte escapes: keypad modes, charsets, ... */
          break;
        case ST_CSI:
          g_byte_array_append (f->seq, &c, 1);
          if (c >= 0x40 && c <= 0x7e)
            end_sequence (f, out, keep_csi (f->seq->data, f->seq->len));
          else if (c < 0x20 && c != 0x1b)
            {
              /* a C0 control inside CSI is executed as is: pass it */
              g_byte_array_set_size (f->seq, f->seq->len - 1);
              g_byte_array_append (out, &c, 1);
            }
          else if (c == 0x1b)
            {
              /* the sequence was cut: drop it, start a new one */
              g_byte_array_set_size (f->seq, 0);
              f->dropped++;
              g_byte_array_append (f->seq, &c, 1);
              f->state = ST_ESC;
            }
          break;
        case ST_STRING:
          g_byte_array_append (f->seq, &c, 1);
          if (c == 0x07 && f->seq->data[1] == ']')
            end_sequence (f, out, keep_osc (f->seq->data + 2, f->seq->len - 3));
          else if (c == 0x1b)
            f->state = ST_STR_ESC;
          break;
        case ST_STR_ESC:
          g_byte_array_append (f->seq, &c, 1);
          if (c == '\\')
            end_sequence (f, out, f->seq->data[1] == ']'
                                    && keep_osc (f->seq->data + 2, f->seq->len - 4));
          else
            f->state = ST_STRING;
          break;
        case ST_DISCARD:
          if (c == 0x07)
            f->state = ST_TEXT;
          else if (c == 0x1b)
            f->state = ST_DISCARD_ESC;
          break;
        case ST_DISCARD_ESC:
          f->state = c == '\\' ? ST_TEXT : ST_DISCARD;
          break;
        default:
          g_assert_not_reached ();
        }
      if (f->seq->len > FSG_TERM_SEQ_MAX)
        {
          /* far too long for anything kept: drop it, and the rest of it */
          f->state = f->state == ST_CSI ? ST_TEXT : ST_DISCARD;
          g_byte_array_set_size (f->seq, 0);
          f->dropped++;
        }
    }
}
