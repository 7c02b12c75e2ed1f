/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Replays every file of the given directories through a fuzz target, so the
 * seed corpus and every crash the fuzzer ever found run in the unit suite of
 * every build, without libFuzzer.
 */
#include "config.h"

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
main (int argc, char **argv)
{
  guint n = 0;

  printf ("1..1\n");
  for (int i = 1; i < argc; i++)
    {
      g_autoptr(GDir) dir = g_dir_open (argv[i], 0, NULL);
      const char *name;

      if (dir == NULL)
        {
          printf ("not ok 1 cannot open %s\n", argv[i]);
          return 1;
        }
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (argv[i], name, NULL);
          g_autofree char *data = NULL;
          gsize len;

          if (name[0] == '.' || !g_file_get_contents (path, &data, &len, NULL))
            continue;
          LLVMFuzzerTestOneInput ((const uint8_t *) data, len);
          n++;
        }
    }
  printf ("ok 1 replayed %u inputs\n", n);
  return 0;
}
