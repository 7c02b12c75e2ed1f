/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The built-in profiles, written as policy files so that they are parsed,
 * explained and printed exactly like user policies (and installed as
 * examples). The first one is the default.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <string.h>

/* Secrets and host daemon sockets denied by every filesystem profile.
 * Secret file names (secret-names) are denied everywhere but in the system
 * software trees and the public trust stores (fsg_policy_secret_pruned:
 * /usr, /lib*, /bin, /sbin, /etc/ssl/certs...), whose *.pem and *.key are
 * public, and not in package trees (certifi's cacert.pem). */
#define SECRETS_DENY_READ                                                        \
  "# Host daemon sockets and runtime state, credential stores of the home\n"    \
  "# directory and the host's own secrets.\n"                                   \
  "deny-read = /proc;/sys;/dev;/run;/var/run/*;?${XDG_RUNTIME_DIR};"               \
  "~/.ssh;~/.gnupg;~/.aws;~/.azure;~/.kube;~/.config/gcloud;~/.docker;"         \
  "~/.config/containers/auth.json;"                                              \
  "~/.netrc;~/.git-credentials;~/.pypirc;/etc/shadow;/etc/gshadow;"              \
  "/etc/ssh/ssh_host_*_key;/etc/ssl/private;/etc/kubernetes/admin.conf;"         \
  "/etc/containers/auth.json\n"                                                 \
  "# Denied at any depth but in /usr, /lib*, /bin, /sbin, the public trust\n"  \
  "# stores and package trees: keys, dotenv files, shell and REPL histories,\n" \
  "# editor backups of those.\n"                                              \
  "secret-names = .env;.env.*;*.pem;*.key;id_rsa*;id_ed25519*;id_ecdsa*;"       \
  "id_dsa*;.env~;*.pem~;*.key~;.*.pem.sw?;.*.key.sw?;..env.sw?;"                 \
  ".bash_history;.zsh_history;.python_history;.psql_history;.mysql_history;"    \
  ".sqlite_history;.node_repl_history\n"

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
  "inherit = all\n"

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
    "# A copy of this file is a complete policy: it names the empty base\n"
    "# profile, so `fsgate-run -p copy.ini` applies exactly these rules.\n"
    "[policy]\n"
    "profile = none\n"
    "\n"
    "[filesystem]\n"
    "readonly = /\n"
    "writable = ${CWD}\n" SECRETS_DENY_READ COMMON_TAIL,
  },
  {
    "read-only",
    "like workspace-write, with the current directory read-only too",
    "# fsgate profile read-only\n"
    "# As workspace-write, but nothing is writable.\n"
    "# A copy of this file is a complete policy: it names the empty base\n"
    "# profile, so `fsgate-run -p copy.ini` applies exactly these rules.\n"
    "[policy]\n"
    "profile = none\n"
    "\n"
    "[filesystem]\n"
    "readonly = /\n" SECRETS_DENY_READ COMMON_TAIL,
  },
  {
    "none",
    "the empty policy: nothing in the view, no network",
    "# fsgate profile none: the empty policy. Add roots with --rw/--ro or a\n"
    "# policy file.\n"
    "[policy]\n"
    "profile = none\n",
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
