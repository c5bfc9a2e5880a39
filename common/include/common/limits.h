/* Every size and count limit of the project, in one place, so that a reader can see what any
 * input may cost and a reviewer can check each bound once. A limit that is hit is an error that
 * names the limit, never a silent cut. Grouped by the input they bound; untrusted inputs have
 * tighter limits before authentication than after (valkey's rule). */
#ifndef COMMON_LIMITS_H
#define COMMON_LIMITS_H

#define KIB ((size_t)1024)
#define MIB (1024 * KIB)

/* ---- logging ---- */
#define LOG_LINE_MAX (8 * KIB) /* a longer message is cut and marked "..." */

/* ---- numbers ---- */
#define NUM_TEXT_MAX 64 /* a number's text; longer is refused before parsing */

/* ---- HTTP intake (relay) ---- */
#define WEBHOOK_BODY_MAX             (25 * MIB) /* GitHub never sends more */
#define WEBHOOK_PREAUTH_HEADER_MAX   256        /* X-GitHub-Event / X-GitHub-Delivery before HMAC */
#define WEBHOOK_SIGNATURE_HEADER_MAX 80 /* "sha256=" + 64 hex, with room for junk to be named */
#define CRCR_CLIENT_PAYLOAD_MAX                                                                    \
	(64 * KIB) /* GitHub's cap on repository_dispatch client_payload                           \
		    */
#define JSON_DEPTH_MAX 64

/* ---- the daemon's jobs and state directory (relay) ---- */
#define JOB_RETRY_FIRST_MS 5000   /* a retried job's first wait; it doubles with each attempt */
#define JOB_RETRY_MAX_MS   300000 /* up to five minutes */
#define STATEDIR_WAIT_MS   10000  /* a start waits this long for a killed daemon's lock */

/* ---- dashboard output ---- */
#define HUD_BODY_MAX           (2 * MIB)
#define HUD_FAILED_TESTS_MAX   1000
#define HUD_FAILED_MESSAGE_MAX (1 * KIB)
#define HUD_FAILED_TRACE_MAX   (4 * KIB)
/* The daemon's built-in HUD receiver: header sizes checked before the token, fields after. */
#define RECEIVER_KEY_MAX   128 /* Idempotency-Key */
#define RECEIVER_FIELD_MAX 256 /* delivery_id, run_id, job_name, ... */
/* The dashboard client (dashboard-client/): a run's results directory read by `spyre-ci report`
 * (job.json, one results.jsonl line, the lines of one file), the part of a server's answer kept
 * for the dead-letter record, a token file, a Retry-After value honoured, a URL given. */
#define DC_JOB_FILE_MAX         (1 * MIB)
#define DC_RESULTS_LINE_MAX     (256 * KIB)
#define DC_RESULTS_LINES_MAX    10000000
#define DC_RESPONSE_KEEP_MAX    (16 * KIB)
#define DC_TOKEN_MAX            4096
#define DC_RETRY_AFTER_MAX_S    86400
#define DC_RETRY_AFTER_TEXT_MAX 64
#define DC_URL_MAX              2048

/* ---- YAML (test specs, hardware description, configuration) ---- */
#define YAML_DOC_MAX    (8 * MIB)
#define YAML_DEPTH_MAX  64
#define YAML_SCALAR_MAX (64 * KIB)
#define YAML_ALIAS_MAX  1024 /* alias expansions per document: no billion laughs */
#define YAML_NODES_MAX  1000000

/* ---- changes (selector stage 1) ---- */
#define DIFF_BYTES_MAX        (256 * MIB)
#define DIFF_FILES_MAX        100000
#define DIFF_HUNKS_MAX        1000000
#define PYTHON_FILE_MAX       (16 * MIB)
#define DIFF_COMMITS_MAX      100000      /* commit messages kept for one range */
#define DIFF_LINE_MAX         1000000000  /* a hunk's line number or count */
#define SELECT_TESTS_MAX      10000000    /* candidates of one selection */
#define SELECT_DIFF_INPUT_MAX (256 * MIB) /* --diff FILE|- read into memory */
#define SELECT_HISTORY_MAX    (64 * MIB)  /* --history FILE (JSON) */

/* ---- the synthetic upstream (fixture/) ---- */
#define FIXTURE_FILE_MAX       (64 * MIB)  /* one rendered file */
#define FIXTURE_TRUTH_LINE_MAX (256 * MIB) /* one commits.jsonl line (affected ids) */
#define FIXTURE_COMMITS_MAX    1000000

/* ---- emulator programs (spyre-emu) ---- */
#define SPYRE_PROGRAM_INSNS_MAX 1000000 /* instructions in one core's program */

/* ---- paths ---- */
#define PATH_TEXT_MAX 4096

/* ---- git trees read by the selector (stage 1's narrowed diff, catalogs) ----
 * TREE_ENTRIES_MAX: entries one walk or comparison looks at (a hostile tree shares subtrees to
 * grow exponentially); TREE_DEPTH_MAX: nested directories followed; CHANGES_PATHSPEC_MAX:
 * changed paths stage 1 narrows libgit2's diff to (more: the files bound is hit);
 * CATALOG_DERIVE_PATHS_MAX: differing paths up to which a catalog is derived from the newest
 * kept one (more: the tree is walked). */
#define TREE_ENTRIES_MAX         2000000
#define TREE_DEPTH_MAX           256
#define CHANGES_PATHSPEC_MAX     DIFF_FILES_MAX
#define CATALOG_DERIVE_PATHS_MAX 2048

/* The selector's catalog (stage 2): files of interest in one tree, blobs kept by the cache, the
 * call graph's reverse-closure depth. */
#define CATALOG_FILES_MAX       200000
#define CATALOG_CACHE_MAX       400000 /* blobs in use at once (a cache drops unused ones first) */
#define CATALOG_CACHE_SWEEP_MIN 4096   /* a cache never sweeps below this many blobs */
/* Whole catalogs a catalog cache keeps by root tree id (the warm path: base and head of the
 * last selections). */
#define CATALOG_TREES_MAX 4
/* Stage 2's shared call graph: changed torch/ source files laid over it (more, or a change of
 * re-exports, builds it anew). */
#define IMPACT_OVERLAY_FILES_MAX 256
/* Source graphs a catalog cache keeps for heads to be laid over (heads on two bases). */
#define CATALOG_SOURCES_MAX 2
/* @ops answers a catalog cache keeps across catalogs before it starts again (PyTorch has about
 * a thousand distinct ones). */
#define CATALOG_OPLIST_MEMO_MAX 16384
/* Test ids a stage 3 drift memo keeps before it starts again. */
#define SELECT_DRIFT_MEMO_MAX 2000000
/* Stage 2's message signal (impact_message.c): bytes of one commit message read (the rest is
 * ignored), candidate tokens taken from one message, bytes of one token (a longer one is no
 * name), tests one bare name (`test_foo`, `-k foo` without a file) may select, tests one class or
 * file may select, tests one message may select in all, trailing `_x` parts stripped from an
 * instantiated name (`test_out_add_cpu_float32` -> `test_out`). Unlike the limits above, a cut
 * here is no error: the signal only adds candidates to what the change itself reaches, so a cut
 * loses hints, never safety; a name whose tests are cut says so in its reason ("the first 32 of
 * 57 tests (bound)"), words past the bytes or tokens read are dropped. */
#define IMPACT_MESSAGE_BYTES_MAX  (64 * KIB)
#define IMPACT_MESSAGE_TOKENS_MAX 256
#define IMPACT_MESSAGE_TOKEN_MAX  512
#define IMPACT_MESSAGE_BARE_MAX   32
#define IMPACT_MESSAGE_GROUP_MAX  2000
#define IMPACT_MESSAGE_TESTS_MAX  5000
#define IMPACT_MESSAGE_STRIP_MAX  8
/* The on-disk catalog cache: bytes of one serialised blob entry (larger ones stay in memory
 * only), entries one process writes. */
#define CATALOG_DISK_ENTRY_MAX  (16u << 20)
#define CATALOG_DISK_WRITES_MAX 400000

#endif
