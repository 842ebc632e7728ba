/* A C caller of s3native.h, run by tests/c_abi.rs. One scenario per run:
 *
 *   roundtrip write ENDPOINT BUCKET KEY BYTES
 *       Publish BYTES bytes of a known pattern to s3://BUCKET/KEY, check the result's
 *       accessors and that a write after close is a state error; print the result JSON.
 *   roundtrip deferred ENDPOINT BUCKET KEY BYTES complete|abort
 *       Write BYTES bytes in Deferred mode; serialise the result (s3n_result_to_json), parse
 *       it back (s3n_result_from_json) and check every field survived; print the JSON and
 *       wait for a line on stdin (the caller checks the server meanwhile); then complete or
 *       abort the upload from the parsed result with s3n_complete / s3n_abort, twice (a
 *       second complete of the same result and a second abort both succeed).
 *   roundtrip abort-after-close ENDPOINT BUCKET KEY BYTES
 *       Publish, then s3n_writer_abort: after a successful close it does nothing and
 *       returns S3N_OK; a second close still gives the same result.
 *   roundtrip create-if-absent ENDPOINT BUCKET KEY BYTES
 *       Write in S3N_MODE_CREATE_IF_ABSENT to a key that must be free: close succeeds; the
 *       same again: close fails with S3N_ERR_ALREADY_EXISTS, the error's code and a message
 *       naming the key.
 *   roundtrip offline
 *       Calls that fail before any request: a bad setting names its key; bad input to
 *       s3n_result_from_json is S3N_ERR_INVALID_ARGUMENT.
 *
 * The byte at offset i is i * 31 mod 251. Credentials come from AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY. Exits 0 on success, else 1 with a message on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "s3native.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)
#define PART_SIZE (5u * 1024 * 1024)
#define NSETTINGS 5

static const char *keys[NSETTINGS] = {"fs.s3a.endpoint", "fs.s3a.path.style.access", "fs.s3a.multipart.size",
                                      "fs.s3a.access.key", "fs.s3a.secret.key"};
static const char *values[NSETTINGS];

static const char *message(const s3n_error *err) { return err ? s3n_error_message(err) : "(no error object)"; }

static int same(const char *a, const char *b) { return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0); }

static void settings(const char *endpoint) {
    values[0] = endpoint;
    values[1] = "true";
    values[2] = "5M";
    values[3] = getenv("AWS_ACCESS_KEY_ID");
    values[4] = getenv("AWS_SECRET_ACCESS_KEY");
    CHECK(values[3] && values[4], "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set");
}

/* Open a writer for s3://bucket/key in `mode`, write `total` bytes of the pattern. */
static s3n_writer *write_pattern(const char *bucket, const char *key, int32_t mode, size_t total) {
    s3n_writer *w = NULL;
    s3n_error *err = NULL;
    int rc = s3n_writer_open(bucket, key, mode, keys, values, NSETTINGS, &w, &err);
    CHECK(rc == S3N_OK && w != NULL, "open failed: %d %s", rc, message(err));
    static unsigned char buf[65536];
    for (size_t done = 0; done < total;) {
        size_t n = total - done < sizeof buf ? total - done : sizeof buf;
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)((done + i) * 31 % 251);
        rc = s3n_writer_write(w, buf, n, &err);
        CHECK(rc == S3N_OK, "write failed: %d %s", rc, message(err));
        done += n;
    }
    CHECK(s3n_writer_length(w) == total, "length %llu", (unsigned long long)s3n_writer_length(w));
    return w;
}

static s3n_result *close_writer(s3n_writer *w) {
    s3n_result *r = NULL;
    s3n_error *err = NULL;
    int rc = s3n_writer_close(w, &r, &err);
    CHECK(rc == S3N_OK && r != NULL, "close failed: %d %s", rc, message(err));
    return r;
}

/* Every accessor of `a` and `b` gives the same value. */
static void check_same_result(const s3n_result *a, const s3n_result *b) {
    CHECK(same(s3n_result_bucket(a), s3n_result_bucket(b)), "bucket %s != %s", s3n_result_bucket(a), s3n_result_bucket(b));
    CHECK(same(s3n_result_key(a), s3n_result_key(b)), "key %s != %s", s3n_result_key(a), s3n_result_key(b));
    CHECK(same(s3n_result_upload_id(a), s3n_result_upload_id(b)), "upload id differs");
    CHECK(s3n_result_length(a) == s3n_result_length(b), "length differs");
    size_t n = s3n_result_etag_count(a);
    CHECK(n == s3n_result_etag_count(b), "etag count %zu != %zu", n, s3n_result_etag_count(b));
    for (size_t i = 0; i <= n; i++) /* i == n: both NULL */
        CHECK(same(s3n_result_etag(a, i), s3n_result_etag(b, i)), "etag %zu differs", i);
}

static int cmd_write(const char *bucket, const char *key, size_t total) {
    s3n_writer *w = write_pattern(bucket, key, S3N_MODE_PUBLISH, total);
    s3n_result *r = close_writer(w);
    CHECK(s3n_result_length(r) == total, "result length");
    CHECK(same(s3n_result_bucket(r), bucket) && same(s3n_result_key(r), key), "bucket/key");
    size_t parts = s3n_result_etag_count(r);
    size_t expected = total <= PART_SIZE ? 1 : (total + PART_SIZE - 1) / PART_SIZE;
    CHECK(parts == expected, "%zu etags, expected %zu", parts, expected);
    CHECK(s3n_result_etag(r, parts - 1) != NULL && s3n_result_etag(r, parts) == NULL, "etags");
    CHECK((s3n_result_upload_id(r) == NULL) == (total <= PART_SIZE), "upload id only for multipart");
    s3n_error *err = NULL;
    unsigned char byte = 0;
    int rc = s3n_writer_write(w, &byte, 1, &err);
    CHECK(rc == S3N_ERR_STATE && err != NULL && s3n_error_code(err) == S3N_ERR_STATE, "write after close: %d", rc);
    s3n_error_free(err);
    char *json = s3n_result_to_json(r);
    CHECK(json != NULL, "to_json");
    printf("%s\n", json);
    s3n_string_free(json);
    s3n_result_free(r);
    s3n_writer_free(w);
    return 0;
}

static int cmd_deferred(const char *bucket, const char *key, size_t total, const char *action) {
    int complete = strcmp(action, "complete") == 0;
    CHECK(complete || strcmp(action, "abort") == 0, "action must be complete or abort, not %s", action);
    s3n_writer *w = write_pattern(bucket, key, S3N_MODE_DEFERRED, total);
    s3n_result *r = close_writer(w);
    s3n_writer_free(w); /* a closed deferred writer's upload stays: freeing aborts only open writers */
    CHECK(s3n_result_upload_id(r) != NULL, "a deferred upload is multipart");
    CHECK(s3n_result_length(r) == total, "result length");

    char *json = s3n_result_to_json(r);
    CHECK(json != NULL, "to_json");
    s3n_result *parsed = NULL;
    s3n_error *err = NULL;
    int rc = s3n_result_from_json(json, &parsed, &err);
    CHECK(rc == S3N_OK && parsed != NULL, "from_json of to_json: %d %s", rc, message(err));
    check_same_result(r, parsed);
    char *again = s3n_result_to_json(parsed);
    CHECK(strcmp(json, again) == 0, "to_json(from_json(j)) != j:\n%s\n%s", json, again);
    s3n_string_free(again);
    s3n_result_free(r);

    printf("%s\n", json);
    fflush(stdout);
    s3n_string_free(json);
    char line[16];
    CHECK(fgets(line, sizeof line, stdin) != NULL, "no go-ahead on stdin");

    for (int round = 1; round <= 2; round++) {
        rc = complete ? s3n_complete(parsed, keys, values, NSETTINGS, &err)
                      : s3n_abort(parsed, keys, values, NSETTINGS, &err);
        CHECK(rc == S3N_OK, "%s #%d failed: %d %s", action, round, rc, message(err));
    }
    s3n_result_free(parsed);
    return 0;
}

static int cmd_abort_after_close(const char *bucket, const char *key, size_t total) {
    s3n_writer *w = write_pattern(bucket, key, S3N_MODE_PUBLISH, total);
    s3n_result *r = close_writer(w);
    s3n_error *err = NULL;
    int rc = s3n_writer_abort(w, &err);
    CHECK(rc == S3N_OK, "s3n_writer_abort after a successful close must do nothing and return S3N_OK, got %d: %s", rc,
          message(err));
    s3n_result *again = close_writer(w);
    check_same_result(r, again);
    s3n_result_free(again);
    s3n_result_free(r);
    s3n_writer_free(w); /* a closed writer: nothing to abort */
    return 0;
}

static int cmd_offline(void) {
    /* A bad value names its key; no writer is made. */
    const char *bad_keys[] = {"fs.s3a.native.part.size"};
    const char *bad_values[] = {"1M"};
    s3n_writer *w = NULL;
    s3n_error *err = NULL;
    int rc = s3n_writer_open("bucket", "key", S3N_MODE_PUBLISH, bad_keys, bad_values, 1, &w, &err);
    CHECK(rc == S3N_ERR_INVALID_ARGUMENT && w == NULL, "bad part size accepted: %d", rc);
    CHECK(err != NULL && s3n_error_code(err) == S3N_ERR_INVALID_ARGUMENT, "error object of a bad setting");
    CHECK(same(s3n_error_setting(err), "fs.s3a.native.part.size"), "setting %s", s3n_error_setting(err));
    s3n_error_free(err);

    /* Bad input to s3n_result_from_json. */
    const char *bad_json[] = {"", "not json", "{}", "[1,2]", "{\"bucket\": \"b\", \"key\": 5}"};
    for (size_t i = 0; i < sizeof bad_json / sizeof *bad_json; i++) {
        s3n_result *r = NULL;
        err = NULL;
        rc = s3n_result_from_json(bad_json[i], &r, &err);
        CHECK(rc == S3N_ERR_INVALID_ARGUMENT, "from_json(\"%s\") gave %d", bad_json[i], rc);
        CHECK(r == NULL, "from_json(\"%s\") made a result", bad_json[i]);
        CHECK(err != NULL && s3n_error_code(err) == S3N_ERR_INVALID_ARGUMENT, "from_json(\"%s\"): error object",
              bad_json[i]);
        s3n_error_free(err);
    }
    s3n_result *r = NULL;
    err = NULL;
    rc = s3n_result_from_json(NULL, &r, &err);
    CHECK(rc == S3N_ERR_INVALID_ARGUMENT && r == NULL, "from_json(NULL) gave %d", rc);
    s3n_error_free(err);
    return 0;
}

static int cmd_create_if_absent(const char *bucket, const char *key, size_t total) {
    s3n_writer *first = write_pattern(bucket, key, S3N_MODE_CREATE_IF_ABSENT, total);
    s3n_result *r = close_writer(first);
    CHECK(s3n_result_length(r) == total, "result length");
    s3n_result_free(r);
    s3n_writer_free(first);
    s3n_writer *w = write_pattern(bucket, key, S3N_MODE_CREATE_IF_ABSENT, total);
    s3n_result *again = NULL;
    s3n_error *err = NULL;
    int rc = s3n_writer_close(w, &again, &err);
    CHECK(rc == S3N_ERR_ALREADY_EXISTS && again == NULL && err != NULL, "second create: %d %s", rc, message(err));
    CHECK(s3n_error_code(err) == S3N_ERR_ALREADY_EXISTS, "error code %d", s3n_error_code(err));
    CHECK(strstr(s3n_error_message(err), key) != NULL, "the message names the key: %s", s3n_error_message(err));
    s3n_error_free(err);
    s3n_writer_free(w);
    return 0;
}

int main(int argc, char **argv) {
    CHECK(argc >= 2, "usage: roundtrip write|deferred|abort-after-close|create-if-absent|offline ...");
    const char *cmd = argv[1];
    if (strcmp(cmd, "offline") == 0) return cmd_offline();
    CHECK(argc >= 6, "usage: roundtrip %s ENDPOINT BUCKET KEY BYTES ...", cmd);
    settings(argv[2]);
    size_t total = strtoull(argv[5], NULL, 10);
    if (strcmp(cmd, "write") == 0) return cmd_write(argv[3], argv[4], total);
    if (strcmp(cmd, "deferred") == 0) {
        CHECK(argc == 7, "usage: roundtrip deferred ENDPOINT BUCKET KEY BYTES complete|abort");
        return cmd_deferred(argv[3], argv[4], total, argv[6]);
    }
    if (strcmp(cmd, "abort-after-close") == 0) return cmd_abort_after_close(argv[3], argv[4], total);
    if (strcmp(cmd, "create-if-absent") == 0) return cmd_create_if_absent(argv[3], argv[4], total);
    CHECK(0, "unknown command %s", cmd);
    return 1;
}
