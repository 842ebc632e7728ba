/* A C caller of s3native.h: writes argv[4] bytes of a known pattern to s3://argv[2]/argv[3]
 * through the endpoint argv[1], checks the result accessors, and checks a bad setting's
 * error. Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. Prints the
 * result JSON on success; exits non-zero with a message otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "s3native.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

int main(int argc, char **argv) {
    CHECK(argc == 5, "usage: roundtrip ENDPOINT BUCKET KEY BYTES");
    const char *keys[] = {"fs.s3a.endpoint", "fs.s3a.path.style.access", "fs.s3a.multipart.size",
                          "fs.s3a.access.key", "fs.s3a.secret.key"};
    const char *values[] = {argv[1], "true", "5M", getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")};
    CHECK(values[3] && values[4], "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set");
    size_t total = strtoull(argv[4], NULL, 10);

    s3n_writer *w = NULL;
    s3n_error *err = NULL;
    int rc = s3n_writer_open(argv[2], argv[3], S3N_MODE_PUBLISH, keys, values, 5, &w, &err);
    CHECK(rc == S3N_OK, "open failed: %d %s", rc, err ? s3n_error_message(err) : "");

    unsigned char buf[65536];
    for (size_t done = 0; done < total;) {
        size_t n = total - done < sizeof buf ? total - done : sizeof buf;
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)((done + i) * 31 % 251);
        rc = s3n_writer_write(w, buf, n, &err);
        CHECK(rc == S3N_OK, "write failed: %d %s", rc, s3n_error_message(err));
        done += n;
    }
    CHECK(s3n_writer_length(w) == total, "length %llu", (unsigned long long)s3n_writer_length(w));

    s3n_result *r = NULL;
    rc = s3n_writer_close(w, &r, &err);
    CHECK(rc == S3N_OK, "close failed: %d %s", rc, s3n_error_message(err));
    CHECK(s3n_result_length(r) == total, "result length");
    CHECK(strcmp(s3n_result_bucket(r), argv[2]) == 0 && strcmp(s3n_result_key(r), argv[3]) == 0, "bucket/key");
    size_t parts = s3n_result_etag_count(r);
    CHECK(parts >= 1 && s3n_result_etag(r, parts - 1) != NULL && s3n_result_etag(r, parts) == NULL, "etags");
    CHECK((s3n_result_upload_id(r) == NULL) == (total <= 5 * 1024 * 1024), "upload id only for multipart");
    rc = s3n_writer_write(w, buf, 1, &err);
    CHECK(rc == S3N_ERR_STATE, "write after close: %d", rc);
    s3n_error_free(err);
    err = NULL;
    char *json = s3n_result_to_json(r);
    printf("%s\n", json);
    s3n_string_free(json);
    s3n_result_free(r);
    s3n_writer_free(w);

    /* A bad value names its key. */
    const char *bad_keys[] = {"fs.s3a.multipart.size"};
    const char *bad_values[] = {"1M"};
    w = NULL;
    rc = s3n_writer_open(argv[2], argv[3], S3N_MODE_PUBLISH, bad_keys, bad_values, 1, &w, &err);
    CHECK(rc == S3N_ERR_INVALID_ARGUMENT && w == NULL, "bad part size accepted: %d", rc);
    CHECK(strcmp(s3n_error_setting(err), "fs.s3a.multipart.size") == 0, "setting %s", s3n_error_setting(err));
    s3n_error_free(err);
    return 0;
}
