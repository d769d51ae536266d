/* cell_json.h: the writer of the one JSON object a cell prints on stdout. It
 * keeps the commas and the nesting, so that a result is a list of named
 * fields; strings are escaped, numbers are whole or %.6g. For cell_main.c
 * only: one object per process, state in statics. */
#ifndef AM_CELL_JSON_H
#define AM_CELL_JSON_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

static int json_fields[JSON_MAX_DEPTH]; /* fields written at each open level */
static int json_depth;

/* a JSON string: quotes and backslashes escaped, control characters dropped */
static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        if ((unsigned char)*s >= 0x20) putchar(*s);
    }
    putchar('"');
}

/* the comma before every item of an object or array but its first */
static void json_item(void) {
    if (json_fields[json_depth]++) putchar(',');
}

static void json_key(const char *key) {
    json_item();
    json_string(key);
    putchar(':');
}

/* '{' or '[' (a nested one follows json_key or json_item) */
static void json_open(char bracket) {
    putchar(bracket);
    if (json_depth + 1 < JSON_MAX_DEPTH) json_depth++;
    json_fields[json_depth] = 0;
}

static void json_close(char bracket) {
    putchar(bracket);
    if (json_depth > 0) json_depth--;
    if (json_depth == 0) {
        putchar('\n');
        fflush(stdout); /* a sanitizer's exit report would otherwise discard it */
    }
}

static void json_num_value(double v) {
    if (isfinite(v)) printf("%.6g", v);
    else printf("null");
}

static void json_str(const char *key, const char *v) {
    json_key(key);
    json_string(v);
}

static void json_u64(const char *key, uint64_t v) {
    json_key(key);
    printf("%" PRIu64, v);
}

static void json_num(const char *key, double v) {
    json_key(key);
    json_num_value(v);
}

static void json_u64s(const char *key, const uint64_t *v, size_t n) {
    json_key(key);
    json_open('[');
    for (size_t i = 0; i < n; i++) {
        json_item();
        printf("%" PRIu64, v[i]);
    }
    json_close(']');
}

#endif
