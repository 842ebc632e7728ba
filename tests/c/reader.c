/* A C caller of s3native.h's reader, run by tests/c_reader.rs:
 *
 *   reader ENDPOINT BUCKET KEY LENGTH
 *       s3://BUCKET/KEY holds LENGTH bytes, byte i being i * 31 mod 251. Opens it (one
 *       HEAD: no options), checks s3n_reader_length and the quoted ETag, stream-reads it
 *       all in 100,000-byte reads, preads 1,000 bytes at LENGTH / 2, reads at the end (0
 *       bytes), runs a vectored read of three ranges (the third empty) and checks every
 *       byte. Then opens KEY.missing and checks S3N_ERR_NOT_FOUND with the key named, and a
 *       reversed range (S3N_ERR_INVALID_ARGUMENT); then opens KEY with a declared length
 *       5,000 bytes too long and runs a vectored read whose range 0 starts past the real end:
 *       S3N_ERR_EOF with that index, then the other range's bytes. Prints the statistics
 *       JSON of the first reader and `ok`.
 *
 * Settings: the endpoint, path style, 1 MiB blocks and small objects up to 1 MiB (so that
 * the stream read uses read-ahead); keys come from the environment (default chain). Exits 0
 * on success, else 1 with a message on stderr. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "s3native.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)
#define NSETTINGS 4

static const char *message(const s3n_error *err) { return err ? s3n_error_message(err) : "(no error object)"; }

static unsigned char expected(uint64_t i) { return (unsigned char)(i * 31 % 251); }

static void check_bytes(const unsigned char *got, uint64_t from, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == expected(from + i), "%s: byte %llu differs", what, (unsigned long long)(from + i));
}

int main(int argc, char **argv) {
    CHECK(argc == 6 && strcmp(argv[1], "reader") == 0, "usage: reader ENDPOINT BUCKET KEY LENGTH");
    const char *bucket = argv[3], *key = argv[4];
    uint64_t length = strtoull(argv[5], NULL, 10);
    const char *keys[NSETTINGS] = {"fs.s3a.endpoint", "fs.s3a.path.style.access", "fs.s3a.native.read.block.size",
                                   "fs.s3a.native.read.small.object.size"};
    const char *values[NSETTINGS] = {argv[2], "true", "1M", "1M"};
    s3n_error *err = NULL;
    s3n_reader *r = NULL;
    int rc = s3n_reader_open(bucket, key, keys, values, NSETTINGS, NULL, NULL, &r, &err);
    CHECK(rc == S3N_OK, "open failed: %d %s", rc, message(err));
    CHECK(s3n_reader_length(r) == length, "length %llu", (unsigned long long)s3n_reader_length(r));
    const char *etag = s3n_reader_etag(r);
    CHECK(etag && etag[0] == '"', "etag %s", etag ? etag : "(null)");

    static unsigned char buf[100000];
    uint64_t at = 0;
    for (;;) {
        size_t n = 0;
        rc = s3n_reader_read(r, at, buf, sizeof buf, &n, &err);
        CHECK(rc == S3N_OK, "read at %llu failed: %d %s", (unsigned long long)at, rc, message(err));
        if (n == 0) break;
        check_bytes(buf, at, n, "stream read");
        at += n;
    }
    CHECK(at == length, "read %llu of %llu bytes", (unsigned long long)at, (unsigned long long)length);

    size_t n = 0;
    rc = s3n_reader_pread(r, length / 2, buf, 1000, &n, &err);
    CHECK(rc == S3N_OK && n == 1000, "pread: %d %zu %s", rc, n, message(err));
    check_bytes(buf, length / 2, n, "pread");
    rc = s3n_reader_read(r, length, buf, sizeof buf, &n, &err);
    CHECK(rc == S3N_OK && n == 0, "read at the end: %d %zu", rc, n);

    uint64_t starts[3] = {10, length - 5000, 7}, ends[3] = {2010, length, 7};
    s3n_vectored *v = NULL;
    rc = s3n_reader_read_ranges(r, starts, ends, 3, &v, &err);
    CHECK(rc == S3N_OK, "read_ranges: %d %s", rc, message(err));
    int seen[3] = {0, 0, 0};
    for (;;) {
        size_t index = 0, len = 0;
        const uint8_t *data = NULL;
        rc = s3n_vectored_next(v, &index, &data, &len, &err);
        CHECK(rc == S3N_OK, "vectored_next: %d %s", rc, message(err));
        if (index == SIZE_MAX) break;
        CHECK(index < 3 && !seen[index], "index %zu", index);
        seen[index] = 1;
        CHECK(len == ends[index] - starts[index], "range %zu: %zu bytes", index, len);
        check_bytes(data, starts[index], len, "vectored");
    }
    CHECK(seen[0] && seen[1] && seen[2], "every range delivered");
    s3n_vectored_free(v);

    uint64_t rs[1] = {5}, re[1] = {4};
    rc = s3n_reader_read_ranges(r, rs, re, 1, &v, &err);
    CHECK(rc == S3N_ERR_INVALID_ARGUMENT, "a reversed range: %d", rc);
    s3n_error_free(err);
    err = NULL;

    char *stats = s3n_reader_statistics_json(r);
    CHECK(stats != NULL, "statistics");
    printf("%s\n", stats);
    s3n_string_free(stats);
    s3n_reader_free(r);

    char options[128];
    snprintf(options, sizeof options, "{\"policy\": \"RANDOM\", \"length\": %llu}", (unsigned long long)(length + 5000));
    rc = s3n_reader_open(bucket, key, keys, values, NSETTINGS, NULL, options, &r, &err);
    CHECK(rc == S3N_OK, "open with a declared length: %d %s", rc, message(err));
    uint64_t ds[2] = {length + 100, 0}, de[2] = {length + 200, 100};
    rc = s3n_reader_read_ranges(r, ds, de, 2, &v, &err);
    CHECK(rc == S3N_OK, "read_ranges past the real end: %d %s", rc, message(err));
    int eof = 0, good = 0;
    for (;;) {
        size_t index = 0, len = 0;
        const uint8_t *data = NULL;
        rc = s3n_vectored_next(v, &index, &data, &len, &err);
        if (rc == S3N_ERR_EOF) {
            CHECK(index == 0 && !eof, "the failed range's index: %zu", index);
            eof = 1;
            s3n_error_free(err);
            err = NULL;
            continue;
        }
        CHECK(rc == S3N_OK, "vectored_next past the real end: %d %s", rc, message(err));
        if (index == SIZE_MAX) break;
        CHECK(index == 1 && len == 100 && !good, "index %zu, %zu bytes", index, len);
        check_bytes(data, 0, len, "the range inside the real end");
        good = 1;
    }
    CHECK(eof && good, "range 0 failed alone (%d), range 1 delivered (%d)", eof, good);
    s3n_vectored_free(v);
    s3n_reader_free(r);

    char missing[1024];
    snprintf(missing, sizeof missing, "%s.missing", key);
    s3n_reader *m = NULL;
    rc = s3n_reader_open(bucket, missing, keys, values, NSETTINGS, NULL, NULL, &m, &err);
    CHECK(rc == S3N_ERR_NOT_FOUND, "missing key: %d", rc);
    CHECK(strstr(s3n_error_message(err), missing) != NULL, "the error names the key: %s", s3n_error_message(err));
    s3n_error_free(err);
    printf("ok\n");
    return 0;
}
