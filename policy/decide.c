/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The decision engine: for every absolute path, rw, ro, deny or absent, and
 * the rule that decided.
 *
 * Every rule is compiled into one automaton over path components (an NFA):
 * roots and literal deny paths are chains of literal edges from "/", glob
 * components are glob edges, and "**" is a node that stays live for every
 * descendant. Patterns without an anchor ("*.pem", "**" + "/.git/hooks")
 * hang off a "floating" node that is implicitly live at every depth.
 *
 * A path's state carries the set of live nodes, interned so that states can
 * be compared by pointer and stored per inode. fsg_policy_child_state() moves
 * a parent's state one name down: the cost is one hash lookup per live node
 * with literal children plus the glob edges whose literal prefix or suffix
 * fits the name, so it grows with the name and the globs that can still
 * match, not with the number of rules. Most paths live on no node at all (a
 * NULL set) and cost two hash lookups on the floating node.
 *
 * fsg_policy_decide() is a separate, direct implementation: it matches every
 * rule against every prefix of the path. It backs `fsgate explain` and serves
 * as the oracle that the incremental engine is tested against.
 *
 * Precedence (docs/policy.md): a path outside the view is absent; otherwise
 * deny-read on the path or any ancestor denies; otherwise the deepest root or
 * deny-write match decides (deny-write wins a tie; of two roots at the same
 * path the later wins); a path under no root but on the way to one is a
 * synthetic read-only directory.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <string.h>

#define MAX_STACK_NODES 64

/* ---- Building ---------------------------------------------------------- */

static FsgNode *
node_new (FsgPolicy *policy)
{
  FsgNode *node = g_new0 (FsgNode, 1);

  node->id = policy->nodes->len;
  g_ptr_array_add (policy->nodes, node);
  return node;
}

static void
glob_edge_free (gpointer data)
{
  FsgGlobEdge *edge = data;

  fsg_glob_clear (&edge->glob);
  g_free (edge);
}

static void
glob_index_free (FsgGlobIndex *index)
{
  if (index == NULL)
    return;
  for (guint i = 0; i < 256; i++)
    {
      g_clear_pointer (&index->by_last[i], g_ptr_array_unref);
      g_clear_pointer (&index->by_first[i], g_ptr_array_unref);
    }
  g_clear_pointer (&index->always, g_ptr_array_unref);
  g_free (index);
}

static void
node_free (gpointer data)
{
  FsgNode *node = data;

  g_clear_pointer (&node->lit, g_hash_table_unref);
  g_clear_pointer (&node->globs, g_ptr_array_unref);
  g_clear_pointer (&node->guard, g_hash_table_unref);
  glob_index_free (node->index);
  g_free (node);
}

static FsgNode *
node_step_literal (FsgPolicy *policy, FsgNode *node, const char *name)
{
  FsgNode *child;

  if (node->lit == NULL)
    node->lit = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  child = g_hash_table_lookup (node->lit, name);
  if (child == NULL)
    {
      child = node_new (policy);
      g_hash_table_insert (node->lit, g_strdup (name), child);
    }
  return child;
}

static FsgNode *
node_step_glob (FsgPolicy *policy, FsgNode *node, const char *pattern)
{
  FsgGlobEdge *edge;

  if (node->globs == NULL)
    node->globs = g_ptr_array_new_with_free_func (glob_edge_free);
  for (guint i = 0; i < node->globs->len; i++)
    {
      edge = node->globs->pdata[i];
      if (strcmp (edge->glob.pattern, pattern) == 0)
        return edge->node;
    }
  edge = g_new0 (FsgGlobEdge, 1);
  fsg_glob_init (&edge->glob, pattern);
  edge->node = node_new (policy);
  g_ptr_array_add (node->globs, edge);
  return edge->node;
}

static FsgNode *
node_step_star (FsgPolicy *policy, FsgNode *node)
{
  if (node->recursive)
    return node; /* "**" + "/" + "**" is one "**" */
  if (node->star == NULL)
    {
      node->star = node_new (policy);
      node->star->recursive = TRUE;
    }
  return node->star;
}

static FsgNode *
node_step_pkg_star (FsgPolicy *policy, FsgNode *node)
{
  if (node->recursive && node->pkg_pruned)
    return node;
  if (node->pkg_star == NULL)
    {
      node->pkg_star = node_new (policy);
      node->pkg_star->recursive = TRUE;
      node->pkg_star->pkg_pruned = TRUE;
    }
  return node->pkg_star;
}

gboolean
fsg_policy_is_package_tree (const char *name)
{
  return strcmp (name, "site-packages") == 0 || strcmp (name, "dist-packages") == 0 ||
         strcmp (name, "node_modules") == 0;
}

/* Public system trees: system software, whose *.pem and *.key are public
 * (and which the hybrid view bind-mounts when no name glob applies), and
 * the trust stores of the distributions. /etc/ssl/private, /etc/kubernetes,
 * /etc/pki/tls/private... stay covered. */
const char *const fsg_policy_secret_pruned[] = {
  "/usr",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/bin",
  "/sbin",
  "/etc/ssl/certs",
  "/etc/ca-certificates",
  "/usr/local/share/ca-certificates",
  "/etc/pki/ca-trust/extracted",
  "/etc/pki/tls/certs",
  "/etc/pki/ca-trust/source/anchors",
  NULL,
};

/* Are the @k names the path of a pruned tree? */
static gboolean
is_secret_pruned (char *const *names, guint k)
{
  for (guint p = 0; fsg_policy_secret_pruned[p] != NULL; p++)
    {
      const char *s = fsg_policy_secret_pruned[p];
      guint i = 0;

      while (*s == '/' && i < k)
        {
          gsize len = strcspn (s + 1, "/");

          if (strlen (names[i]) != len || strncmp (s + 1, names[i], len) != 0)
            break;
          s += 1 + len;
          i++;
        }
      if (*s == '\0' && i == k)
        return TRUE;
    }
  return FALSE;
}

/* FSG_COMP_SYS_STAR from @node (the top): a trie of guard nodes for the
 * pruned trees, entered by epsilon, whose other names lead to one
 * recursive, package-pruned node. Returns that node; the guard nodes get
 * its edges when the policy is compiled (guards_copy_edges()). */
static FsgNode *
node_step_sys_star (FsgPolicy *policy, FsgNode *node)
{
  FsgNode *start;

  if (policy->sys_star != NULL)
    return policy->sys_star;
  g_assert (node == policy->top && node->eps == NULL);
  policy->sys_star = node_new (policy);
  policy->sys_star->recursive = TRUE;
  policy->sys_star->pkg_pruned = TRUE;
  start = node_new (policy);
  node->eps = start;
  for (guint p = 0; fsg_policy_secret_pruned[p] != NULL; p++)
    {
      g_auto (GStrv) names = fsg_path_split (fsg_policy_secret_pruned[p]);
      FsgNode *g = start;

      for (guint i = 0; g != NULL && names[i] != NULL; i++)
        {
          gpointer next = NULL;

          if (g->guard == NULL)
            {
              g->guard = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
              g->guard_default = policy->sys_star;
            }
          if (!g_hash_table_lookup_extended (g->guard, names[i], NULL, &next))
            {
              next = names[i + 1] == NULL ? NULL : node_new (policy);
              g_hash_table_insert (g->guard, g_strdup (names[i]), next);
            }
          else if (names[i + 1] == NULL && next != NULL)
            g_hash_table_insert (g->guard, g_strdup (names[i]), NULL); /* pruned whole */
          g = next;
        }
    }
  return policy->sys_star;
}

/* Guard nodes match the names the recursive node matches. */
static void
guards_copy_edges (FsgPolicy *policy)
{
  const FsgNode *from = policy->sys_star;

  if (from == NULL)
    return;
  for (guint i = 0; i < policy->nodes->len; i++)
    {
      FsgNode *g = policy->nodes->pdata[i];

      if (g->guard_default == NULL && g != policy->top->eps)
        continue;
      if (g->guard == NULL)
        {
          /* a guard with no pruned child (none here, kept general) */
          g->guard = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
          g->guard_default = policy->sys_star;
        }
      if (from->lit)
        {
          GHashTableIter iter;
          gpointer key, value;

          if (g->lit == NULL)
            g->lit = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
          g_hash_table_iter_init (&iter, from->lit);
          while (g_hash_table_iter_next (&iter, &key, &value))
            g_hash_table_insert (g->lit, g_strdup (key), value);
        }
      for (guint e = 0; from->globs != NULL && e < from->globs->len; e++)
        {
          const FsgGlobEdge *src = from->globs->pdata[e];
          FsgGlobEdge *edge = g_new0 (FsgGlobEdge, 1);

          if (g->globs == NULL)
            g->globs = g_ptr_array_new_with_free_func (glob_edge_free);
          fsg_glob_init (&edge->glob, src->glob.pattern);
          edge->node = src->node;
          g_ptr_array_add (g->globs, edge);
        }
    }
}

static gboolean
is_star (const char *comp)
{
  return strcmp (comp, "**") == 0 || strcmp (comp, FSG_COMP_PKG_STAR) == 0 ||
         strcmp (comp, FSG_COMP_SYS_STAR) == 0;
}

/* Walk (creating) the nodes for @comps from @start. Roots and aliases are
 * literal paths (@is_root): their names never act as globs. */
static FsgNode *
add_chain (FsgPolicy *policy, FsgNode *start, char **comps, gboolean is_root)
{
  FsgNode *node = start;

  for (guint i = 0; comps[i]; i++)
    {
      const char *c = comps[i];

      if (is_root)
        {
          node = node_step_literal (policy, node, c);
          node->literal_chain = TRUE;
          node->in_view_chain = TRUE;
        }
      else if (strcmp (c, "**") == 0)
        node = node_step_star (policy, node);
      else if (strcmp (c, FSG_COMP_PKG_STAR) == 0)
        node = node_step_pkg_star (policy, node);
      else if (strcmp (c, FSG_COMP_SYS_STAR) == 0)
        node = node_step_sys_star (policy, node);
      else if (fsg_glob_has_magic (c))
        node = node_step_glob (policy, node, c);
      else
        {
          g_autofree char *lit = fsg_glob_unescape (c);
          gboolean chain = node->literal_chain;
          node = node_step_literal (policy, node, lit);
          node->literal_chain = chain;
        }
    }
  return node;
}

static void
mark_below_root (FsgPolicy *policy, char **comps, const FsgRuleImpl *root)
{
  FsgNode *node = policy->top;

  if (node->below_root == NULL)
    node->below_root = root;
  for (guint i = 0; comps[i]; i++)
    {
      node = g_hash_table_lookup (node->lit, comps[i]);
      g_assert (node != NULL);
      if (node->below_root == NULL)
        node->below_root = root;
    }
}

static const FsgRuleImpl *
lowest (const FsgRuleImpl *a, const FsgRuleImpl *b)
{
  if (a == NULL)
    return b;
  if (b == NULL)
    return a;
  return a->pub.index <= b->pub.index ? a : b;
}

static void
build_glob_index (FsgNode *node)
{
  FsgGlobIndex *index;

  if (node->globs == NULL || node->globs->len < 4)
    return;
  index = g_new0 (FsgGlobIndex, 1);
  index->always = g_ptr_array_new ();
  for (guint i = 0; i < node->globs->len; i++)
    {
      FsgGlobEdge *edge = node->globs->pdata[i];
      GPtrArray **slot;

      if (edge->glob.suffix_len > 0)
        slot = &index->by_last[(guchar) edge->glob.suffix[edge->glob.suffix_len - 1]];
      else if (edge->glob.prefix_len > 0)
        slot = &index->by_first[(guchar) edge->glob.prefix[0]];
      else
        slot = &index->always;
      if (*slot == NULL)
        *slot = g_ptr_array_new ();
      g_ptr_array_add (*slot, edge);
    }
  node->index = index;
}

static guint
set_hash (FsgNode *const *nodes, guint n)
{
  guint h = 5381;

  for (guint i = 0; i < n; i++)
    h = h * 33 + nodes[i]->id;
  return h;
}

static guint
node_set_hash (gconstpointer key)
{
  return ((const FsgNodeSet *) key)->hash;
}

static gboolean
node_set_equal (gconstpointer a, gconstpointer b)
{
  const FsgNodeSet *x = a, *y = b;

  return x->n == y->n && memcmp (x->nodes, y->nodes, x->n * sizeof (FsgNode *)) == 0;
}

/* Add @node and its epsilon closure to a sorted, duplicate-free array. */
static void
set_add (FsgNode **nodes, guint *n, guint cap, FsgNode **heap, FsgNode *node)
{
  for (;;)
    {
      guint i = *n;

      /* insertion into a sorted array; sets are tiny */
      while (i > 0 && nodes[i - 1]->id > node->id)
        i--;
      if (!(i > 0 && nodes[i - 1] == node))
        {
          if (*n < cap)
            {
              memmove (nodes + i + 1, nodes + i, (*n - i) * sizeof (FsgNode *));
              nodes[i] = node;
              (*n)++;
            }
          else
            *heap = node; /* overflow marker, see step() */
        }
      if (node->pkg_star != NULL)
        set_add (nodes, n, cap, heap, node->pkg_star);
      if (node->eps != NULL)
        set_add (nodes, n, cap, heap, node->eps);
      if (node->star == NULL)
        return;
      node = node->star;
    }
}

static const FsgNodeSet *
intern (const FsgPolicy *cpolicy, FsgNode *const *nodes, guint n)
{
  FsgPolicy *policy = (FsgPolicy *) cpolicy; /* the intern table is a cache */
  struct
  {
    FsgNodeSet set;
    FsgNode *storage[MAX_STACK_NODES];
  } key;
  g_autofree FsgNodeSet *heap_key = NULL;
  FsgNodeSet *probe = &key.set;
  const FsgNodeSet *found;

  if (n == 0)
    return NULL;
  if (n > MAX_STACK_NODES)
    {
      heap_key = g_malloc (sizeof (FsgNodeSet) + n * sizeof (FsgNode *));
      probe = heap_key;
    }
  probe->n = n;
  probe->hash = set_hash (nodes, n);
  memcpy (probe->nodes, nodes, n * sizeof (FsgNode *));

  g_mutex_lock (&policy->intern_lock);
  found = g_hash_table_lookup (policy->interned, probe);
  if (found == NULL)
    {
      FsgNodeSet *copy = g_malloc (sizeof (FsgNodeSet) + n * sizeof (FsgNode *));
      memcpy (copy, probe, sizeof (FsgNodeSet) + n * sizeof (FsgNode *));
      g_hash_table_add (policy->interned, copy);
      found = copy;
    }
  g_mutex_unlock (&policy->intern_lock);
  return found;
}

FsgPolicy *
fsg_policy_new_empty (void)
{
  FsgPolicy *policy = g_new0 (FsgPolicy, 1);

  policy->rules = g_ptr_array_new ();
  policy->network = FALSE;
  policy->git_protect = TRUE;
  policy->hybrid = TRUE;
  policy->hybrid_trees = g_ptr_array_new_with_free_func (g_free);
  policy->kill_after_ms = 2000;
  policy->output_cap = 1024 * 1024;
  fsg_env_policy_init (&policy->env);
  g_mutex_init (&policy->intern_lock);
  g_mutex_init (&policy->denied_lock);
  return policy;
}

void
fsg_policy_engine_clear (FsgPolicy *policy)
{
  g_clear_pointer (&policy->interned, g_hash_table_unref);
  g_clear_pointer (&policy->nodes, g_ptr_array_unref);
  policy->top = policy->floating = policy->sys_star = NULL;
  policy->root_set = NULL;
}

void
fsg_policy_compile (FsgPolicy *policy)
{
  FsgNode *top_set[MAX_STACK_NODES];
  FsgNode *overflow = NULL;
  guint n = 0;

  fsg_policy_engine_clear (policy);
  policy->nodes = g_ptr_array_new_with_free_func (node_free);
  policy->interned = g_hash_table_new_full (node_set_hash, node_set_equal, g_free, NULL);
  policy->top = node_new (policy);
  policy->top->literal_chain = TRUE;
  policy->top->in_view_chain = TRUE;
  policy->floating = node_new (policy);
  policy->floating->recursive = TRUE;

  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *rule = policy->rules->pdata[i];
      FsgNode *end;

      switch (rule->pub.kind)
        {
        case FSG_RULE_WRITABLE:
        case FSG_RULE_READONLY:
          end = add_chain (policy, policy->top, rule->comps, TRUE);
          end->root = rule; /* the later root at the same path wins */
          mark_below_root (policy, rule->comps, rule);
          if (rule->alias_comps)
            {
              FsgNode *a = add_chain (policy, policy->top, rule->alias_comps, TRUE);
              if (a->alias == NULL)
                a->alias = rule;
              mark_below_root (policy, rule->alias_comps, rule);
            }
          break;

        case FSG_RULE_DENY_READ:
        case FSG_RULE_DENY_WRITE:
          for (int v = 0; v < 2; v++)
            {
              char **comps = v == 0 ? rule->comps : rule->comps_canon;
              FsgNode *start = policy->top;
              guint skip = 0;

              if (comps == NULL)
                continue;
              if (!rule->pub.anchored)
                {
                  /* floating: "**" + rest hangs off the floating node */
                  g_assert (strcmp (comps[0], "**") == 0);
                  start = policy->floating;
                  skip = 1;
                }
              end = add_chain (policy, start, comps + skip, FALSE);
              if (rule->pub.kind == FSG_RULE_DENY_READ)
                end->deny_read = lowest (end->deny_read, rule);
              else
                end->deny_write = lowest (end->deny_write, rule);
            }
          break;
        }
    }

  guards_copy_edges (policy);
  for (guint i = 0; i < policy->nodes->len; i++)
    build_glob_index (policy->nodes->pdata[i]);

  set_add (top_set, &n, MAX_STACK_NODES, &overflow, policy->top);
  policy->root_set = intern (policy, top_set, n);
}

/* ---- Incremental decisions -------------------------------------------- */

static inline void
step_globs (GPtrArray *edges, const char *name, gsize len,
            FsgNode **nodes, guint *n, guint cap, FsgNode **overflow)
{
  if (edges == NULL)
    return;
  for (guint i = 0; i < edges->len; i++)
    {
      const FsgGlobEdge *edge = edges->pdata[i];
      if (fsg_glob_matches (&edge->glob, name, len))
        set_add (nodes, n, cap, overflow, edge->node);
    }
}

/* Transitions of one node on @name into the set being built. */
static inline void
step_node (const FsgNode *node, const char *name, gsize len,
           FsgNode **nodes, guint *n, guint cap, FsgNode **overflow)
{
  if (node->lit)
    {
      FsgNode *child = g_hash_table_lookup (node->lit, name);
      if (child)
        set_add (nodes, n, cap, overflow, child);
    }
  if (node->index)
    {
      const FsgGlobIndex *index = node->index;
      step_globs (index->by_last[(guchar) name[len - 1]], name, len, nodes, n, cap, overflow);
      step_globs (index->by_first[(guchar) name[0]], name, len, nodes, n, cap, overflow);
      step_globs (index->always, name, len, nodes, n, cap, overflow);
    }
  else
    step_globs (node->globs, name, len, nodes, n, cap, overflow);
}

static gboolean
step (const FsgPolicy *policy, const FsgNodeSet *set, const char *name,
      FsgNode **nodes, guint *n, guint cap)
{
  gsize len = strlen (name);
  FsgNode *overflow = NULL;

  *n = 0;
  if (set)
    for (guint i = 0; i < set->n; i++)
      {
        FsgNode *node = set->nodes[i];
        step_node (node, name, len, nodes, n, cap, &overflow);
        if (node->recursive && !(node->pkg_pruned && fsg_policy_is_package_tree (name)))
          set_add (nodes, n, cap, &overflow, node);
        if (node->guard_default != NULL)
          {
            gpointer next = NULL;

            if (g_hash_table_lookup_extended (node->guard, name, NULL, &next))
              {
                if (next != NULL)
                  set_add (nodes, n, cap, &overflow, next);
              }
            else if (!fsg_policy_is_package_tree (name))
              set_add (nodes, n, cap, &overflow, node->guard_default);
          }
      }
  step_node (policy->floating, name, len, nodes, n, cap, &overflow);
  return overflow == NULL;
}

FsgPathState
fsg_policy_root_state (const FsgPolicy *policy)
{
  FsgPathState state = { 0 };
  const FsgNode *top = policy->top;

  state.depth = 0;
  state.set = policy->root_set;
  state.flags = FSG_STATE_PROTECTED;
  if (top->root)
    {
      state.access = top->root->pub.kind == FSG_RULE_WRITABLE ? FSG_ACCESS_RW : FSG_ACCESS_RO;
      state.flags |= FSG_STATE_ROOT;
      state.rule = &top->root->pub;
    }
  else
    {
      state.access = FSG_ACCESS_RO;
      state.flags |= FSG_STATE_SYNTHETIC;
      state.rule = top->below_root ? &top->below_root->pub : NULL;
    }
  return state;
}

static FsgPathState
child_from_nodes (const FsgPolicy *policy, const FsgPathState *parent,
                  FsgNode *const *nodes, guint n, const FsgNodeSet *set)
{
  FsgPathState child = { 0 };
  const FsgNode *chain = NULL;
  const FsgRuleImpl *deny_read = NULL, *deny_write = NULL;
  gboolean fresh = FALSE, under_root;

  child.depth = parent->depth + 1;
  for (guint i = 0; i < n; i++)
    {
      const FsgNode *node = nodes[i];
      if (node->in_view_chain && node->literal_chain)
        chain = node;
      deny_read = lowest (deny_read, node->deny_read);
      deny_write = lowest (deny_write, node->deny_write);
      if (!node->recursive && node->guard_default == NULL)
        fresh = TRUE;
    }

  under_root = !(parent->flags & FSG_STATE_SYNTHETIC) || (chain && chain->root);
  if (!under_root && chain == NULL)
    return child; /* absent */

  if (deny_read)
    {
      child.access = FSG_ACCESS_DENY;
      child.rule = &deny_read->pub;
      child.flags = FSG_STATE_PROTECTED;
      return child;
    }

  child.set = set;
  if (fresh)
    child.flags |= FSG_STATE_PROTECTED;

  if (!under_root)
    {
      child.access = FSG_ACCESS_RO;
      if (chain->alias)
        {
          /* nothing below a symlink is looked up through it */
          child.flags |= FSG_STATE_ALIAS | FSG_STATE_PROTECTED;
          child.rule = &chain->alias->pub;
          child.set = NULL;
        }
      else
        {
          child.flags |= FSG_STATE_SYNTHETIC | FSG_STATE_PROTECTED;
          child.rule = &chain->below_root->pub;
        }
      return child;
    }

  child.access = parent->access;
  child.rule = parent->rule;
  if (chain && chain->root)
    {
      child.access = chain->root->pub.kind == FSG_RULE_WRITABLE ? FSG_ACCESS_RW : FSG_ACCESS_RO;
      child.rule = &chain->root->pub;
      child.flags |= FSG_STATE_ROOT | FSG_STATE_PROTECTED;
    }
  if (deny_write)
    {
      child.access = FSG_ACCESS_RO;
      child.rule = &deny_write->pub;
    }
  return child;
}

FsgPathState
fsg_policy_child_state (const FsgPolicy *policy,
                        const FsgPathState *parent,
                        const char *name)
{
  FsgNode *stack[MAX_STACK_NODES];
  FsgPathState child = { 0 };
  const FsgNodeSet *set;
  guint n;

  child.depth = parent->depth + 1;
  if (parent->access == FSG_ACCESS_DENY)
    {
      child.access = FSG_ACCESS_DENY;
      child.rule = parent->rule;
      return child;
    }
  if (parent->access == FSG_ACCESS_ABSENT || (parent->flags & FSG_STATE_ALIAS) || name[0] == '\0')
    return child;

  if (G_LIKELY (step (policy, parent->set, name, stack, &n, MAX_STACK_NODES)))
    {
      if (n == 0)
        set = NULL;
      else if (parent->set && parent->set->n == n &&
               memcmp (parent->set->nodes, stack, n * sizeof (FsgNode *)) == 0)
        set = parent->set; /* unchanged below a "**": no lock */
      else
        set = intern (policy, stack, n);
      return child_from_nodes (policy, parent, stack, n, set);
    }
  else
    {
      /* More live nodes than the stack holds: a pathological policy. */
      guint cap = policy->nodes->len + 1;
      g_autofree FsgNode **heap = g_new (FsgNode *, cap);

      step (policy, parent->set, name, heap, &n, cap);
      set = intern (policy, heap, n);
      return child_from_nodes (policy, parent, heap, n, set);
    }
}

gboolean
fsg_path_state_same_scope (const FsgPathState *a, const FsgPathState *b)
{
  /* below a denied path everything is denied, whatever the set says */
  return a->set == b->set &&
         (a->access == FSG_ACCESS_DENY) == (b->access == FSG_ACCESS_DENY);
}

const char *
fsg_policy_alias_target (const FsgPolicy *policy, const FsgPathState *state)
{
  const FsgRuleImpl *rule = (const FsgRuleImpl *) state->rule;

  if (!(state->flags & FSG_STATE_ALIAS) || rule == NULL)
    return NULL;
  return rule->alias_target;
}

static const FsgNode *
chain_node (const FsgPathState *state)
{
  if (state->set == NULL)
    return NULL;
  for (guint i = 0; i < state->set->n; i++)
    {
      const FsgNode *node = state->set->nodes[i];
      if (node->literal_chain && node->in_view_chain)
        return node;
    }
  return NULL;
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

const char **
fsg_policy_synthetic_children (const FsgPolicy *policy, const FsgPathState *state)
{
  GPtrArray *names = g_ptr_array_new ();
  const FsgNode *node = chain_node (state);

  if (node && node->lit)
    {
      GHashTableIter iter;
      gpointer key, value;

      g_hash_table_iter_init (&iter, node->lit);
      while (g_hash_table_iter_next (&iter, &key, &value))
        if (((FsgNode *) value)->in_view_chain)
          g_ptr_array_add (names, key);
    }
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (const char **) g_ptr_array_free (names, FALSE);
}

/* ---- Whole-path decisions (the direct evaluation) --------------------- */

char **
fsg_path_split (const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  GPtrArray *out = g_ptr_array_new ();

  for (guint i = 0; parts[i]; i++)
    if (parts[i][0] != '\0' && strcmp (parts[i], ".") != 0)
      g_ptr_array_add (out, g_strdup (parts[i]));
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

/* Compare a literal pattern component (backslash escapes) with a name,
 * without allocating. */
static gboolean
literal_equal (const char *pat, const char *name)
{
  for (;; pat++, name++)
    {
      if (*pat == '\\' && pat[1])
        pat++;
      if (*pat != *name)
        return FALSE;
      if (*pat == '\0')
        return TRUE;
    }
}

/* Does the pattern @pat[0..m) (components, "**" = zero or more) match
 * exactly the @n names in @names? */
static gboolean
comps_match (char *const *pat, guint m, char *const *names, guint n)
{
  if (m == 0)
    return n == 0;
  if (is_star (pat[0]))
    {
      gboolean sys = strcmp (pat[0], FSG_COMP_SYS_STAR) == 0; /* @names from "/" */
      gboolean pruned = sys || strcmp (pat[0], FSG_COMP_PKG_STAR) == 0;

      for (guint k = 0; k <= n; k++)
        {
          if (k > 0 && pruned && fsg_policy_is_package_tree (names[k - 1]))
            break;
          if (k > 0 && sys && is_secret_pruned (names, k))
            break;
          if (comps_match (pat + 1, m - 1, names + k, n - k))
            return TRUE;
        }
      return FALSE;
    }
  if (n == 0)
    return FALSE;
  if (fsg_glob_has_magic (pat[0]) ? !fsg_glob_match (pat[0], names[0])
                                  : !literal_equal (pat[0], names[0]))
    return FALSE;
  return comps_match (pat + 1, m - 1, names + 1, n - 1);
}

static guint
strv_len0 (char *const *v)
{
  return v ? g_strv_length ((char **) v) : 0;
}

static gboolean
rule_matches (const FsgRuleImpl *rule, char *const *names, guint n)
{
  return comps_match (rule->comps, strv_len0 (rule->comps), names, n) ||
         (rule->comps_canon && comps_match (rule->comps_canon, strv_len0 (rule->comps_canon), names, n));
}

/* Is the literal path @p (n names) equal to or an ancestor of @names (k)? */
static gboolean
is_prefix (char *const *p, guint pn, char *const *names, guint k)
{
  if (pn > k)
    return FALSE;
  for (guint i = 0; i < pn; i++)
    if (strcmp (p[i], names[i]) != 0)
      return FALSE;
  return TRUE;
}

/* A rule "position" ends exactly here: the path is protected. */
static gboolean
rule_position_here (const FsgRuleImpl *rule, char *const *names, guint k)
{
  for (int v = 0; v < 2; v++)
    {
      char **comps = v == 0 ? rule->comps : rule->comps_canon;
      guint m = strv_len0 (comps);

      for (guint j = 1; j <= m; j++)
        if (!is_star (comps[j - 1]) && comps_match (comps, j, names, k))
          return TRUE;
    }
  return FALSE;
}

const FsgRule *
fsg_policy_deny_read_other (const FsgPolicy *policy, const char *path, const char *const *except)
{
  g_autofree char *norm = g_canonicalize_filename (path, "/");
  g_auto (GStrv) names = fsg_path_split (norm);
  guint n = g_strv_length (names);

  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *rule = policy->rules->pdata[i];

      if (rule->pub.kind != FSG_RULE_DENY_READ ||
          g_strv_contains ((const char *const *) except, rule->pub.pattern))
        continue;
      for (guint k = 1; k <= n; k++)
        if (rule_matches (rule, names, k))
          return &rule->pub;
    }
  return NULL;
}

FsgPathState
fsg_policy_decide (const FsgPolicy *policy, const char *path)
{
  g_autofree char *norm = g_canonicalize_filename (path, "/");
  g_auto (GStrv) names = fsg_path_split (norm);
  guint n = g_strv_length (names);
  FsgPathState state = { 0 };
  const FsgRuleImpl *best_root = NULL, *best_dw = NULL;
  guint best_root_depth = 0, best_dw_depth = 0;
  gboolean under_root = FALSE, alias_here = FALSE;
  const FsgRuleImpl *below = NULL, *alias = NULL;

  state.depth = n;
  for (guint k = 0; k <= n; k++)
    {
      const FsgRuleImpl *deny = NULL;
      gboolean in_view = FALSE;

      if (alias_here)
        return (FsgPathState) { .depth = n }; /* below an alias symlink */
      below = NULL;
      alias = NULL;
      under_root = FALSE;
      for (guint i = 0; i < policy->rules->len; i++)
        {
          const FsgRuleImpl *rule = policy->rules->pdata[i];
          guint rn = strv_len0 (rule->comps);

          if (rule->pub.kind != FSG_RULE_WRITABLE && rule->pub.kind != FSG_RULE_READONLY)
            continue;
          if (rn <= k && is_prefix (rule->comps, rn, names, k))
            under_root = TRUE;
          if (is_prefix (names, k, rule->comps, rn))
            {
              in_view = TRUE;
              if (below == NULL)
                below = rule;
            }
          if (rule->alias_comps)
            {
              char **acomps = rule->alias_comps;
              guint an = g_strv_length (acomps);
              if (is_prefix (names, k, acomps, an))
                {
                  in_view = TRUE;
                  if (below == NULL)
                    below = rule;
                  if (an == k && alias == NULL)
                    alias = rule;
                }
            }
        }
      if (k == 0)
        in_view = TRUE;
      if (!under_root && !in_view)
        return (FsgPathState) { .depth = n };

      for (guint i = 0; i < policy->rules->len; i++)
        {
          const FsgRuleImpl *rule = policy->rules->pdata[i];
          if (rule->pub.kind == FSG_RULE_DENY_READ && k > 0 && rule_matches (rule, names, k))
            {
              deny = rule;
              break; /* rules are in index order: the first is the lowest */
            }
        }
      if (deny)
        {
          state.access = FSG_ACCESS_DENY;
          state.rule = &deny->pub;
          state.flags = k == n ? FSG_STATE_PROTECTED : 0;
          return state;
        }
      alias_here = !under_root && alias != NULL;
    }

  /* Roots and deny-write rules: the deepest match decides. */
  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *rule = policy->rules->pdata[i];

      if (rule->pub.kind == FSG_RULE_WRITABLE || rule->pub.kind == FSG_RULE_READONLY)
        {
          guint rn = strv_len0 (rule->comps);
          if (is_prefix (rule->comps, rn, names, n) &&
              (best_root == NULL || rn >= best_root_depth))
            {
              best_root = rule;
              best_root_depth = rn;
            }
        }
    }
  if (best_root)
    for (guint i = 0; i < policy->rules->len; i++)
      {
        const FsgRuleImpl *rule = policy->rules->pdata[i];

        if (rule->pub.kind != FSG_RULE_DENY_WRITE)
          continue;
        for (guint k = n; k >= 1; k--)
          if (rule_matches (rule, names, k))
            {
              if (best_dw == NULL || k > best_dw_depth)
                {
                  best_dw = rule;
                  best_dw_depth = k;
                }
              break;
            }
      }

  for (guint i = 0; i < policy->rules->len; i++)
    {
      const FsgRuleImpl *rule = policy->rules->pdata[i];

      if (rule->pub.kind == FSG_RULE_WRITABLE || rule->pub.kind == FSG_RULE_READONLY)
        {
          if (is_prefix (names, n, rule->comps, strv_len0 (rule->comps)))
            state.flags |= FSG_STATE_PROTECTED;
          if (rule->alias_comps &&
              is_prefix (names, n, rule->alias_comps, g_strv_length (rule->alias_comps)))
            state.flags |= FSG_STATE_PROTECTED;
        }
      else if (rule_position_here (rule, names, n))
        state.flags |= FSG_STATE_PROTECTED;
    }

  if (best_root == NULL)
    {
      state.access = FSG_ACCESS_RO;
      state.flags |= FSG_STATE_PROTECTED;
      if (alias_here)
        {
          state.flags |= FSG_STATE_ALIAS;
          state.rule = &alias->pub;
        }
      else
        {
          state.flags |= FSG_STATE_SYNTHETIC;
          state.rule = below ? &below->pub : NULL;
        }
      return state;
    }

  if (best_root_depth == n)
    state.flags |= FSG_STATE_ROOT | FSG_STATE_PROTECTED;
  if (best_dw && best_dw_depth >= best_root_depth)
    {
      state.access = FSG_ACCESS_RO;
      state.rule = &best_dw->pub;
    }
  else
    {
      state.access = best_root->pub.kind == FSG_RULE_WRITABLE ? FSG_ACCESS_RW : FSG_ACCESS_RO;
      state.rule = &best_root->pub;
    }
  return state;
}

/* ---- Describing -------------------------------------------------------- */

const char *
fsg_access_to_string (FsgAccess access)
{
  switch (access)
    {
    case FSG_ACCESS_RW:
      return "rw";
    case FSG_ACCESS_RO:
      return "ro";
    case FSG_ACCESS_DENY:
      return "deny";
    case FSG_ACCESS_ABSENT:
    default:
      return "absent";
    }
}

const char *
fsg_rule_kind_to_key (FsgRuleKind kind)
{
  switch (kind)
    {
    case FSG_RULE_WRITABLE:
      return "writable";
    case FSG_RULE_READONLY:
      return "readonly";
    case FSG_RULE_DENY_READ:
      return "deny-read";
    case FSG_RULE_DENY_WRITE:
    default:
      return "deny-write";
    }
}

char *
fsg_path_state_describe (const FsgPolicy *policy, const FsgPathState *state)
{
  const FsgRule *rule = state->rule;

  if (state->access == FSG_ACCESS_ABSENT || rule == NULL)
    return g_strdup ("no rule: not under any root");
  if (state->flags & FSG_STATE_ALIAS)
    return g_strdup_printf ("symlink to %s for %s %s (%s)",
                            ((const FsgRuleImpl *) rule)->alias_target,
                            fsg_rule_kind_to_key (rule->kind), rule->pattern, rule->origin);
  if (state->flags & FSG_STATE_SYNTHETIC)
    {
      /* a root given through a symlink has two chains of ancestors: name
       * both ends, since this path leads to one or the other */
      if (strcmp (rule->pattern, rule->path) != 0)
        return g_strdup_printf ("ancestor of %s %s (resolves to %s) (%s)",
                                fsg_rule_kind_to_key (rule->kind), rule->pattern,
                                rule->path, rule->origin);
      return g_strdup_printf ("ancestor of %s %s (%s)",
                              fsg_rule_kind_to_key (rule->kind), rule->path, rule->origin);
    }
  return g_strdup_printf ("%s %s (%s)", fsg_rule_kind_to_key (rule->kind),
                          rule->pattern, rule->origin);
}

FsgPathState
fsg_policy_walk (const FsgPolicy *policy, const char *path)
{
  FsgPathState s = fsg_policy_root_state (policy);
  g_auto (GStrv) names = fsg_path_split (path);

  for (guint i = 0; names[i] != NULL; i++)
    s = fsg_policy_child_state (policy, &s, names[i]);
  return s;
}
