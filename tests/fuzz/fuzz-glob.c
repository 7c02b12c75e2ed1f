/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libFuzzer target for one-component glob matching: the input is a pattern
 * and a name separated by a NUL byte. Validation never crashes, matching a
 * valid pattern never crashes or hangs, and the pre-filtered match used by
 * the engine agrees with the plain one.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "policy/policy-private.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *buf = NULL;
  const char *pattern, *name;
  const char *sep;
  FsgGlob glob;

  if (size > 4096)
    return 0;
  buf = g_malloc (size + 2);
  memcpy (buf, data, size);
  buf[size] = '\0';
  buf[size + 1] = '\0';
  sep = memchr (buf, '\0', size + 1);
  pattern = buf;
  name = sep + 1;
  if (strchr (pattern, '/') || strchr (name, '/') || strcmp (pattern, "**") == 0)
    return 0;
  if (!fsg_glob_validate (pattern, NULL))
    return 0;
  fsg_glob_init (&glob, pattern);
  if (fsg_glob_matches (&glob, name, strlen (name)) != fsg_glob_match (pattern, name))
    __builtin_trap ();
  (void) fsg_glob_match_nocase (pattern, name);
  if (!fsg_glob_has_magic (pattern))
    {
      g_autofree char *lit = fsg_glob_unescape (pattern);
      if (fsg_glob_match (pattern, name) != (strcmp (lit, name) == 0))
        __builtin_trap ();
    }
  fsg_glob_clear (&glob);
  return 0;
}
