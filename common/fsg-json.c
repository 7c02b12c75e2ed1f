/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * JSON writer and flat objects (see fsg-json.h).
 */
#include "config.h"

#include "common/fsg-json.h"

#include <errno.h>
#include <string.h>

/* ---- Writer ---------------------------------------------------------------- */

void
fsg_json_writer_init (FsgJsonWriter *w, GString *out, gboolean pretty)
{
  memset (w, 0, sizeof *w);
  w->out = out;
  w->pretty = pretty;
}

static void
newline (FsgJsonWriter *w)
{
  if (!w->pretty)
    return;
  g_string_append_c (w->out, '\n');
  for (guint i = 0; i < w->depth; i++)
    g_string_append (w->out, "  ");
}

/* Before a value or a key: the separator from the previous item. */
static void
before_item (FsgJsonWriter *w)
{
  if (w->after_key)
    {
      w->after_key = FALSE;
      return;
    }
  if (w->depth == 0)
    return;
  if (w->has_item[w->depth])
    g_string_append_c (w->out, ',');
  w->has_item[w->depth] = TRUE;
  newline (w);
}

static void
begin (FsgJsonWriter *w, char c)
{
  before_item (w);
  g_string_append_c (w->out, c);
  g_return_if_fail (w->depth + 1 < FSG_JSON_MAX_DEPTH);
  w->depth++;
  w->has_item[w->depth] = FALSE;
}

static void
end (FsgJsonWriter *w, char c)
{
  gboolean had = w->has_item[w->depth];

  g_return_if_fail (w->depth > 0);
  w->depth--;
  if (had)
    newline (w);
  g_string_append_c (w->out, c);
}

void
fsg_json_begin_object (FsgJsonWriter *w)
{
  begin (w, '{');
}

void
fsg_json_end_object (FsgJsonWriter *w)
{
  end (w, '}');
}

void
fsg_json_begin_array (FsgJsonWriter *w)
{
  begin (w, '[');
}

void
fsg_json_end_array (FsgJsonWriter *w)
{
  end (w, ']');
}

void
fsg_json_append_string (GString *out, const char *value)
{
  g_autofree char *valid = NULL;
  const char *p = value;

  if (!g_utf8_validate (value, -1, NULL))
    p = valid = g_utf8_make_valid (value, -1);
  g_string_append_c (out, '"');
  for (; *p; p++)
    {
      unsigned char c = (unsigned char) *p;

      switch (c)
        {
        case '"': g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        case '\b': g_string_append (out, "\\b"); break;
        case '\f': g_string_append (out, "\\f"); break;
        default:
          if (c < 0x20 || c == 0x7f)
            g_string_append_printf (out, "\\u%04x", c);
          else
            g_string_append_c (out, (char) c);
        }
    }
  g_string_append_c (out, '"');
}

void
fsg_json_key (FsgJsonWriter *w, const char *key)
{
  before_item (w);
  fsg_json_append_string (w->out, key);
  /* " : " as the reports of earlier versions (json-glib) had it: scripts grep them */
  g_string_append (w->out, w->pretty ? " : " : ":");
  w->after_key = TRUE;
}

void
fsg_json_string (FsgJsonWriter *w, const char *value)
{
  if (value == NULL)
    return fsg_json_null (w);
  before_item (w);
  fsg_json_append_string (w->out, value);
}

void
fsg_json_int (FsgJsonWriter *w, gint64 value)
{
  before_item (w);
  g_string_append_printf (w->out, "%" G_GINT64_FORMAT, value);
}

void
fsg_json_bool (FsgJsonWriter *w, gboolean value)
{
  before_item (w);
  g_string_append (w->out, value ? "true" : "false");
}

void
fsg_json_null (FsgJsonWriter *w)
{
  before_item (w);
  g_string_append (w->out, "null");
}

/* ---- Flat objects ------------------------------------------------------------ */

typedef struct
{
  char *key;
  FsgJsonType type;
  gint64 i;  /* INT, BOOL */
  char *s;   /* STRING */
} Member;

struct _FsgJsonObject
{
  GArray *members; /* Member */
};

static void
member_clear (gpointer data)
{
  Member *m = data;

  g_free (m->key);
  g_free (m->s);
}

FsgJsonObject *
fsg_json_object_new (void)
{
  FsgJsonObject *o = g_new0 (FsgJsonObject, 1);

  o->members = g_array_new (FALSE, TRUE, sizeof (Member));
  g_array_set_clear_func (o->members, member_clear);
  return o;
}

void
fsg_json_object_free (FsgJsonObject *o)
{
  if (o == NULL)
    return;
  g_array_unref (o->members);
  g_free (o);
}

static Member *
find (const FsgJsonObject *o, const char *key)
{
  for (guint i = 0; i < o->members->len; i++)
    {
      Member *m = &g_array_index (o->members, Member, i);

      if (strcmp (m->key, key) == 0)
        return m;
    }
  return NULL;
}

/* The member @key, emptied, appended if new. */
static Member *
slot (FsgJsonObject *o, const char *key)
{
  Member *m = find (o, key);

  if (m != NULL)
    {
      g_clear_pointer (&m->s, g_free);
      m->i = 0;
      return m;
    }
  g_array_set_size (o->members, o->members->len + 1);
  m = &g_array_index (o->members, Member, o->members->len - 1);
  m->key = g_strdup (key);
  return m;
}

void
fsg_json_object_set_string (FsgJsonObject *o, const char *key, const char *value)
{
  Member *m = slot (o, key);

  if (value == NULL)
    {
      m->type = FSG_JSON_NULL;
      return;
    }
  m->type = FSG_JSON_STRING;
  m->s = g_utf8_validate (value, -1, NULL) ? g_strdup (value) : g_utf8_make_valid (value, -1);
}

void
fsg_json_object_set_int (FsgJsonObject *o, const char *key, gint64 value)
{
  Member *m = slot (o, key);

  m->type = FSG_JSON_INT;
  m->i = value;
}

void
fsg_json_object_set_bool (FsgJsonObject *o, const char *key, gboolean value)
{
  Member *m = slot (o, key);

  m->type = FSG_JSON_BOOL;
  m->i = value ? 1 : 0;
}

const char *
fsg_json_object_get_string (const FsgJsonObject *o, const char *key)
{
  const Member *m = find (o, key);

  return m != NULL && m->type == FSG_JSON_STRING ? m->s : NULL;
}

gint64
fsg_json_object_get_int (const FsgJsonObject *o, const char *key, gint64 fallback)
{
  const Member *m = find (o, key);

  return m != NULL && m->type == FSG_JSON_INT ? m->i : fallback;
}

gboolean
fsg_json_object_has (const FsgJsonObject *o, const char *key)
{
  return find (o, key) != NULL;
}

gsize
fsg_json_object_size (const FsgJsonObject *o)
{
  gsize n = sizeof *o + o->members->len * sizeof (Member);

  for (guint i = 0; i < o->members->len; i++)
    {
      const Member *m = &g_array_index (o->members, Member, i);

      n += strlen (m->key) + 1 + (m->s ? strlen (m->s) + 1 : 0);
    }
  return n;
}

void
fsg_json_write_object (FsgJsonWriter *w, const FsgJsonObject *o)
{
  fsg_json_begin_object (w);
  for (guint i = 0; i < o->members->len; i++)
    {
      const Member *m = &g_array_index (o->members, Member, i);

      fsg_json_key (w, m->key);
      switch (m->type)
        {
        case FSG_JSON_NULL: fsg_json_null (w); break;
        case FSG_JSON_BOOL: fsg_json_bool (w, m->i != 0); break;
        case FSG_JSON_INT: fsg_json_int (w, m->i); break;
        case FSG_JSON_STRING: fsg_json_string (w, m->s); break;
        }
    }
  fsg_json_end_object (w);
}

char *
fsg_json_object_to_string (const FsgJsonObject *o)
{
  GString *s = g_string_new (NULL);
  FsgJsonWriter w;

  fsg_json_writer_init (&w, s, FALSE);
  fsg_json_write_object (&w, o);
  return g_string_free (s, FALSE);
}

/* ---- Parser ---------------------------------------------------------------- */

typedef struct
{
  const char *p, *end;
} Cursor;

static void
skip_ws (Cursor *c)
{
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static gboolean
eat (Cursor *c, char ch)
{
  skip_ws (c);
  if (c->p < c->end && *c->p == ch)
    {
      c->p++;
      return TRUE;
    }
  return FALSE;
}

static int
hex4 (Cursor *c)
{
  int v = 0;

  if (c->end - c->p < 4)
    return -1;
  for (int i = 0; i < 4; i++)
    {
      int d = g_ascii_xdigit_value (c->p[i]);

      if (d < 0)
        return -1;
      v = v * 16 + d;
    }
  c->p += 4;
  return v;
}

/* A string after its opening quote. (transfer full) or NULL. */
static char *
parse_string (Cursor *c)
{
  g_autoptr(GString) s = g_string_new (NULL);

  while (c->p < c->end)
    {
      unsigned char ch = (unsigned char) *c->p++;

      if (ch == '"')
        {
          if (!g_utf8_validate (s->str, (gssize) s->len, NULL) || memchr (s->str, 0, s->len))
            {
              g_autofree char *valid = g_utf8_make_valid (s->str, (gssize) s->len);
              return g_steal_pointer (&valid);
            }
          return g_string_free (g_steal_pointer (&s), FALSE);
        }
      if (ch < 0x20)
        return NULL;
      if (ch != '\\')
        {
          g_string_append_c (s, (char) ch);
          continue;
        }
      if (c->p >= c->end)
        return NULL;
      switch (*c->p++)
        {
        case '"': g_string_append_c (s, '"'); break;
        case '\\': g_string_append_c (s, '\\'); break;
        case '/': g_string_append_c (s, '/'); break;
        case 'b': g_string_append_c (s, '\b'); break;
        case 'f': g_string_append_c (s, '\f'); break;
        case 'n': g_string_append_c (s, '\n'); break;
        case 'r': g_string_append_c (s, '\r'); break;
        case 't': g_string_append_c (s, '\t'); break;
        case 'u':
          {
            int u = hex4 (c);
            gunichar cp;

            if (u < 0)
              return NULL;
            cp = (gunichar) u;
            if (u >= 0xd800 && u <= 0xdbff && c->end - c->p >= 6 && c->p[0] == '\\' &&
                c->p[1] == 'u')
              {
                Cursor save = *c;
                int lo;

                c->p += 2;
                lo = hex4 (c);
                if (lo >= 0xdc00 && lo <= 0xdfff)
                  cp = 0x10000 + (((gunichar) u - 0xd800) << 10) + ((gunichar) lo - 0xdc00);
                else
                  *c = save;
              }
            if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
              cp = 0xfffd; /* a lone surrogate, or NUL, which C strings cannot hold */
            g_string_append_unichar (s, cp);
            break;
          }
        default:
          return NULL;
        }
    }
  return NULL;
}

FsgJsonObject *
fsg_json_object_parse (const char *text, gsize len)
{
  g_autoptr(FsgJsonObject) o = fsg_json_object_new ();
  Cursor c = { text, text + len };

  if (!eat (&c, '{'))
    return NULL;
  if (eat (&c, '}'))
    goto done;
  while (TRUE)
    {
      g_autofree char *key = NULL;

      if (!eat (&c, '"') || (key = parse_string (&c)) == NULL || !eat (&c, ':'))
        return NULL;
      skip_ws (&c);
      if (c.p >= c.end)
        return NULL;
      if (*c.p == '"')
        {
          g_autofree char *v = NULL;

          c.p++;
          if ((v = parse_string (&c)) == NULL)
            return NULL;
          fsg_json_object_set_string (o, key, v);
        }
      else if (*c.p == '-' || g_ascii_isdigit (*c.p))
        {
          const char *start = c.p;
          g_autofree char *num = NULL;
          gint64 v;
          char *endp;

          if (*c.p == '-')
            c.p++;
          if (c.p >= c.end || !g_ascii_isdigit (*c.p) ||
              (*c.p == '0' && c.p + 1 < c.end && g_ascii_isdigit (c.p[1])))
            return NULL;
          while (c.p < c.end && g_ascii_isdigit (*c.p))
            c.p++;
          if (c.p < c.end && (*c.p == '.' || *c.p == 'e' || *c.p == 'E'))
            return NULL; /* integers only */
          num = g_strndup (start, (gsize) (c.p - start));
          errno = 0;
          v = g_ascii_strtoll (num, &endp, 10);
          if (errno != 0 || *endp != '\0')
            return NULL;
          fsg_json_object_set_int (o, key, v);
        }
      else if (c.end - c.p >= 4 && strncmp (c.p, "true", 4) == 0)
        {
          c.p += 4;
          fsg_json_object_set_bool (o, key, TRUE);
        }
      else if (c.end - c.p >= 5 && strncmp (c.p, "false", 5) == 0)
        {
          c.p += 5;
          fsg_json_object_set_bool (o, key, FALSE);
        }
      else if (c.end - c.p >= 4 && strncmp (c.p, "null", 4) == 0)
        {
          c.p += 4;
          fsg_json_object_set_string (o, key, NULL);
        }
      else
        return NULL;
      if (eat (&c, '}'))
        break;
      if (!eat (&c, ','))
        return NULL;
    }
done:
  skip_ws (&c);
  if (c.p != c.end)
    return NULL;
  return g_steal_pointer (&o);
}
