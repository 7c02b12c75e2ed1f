/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Subcommands of the `fsgate` binary. main.c parses the subcommand name and
 * hands the remaining arguments (argv[0] is the subcommand) to one of these.
 * Each returns the process exit status.
 */
#pragma once

int fsg_cmd_explain (int argc, char **argv);
int fsg_cmd_policy (int argc, char **argv);
int fsg_cmd_mount (int argc, char **argv);
