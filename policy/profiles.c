/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The built-in profiles, written as policy files so that they are parsed,
 * explained and printed exactly like user policies (and installed as
 * examples). The first one is the default.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <string.h>

/* Secrets and host daemon sockets denied by every filesystem profile. */
#define SECRETS_DENY_READ                                                        \
  "deny-read = /proc;/sys;/dev;/run;/var/run;?${XDG_RUNTIME_DIR};"               \
  "~/.ssh;~/.gnupg;~/.aws;~/.azure;~/.kube;~/.config/gcloud;~/.docker;"         \
  "~/.netrc;~/.git-credentials;~/.pypirc;/etc/shadow;/etc/gshadow;"              \
  ".env;.env.*;*.pem;*.key;id_rsa*;id_ed25519*;id_ecdsa*\n"

#define COMMON_TAIL                                                              \
  "# Git works in the sandbox, and nothing it writes can make the host's git\n" \
  "# run a program later (hooks, program-running config keys, redirections):\n" \
  "# see fsgate-policy(5), GIT PROTECTION.\n"                                    \
  "git = protect\n"                                                              \
  "\n"                                                                           \
  "[network]\n"                                                                  \
  "allow = false\n"                                                              \
  "\n"                                                                           \
  "[environment]\n"                                                              \
  "inherit = core\n"

static const struct
{
  const char *name;
  const char *summary;
  const char *text;
} profiles[] = {
  {
    "workspace-write",
    "host / read-only, the current directory writable, secrets denied, no network",
    "# fsgate profile workspace-write (the default)\n"
    "# The host read-only, the current directory writable, secrets and host\n"
    "# daemon sockets denied, no network. fsgate-run adds its own /proc, /dev\n"
    "# and a private /tmp.\n"
    "[filesystem]\n"
    "readonly = /\n"
    "writable = ${CWD}\n" SECRETS_DENY_READ COMMON_TAIL,
  },
  {
    "read-only",
    "like workspace-write, with the current directory read-only too",
    "# fsgate profile read-only\n"
    "# As workspace-write, but nothing is writable.\n"
    "[filesystem]\n"
    "readonly = /\n" SECRETS_DENY_READ COMMON_TAIL,
  },
  {
    "none",
    "the empty policy: nothing in the view, no network",
    "# fsgate profile none: the empty policy. Add roots with --rw/--ro or a\n"
    "# policy file.\n",
  },
};

static const char *const profile_names[] = { "workspace-write", "read-only", "none", NULL };

const char *const *
fsg_policy_profile_names (void)
{
  return profile_names;
}

const char *
fsg_policy_profile_text (const char *name)
{
  for (guint i = 0; name && i < G_N_ELEMENTS (profiles); i++)
    if (strcmp (profiles[i].name, name) == 0)
      return profiles[i].text;
  return NULL;
}

const char *
fsg_policy_profile_summary (const char *name)
{
  for (guint i = 0; name && i < G_N_ELEMENTS (profiles); i++)
    if (strcmp (profiles[i].name, name) == 0)
      return profiles[i].summary;
  return NULL;
}
