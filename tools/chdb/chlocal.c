/*
 * chlocal: runs ClickHouse's local mode from chDB's libchdb.so with the command line it is given,
 * like the `clickhouse local` program of a full ClickHouse install (which these machines cannot
 * get). scripts/chdb.sh builds it; internal/testutil/chdbtest starts it as a server (SYSTEM START
 * LISTEN, then a query that runs until the process is stopped).
 *
 * query_stable_v2 is libchdb's entry point that takes clickhouse-local's argv; the struct is its
 * result type (chdb.h, "local_result_v2").
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct local_result_v2 {
	char *buf;
	size_t len;
	void *_vec;
	double elapsed;
	uint64_t rows_read;
	uint64_t bytes_read;
	char *error_message;
};

struct local_result_v2 *query_stable_v2(int argc, char **argv);

int main(int argc, char **argv) {
	struct local_result_v2 *r = query_stable_v2(argc, argv);
	if (r == NULL) {
		fprintf(stderr, "chlocal: libchdb returned no result\n");
		return 2;
	}
	if (r->buf != NULL && r->len > 0) {
		fwrite(r->buf, 1, r->len, stdout);
	}
	if (r->error_message != NULL) {
		fprintf(stderr, "chlocal: %s\n", r->error_message);
		return 1;
	}
	return 0;
}
