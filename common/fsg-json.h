/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The JSON fsgate writes and reads: a writer into a GString (the JSON
 * report, the audit log), and flat objects of string, integer, boolean and
 * null members that can be parsed back (the records the FUSE daemon sends
 * fsgate-run, one per line, and the records of the report). Bytes from the
 * host or the command (paths, command names) are made valid UTF-8 (invalid
 * sequences become U+FFFD), so every line parses and no record can hide
 * behind an odd name.
 *
 * Not json-glib: it and the GIO it needs cost fsgate-run 1.5 ms of dynamic
 * linking at every start (docs/performance.md, "Startup"), for what fits
 * in this file.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define FSG_JSON_MAX_DEPTH 32

typedef struct
{
  GString *out;
  gboolean pretty;     /* two-space indents, one member per line */
  guint depth;
  gboolean has_item[FSG_JSON_MAX_DEPTH]; /* something was written at this depth */
  gboolean after_key;
} FsgJsonWriter;

void fsg_json_writer_init (FsgJsonWriter *w, GString *out, gboolean pretty);
void fsg_json_begin_object (FsgJsonWriter *w);
void fsg_json_end_object (FsgJsonWriter *w);
void fsg_json_begin_array (FsgJsonWriter *w);
void fsg_json_end_array (FsgJsonWriter *w);
/* A member name; the next value is its value. */
void fsg_json_key (FsgJsonWriter *w, const char *key);
/* @value NULL writes null. */
void fsg_json_string (FsgJsonWriter *w, const char *value);
void fsg_json_int (FsgJsonWriter *w, gint64 value);
void fsg_json_bool (FsgJsonWriter *w, gboolean value);
void fsg_json_null (FsgJsonWriter *w);
/* Append @value as a JSON string (quoted, escaped, valid UTF-8) to @out. */
void fsg_json_append_string (GString *out, const char *value);

/* ---- Flat objects ---------------------------------------------------------- */

typedef enum
{
  FSG_JSON_NULL,
  FSG_JSON_BOOL,
  FSG_JSON_INT,
  FSG_JSON_STRING,
} FsgJsonType;

typedef struct _FsgJsonObject FsgJsonObject;

FsgJsonObject *fsg_json_object_new (void);
void fsg_json_object_free (FsgJsonObject *o);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FsgJsonObject, fsg_json_object_free)

/* Setting a member that exists replaces its value in place (the order of
 * members is the order they were first set). @value NULL sets null. */
void fsg_json_object_set_string (FsgJsonObject *o, const char *key, const char *value);
void fsg_json_object_set_int (FsgJsonObject *o, const char *key, gint64 value);
void fsg_json_object_set_bool (FsgJsonObject *o, const char *key, gboolean value);
/* The member's string, or NULL when it is absent or not a string. */
const char *fsg_json_object_get_string (const FsgJsonObject *o, const char *key);
/* The member's integer, or @fallback when it is absent or not an integer. */
gint64 fsg_json_object_get_int (const FsgJsonObject *o, const char *key, gint64 fallback);
gboolean fsg_json_object_has (const FsgJsonObject *o, const char *key);
/* Roughly the memory the object takes. */
gsize fsg_json_object_size (const FsgJsonObject *o);
void fsg_json_write_object (FsgJsonWriter *w, const FsgJsonObject *o);
/* One object, no newline (transfer full). */
char *fsg_json_object_to_string (const FsgJsonObject *o);
/* Parse one flat object (@len bytes, surrounding white space allowed):
 * members whose values are strings, integers, true, false or null. NULL
 * for anything else (nested values, fractions, trailing bytes, raw control
 * characters in a string). A string that is not valid UTF-8 once
 * unescaped is made valid (U+FFFD for each bad sequence, and for \u0000 and
 * lone surrogates). (transfer full) */
FsgJsonObject *fsg_json_object_parse (const char *text, gsize len);

G_END_DECLS
