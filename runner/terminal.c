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
 *   - CSI sequences not on an allowlist: SGR ('m'), cursor movement and
 *     positioning, erasing, inserting/deleting, scrolling, tab stops,
 *     margins, save/restore cursor, ANSI modes and DEC private modes
 *     ('?...h/l', without the mouse and focus reporting modes 9, 1000-1006,
 *     1015, 1016, which make the terminal send input), DECSED/DECSEL,
 *     XTSAVE/XTRESTORE, DECSCUSR (' q') and DECSTR ('!p'). Everything else
 *     (DSR 'n', DA 'c', window reports 't', DECRQM '$p', XTVERSION '>q',
 *     DECRQCRA '*y', DECRQTSR '$u', keyboard protocol queries and pushes,
 *     media copy 'i', ...) is dropped.
 *
 * The filter reads what a terminal reads: an ESC inside a string that is
 * not ESC \ ends the string (dropped) and starts a new escape; CAN and SUB
 * cancel a sequence; the 8-bit C1 controls (CSI 0x9B, OSC 0x9D, DCS 0x90,
 * SOS 0x98, PM 0x9E, APC 0x9F, ST 0x9C), raw or UTF-8 encoded (C2 9B ...),
 * split across reads or not, are read as ESC and the matching letter (and
 * what is kept is passed in the 7-bit form).
 *
 * Text, kept sequences and two-byte escapes pass unchanged. A sequence split across reads is held until it ends; one
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
  f->utf8 = 0;
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

/* DEC private modes that make the terminal send input (mouse, focus). */
static gboolean
reporting_mode (guint64 mode)
{
  return mode == 9 || (mode >= 1000 && mode <= 1006) || mode == 1015 || mode == 1016;
}

/* @seq is ESC [ [private marker] params [intermediates] final: is it on the
 * allowlist? */
static gboolean
keep_csi (const guint8 *seq, gsize len)
{
  guint8 final = seq[len - 1];
  guint8 marker = 0;
  gsize p = 2, q;
  char inter[4] = { 0 };
  gsize n_inter = 0;

  if (p < len - 1 && (seq[p] == '?' || seq[p] == '>' || seq[p] == '<' || seq[p] == '='))
    marker = seq[p++];
  q = p;
  while (q < len - 1 && ((seq[q] >= '0' && seq[q] <= '9') || seq[q] == ';' || seq[q] == ':'))
    q++;
  while (q < len - 1)
    {
      if (seq[q] < 0x20 || seq[q] > 0x2f || n_inter >= sizeof inter - 1)
        return FALSE; /* parameters after intermediates, or a marker in the middle */
      inter[n_inter++] = (char) seq[q++];
    }
  if (n_inter > 0)
    return marker == 0
           && ((strcmp (inter, " ") == 0 && final == 'q')    /* DECSCUSR */
               || (strcmp (inter, "!") == 0 && final == 'p')); /* DECSTR */
  if (marker == 0)
    return strchr ("@ABCDEFGHIJKLMPSTXZ`abdefghlmrsu", final) != NULL;
  if (marker != '?')
    return FALSE; /* '>' '<' '=': XTVERSION, DA2/DA3, keyboard protocol, ... */
  if (final == 'J' || final == 'K' || final == 'l' || final == 'r' || final == 's')
    return TRUE;
  if (final == 'h')
    {
      /* every mode set must be one that does not report */
      g_autofree char *params = g_strndup ((const char *) seq + p, len - 1 - p);
      g_auto (GStrv) modes = g_strsplit (params, ";", -1);

      for (guint i = 0; modes[i] != NULL; i++)
        {
          guint64 m;
          if (modes[i][0] != '\0' && g_ascii_string_to_unsigned (modes[i], 10, 0, G_MAXUINT32, &m, NULL)
              && reporting_mode (m))
            return FALSE;
        }
      return TRUE;
    }
  return FALSE;
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

/* Drop the sequence being read (cut by an ESC, CAN or SUB). */
static void
cancel_sequence (FsgTermFilter *f)
{
  if (f->seq->len > 0)
    f->dropped++; /* (a string being discarded was counted when it overflowed) */
  g_byte_array_set_size (f->seq, 0);
  f->state = ST_TEXT;
}

/* One 7-bit-normalised byte through the escape state machine. */
static void
feed (FsgTermFilter *f, guint8 c, GByteArray *out)
{
  if ((c == 0x18 || c == 0x1a) && f->state != ST_TEXT)
    {
      /* CAN, SUB: the terminal abandons the sequence */
      cancel_sequence (f);
      return;
    }
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
      else if (c == '\\')
        end_sequence (f, out, FALSE); /* a stray ST */
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
      if (c == '\\')
        {
          g_byte_array_append (f->seq, &c, 1);
          end_sequence (f, out, f->seq->data[1] == ']'
                                  && keep_osc (f->seq->data + 2, f->seq->len - 4));
        }
      else
        {
          /* ESC not followed by \ ends the string (dropped) and starts a
           * new escape, as a terminal reads it */
          g_byte_array_set_size (f->seq, 0);
          f->dropped++;
          f->state = ST_TEXT;
          feed (f, 0x1b, out);
          feed (f, c, out);
        }
      break;
    case ST_DISCARD:
      if (c == 0x07)
        f->state = ST_TEXT;
      else if (c == 0x1b)
        f->state = ST_DISCARD_ESC;
      break;
    case ST_DISCARD_ESC:
      if (c == '\\')
        f->state = ST_TEXT;
      else
        {
          f->state = ST_TEXT;
          feed (f, 0x1b, out);
          feed (f, c, out);
        }
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

/* A C1 control (0x80-0x9F): as ESC and the letter 0x40 above it. */
static void
feed_c1 (FsgTermFilter *f, guint8 c, GByteArray *out)
{
  feed (f, 0x1b, out);
  feed (f, (guint8) (c - 0x40), out);
}

void
fsg_term_filter (FsgTermFilter *f, const guint8 *in, gsize len, GByteArray *out)
{
  for (gsize i = 0; i < len; i++)
    {
      guint8 c = in[i];

      if (f->utf8 == -1)
        {
          /* after a C2 lead: C2 80..9F is a C1 control in UTF-8 */
          f->utf8 = 0;
          if (c >= 0x80 && c <= 0x9f)
            {
              feed_c1 (f, c, out);
              continue;
            }
          feed (f, 0xc2, out);
          if (c >= 0x80 && c <= 0xbf)
            {
              feed (f, c, out);
              continue;
            }
        }
      if (c < 0x80)
        {
          f->utf8 = 0;
          feed (f, c, out);
        }
      else if (c <= 0xbf)
        {
          if (f->utf8 > 0)
            {
              f->utf8--;
              feed (f, c, out); /* a continuation byte */
            }
          else if (c <= 0x9f)
            feed_c1 (f, c, out); /* a raw 8-bit C1 control */
          else
            feed (f, c, out);
        }
      else if (c == 0xc2)
        f->utf8 = -1; /* held until the next byte says what it is */
      else
        {
          f->utf8 = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
          feed (f, c, out);
        }
    }
}
