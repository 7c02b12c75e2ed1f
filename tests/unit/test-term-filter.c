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
