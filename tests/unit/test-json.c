/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The JSON writer and flat objects of common/fsg-json.c, with json-glib as
 * the independent oracle: what the writer makes parses there to the same
 * values (also for bytes that are not UTF-8 and for control characters),
 * flat objects round-trip through our parser, and the parser refuses what
 * is not a flat object.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "common/fsg-json.h"

static JsonNode *
oracle_parse (const char *text)
{
  g_autoptr(JsonParser) p = json_parser_new ();
  g_autoptr(GError) error = NULL;

  if (!json_parser_load_from_data (p, text, -1, &error))
    {
      g_test_message ("json-glib: %s: %s", error->message, text);
      return NULL;
    }
  return json_node_copy (json_parser_get_root (p));
}

static void
test_writer_nested (void)
{
  for (int pretty = 0; pretty < 2; pretty++)
    {
      GString *s = g_string_new (NULL);
      FsgJsonWriter w;
      g_autoptr(JsonNode) root = NULL;
      JsonObject *o, *inner;
      JsonArray *a;

      fsg_json_writer_init (&w, s, pretty);
      fsg_json_begin_object (&w);
      fsg_json_key (&w, "n");
      fsg_json_int (&w, -42);
      fsg_json_key (&w, "big");
      fsg_json_int (&w, G_MAXINT64);
      fsg_json_key (&w, "t");
      fsg_json_bool (&w, TRUE);
      fsg_json_key (&w, "null");
      fsg_json_string (&w, NULL);
      fsg_json_key (&w, "empty-array");
      fsg_json_begin_array (&w);
      fsg_json_end_array (&w);
      fsg_json_key (&w, "empty-object");
      fsg_json_begin_object (&w);
      fsg_json_end_object (&w);
      fsg_json_key (&w, "a");
      fsg_json_begin_array (&w);
      fsg_json_string (&w, "x");
      fsg_json_begin_object (&w);
      fsg_json_key (&w, "k");
      fsg_json_string (&w, "v");
      fsg_json_end_object (&w);
      fsg_json_null (&w);
      fsg_json_end_array (&w);
      fsg_json_end_object (&w);

      root = oracle_parse (s->str);
      g_assert_nonnull (root);
      o = json_node_get_object (root);
      g_assert_cmpint (json_object_get_int_member (o, "n"), ==, -42);
      g_assert_cmpint (json_object_get_int_member (o, "big"), ==, G_MAXINT64);
      g_assert_true (json_object_get_boolean_member (o, "t"));
      g_assert_true (json_object_get_null_member (o, "null"));
      g_assert_cmpuint (json_array_get_length (json_object_get_array_member (o, "empty-array")), ==, 0);
      g_assert_cmpuint (json_object_get_size (json_object_get_object_member (o, "empty-object")), ==, 0);
      a = json_object_get_array_member (o, "a");
      g_assert_cmpuint (json_array_get_length (a), ==, 3);
      g_assert_cmpstr (json_array_get_string_element (a, 0), ==, "x");
      inner = json_array_get_object_element (a, 1);
      g_assert_cmpstr (json_object_get_string_member (inner, "k"), ==, "v");
      g_assert_true (json_array_get_null_element (a, 2));
      if (pretty)
        g_assert_nonnull (strchr (s->str, '\n'));
      else
        g_assert_null (strchr (s->str, '\n'));
      g_string_free (s, TRUE);
    }
}

/* Every byte value in a string: what json-glib reads back is the input
 * made valid UTF-8. */
static void
test_writer_escapes (void)
{
  static const char *const inputs[] = {
    "plain", "", "quote \" backslash \\ slash /", "new\nline\ttab\rcr\bbs\ffeed",
    "\x01\x02\x1f\x7f", "caf\xc3\xa9 \xe2\x80\xae bidi", "bad \xff\xfe bytes \xc3", "\xed\xa0\x80",
  };

  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autoptr(GString) s = g_string_new (NULL);
      g_autoptr(JsonNode) root = NULL;
      g_autofree char *valid = g_utf8_make_valid (inputs[i], -1);

      fsg_json_append_string (s, inputs[i]);
      root = oracle_parse (s->str);
      g_assert_nonnull (root);
      g_assert_cmpstr (json_node_get_string (root), ==, valid);
      for (gsize j = 0; j < s->len; j++)
        g_assert_cmpint ((unsigned char) s->str[j], >=, 0x20);
    }
  {
    /* all 256 byte values, in one string */
    char all[256];
    g_autoptr(GString) s = g_string_new (NULL);
    g_autoptr(JsonNode) root = NULL;
    g_autofree char *valid = NULL;

    for (int b = 1; b < 256; b++)
      all[b - 1] = (char) b;
    all[255] = '\0';
    valid = g_utf8_make_valid (all, -1);
    fsg_json_append_string (s, all);
    root = oracle_parse (s->str);
    g_assert_nonnull (root);
    g_assert_cmpstr (json_node_get_string (root), ==, valid);
  }
}

static void
test_object_basics (void)
{
  g_autoptr(FsgJsonObject) o = fsg_json_object_new ();
  g_autofree char *text = NULL;
  g_autoptr(FsgJsonObject) back = NULL;

  fsg_json_object_set_string (o, "source", "fuse");
  fsg_json_object_set_int (o, "count", 1);
  fsg_json_object_set_string (o, "command", NULL);
  fsg_json_object_set_bool (o, "past_bound", FALSE);
  fsg_json_object_set_int (o, "count", 7); /* replaces, keeps its place */
  g_assert_cmpint (fsg_json_object_get_int (o, "count", 0), ==, 7);
  g_assert_cmpint (fsg_json_object_get_int (o, "source", -1), ==, -1);
  g_assert_null (fsg_json_object_get_string (o, "command"));
  g_assert_true (fsg_json_object_has (o, "command"));
  g_assert_false (fsg_json_object_has (o, "nothing"));
  text = fsg_json_object_to_string (o);
  g_assert_cmpstr (text, ==, "{\"source\":\"fuse\",\"count\":7,\"command\":null,\"past_bound\":false}");
  back = fsg_json_object_parse (text, strlen (text));
  g_assert_nonnull (back);
  g_assert_cmpstr (fsg_json_object_get_string (back, "source"), ==, "fuse");
  g_assert_cmpint (fsg_json_object_get_int (back, "count", 0), ==, 7);
  g_assert_true (fsg_json_object_has (back, "past_bound"));
}

static void
test_parse_valid (void)
{
  static const struct
  {
    const char *text, *key, *str;
    gint64 num;
  } cases[] = {
    { "{}", NULL, NULL, 0 },
    { "  {\n\"a\" : \"b\" }\r\n", "a", "b", 0 },
    { "{\"a\":\"\\u00e9\\n\\\"\\\\\\/\"}", "a", "\xc3\xa9\n\"\\/", 0 },
    { "{\"a\":\"\\ud83d\\ude00\"}", "a", "\xf0\x9f\x98\x80", 0 },
    { "{\"a\":\"\\ud800x\"}", "a", "\xef\xbf\xbdx", 0 },     /* lone surrogate */
    { "{\"a\":\"\\u0000\"}", "a", "\xef\xbf\xbd", 0 },       /* NUL */
    { "{\"a\":\"\xff\"}", "a", "\xef\xbf\xbd", 0 },          /* invalid UTF-8 repaired */
    { "{\"n\":-9223372036854775808}", "n", NULL, G_MININT64 },
    { "{\"n\":0,\"n\":5}", "n", NULL, 5 },                   /* the last one wins */
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(FsgJsonObject) o = fsg_json_object_parse (cases[i].text, strlen (cases[i].text));

      g_test_message ("%s", cases[i].text);
      g_assert_nonnull (o);
      if (cases[i].key == NULL)
        continue;
      if (cases[i].str != NULL)
        g_assert_cmpstr (fsg_json_object_get_string (o, cases[i].key), ==, cases[i].str);
      else
        g_assert_cmpint (fsg_json_object_get_int (o, cases[i].key, 1), ==, cases[i].num);
    }
}

static void
test_parse_invalid (void)
{
  static const char *const bad[] = {
    "", "[]", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{\"a\":1}x", "{\"a\":1}{}",
    "{\"a\":{}}", "{\"a\":[1]}", "{\"a\":1.5}", "{\"a\":1e3}", "{\"a\":01}", "{\"a\":-}",
    "{\"a\":9223372036854775808}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"x}", "{\"a\":\"\\x\"}",
    "{\"a\":\"\\u12\"}", "{\"a\":\"line\nbreak\"}", "{a:1}", "{\"a\" 1}", "{'a':1}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(FsgJsonObject) o = fsg_json_object_parse (bad[i], strlen (bad[i]));

      if (o != NULL)
        g_error ("parsed what is not a flat object: %s", bad[i]);
    }
}

/* Random flat objects: ours round-trips, and json-glib reads the same. */
static void
test_round_trip_random (void)
{
  GRand *rnd = g_rand_new_with_seed (15);

  for (int iter = 0; iter < 2000; iter++)
    {
      g_autoptr(FsgJsonObject) o = fsg_json_object_new ();
      g_autofree char *text = NULL, *again = NULL;
      g_autoptr(FsgJsonObject) back = NULL;
      g_autoptr(JsonNode) root = NULL;
      guint n = g_rand_int_range (rnd, 0, 6);

      for (guint m = 0; m < n; m++)
        {
          char key[16], val[24];
          guint klen = g_rand_int_range (rnd, 1, 8), vlen = g_rand_int_range (rnd, 0, 20);

          for (guint k = 0; k < klen; k++)
            key[k] = (char) g_rand_int_range (rnd, 'a', 'f');
          key[klen] = '\0';
          for (guint k = 0; k < vlen; k++)
            val[k] = (char) g_rand_int_range (rnd, 1, 256);
          val[vlen] = '\0';
          switch (g_rand_int_range (rnd, 0, 4))
            {
            case 0: fsg_json_object_set_string (o, key, val); break;
            case 1: fsg_json_object_set_int (o, key, (gint64) g_rand_int (rnd) - G_MAXINT32); break;
            case 2: fsg_json_object_set_bool (o, key, g_rand_boolean (rnd)); break;
            default: fsg_json_object_set_string (o, key, NULL); break;
            }
        }
      text = fsg_json_object_to_string (o);
      back = fsg_json_object_parse (text, strlen (text));
      g_assert_nonnull (back);
      again = fsg_json_object_to_string (back);
      g_assert_cmpstr (again, ==, text);
      root = oracle_parse (text);
      g_assert_nonnull (root);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
      {
        JsonObject *jo = json_node_get_object (root);
        GList *members = json_object_get_members (jo);

        for (GList *l = members; l != NULL; l = l->next)
          {
            JsonNode *v = json_object_get_member (jo, l->data);

            if (json_node_get_value_type (v) == G_TYPE_STRING)
              g_assert_cmpstr (json_node_get_string (v), ==, fsg_json_object_get_string (back, l->data));
            else if (json_node_get_value_type (v) == G_TYPE_INT64)
              g_assert_cmpint (json_node_get_int (v), ==, fsg_json_object_get_int (back, l->data, 0));
          }
        g_list_free (members);
      }
    }
  g_rand_free (rnd);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/json/writer/nested", test_writer_nested);
  g_test_add_func ("/json/writer/escapes", test_writer_escapes);
  g_test_add_func ("/json/object/basics", test_object_basics);
  g_test_add_func ("/json/parse/valid", test_parse_valid);
  g_test_add_func ("/json/parse/invalid", test_parse_invalid);
  g_test_add_func ("/json/round-trip/random", test_round_trip_random);
  return g_test_run ();
}
