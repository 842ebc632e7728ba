/* A C caller of s3native.h's credentials callback, run by tests/c_abi.rs. One scenario per run:
 *
 *   credentials rotate ENDPOINT BUCKET KEY PARTS
 *       Credentials from a callback that hands out a new key pair on every call
 *       (CROTATE0001/secret-1, CROTATE0002/secret-2, ...; no expiry, so the library asks
 *       again after a second). s3n_validate names the callback and the effective part size;
 *       then PARTS parts of 5 MiB are published to s3://BUCKET/KEY with 1.5 s between parts, so
 *       later parts are signed with later keys. Prints the result JSON, then `calls N`.
 *       After s3n_credentials_free the callback is not called again.
 *   credentials failing ENDPOINT BUCKET KEY
 *       (1) a callback that fails (code 42, "the vault is sealed"): the close fails; prints
 *       `failing CODE MESSAGE`. (2) a callback that returns 0 without credentials: prints
 *       `empty CODE MESSAGE`. (3) a good callback whose credentials are freed before the
 *       writer's first request: the close fails and the callback was never called; prints
 *       `freed CODE MESSAGE`. Each writer is freed; nothing may be left at KEY.
 *
 * The byte at offset i is i * 31 mod 251. No settings hold keys: the callback is the only
 * source. Exits 0 on success, else 1 with a message on stderr. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "s3native.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)
#define PART_SIZE (5u * 1024 * 1024)
#define NSETTINGS 3

static const char *keys[NSETTINGS] = {"fs.s3a.endpoint", "fs.s3a.path.style.access", "fs.s3a.multipart.size"};
static const char *values[NSETTINGS];

static const char *message(const s3n_error *err) { return err ? s3n_error_message(err) : "(no error object)"; }

/* The callbacks' state: called from the library's threads, read from main. */
struct source {
    atomic_int calls;
    char key_id[32];
    char secret[32];
};

static int32_t rotating(void *user_data, s3n_credentials_out *out) {
    struct source *s = user_data;
    int n = atomic_fetch_add(&s->calls, 1) + 1;
    snprintf(s->key_id, sizeof s->key_id, "CROTATE%04d", n);
    snprintf(s->secret, sizeof s->secret, "secret-%d", n);
    return s3n_credentials_out_set(out, s->key_id, s->secret, NULL, 0);
}

static int32_t failing(void *user_data, s3n_credentials_out *out) {
    struct source *s = user_data;
    atomic_fetch_add(&s->calls, 1);
    s3n_credentials_out_error(out, "the vault is sealed");
    return 42;
}

static int32_t empty(void *user_data, s3n_credentials_out *out) {
    struct source *s = user_data;
    (void)out;
    atomic_fetch_add(&s->calls, 1);
    return 0;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void write_pattern(s3n_writer *w, size_t from, size_t n) {
    static unsigned char buf[65536];
    for (size_t done = 0; done < n;) {
        size_t m = n - done < sizeof buf ? n - done : sizeof buf;
        for (size_t i = 0; i < m; i++) buf[i] = (unsigned char)((from + done + i) * 31 % 251);
        s3n_error *err = NULL;
        int rc = s3n_writer_write(w, buf, m, &err);
        CHECK(rc == S3N_OK, "write failed: %d %s", rc, message(err));
        done += m;
    }
}

static s3n_credentials *credentials(s3n_credentials_fn fn, struct source *s, const char *description) {
    s3n_credentials *c = NULL;
    s3n_error *err = NULL;
    int rc = s3n_credentials_new(fn, s, description, &c, &err);
    CHECK(rc == S3N_OK && c != NULL, "s3n_credentials_new: %d %s", rc, message(err));
    return c;
}

static s3n_writer *open_writer(const char *bucket, const char *key, const s3n_credentials *c) {
    s3n_writer *w = NULL;
    s3n_error *err = NULL;
    int rc = s3n_writer_open_with_credentials(bucket, key, S3N_MODE_PUBLISH, keys, values, NSETTINGS, c, &w, &err);
    CHECK(rc == S3N_OK && w != NULL, "open failed: %d %s", rc, message(err));
    return w;
}

static int cmd_rotate(const char *bucket, const char *key, size_t parts) {
    struct source s = {0};
    s3n_credentials *c = credentials(rotating, &s, "rotating test keys");

    /* The effective settings name the callback; validating calls nothing. */
    char *json = NULL;
    s3n_error *err = NULL;
    int rc = s3n_validate(bucket, keys, values, NSETTINGS, c, &json, &err);
    CHECK(rc == S3N_OK && json != NULL, "s3n_validate: %d %s", rc, message(err));
    CHECK(strstr(json, "\"part_size\":5242880") != NULL, "effective part size: %s", json);
    CHECK(strstr(json, "the C credentials callback 'rotating test keys'") != NULL, "effective credentials: %s", json);
    CHECK(strstr(json, "\"warnings\":[]") != NULL, "warnings: %s", json);
    s3n_string_free(json);
    CHECK(atomic_load(&s.calls) == 0, "validate called the callback");

    s3n_writer *w = open_writer(bucket, key, c);
    for (size_t p = 0; p < parts; p++) {
        write_pattern(w, p * PART_SIZE, PART_SIZE);
        sleep_ms(1500); /* past the 1 s reuse of credentials without expiry */
    }
    s3n_result *r = NULL;
    rc = s3n_writer_close(w, &r, &err);
    CHECK(rc == S3N_OK && r != NULL, "close failed: %d %s", rc, message(err));
    CHECK(s3n_result_etag_count(r) == parts, "%zu parts", s3n_result_etag_count(r));
    json = s3n_result_to_json(r);
    printf("%s\n", json);
    s3n_string_free(json);
    s3n_result_free(r);
    s3n_writer_free(w);

    int calls = atomic_load(&s.calls);
    s3n_credentials_free(c);
    sleep_ms(1200);
    CHECK(atomic_load(&s.calls) == calls, "the callback was called after s3n_credentials_free");
    printf("calls %d\n", calls);
    return 0;
}

/* Publish 1000 bytes with `c`: the close must fail; prints `label CODE MESSAGE`. */
static void expect_failure(const char *label, const char *bucket, const char *key, s3n_credentials *c,
                           int free_first) {
    s3n_writer *w = open_writer(bucket, key, c);
    write_pattern(w, 0, 1000);
    if (free_first) s3n_credentials_free(c);
    s3n_result *r = NULL;
    s3n_error *err = NULL;
    int rc = s3n_writer_close(w, &r, &err);
    CHECK(rc != S3N_OK && r == NULL && err != NULL, "%s: the close succeeded", label);
    CHECK(s3n_error_code(err) == rc, "%s: code %d vs %d", label, s3n_error_code(err), rc);
    printf("%s %d %s\n", label, rc, s3n_error_message(err));
    s3n_error_free(err);
    s3n_writer_free(w);
    if (!free_first) s3n_credentials_free(c);
}

static int cmd_failing(const char *bucket, const char *key) {
    struct source f = {0}, e = {0}, g = {0};
    expect_failure("failing", bucket, key, credentials(failing, &f, "sealed vault"), 0);
    CHECK(atomic_load(&f.calls) >= 1, "the failing callback was not called");
    expect_failure("empty", bucket, key, credentials(empty, &e, "empty answer"), 0);
    expect_failure("freed", bucket, key, credentials(rotating, &g, "freed early"), 1);
    CHECK(atomic_load(&g.calls) == 0, "the callback of freed credentials was called %d times", atomic_load(&g.calls));

    /* Bad arguments: no callback, no out. */
    s3n_credentials *c = NULL;
    s3n_error *err = NULL;
    CHECK(s3n_credentials_new(NULL, NULL, "x", &c, &err) == S3N_ERR_INVALID_ARGUMENT && c == NULL, "NULL callback");
    s3n_error_free(err);
    CHECK(s3n_credentials_out_set(NULL, "a", "b", NULL, 0) == S3N_ERR_INVALID_ARGUMENT, "NULL out");
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    CHECK(argc >= 5, "usage: credentials rotate|failing ENDPOINT BUCKET KEY [PARTS]");
    values[0] = argv[2];
    values[1] = "true";
    values[2] = "5M";
    if (strcmp(argv[1], "rotate") == 0) {
        CHECK(argc == 6, "usage: credentials rotate ENDPOINT BUCKET KEY PARTS");
        return cmd_rotate(argv[3], argv[4], strtoull(argv[5], NULL, 10));
    }
    if (strcmp(argv[1], "failing") == 0) return cmd_failing(argv[3], argv[4]);
    CHECK(0, "unknown command %s", argv[1]);
    return 1;
}
