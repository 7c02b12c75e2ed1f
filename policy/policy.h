/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fsgate policy: which absolute paths a sandboxed command may see, read
 * and write, plus the non-filesystem settings (network, timeouts, output cap,
 * environment). This header is the whole public face of the policy module.
 *
 * A policy is built in layers with FsgPolicyBuilder (base profile, policy
 * files, command-line flags) and then frozen into an immutable FsgPolicy that
 * any number of threads may query at once.
 *
 * Path decisions come in two forms that always agree:
 *  - incremental: fsg_policy_root_state() then fsg_policy_child_state() for
 *    each name, as a FUSE lookup walks the tree; cost grows with the name
 *    length and the number of glob patterns that can still match, never with
 *    the total number of rules;
 *  - whole-path: fsg_policy_decide() evaluates every rule against an
 *    absolute path directly (used by `fsgate explain`).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Ordered by privilege, so `access >= FSG_ACCESS_RO` reads "readable". */
typedef enum
{
  FSG_ACCESS_ABSENT = 0, /* not part of the view: ENOENT */
  FSG_ACCESS_DENY,       /* exists, may not be read, listed or written: EACCES */
  FSG_ACCESS_RO,         /* readable, every mutation fails with EROFS */
  FSG_ACCESS_RW,         /* readable and writable */
} FsgAccess;

typedef enum
{
  FSG_RULE_WRITABLE,
  FSG_RULE_READONLY,
  FSG_RULE_DENY_READ,
  FSG_RULE_DENY_WRITE,
} FsgRuleKind;

/* Where a rule came from. */
typedef enum
{
  FSG_ORIGIN_PROFILE, /* a built-in profile */
  FSG_ORIGIN_FILE,    /* a policy file */
  FSG_ORIGIN_CLI,     /* a command-line flag */
} FsgOriginKind;

/* One rule of the effective policy. Owned by the FsgPolicy. */
typedef struct
{
  FsgRuleKind kind;
  guint index;          /* position in the policy; lower was added first */
  const char *pattern;  /* as written after variable and ~ expansion (a path for roots) */
  const char *path;     /* roots: canonical path; deny rules: normalised pattern */
  const char *origin;   /* "policy.ini:7", "--deny-read", "profile workspace-write" */
  FsgOriginKind origin_kind;
  gboolean is_glob;     /* deny rules: contains *, ? or [...] */
  gboolean anchored;    /* deny rules: matches at one place (FALSE: a name at any depth) */
} FsgRule;

typedef struct _FsgPolicy FsgPolicy;
typedef struct _FsgNodeSet FsgNodeSet; /* opaque, owned and interned by the policy */

typedef enum
{
  FSG_STATE_SYNTHETIC = 1 << 0, /* not under any root: an ancestor shown only as the way to roots */
  FSG_STATE_ROOT = 1 << 1,      /* this path is itself a root */
  FSG_STATE_ALIAS = 1 << 2,     /* a synthetic symlink standing for a root given through a symlink */
  FSG_STATE_PROTECTED = 1 << 3, /* a root, an ancestor of a root, or on the path of a rule:
                                 * may not be renamed, unlinked or replaced */
} FsgStateFlags;

/* The decision for one path, small enough to keep one per inode. Produced by
 * the engine; copy it by value. `rule` names the deciding rule (NULL for an
 * absent path; for a synthetic ancestor, a root below it). */
typedef struct
{
  guint8 access;  /* FsgAccess */
  guint8 flags;   /* FsgStateFlags */
  guint16 depth;  /* number of path components; 0 for "/" */
  const FsgRule *rule;
  const FsgNodeSet *set; /* rule positions still live here; NULL when none */
} FsgPathState;

/* Environment inheritance (see docs/policy.md, [environment]). */
typedef enum
{
  FSG_ENV_INHERIT_CORE,
  FSG_ENV_INHERIT_ALL,
  FSG_ENV_INHERIT_NONE,
} FsgEnvInherit;

#define FSG_POLICY_ERROR (fsg_policy_error_quark ())
GQuark fsg_policy_error_quark (void);

typedef enum
{
  FSG_POLICY_ERROR_SYNTAX,        /* not a key file, or a malformed line */
  FSG_POLICY_ERROR_UNKNOWN_KEY,   /* unknown group or key */
  FSG_POLICY_ERROR_INVALID_VALUE, /* bad boolean, duration, size, name, glob, variable */
  FSG_POLICY_ERROR_RELATIVE_PATH, /* relative path where an absolute one is required */
  FSG_POLICY_ERROR_MISSING_ROOT,  /* a root does not exist and was not marked optional */
  FSG_POLICY_ERROR_NOT_FOUND,     /* a policy file or include does not exist */
  FSG_POLICY_ERROR_UNKNOWN_PROFILE,
  FSG_POLICY_ERROR_CONFLICT,      /* two files name different base profiles */
  FSG_POLICY_ERROR_TOO_DEEP,      /* include nesting or a cycle */
  FSG_POLICY_ERROR_PLANTED_SYMLINK, /* a root's path goes through a symlink the caller could have made */
} FsgPolicyError;

/* ---- Building ---------------------------------------------------------- */

typedef struct _FsgPolicyBuilder FsgPolicyBuilder;

/* @cwd, @home: absolute paths used for relative command-line paths, `${CWD}`,
 * `~` and `${HOME}`. @runtime_dir: `${XDG_RUNTIME_DIR}`, may be NULL (unset).
 * (transfer full) */
FsgPolicyBuilder *fsg_policy_builder_new (const char *cwd,
                                          const char *home,
                                          const char *runtime_dir);
/* A builder for the calling process: the current directory, $HOME (or the
 * passwd entry), $XDG_RUNTIME_DIR. */
FsgPolicyBuilder *fsg_policy_builder_new_for_process (void);
void fsg_policy_builder_free (FsgPolicyBuilder *builder);
/* With git = protect, look at the repositories that contain each writable
 * root when finishing: their git dirs and common dirs outside the roots
 * become writable, core.hooksPath directories and global git config files
 * under writable roots deny-write (docs/policy.md, git). On for
 * fsg_policy_builder_new_for_process(), off otherwise. */
void fsg_policy_builder_set_git_discovery (FsgPolicyBuilder *builder, gboolean discover);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FsgPolicyBuilder, fsg_policy_builder_free)

/* The base profile; overrides any `profile =` in policy files. */
gboolean fsg_policy_builder_set_profile (FsgPolicyBuilder *builder,
                                         const char *name,
                                         GError **error);
/* Parse a policy file now (syntax, keys, values, globs; file:line errors).
 * Roots are canonicalised by fsg_policy_builder_finish(). */
gboolean fsg_policy_builder_add_file (FsgPolicyBuilder *builder,
                                      const char *path,
                                      GError **error);
/* Parse policy text; @name appears in origins and errors as a file name. */
gboolean fsg_policy_builder_add_data (FsgPolicyBuilder *builder,
                                      const char *name,
                                      const char *data,
                                      gssize len,
                                      GError **error);
/* Command-line layer. @flag is the origin shown by explain ("--rw").
 * Relative paths resolve against the builder's cwd. */
gboolean fsg_policy_builder_add_rule (FsgPolicyBuilder *builder,
                                      FsgRuleKind kind,
                                      const char *value,
                                      const char *flag,
                                      GError **error);
/* Command-line layer for the settings; @value is parsed as in a file
 * ("10s", "1MiB", "true"). @key is a file key such as "timeout". */
gboolean fsg_policy_builder_set (FsgPolicyBuilder *builder,
                                 const char *key,
                                 const char *value,
                                 const char *flag,
                                 GError **error);
/* Apply the layers, canonicalise roots, compile the decision engine.
 * The builder may not be used afterwards except to free it. (transfer full) */
FsgPolicy *fsg_policy_builder_finish (FsgPolicyBuilder *builder, GError **error);

/* Built-in profile names, NULL-terminated; the first is the default. */
const char *const *fsg_policy_profile_names (void);
/* The text of a built-in profile as a policy file, or NULL. */
const char *fsg_policy_profile_text (const char *name);
/* One-line description of a built-in profile, or NULL. */
const char *fsg_policy_profile_summary (const char *name);

/* ---- Querying ---------------------------------------------------------- */

void fsg_policy_free (FsgPolicy *policy);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FsgPolicy, fsg_policy_free)

/* The state of "/", the root of the view. */
FsgPathState fsg_policy_root_state (const FsgPolicy *policy);
/* The state of @name (one component, no '/', not "." or "..") inside a
 * directory whose state is @parent. Thread-safe, no allocation in the
 * common case. */
FsgPathState fsg_policy_child_state (const FsgPolicy *policy,
                                     const FsgPathState *parent,
                                     const char *name);
/* Whole-path decision for an absolute, normalised path ("/a/b"). */
FsgPathState fsg_policy_decide (const FsgPolicy *policy, const char *path);
/* The same decision by the incremental engine (fsg_policy_child_state()
 * for each component from the root): always equal to fsg_policy_decide()
 * (the unit property test), much cheaper with many rules. */
FsgPathState fsg_policy_walk (const FsgPolicy *policy, const char *path);

/* TRUE when every rule that could match below @a matches below @b in the same
 * way: moving a directory from @a to @b cannot carry a path into or out of a
 * rule. Both must be states of the same policy from the incremental walk
 * (fsg_policy_decide() leaves `set` NULL). */
gboolean fsg_path_state_same_scope (const FsgPathState *a, const FsgPathState *b);

/* For a state with FSG_STATE_ALIAS: the symlink target to show. */
const char *fsg_policy_alias_target (const FsgPolicy *policy, const FsgPathState *state);

/* Names that lead from a synthetic directory toward roots, for readdir of a
 * synthetic directory; @state must come from the incremental walk.
 * (transfer container) NULL-terminated; may be empty. */
const char **fsg_policy_synthetic_children (const FsgPolicy *policy,
                                            const FsgPathState *state);

/* Rules in order; never NULL. */
const FsgRule *const *fsg_policy_rules (const FsgPolicy *policy, guint *out_n);
/* The first symlink on the way to the absolute @path that is not a trusted
 * system symlink (policy/roots.c: its directory and every ancestor
 * root-owned and not group/other-writable, outside every writable root of
 * @policy), and its target: TRUE and (transfer full) *out_link,
 * *out_target. Used for roots and for fsgate-run's --json directory. */
gboolean fsg_policy_find_untrusted_symlink (const FsgPolicy *policy, const char *path,
                                            char **out_link, char **out_target);
/* Literal (non-glob) deny-read paths, canonical where they exist; for
 * identity (st_dev, st_ino) checks. NULL-terminated, owned by the policy. */
const char *const *fsg_policy_literal_deny_read (const FsgPolicy *policy);

gboolean fsg_policy_network_allowed (const FsgPolicy *policy);
gboolean fsg_policy_hide_denied (const FsgPolicy *policy);
/* [filesystem] git = protect (TRUE, the default) or off. */
gboolean fsg_policy_git_protect (const FsgPolicy *policy);
/* [filesystem] devices = allow / setid = keep: host semantics for device
 * nodes and set-id bits, only for `fsgate mount` run by root (fsgate-run
 * refuses such a policy). Default FALSE: refuse / strip. */
gboolean fsg_policy_devices_allowed (const FsgPolicy *policy);
gboolean fsg_policy_setid_kept (const FsgPolicy *policy);
guint64 fsg_policy_timeout_ms (const FsgPolicy *policy);    /* 0: none */
guint64 fsg_policy_kill_after_ms (const FsgPolicy *policy); /* default 2000 */
/* The largest output cap: --capture keeps each stream in memory (and in the
 * report), so the cap is bounded well below what a GByteArray can hold. */
#define FSG_POLICY_OUTPUT_CAP_MAX (G_GUINT64_CONSTANT (1) << 30)
guint64 fsg_policy_output_cap (const FsgPolicy *policy);    /* bytes, default 1 MiB */
const char *fsg_policy_profile (const FsgPolicy *policy);   /* base profile name */

/* The environment for the sandboxed command, built from @envp by the
 * [environment] rules (without the FSGATE_SANDBOX* markers, which the runner
 * adds). (transfer full) */
char **fsg_policy_build_environ (const FsgPolicy *policy, const char *const *envp);
/* The same; when @dropped is not NULL, the names of inherited variables that
 * `exclude` or `include-only` dropped are appended to it (g_free'd strings).
 * Names that `set` gives a value again are not listed. */
char **fsg_policy_build_environ_full (const FsgPolicy *policy, const char *const *envp,
                                      GPtrArray *dropped);

/* The effective policy as a key file that parses back to the same policy
 * (with `profile = none`). (transfer full) */
char *fsg_policy_to_keyfile (const FsgPolicy *policy);

/* ---- What fsgate-run adds to the view (runview.c) ---------------------- */

/* TRUE when fsgate-run gives the command a private tmpfs at /tmp: unless
 * the policy has a root at /tmp itself or makes /tmp writable. */
gboolean fsg_policy_run_private_tmp (const FsgPolicy *policy);
/* The roots strictly below /tmp, without those inside another one: with a
 * private /tmp, fsgate-run shows them at their paths on top of the tmpfs.
 * (transfer full) NULL-terminated. */
char **fsg_policy_run_tmp_roots (const FsgPolicy *policy);
/* With the network allowed, when @resolv_conf ("/etc/resolv.conf") is a
 * symlink to one of the known resolver files under /run
 * (fsg_policy_resolver_paths: systemd-resolved, resolvconf,
 * NetworkManager) and /run is denied by a deny-read rule "/run" alone (no
 * other rule denies that file or a directory on its way): the target (the
 * link resolved once, lexically), "/run" (where fsgate-run mounts a
 * read-only tmpfs holding only that file), and the host path to open
 * there; fsgate-run opens it with openat2(RESOLVE_NO_SYMLINKS), requires a
 * regular file and binds that fd. FALSE when nothing is needed or
 * allowed. */
gboolean fsg_policy_run_resolver (const FsgPolicy *policy, const char *resolv_conf,
                                  char **out_target, char **out_top, char **out_real);
extern const char *const fsg_policy_resolver_paths[];
/* The lowest-index deny-read rule that matches @path or a directory on its
 * way, other than rules whose pattern is one of @except (NULL-terminated);
 * NULL when none. */
const FsgRule *fsg_policy_deny_read_other (const FsgPolicy *policy, const char *path,
                                           const char *const *except);
/* For a path where fsgate-run, not the policy, decides (/proc, /dev, a
 * private /tmp, the resolver directory): TRUE, with the access the command
 * gets and why. (out_why: transfer full) */
gboolean fsg_policy_run_place (const FsgPolicy *policy, const char *path,
                               FsgAccess *out_access, char **out_why);

/* ---- The host's mount table (mountinfo.c) ------------------------------ */

typedef struct
{
  guint id, parent; /* mount ids (as statx(STATX_MNT_ID) gives them) */
  guint64 dev;      /* its super block's device; st_dev of its files may differ
                     * (btrfs subvolumes, overlayfs with several layers) */
  char *root;       /* the directory of its file system it shows */
  char *point;      /* where it is mounted */
  char *options;    /* per-mount options ("ro,nosuid,noexec,relatime") */
  char *fstype;
} FsgMount;

/* The lines of /proc/self/mountinfo that parse. (transfer full) GArray of FsgMount */
GArray *fsg_mountinfo_parse (const char *text);
const FsgMount *fsg_mountinfo_find (GArray *mounts, guint id);
/* The mount @path is on by its text: the deepest mount point at or above
 * it, the one on top when several are stacked there (by parent ids; a
 * bounded walk, whatever the text). */
const FsgMount *fsg_mountinfo_containing (GArray *mounts, const char *path);
gboolean fsg_mount_has_option (const FsgMount *m, const char *option);
/* @path is @dir or below it (absolute, normalised paths). */
gboolean fsg_path_within (const char *path, const char *dir);

/* ---- Hard links out of denied directories (denied.c) ------------------- */

typedef struct
{
  guint64 dev, ino;
} FsgFileId;

typedef struct
{
  char *path;      /* a literal deny-read directory */
  guint64 dev;     /* its st_dev */
  guint n_linked;  /* regular files below it with more than one link */
} FsgLinkedDir;

/* What the scan of the literal deny-read directories found: every regular
 * file below them with more than one link (another of its names may be
 * anywhere on the same file system). */
typedef struct
{
  GArray *ids;        /* FsgFileId of those files */
  GArray *dirs;       /* FsgLinkedDir: the directories that hold any */
  char *truncated_at; /* a directory with more than `max` entries: NULL when none */
  guint64 max;        /* entries scanned per directory at most; 0: no scan (off) */
} FsgDeniedLinks;

/* The entry budget of each directory: FSG_DENIED_SCAN_MAX, or
 * $FSGATE_DENIED_SCAN_MAX (a number; "off": no scan). */
#define FSG_DENIED_SCAN_MAX 100000
guint64 fsg_policy_denied_scan_max (void);
/* The scan, made once per policy on first use (thread-safe); owned by the
 * policy. The FUSE view denies the files by identity, the hybrid plan
 * binds nothing on their file systems; a run fails closed when
 * truncated_at is set. */
const FsgDeniedLinks *fsg_policy_denied_links (const FsgPolicy *policy);

/* ---- Uniform subtrees and the hybrid view (uniform.c) ------------------ */

/* TRUE when every path below a directory whose state is @state, for any
 * names (including names created later), gets @state's access and is never
 * denied: no root or alias anchored below, no deny-read rule that can match
 * below (anchored, glob or floating), and for a writable @state no
 * deny-write rule either (for a read-only one deny-write changes nothing).
 * @state must come from the incremental walk. */
gboolean fsg_path_state_uniform (const FsgPolicy *policy, const FsgPathState *state);

/* A maximal uniform directory of the host that fsgate-run would bind
 * (served_why NULL), or why the view serves it after all. */
typedef struct
{
  char *path;          /* canonical host path */
  FsgAccess access;    /* of it and everything below */
  const FsgRule *rule; /* the rule that decides it */
  guint64 dev, ino;    /* its identity when planned */
  guint64 nlink;       /* its subdirectories + 2, on most file systems */
  char *served_why;    /* NULL: bound */
  char **holes;        /* NULL, or the holes below it (NULL-terminated,
                        * absolute): served by the daemon inside the bind */
} FsgHybridTree;

/* At most this many trees are bound (FSGATE_HYBRID_MAX overrides): the
 * shallowest, then those with the most subdirectories. */
#define FSG_HYBRID_DEFAULT_MAX 16
guint fsg_policy_hybrid_max_binds (void);

void fsg_hybrid_tree_free (FsgHybridTree *tree);

/* On unless the policy says `hybrid = off` or FSGATE_HYBRID is 0 (off, false,
 * no) or a word neither on nor off; *out_why_off (static) says which. */
gboolean fsg_policy_hybrid_enabled (const FsgPolicy *policy, const char **out_why_off);
/* FALSE, with an error naming it, when FSGATE_HYBRID is set to a word that
 * is neither on (1, on, true, yes) nor off (0, off, false, no). */
gboolean fsg_policy_hybrid_env_check (GError **error);
/* The hybrid trees, below which binds are made: the system trees
 * (fsg_policy_secret_pruned) and the policy's `hybrid-trees`, sorted, none
 * inside another unless a hole lies between them. NULL-terminated, owned
 * by the policy. */
const char *const *fsg_policy_hybrid_trees (const FsgPolicy *policy);
/* Directories inside the system trees that the machine's administrator
 * fills, not the distribution: /usr/local, the prefix of software built
 * from source, whose daemons keep their sockets in /usr/local/var/run. A
 * bind of a tree above one leaves it to the daemon (fsgate-run mounts the
 * view's own directory back over it: a hole). */
extern const char *const fsg_policy_hybrid_holes[];
/* The holes in effect for @policy: fsg_policy_hybrid_holes, less those its
 * `hybrid-trees` names (or names a directory above, other than a system
 * tree). NULL-terminated, owned by the policy. */
const char *const *fsg_policy_hybrid_hole_list (const FsgPolicy *policy);

/* fsgate-run's hybrid plan: walks each hybrid tree through directories that
 * are not uniform and returns the maximal uniform ones, sorted by path, each
 * bound or with the reason it is served (writable; a place fsgate-run
 * mounts itself; not a disk file system; an object denied by identity
 * reachable there). Directories with host mount points below are split
 * into their subdirectories. @mountinfo: the text of /proc/self/mountinfo.
 * (transfer full) GPtrArray of FsgHybridTree */
GPtrArray *fsg_policy_hybrid_plan (const FsgPolicy *policy, const char *mountinfo);

/* The bound tree of @plan that holds @path outside its holes, or NULL. */
const FsgHybridTree *fsg_hybrid_plan_find (GPtrArray *plan, const char *path);

/* ---- Explaining -------------------------------------------------------- */

const char *fsg_access_to_string (FsgAccess access); /* "rw", "ro", "deny", "absent" */
const char *fsg_rule_kind_to_key (FsgRuleKind kind); /* "writable", "readonly", "deny-read", "deny-write" */
/* "deny-read ~/.ssh (profile workspace-write)", "ancestor of writable /p (--rw)",
 * "no rule: not under any root". (transfer full) */
char *fsg_path_state_describe (const FsgPolicy *policy, const FsgPathState *state);

/* ---- Git protection (git.c) --------------------------------------------- */

/* Called for every variable of a git config file: @var is
 * "section[.subsection].key" with section and key in lower case, @value
 * NULL for a key without "=". */
typedef void (*FsgGitConfigFunc) (const char *var, const char *value, gpointer user_data);
/* Parse git config text the way git does. FALSE on a syntax error (git
 * itself refuses such a file), with the line in @out_line. */
gboolean fsg_git_config_scan (const char *data, gsize len, FsgGitConfigFunc func,
                              gpointer user_data, guint *out_line);
/* Does this variable make git run a program (docs/security.md lists them)? */
gboolean fsg_git_config_var_runs_program (const char *var, const char *value);
/* The first program-running variable of a config file ("core.fsmonitor"),
 * "a syntax error on line N", or NULL when the file is safe. (transfer full) */
char *fsg_git_config_find_program (const char *data, gsize len);
/* A deny-read rule for a file name wherever it appears: a pattern without
 * an anchor (".env") or one of the secret-names. */
gboolean fsg_rule_denies_a_name (const FsgRule *rule);
/* What git protection does to @path (an absolute path), looked up on the
 * host like the view does, or NULL. For `fsgate explain`. (transfer full) */
char *fsg_policy_git_explain (const FsgPolicy *policy, const char *path);
/* Names in a hooks directory that git never runs ("pre-commit.sample"). */
gboolean fsg_git_is_sample_name (const char *name);

/* ---- Values shared with the command line ------------------------------- */

gboolean fsg_parse_duration (const char *text, guint64 *out_ms, GError **error);
gboolean fsg_parse_size (const char *text, guint64 *out_bytes, GError **error);

G_END_DECLS
