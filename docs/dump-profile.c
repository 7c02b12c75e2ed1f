/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Build-time helper (not installed): writes each built-in profile, exactly
 * as compiled into the tools, to OUTDIR/NAME.ini so that `meson install` can
 * ship them as example policies. The names on the command line are the
 * outputs meson.build declares; they must be exactly the built-in profiles,
 * so adding a profile without updating docs/meson.build fails the build.
 *
 * Usage: dump-profile OUTDIR NAME...
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

int
main (int argc, char **argv)
{
  const char *const *names = fsg_policy_profile_names ();
  guint n_builtin = g_strv_length ((char **) names);

  if (argc < 2)
    {
      fprintf (stderr, "Usage: dump-profile OUTDIR NAME...\n");
      return 2;
    }
  if ((guint) (argc - 2) != n_builtin)
    {
      fprintf (stderr, "dump-profile: %d profiles declared in docs/meson.build, %u built in\n",
               argc - 2, n_builtin);
      return 1;
    }
  for (int i = 2; i < argc; i++)
    {
      const char *text = fsg_policy_profile_text (argv[i]);
      g_autofree char *path = NULL;
      g_autoptr(GError) error = NULL;

      if (text == NULL)
        {
          fprintf (stderr, "dump-profile: '%s' is not a built-in profile\n", argv[i]);
          return 1;
        }
      path = g_strdup_printf ("%s/%s.ini", argv[1], argv[i]);
      if (!g_file_set_contents (path, text, -1, &error))
        {
          fprintf (stderr, "dump-profile: %s\n", error->message);
          return 1;
        }
    }
  return 0;
}
