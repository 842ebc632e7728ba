/* A C caller of s3native.h's Parquet writer, run by tests/c_parquet.rs. It builds Arrow C
 * data interface structs by hand (no Arrow library): a table of two columns, `id` int64
 * (not null) and `name` utf8 (null every 5th row), where row i has id i and name "name-i".
 * One scenario per run:
 *
 *   parquet stream ENDPOINT BUCKET KEY BATCHES ROWS publish|deferred
 *       Open with the schema, write BATCHES batches of ROWS rows through one ArrowArrayStream
 *       (s3n_parquet_write_stream), check the stream was released and the rows counted, close
 *       and print the Parquet result JSON. deferred: wait for a line on stdin (the caller
 *       checks the server), then s3n_complete the upload from the s3n_result close gave.
 *   parquet array ENDPOINT BUCKET KEY
 *       Two batches of 1000 rows through s3n_parquet_write_array (each array moved: its
 *       release is NULL after the call), zstd options; close twice (same JSON); print it.
 *   parquet bad ENDPOINT BUCKET KEY
 *       Errors, not crashes: NULL writer, NULL stream, unknown option (named), a batch of
 *       another schema (S3N_ERR_INVALID_ARGUMENT naming the column, then sticky for the next
 *       write and for close); abort after it is OK; a second writer aborted, then written:
 *       S3N_ERR_STATE, the stream released all the same.
 *
 * Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. Exits 0 on success, else
 * 1 with a message on stderr. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "s3native.h"

/* The Arrow C data and stream interfaces (https://arrow.apache.org/docs/format/CDataInterface.html). */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_NULLABLE 2
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};
struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};
#endif
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};
#endif

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)
#define NSETTINGS 5

static const char *keys[NSETTINGS] = {"fs.s3a.endpoint", "fs.s3a.path.style.access", "fs.s3a.multipart.size",
                                      "fs.s3a.access.key", "fs.s3a.secret.key"};
static const char *values[NSETTINGS];

static const char *message(const s3n_error *err) { return err ? s3n_error_message(err) : "(no error object)"; }

static void settings(const char *endpoint) {
    values[0] = endpoint;
    values[1] = "true";
    values[2] = "5M";
    values[3] = getenv("AWS_ACCESS_KEY_ID");
    values[4] = getenv("AWS_SECRET_ACCESS_KEY");
    CHECK(values[3] && values[4], "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set");
}

/* ---- schemas: static strings, children freed by the release callback ---- */

static void release_child_schema(struct ArrowSchema *s) { s->release = NULL; }

static void release_schema(struct ArrowSchema *s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        if (s->children[i]->release) s->children[i]->release(s->children[i]);
        free(s->children[i]);
    }
    free(s->children);
    s->release = NULL;
}

/* The table's schema into `out`; `second` names the second column and `format` its type. */
static void make_schema(struct ArrowSchema *out, const char *second, const char *format) {
    struct ArrowSchema **children = calloc(2, sizeof *children);
    const char *names[2] = {"id", second};
    const char *formats[2] = {"l", format};
    for (int i = 0; i < 2; i++) {
        children[i] = calloc(1, sizeof **children);
        *children[i] = (struct ArrowSchema){.format = formats[i], .name = names[i], .flags = i == 0 ? 0 : ARROW_FLAG_NULLABLE,
                                            .release = release_child_schema};
    }
    *out = (struct ArrowSchema){.format = "+s", .name = "", .n_children = 2, .children = children, .release = release_schema};
}

/* ---- batches ---- */

/* Everything a batch owns, freed at once by its release callback. */
struct Batch {
    struct ArrowArray id, name;
    struct ArrowArray *children[2];
    const void *top_buffers[1], *id_buffers[2], *name_buffers[3];
    int64_t *ids;
    uint8_t *validity;
    int32_t *offsets;
    char *chars;
};

static long released_batches = 0;

static void release_child_array(struct ArrowArray *a) { a->release = NULL; }

static void release_batch(struct ArrowArray *a) {
    struct Batch *b = a->private_data;
    for (int i = 0; i < 2; i++) {
        if (b->children[i]->release) b->children[i]->release(b->children[i]);
    }
    free(b->ids);
    free(b->validity);
    free(b->offsets);
    free(b->chars);
    free(b);
    a->release = NULL;
    released_batches++;
}

/* Rows first..first+rows of the table into `out`. */
static void make_batch(struct ArrowArray *out, int64_t first, int64_t rows) {
    struct Batch *b = calloc(1, sizeof *b);
    b->ids = malloc(rows * sizeof *b->ids);
    b->validity = calloc((rows + 7) / 8, 1);
    b->offsets = malloc((rows + 1) * sizeof *b->offsets);
    b->chars = malloc(rows * 24 + 1);
    int64_t nulls = 0, at = 0;
    for (int64_t i = 0; i < rows; i++) {
        int64_t id = first + i;
        b->ids[i] = id;
        b->offsets[i] = (int32_t)at;
        if (id % 5 == 0) {
            nulls++;
        } else {
            b->validity[i / 8] |= (uint8_t)(1u << (i % 8));
            at += sprintf(b->chars + at, "name-%lld", (long long)id);
        }
    }
    b->offsets[rows] = (int32_t)at;
    b->id_buffers[0] = NULL;
    b->id_buffers[1] = b->ids;
    b->name_buffers[0] = b->validity;
    b->name_buffers[1] = b->offsets;
    b->name_buffers[2] = b->chars;
    b->top_buffers[0] = NULL;
    b->id = (struct ArrowArray){.length = rows, .n_buffers = 2, .buffers = b->id_buffers, .release = release_child_array};
    b->name = (struct ArrowArray){.length = rows, .null_count = nulls, .n_buffers = 3, .buffers = b->name_buffers,
                                  .release = release_child_array};
    b->children[0] = &b->id;
    b->children[1] = &b->name;
    *out = (struct ArrowArray){.length = rows, .n_buffers = 1, .n_children = 2, .buffers = b->top_buffers, .children = b->children,
                               .release = release_batch, .private_data = b};
}

/* ---- a stream of `batches` batches of `rows` rows ---- */

struct Source {
    int64_t batches, rows, next;
    int released;
};

static int stream_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
    (void)s;
    make_schema(out, "name", "u");
    return 0;
}

static int stream_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
    struct Source *src = s->private_data;
    if (src->next == src->batches) {
        out->release = NULL; /* the end of the stream */
        return 0;
    }
    make_batch(out, src->next * src->rows, src->rows);
    src->next++;
    return 0;
}

static const char *stream_error(struct ArrowArrayStream *s) {
    (void)s;
    return NULL;
}

static void stream_release(struct ArrowArrayStream *s) {
    ((struct Source *)s->private_data)->released = 1;
    s->release = NULL;
}

/* ---- scenarios ---- */

static s3n_parquet_writer *open_writer(const char *bucket, const char *key, int32_t mode, const char *options) {
    struct ArrowSchema schema;
    make_schema(&schema, "name", "u");
    s3n_parquet_writer *w = NULL;
    s3n_error *err = NULL;
    int rc = s3n_parquet_open(bucket, key, mode, &schema, options, keys, values, NSETTINGS, NULL, &w, &err);
    CHECK(rc == S3N_OK && w != NULL, "open failed: %d %s", rc, message(err));
    CHECK(schema.release != NULL, "open only reads the schema");
    schema.release(&schema);
    return w;
}

static int stream_scenario(const char *bucket, const char *key, long batches, long rows, const char *mode) {
    int deferred = strcmp(mode, "deferred") == 0;
    s3n_parquet_writer *w = open_writer(bucket, key, deferred ? S3N_MODE_DEFERRED : S3N_MODE_PUBLISH, "{\"compression\": \"NONE\"}");
    struct Source src = {.batches = batches, .rows = rows};
    struct ArrowArrayStream stream = {stream_schema, stream_next, stream_error, stream_release, &src};
    s3n_error *err = NULL;
    uint64_t written = 0;
    int rc = s3n_parquet_write_stream(w, &stream, &written, &err);
    CHECK(rc == S3N_OK, "write_stream failed: %d %s", rc, message(err));
    CHECK(written == (uint64_t)(batches * rows), "rows %llu", (unsigned long long)written);
    CHECK(src.released && stream.release == NULL, "the stream is released");
    CHECK(released_batches == batches, "every batch released: %ld", released_batches);
    s3n_result *result = NULL;
    char *json = NULL;
    rc = s3n_parquet_close(w, &result, &json, &err);
    CHECK(rc == S3N_OK && result && json, "close failed: %d %s", rc, message(err));
    printf("%s\n", json);
    fflush(stdout);
    if (deferred) {
        char line[16];
        CHECK(fgets(line, sizeof line, stdin) != NULL, "no go-ahead on stdin");
        rc = s3n_complete(result, keys, values, NSETTINGS, &err);
        CHECK(rc == S3N_OK, "complete failed: %d %s", rc, message(err));
    }
    s3n_string_free(json);
    s3n_result_free(result);
    s3n_parquet_free(w);
    return 0;
}

static int array_scenario(const char *bucket, const char *key) {
    s3n_parquet_writer *w = open_writer(bucket, key, S3N_MODE_PUBLISH, "{\"compression\": \"ZSTD\", \"row_group_rows\": 1000}");
    s3n_error *err = NULL;
    for (int k = 0; k < 2; k++) {
        struct ArrowArray array;
        struct ArrowSchema schema;
        make_batch(&array, k * 1000, 1000);
        make_schema(&schema, "name", "u");
        int rc = s3n_parquet_write_array(w, &array, &schema, &err);
        CHECK(rc == S3N_OK, "write_array failed: %d %s", rc, message(err));
        CHECK(array.release == NULL, "the array was moved");
        CHECK(schema.release != NULL, "the schema is the caller's");
        schema.release(&schema);
    }
    char *json = NULL, *again = NULL;
    int rc = s3n_parquet_close(w, NULL, &json, &err);
    CHECK(rc == S3N_OK && json, "close failed: %d %s", rc, message(err));
    rc = s3n_parquet_close(w, NULL, &again, &err);
    CHECK(rc == S3N_OK && strcmp(json, again) == 0, "a second close gives the same result");
    printf("%s\n", json);
    s3n_string_free(json);
    s3n_string_free(again);
    s3n_parquet_free(w);
    CHECK(released_batches == 2, "both batches released: %ld", released_batches);
    return 0;
}

static int bad_scenario(const char *bucket, const char *key) {
    s3n_error *err = NULL;
    CHECK(s3n_parquet_write_stream(NULL, NULL, NULL, NULL) == S3N_ERR_INVALID_ARGUMENT, "NULL writer");
    struct ArrowSchema schema;
    make_schema(&schema, "name", "u");
    s3n_parquet_writer *w = NULL;
    int rc = s3n_parquet_open(bucket, key, S3N_MODE_PUBLISH, &schema, "{\"row_group_size\": 5}", keys, values, NSETTINGS, NULL, &w, &err);
    CHECK(rc == S3N_ERR_INVALID_ARGUMENT && w == NULL && strstr(message(err), "row_group_size"), "unknown option: %d %s", rc, message(err));
    s3n_error_free(err);
    err = NULL;
    rc = s3n_parquet_open(bucket, key, S3N_MODE_PUBLISH, NULL, NULL, keys, values, NSETTINGS, NULL, &w, &err);
    CHECK(rc == S3N_ERR_INVALID_ARGUMENT && strstr(message(err), "schema"), "NULL schema: %d %s", rc, message(err));
    s3n_error_free(err);
    err = NULL;
    schema.release(&schema);

    w = open_writer(bucket, key, S3N_MODE_PUBLISH, NULL);
    struct ArrowArray array;
    struct ArrowSchema other;
    make_batch(&array, 0, 10);
    make_schema(&other, "label", "u");
    rc = s3n_parquet_write_array(w, &array, &other, &err);
    CHECK(rc == S3N_ERR_INVALID_ARGUMENT && strstr(message(err), "'label'"), "another schema: %d %s", rc, message(err));
    CHECK(s3n_error_code(err) == S3N_ERR_INVALID_ARGUMENT, "the error's code");
    char first[512];
    snprintf(first, sizeof first, "%s", message(err));
    s3n_error_free(err);
    err = NULL;
    other.release(&other);
    CHECK(released_batches == 1, "the refused array was still released");
    rc = s3n_parquet_write_stream(w, NULL, NULL, &err);
    CHECK(rc == S3N_ERR_INVALID_ARGUMENT && strcmp(message(err), first) == 0, "sticky: %d %s", rc, message(err));
    s3n_error_free(err);
    err = NULL;
    char *json = NULL;
    rc = s3n_parquet_close(w, NULL, &json, &err);
    CHECK(rc == S3N_ERR_INVALID_ARGUMENT && json == NULL, "close after the failure: %d", rc);
    s3n_error_free(err);
    err = NULL;
    CHECK(s3n_parquet_abort(w, NULL) == S3N_OK, "abort after a failure");
    s3n_parquet_free(w);

    w = open_writer(bucket, key, S3N_MODE_PUBLISH, NULL);
    CHECK(s3n_parquet_abort(w, NULL) == S3N_OK, "abort");
    struct Source src = {.batches = 1, .rows = 10};
    struct ArrowArrayStream stream = {stream_schema, stream_next, stream_error, stream_release, &src};
    rc = s3n_parquet_write_stream(w, &stream, NULL, &err);
    CHECK(rc == S3N_ERR_STATE, "a write after abort: %d %s", rc, message(err));
    s3n_error_free(err);
    CHECK(src.released && stream.release == NULL, "a refused stream is released too");
    s3n_parquet_free(w);
    s3n_parquet_free(NULL);
    return 0;
}

int main(int argc, char **argv) {
    CHECK(argc >= 5, "usage: parquet stream|array|bad ENDPOINT BUCKET KEY ...");
    settings(argv[2]);
    if (strcmp(argv[1], "stream") == 0 && argc == 8) return stream_scenario(argv[3], argv[4], atol(argv[5]), atol(argv[6]), argv[7]);
    if (strcmp(argv[1], "array") == 0) return array_scenario(argv[3], argv[4]);
    if (strcmp(argv[1], "bad") == 0) return bad_scenario(argv[3], argv[4]);
    CHECK(0, "unknown scenario %s", argv[1]);
    return 1;
}
