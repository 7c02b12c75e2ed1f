/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The POLICY OPTIONS shared by `fsgate` and `fsgate-run`: --profile, --policy,
 * --rw, --ro, --deny-read, --deny-write, --net/--no-net, --timeout,
 * --kill-after, --output-cap, --hide-denied. They are collected in command-line
 * order and applied as the last layer of the policy.
 */
#pragma once

#include "policy/policy.h"

G_BEGIN_DECLS

typedef struct _FsgPolicyOptions FsgPolicyOptions;

FsgPolicyOptions *fsg_policy_options_new (void);
void fsg_policy_options_free (FsgPolicyOptions *opts);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FsgPolicyOptions, fsg_policy_options_free)

/* A GOptionGroup named "policy" whose callbacks fill @opts; add it to a
 * GOptionContext with g_option_context_add_group() (or set it as the main
 * group). @opts must outlive the context. (transfer full) */
GOptionGroup *fsg_policy_options_group (FsgPolicyOptions *opts);

typedef enum
{
  FSG_POLICY_OPTIONS_ALL,   /* fsgate-run, fsgate policy: every option in --help */
  FSG_POLICY_OPTIONS_VIEW,  /* fsgate explain: the run-only ones (--timeout,
                             * --kill-after, --output-cap) accepted but not listed */
  FSG_POLICY_OPTIONS_MOUNT, /* fsgate mount: --net/--no-net not listed either */
} FsgPolicyOptionsSet;

/* The same group, listing in --help only the options that mean something
 * to the tool. (transfer full) */
GOptionGroup *fsg_policy_options_group_full (FsgPolicyOptions *opts, FsgPolicyOptionsSet set);

/* Text for --help describing the policy options and profiles. (transfer none) */
const char *fsg_policy_options_help (void);

/* Build the effective policy: base profile, --policy files in order, then the
 * flags in order. Errors name the file and line or the flag. (transfer full) */
FsgPolicy *fsg_policy_options_build (FsgPolicyOptions *opts, GError **error);

/* fsgate-run: add a deny-write rule for each --policy file (its real path),
 * so the command cannot change the policy of later runs. */
void fsg_policy_options_set_protect_files (FsgPolicyOptions *opts, gboolean protect);

G_END_DECLS
