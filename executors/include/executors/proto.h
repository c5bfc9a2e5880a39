/* The pool's pipe protocol between the parent and a worker: frames of a 12-byte header (magic
 * "SPX1", type, payload length, both little-endian u32) and the payload. A case goes down as a
 * CASE frame holding a struct exec_case, its result comes back as a RESULT frame holding a
 * struct exec_result; QUIT asks a worker to exit; SETUP frames carry what a worker that is a fresh
 * process image (exec_pool_opts.worker_exe) cannot inherit. Both ends are the same program, so
 * payloads are the structs' bytes; the reader still checks every length and every field
 * (exec_case_check, exec_result_check), so a worker that writes garbage is found out, never
 * believed. */
#ifndef EXECUTORS_PROTO_H
#define EXECUTORS_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define EXEC_FRAME_HEADER 12
#define EXEC_FRAME_MAX    4096 /* payload bytes of one frame */
#define EXEC_FRAME_MAGIC  "SPX1"

enum exec_frame_type {
	EXEC_FRAME_CASE = 1,
	EXEC_FRAME_RESULT = 2,
	EXEC_FRAME_QUIT = 3,
	EXEC_FRAME_SETUP = 4, /* to an exec'd worker first: the adapter table's source in pieces,
				 ended by an empty SETUP frame */
};

/* Writes one frame to `fd` (blocking; EINTR retried). 0 or ERR_IO. */
int exec_proto_write(int fd, uint32_t type, const void *payload, uint32_t len);

/* Parses the first frame of buf[0..len). Returns the bytes it spans (> 0) with *type,
 * *payload (into buf) and *plen set; 0 when more bytes are needed; ERR_INVAL for bytes that are
 * no frame (bad magic, unknown type, a length over EXEC_FRAME_MAX), with the detail. */
int exec_proto_parse(const unsigned char *buf, size_t len, uint32_t *type,
		     const unsigned char **payload, uint32_t *plen);

/* Reads one whole frame from a blocking `fd` into buf (EXEC_FRAME_HEADER + EXEC_FRAME_MAX
 * bytes). Returns the payload length, ERR_NOTFOUND at a clean end of file before a header,
 * ERR_INVAL for garbage, ERR_IO. */
int exec_proto_read(int fd, unsigned char *buf, uint32_t *type, const unsigned char **payload);

#endif
