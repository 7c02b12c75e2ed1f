/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libFuzzer target for git protection's config checker (policy/git.c),
 * which the FUSE daemon runs on content a sandboxed command wrote: any
 * bytes parse or fail without crashing or hanging, and the verdict agrees
 * with a scan that asks about every variable.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
any_cb (const char *var, const char *value, gpointer user_data)
{
  gboolean *found = user_data;

  if (fsg_git_config_var_runs_program (var, value))
    *found = TRUE;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *verdict = NULL;
  gboolean found = FALSE, parsed;

  if (size > 65536)
    return 0;
  verdict = fsg_git_config_find_program ((const char *) data, size);
  parsed = fsg_git_config_scan ((const char *) data, size, any_cb, &found, NULL);
  /* safe means: it parses and no variable runs a program */
  if ((verdict == NULL) != (parsed && !found))
    __builtin_trap ();
  return 0;
}
