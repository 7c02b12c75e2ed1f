/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * --filter-terminal (runner/terminal.c): which escape sequences reach the
 * terminal, byte by byte as well as in one piece.
 */
#include "config.h"

#include <string.h>

#include "runner/run.h"

static char *
filter_in_chunks (const char *in, gsize chunk, guint64 *out_dropped)
{
  FsgTermFilter f;
  GByteArray *out = g_byte_array_new ();
  gsize len = strlen (in);

  fsg_term_filter_init (&f);
  for (gsize i = 0; i < len; i += chunk)
    fsg_term_filter (&f, (const guint8 *) in + i, MIN (chunk, len - i), out);
  *out_dropped = f.dropped;
  fsg_term_filter_clear (&f);
  g_byte_array_append (out, (const guint8 *) "", 1);
  return (char *) g_byte_array_free (out, FALSE);
}

static void
test_cases (void)
{
  static const struct
  {
    const char *in, *out;
    guint64 dropped;
  } cases[] = {
    { "plain text\r\n", "plain text\r\n", 0 },
    { "\033[1;31mred\033[0m \033[2J\033[H\033[?25l", "\033[1;31mred\033[0m \033[2J\033[H\033[?25l", 0 },
    /* OSC 52 clipboard write, BEL and ST terminated */
    { "a\033]52;c;ZXZpbA==\007b", "ab", 1 },
    { "a\033]52;c;ZXZpbA==\033\\b", "ab", 1 },
    /* titles, hyperlinks, cwd, prompt marks pass */
    { "\033]0;title\007\033]2;t\033\\\033]8;;http://x\033\\l\033]8;;\033\\\033]7;file://h/d\007\033]133;A\007",
      "\033]0;title\007\033]2;t\033\\\033]8;;http://x\033\\l\033]8;;\033\\\033]7;file://h/d\007\033]133;A\007", 0 },
    /* colour queries and font changes */
    { "\033]11;?\007\033]4;1;?\033\\\033]50;font\007x", "x", 3 },
    /* DSR, cursor position report, DA1/DA2/DA3, window/title reports, DECRQM, kitty query */
    { "\033[5n\033[6n\033[c\033[>c\033[=0c\033[21t\033[14t\033[?2026$p\033[?u.", ".", 9 },
    /* DCS (DECRQSS, XTGETTCAP), APC, PM, SOS */
    { "\033P$qm\033\\\033P+q544e\033\\\033_Gi=1\033\\\033^pm\033\\\033Xsos\033\\!", "!", 5 },
    /* two-byte escapes pass */
    { "\033=\033>\0337\0338\033(B", "\033=\033>\0337\0338\033(B", 0 },
    /* review H4 bypasses. ESC inside an OSC string that is not ESC \ ends
     * the string and starts a new escape: the DSR after it is a DSR */
    { "a\033]0;t\033[6nb", "ab", 2 },
    { "a\033]52;c;QQ==\033[5n\033]0;x\007b", "a\033]0;x\007b", 2 },
    /* CAN and SUB cancel a sequence: what follows is text, not the string */
    { "a\033]52;c;\030\033[6nb", "ab", 2 },
    { "a\033[6\032nb", "anb", 1 },
    /* 8-bit C1: CSI 0x9B, OSC 0x9D, DCS 0x90, APC 0x9F, PM 0x9E, SOS 0x98,
     * raw and UTF-8 encoded (C2 9B ...) */
    { "a\2336nb", "ab", 1 },
    { "a\23552;c;QQ==\234b", "ab", 1 },
    { "a\220$qm\234\237G\234\236p\234\230s\234b", "ab", 4 },
    { "a\302\2336nb", "ab", 1 },
    { "a\302\23552;c;QQ==\302\234b", "ab", 1 },
    { "a\302\2331;31mb", "a\033[1;31mb", 0 },
    /* UTF-8 text with continuation bytes in 0x80-0x9F passes unchanged */
    { "\342\202\254 \303\251 \360\237\230\200 \302\240", "\342\202\254 \303\251 \360\237\230\200 \302\240", 0 },
    /* allowlist: XTVERSION, DECRQCRA, DECRQTSR, mouse and focus modes,
     * media copy, keyboard protocol push, XTQMODKEYS are dropped */
    { "\033[>q\033[1;1;1;1;1;1*y\033[1$u\033[?1000h\033[?1006;1000h\033[?1004h\033[5i\033[>1u\033[?4m.",
      ".", 9 },
    /* ... while what screens use passes: margins, scrolling, inserts,
     * DECSET of ordinary modes (alt screen, bracketed paste), cursor shape,
     * soft reset, mouse mode off */
    { "\033[1;24r\033[3S\033[2T\033[4@\033[2P\033[3X\033[5G\033[2d\033[?1049h\033[?2004h\033[2 q\033[!p\033[?1000l\033[s\033[u\033[4h",
      "\033[1;24r\033[3S\033[2T\033[4@\033[2P\033[3X\033[5G\033[2d\033[?1049h\033[?2004h\033[2 q\033[!p\033[?1000l\033[s\033[u\033[4h", 0 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    for (gsize chunk = 1; chunk <= 64; chunk *= 4)
      {
        guint64 dropped = 0;
        g_autofree char *got = filter_in_chunks (cases[i].in, chunk, &dropped);

        g_assert_cmpstr (got, ==, cases[i].out);
        g_assert_cmpuint (dropped, ==, cases[i].dropped);
      }
}

/* An OSC longer than the bound is dropped whole, and the text after it
 * comes through. */
static void
test_long_string (void)
{
  g_autoptr(GString) in = g_string_new ("<\033]52;c;");
  guint64 dropped = 0;
  g_autofree char *got = NULL;

  for (int i = 0; i < 3 * FSG_TERM_SEQ_MAX; i++)
    g_string_append_c (in, 'A');
  g_string_append (in, "\007>");
  got = filter_in_chunks (in->str, 1000, &dropped);
  g_assert_cmpstr (got, ==, "<>");
  g_assert_cmpuint (dropped, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/runner/term-filter/cases", test_cases);
  g_test_add_func ("/runner/term-filter/long-string", test_long_string);
  return g_test_run ();
}
