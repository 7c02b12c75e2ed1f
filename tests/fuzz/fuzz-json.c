/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libFuzzer target for the flat JSON objects fsgate-run reads from the FUSE
 * daemon (common/fsg-json.c): parsing never crashes, and what parses writes
 * back to text that parses to the same text again.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "common/fsg-json.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(FsgJsonObject) o = NULL;
  g_autoptr(FsgJsonObject) back = NULL;
  g_autofree char *text = NULL, *again = NULL;

  if (size > 65536)
    return 0;
  o = fsg_json_object_parse ((const char *) data, size);
  if (o == NULL)
    return 0;
  text = fsg_json_object_to_string (o);
  back = fsg_json_object_parse (text, strlen (text));
  if (back == NULL)
    __builtin_trap ();
  again = fsg_json_object_to_string (back);
  if (strcmp (text, again) != 0)
    __builtin_trap ();
  return 0;
}
