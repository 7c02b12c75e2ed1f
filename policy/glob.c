/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Glob matching for one path component: '*', '?', '[...]' (with '!' or '^'
 * negation and ranges) and backslash escapes. '**' and '/' are handled by
 * the engine in decide.c, never here. Matching is on bytes and never
 * allocates; '*' uses the classic single-backtrack loop, so the cost is
 * O(len(pattern) * len(name)) in the worst case and linear in practice.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <string.h>

gboolean
fsg_glob_has_magic (const char *comp)
{
  for (const char *p = comp; *p; p++)
    {
      if (*p == '\\')
        {
          if (p[1] == '\0')
            return FALSE;
          p++;
          continue;
        }
      if (*p == '*' || *p == '?' || *p == '[')
        return TRUE;
    }
  return FALSE;
}

/* Parse a bracket expression starting after '['. Returns the position after
 * the closing ']' or NULL when unclosed. When @c >= 0, *out_match says
 * whether byte @c is in the set. */
static const char *
bracket (const char *p, int c, gboolean nocase, gboolean *out_match)
{
  gboolean negate = FALSE, match = FALSE, first = TRUE;

  if (*p == '!' || *p == '^')
    {
      negate = TRUE;
      p++;
    }
  while (*p && (first || *p != ']'))
    {
      int lo, hi;

      first = FALSE;
      if (*p == '\\')
        {
          if (p[1] == '\0')
            return NULL;
          p++;
        }
      lo = (unsigned char) *p++;
      hi = lo;
      if (p[0] == '-' && p[1] && p[1] != ']')
        {
          p++;
          if (*p == '\\')
            {
              if (p[1] == '\0')
                return NULL;
              p++;
            }
          hi = (unsigned char) *p++;
        }
      if (c >= 0)
        {
          if (lo <= c && c <= hi)
            match = TRUE;
          else if (nocase)
            {
              int lc = g_ascii_tolower (c), uc = g_ascii_toupper (c);
              if ((lo <= lc && lc <= hi) || (lo <= uc && uc <= hi))
                match = TRUE;
            }
        }
    }
  if (*p != ']')
    return NULL;
  if (out_match)
    *out_match = negate ? !match : match;
  return p + 1;
}

gboolean
fsg_glob_validate (const char *comp, GError **error)
{
  if (*comp == '\0')
    {
      g_set_error_literal (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                           "empty path component");
      return FALSE;
    }
  for (const char *p = comp; *p; p++)
    {
      if (*p == '\\')
        {
          if (p[1] == '\0')
            {
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                           "'%s' ends with a lone backslash", comp);
              return FALSE;
            }
          p++;
        }
      else if (*p == '*' && p[1] == '*')
        {
          g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                       "'%s': '**' must be a whole path component (as in 'a/**/b')", comp);
          return FALSE;
        }
      else if (*p == '[')
        {
          const char *end = bracket (p + 1, -1, FALSE, NULL);
          if (end == NULL)
            {
              g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
                           "'%s': unclosed '[' (write '\\[' for a literal bracket)", comp);
              return FALSE;
            }
          p = end - 1;
        }
    }
  return TRUE;
}

static inline gboolean
byte_eq (int a, int b, gboolean nocase)
{
  return a == b || (nocase && g_ascii_tolower (a) == g_ascii_tolower (b));
}

static gboolean
match (const char *pat, const char *name, gboolean nocase)
{
  const char *star_p = NULL, *star_n = NULL;

  for (;;)
    {
      if (*pat == '*')
        {
          while (*pat == '*')
            pat++;
          if (*pat == '\0')
            return TRUE;
          star_p = pat;
          star_n = name;
          continue;
        }
      if (*name == '\0')
        {
          if (*pat == '\0')
            return TRUE;
          goto backtrack;
        }
      if (*pat == '?')
        {
          pat++;
          name++;
          continue;
        }
      if (*pat == '[')
        {
          gboolean in = FALSE;
          const char *end = bracket (pat + 1, (unsigned char) *name, nocase, &in);
          if (end == NULL)
            return FALSE; /* rejected by validation; never match */
          if (in)
            {
              pat = end;
              name++;
              continue;
            }
          goto backtrack;
        }
      if (*pat == '\\' && pat[1])
        pat++;
      if (*pat != '\0' && byte_eq ((unsigned char) *pat, (unsigned char) *name, nocase))
        {
          pat++;
          name++;
          continue;
        }
    backtrack:
      if (star_p == NULL || *star_n == '\0')
        return FALSE;
      pat = star_p;
      name = ++star_n;
    }
}

gboolean
fsg_glob_match (const char *pattern, const char *name)
{
  return match (pattern, name, FALSE);
}

gboolean
fsg_glob_match_nocase (const char *pattern, const char *name)
{
  return match (pattern, name, TRUE);
}

char *
fsg_glob_escape (const char *name)
{
  GString *s = g_string_new (NULL);

  for (const char *p = name; *p; p++)
    {
      if (*p == '*' || *p == '?' || *p == '[' || *p == '\\')
        g_string_append_c (s, '\\');
      g_string_append_c (s, *p);
    }
  return g_string_free (s, FALSE);
}

char *
fsg_glob_unescape (const char *comp)
{
  GString *s = g_string_sized_new (strlen (comp));

  for (const char *p = comp; *p; p++)
    {
      if (*p == '\\' && p[1])
        p++;
      g_string_append_c (s, *p);
    }
  return g_string_free (s, FALSE);
}

/* The literal run at the start of @pattern (unescaped) and its length in
 * the pattern. */
static char *
literal_run (const char *pattern, const char **out_end)
{
  GString *s = g_string_new (NULL);
  const char *p = pattern;

  for (; *p; p++)
    {
      if (*p == '*' || *p == '?' || *p == '[')
        break;
      if (*p == '\\' && p[1])
        p++;
      g_string_append_c (s, *p);
    }
  *out_end = p;
  return g_string_free (s, FALSE);
}

void
fsg_glob_init (FsgGlob *glob, const char *pattern)
{
  const char *p, *last_magic_end = NULL;
  gsize min = 0;

  memset (glob, 0, sizeof *glob);
  glob->pattern = g_strdup (pattern);
  glob->prefix = literal_run (pattern, &p);
  glob->prefix_len = strlen (glob->prefix);

  /* Walk the pattern to find the end of the last wildcard and the minimum
   * length (every byte except '*' consumes one name byte). */
  for (p = pattern; *p; p++)
    {
      if (*p == '\\' && p[1])
        {
          p++;
          min++;
        }
      else if (*p == '*')
        last_magic_end = p + 1;
      else if (*p == '?')
        {
          last_magic_end = p + 1;
          min++;
        }
      else if (*p == '[')
        {
          const char *end = bracket (p + 1, -1, FALSE, NULL);
          if (end == NULL)
            break;
          p = end - 1;
          last_magic_end = end;
          min++;
        }
      else
        min++;
    }
  glob->min_len = min;
  if (last_magic_end == NULL)
    {
      /* no wildcard at all: the whole thing is a prefix */
      glob->suffix = g_strdup ("");
    }
  else
    {
      const char *end;
      glob->suffix = literal_run (last_magic_end, &end);
    }
  glob->suffix_len = strlen (glob->suffix);
}

void
fsg_glob_clear (FsgGlob *glob)
{
  g_clear_pointer (&glob->pattern, g_free);
  g_clear_pointer (&glob->prefix, g_free);
  g_clear_pointer (&glob->suffix, g_free);
}
