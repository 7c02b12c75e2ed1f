/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Internal layout of the policy module, shared by its source files and by
 * the unit tests (which link the static library). Not a public interface.
 */
#pragma once

#include <string.h>

#include "policy/policy.h"

G_BEGIN_DECLS

/* ---- Glob components (glob.c) ----------------------------------------- */

/* TRUE if @comp has an unescaped *, ? or [. */
gboolean fsg_glob_has_magic (const char *comp);
/* Validate one path component of a pattern. "**" must be handled by the
 * caller; here it is an error, as is any '**' inside a component, an
 * unclosed '[', a trailing backslash or an empty set. */
gboolean fsg_glob_validate (const char *comp, GError **error);
/* Match one component (no '/') against a name. Bytes, case-sensitive;
 * '*' and '?' match any byte including a leading '.'. */
gboolean fsg_glob_match (const char *pattern, const char *name);
/* Same, ASCII case-insensitive (environment names). */
gboolean fsg_glob_match_nocase (const char *pattern, const char *name);
/* Escape *, ?, [ and backslash so that @name matches only itself.
 * (transfer full) */
char *fsg_glob_escape (const char *name);
/* Remove backslash escapes from a component without magic. (transfer full) */
char *fsg_glob_unescape (const char *comp);

/* A compiled glob component with a cheap pre-filter. */
typedef struct
{
  char *pattern;      /* as written */
  char *prefix;       /* literal bytes before the first wildcard */
  char *suffix;       /* literal bytes after the last wildcard */
  gsize prefix_len;
  gsize suffix_len;
  gsize min_len;      /* shortest name that can match */
} FsgGlob;

void fsg_glob_init (FsgGlob *glob, const char *pattern);
void fsg_glob_clear (FsgGlob *glob);
static inline gboolean
fsg_glob_matches (const FsgGlob *glob, const char *name, gsize len)
{
  if (len < glob->min_len)
    return FALSE;
  if (glob->prefix_len && memcmp (name, glob->prefix, glob->prefix_len) != 0)
    return FALSE;
  if (glob->suffix_len && memcmp (name + len - glob->suffix_len, glob->suffix, glob->suffix_len) != 0)
    return FALSE;
  return fsg_glob_match (glob->pattern, name);
}

/* ---- Rules and the engine (decide.c) ---------------------------------- */

typedef struct _FsgNode FsgNode;

/* A rule plus what the engine needs to evaluate it. */
typedef struct
{
  FsgRule pub;
  gboolean optional;
  /* Roots: canonical path components. Deny rules: one or two component
   * lists (as written, and with the existing part of the path resolved
   * through symlinks when that differs). "**" is a component of its own;
   * floating patterns start with "**". */
  char **comps;
  char **comps_canon; /* NULL when equal to comps */
  /* Roots given through a symlink: where the view shows that symlink. */
  char *alias_path;
  char **alias_comps;
  char *alias_target;
  /* A rule made from `secret-names`: the name (its "**" is a package-tree
   * star, FSG_COMP_PKG_STAR); NULL for others. */
  char *secret_name;
} FsgRuleImpl;

/* A component of a rule's comps: like "**", any number of names, but none
 * of them a package tree (fsg_policy_is_package_tree()). Never produced by
 * parsing a pattern (no component contains '/'). */
#define FSG_COMP_PKG_STAR "/**"

/* The first component of a `secret-names` rule of scope "/": like
 * FSG_COMP_PKG_STAR, and not into the public system trees either
 * (fsg_policy_secret_pruned(): /usr, /lib*, /bin, /sbin and the trust
 * stores). Never produced by parsing a pattern. */
#define FSG_COMP_SYS_STAR "//**"

/* The absolute paths below which secret-names of scope "/" do not apply,
 * NULL-terminated. */
extern const char *const fsg_policy_secret_pruned[];

/* Directories that hold installed packages (site-packages, dist-packages,
 * node_modules): public CA bundles and test keys live there, so
 * secret-names do not descend into them. */
gboolean fsg_policy_is_package_tree (const char *name);

struct _FsgNodeSet
{
  guint n;
  guint hash;
  FsgNode *nodes[]; /* sorted by id */
};

typedef struct
{
  FsgGlob glob;
  FsgNode *node;
} FsgGlobEdge;

/* Buckets of glob edges keyed by the last byte of their literal suffix or the
 * first byte of their literal prefix, so a name only meets the globs that can
 * match it. Built for nodes with many glob edges (the floating patterns). */
typedef struct
{
  GPtrArray *by_last[256];
  GPtrArray *by_first[256];
  GPtrArray *always;
} FsgGlobIndex;

struct _FsgNode
{
  guint id;
  gboolean recursive;      /* a "**" node: stays live for every descendant */
  gboolean literal_chain;  /* reached from "/" through literal names only */
  gboolean in_view_chain;  /* a root, an alias, or an ancestor of one */
  GHashTable *lit;         /* name -> FsgNode*, or NULL */
  GPtrArray *globs;        /* FsgGlobEdge*, or NULL */
  FsgGlobIndex *index;     /* for nodes with many globs, else NULL */
  FsgNode *star;           /* node entered by "**" (also by epsilon) */
  FsgNode *pkg_star;       /* node entered by FSG_COMP_PKG_STAR (also by epsilon) */
  gboolean pkg_pruned;     /* recursive, but not through package trees */
  FsgNode *eps;            /* entered by epsilon (the FSG_COMP_SYS_STAR guard) */
  /* Guard nodes of FSG_COMP_SYS_STAR (not recursive): a name in @guard goes
   * to its node (NULL: nowhere, a pruned tree); any other name that is not a
   * package tree goes to @guard_default. They carry the edges of that. */
  GHashTable *guard;
  FsgNode *guard_default;
  const FsgRuleImpl *root;       /* root ending here (the last one added wins) */
  const FsgRuleImpl *alias;      /* alias symlink ending here */
  const FsgRuleImpl *below_root; /* lowest-index root at or below (literal chain) */
  const FsgRuleImpl *deny_read;  /* lowest-index rule ending here */
  const FsgRuleImpl *deny_write;
};

typedef struct
{
  FsgEnvInherit inherit;
  GPtrArray *exclude;      /* char* globs, defaults first */
  GPtrArray *include_only; /* char* globs */
  GPtrArray *set;          /* "NAME=VALUE", the last value per name wins */
} FsgEnvPolicy;

struct _FsgPolicy
{
  char *profile;
  GPtrArray *rules; /* FsgRuleImpl*, in order */
  const FsgRule **pub_rules;
  gboolean network;
  gboolean hide_denied;
  gboolean git_protect;
  gboolean devices_allowed; /* [filesystem] devices = allow */
  gboolean setid_kept;      /* [filesystem] setid = keep */
  gboolean hybrid;          /* [filesystem] hybrid (default on) */
  GPtrArray *hybrid_trees;  /* [filesystem] hybrid-trees: char*, absolute, normalised */
  guint64 timeout_ms;
  guint64 kill_after_ms;
  guint64 output_cap;
  FsgEnvPolicy env;
  char **literal_deny_read;

  /* The engine */
  GPtrArray *nodes; /* FsgNode*, owned */
  FsgNode *top;     /* "/" */
  FsgNode *floating; /* implicitly live everywhere: patterns without '/' or
                      * starting with a "**" component */
  FsgNode *sys_star; /* the recursive node of FSG_COMP_SYS_STAR, or NULL */
  const FsgNodeSet *root_set;
  GMutex intern_lock;
  GHashTable *interned; /* FsgNodeSet* -> same, protected by intern_lock */

  /* fsg_policy_denied_links() and fsg_policy_hybrid_trees(): computed on
   * first use, under denied_lock */
  GMutex denied_lock;
  FsgDeniedLinks *denied_links;
  char **hybrid_tree_list;
  char **hybrid_hole_list; /* the holes in effect (fsg_policy_hybrid_holes) */
};

/* Compile the engine for @policy's rules (decide.c). */
void fsg_policy_compile (FsgPolicy *policy);
void fsg_policy_engine_clear (FsgPolicy *policy);
FsgPolicy *fsg_policy_new_empty (void);

/* Split an absolute normalised path into components. (transfer full) */
char **fsg_path_split (const char *path);

/* roots.c: the first symlink on the way to @path (in the path or in the
 * targets of its symlinks) that is not a trusted system symlink (see
 * roots.c), and its target. @writable: the writable roots of the policy
 * being built, as written (NULL-terminated, may be NULL). */
gboolean fsg_root_find_planted_symlink (const char *path, const char *const *writable,
                                        char **out_link, char **out_target);

/* ---- Builder (parse.c) --------------------------------------------------- */

/* The paths a command must not change for the policy files the builder
 * read to stay what they are: each file's real path, every symlink met on
 * the way to it (at any level), and for an optional include that was not
 * found, the first component of its path that does not exist. Absolute,
 * without duplicates, in the order met. Owned by @b. */
const GPtrArray *fsg_policy_builder_sources (FsgPolicyBuilder *b);

/* Git discovery at build time (git.c): adds rules through @add. */
typedef gboolean (*FsgGitAddRule) (gpointer data, FsgRuleKind kind, const char *path,
                                   const char *origin, GError **error);
gboolean fsg_policy_git_discover (FsgPolicy *policy, const char *home, FsgGitAddRule add,
                                  gpointer data, GError **error);

void fsg_denied_links_free (FsgDeniedLinks *links);

/* Environment defaults (environ.c). */
void fsg_env_policy_init (FsgEnvPolicy *env);
void fsg_env_policy_clear (FsgEnvPolicy *env);
extern const char *const fsg_env_core_names[];
extern const char *const fsg_env_default_excludes[];

G_END_DECLS
