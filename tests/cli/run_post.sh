#!/usr/bin/env bash
# Checks `spyre-ci run --post` against recorder-server on loopback: a run whose callbacks get
# through a burst of 500s (in_progress first, completed with the counts, each recorded once);
# a second run with the same --out posts nothing new (the same job, resumed from its outbox);
# `spyre-ci report` re-posts the run's directory (the layout it reads); a nightly job of our own
# from --repo's HEAD (completed only); a 401 dead-letters and exits 3 with the receiver's
# answer; a missing token file exits 2 before any case runs. The token appears in no output.
# Usage: run_post.sh PATH/TO/spyre-ci PATH/TO/recorder-server SOURCE_ROOT
set -u
cli_name=run-post cli_sub=run
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$(realpath "$1") server=$(realpath "$2") || exit 1
cd "$3" || exit 1
token=tok-run-SECRET-42
printf '%s\n' "$token" >"$tmp/token"
printf 'tok-WRONG\n' >"$tmp/wrong"
specs=(--all --specs testspecs/specs/unary_ufuncs.yaml --tier smoke --jobs 2 --no-progress)
job=tests/fixtures/dashboard/job-pr.json

server_pid=
start_server() {
	rm -f "$tmp/port" "$tmp/dump.jsonl"
	"$server" --port-file "$tmp/port" --dump "$tmp/dump.jsonl" \
		--require "Authorization=Bearer $token" "$@" &
	server_pid=$!
	for _ in $(seq 100); do [[ -s $tmp/port ]] && break; sleep 0.05; done
	url=http://127.0.0.1:$(cat "$tmp/port")/github/callback
}
stop_server() {
	kill -TERM "$server_pid"
	wait "$server_pid"
}
# recorded STATUSES...: the accepted callbacks' statuses in order, each key once; completed
# carries the counts of results.jsonl ($4 passed).
recorded() {
	python3 - "$tmp/dump.jsonl" "$@" <<'PY'
import collections, json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
acc = [r for r in reqs if r["accepted"]]
assert all(c == 1 for c in collections.Counter(r["idem"] for r in acc).values())
got = [json.loads(r["body"])["workflow"]["status"] for r in acc]
assert got == sys.argv[2:], (got, sys.argv[2:])
done = json.loads(acc[-1]["body"])["workflow"]
assert done["test_results"]["passed"] > 0 and done["test_results"]["failed"] == 0, done
PY
}

# Through three 500s: exit 0, in_progress then completed, once each.
start_server --fail 500:3
expect_rc 0 "run --post through 500s" "$exe" run "${specs[@]}" --out "$tmp/r1" \
	--post "$url" --token-file "$tmp/token" --job "$job" --post-horizon 60
check "2 delivered" grep -q -- "--post .*: 2 delivered, 0 dead-lettered, 0 pending" "$err"
check "the results directory" test -s "$tmp/r1/job.json" -a -s "$tmp/r1/outbox.sqlite"
expect_rc 0 "a second run, the same --out" "$exe" run "${specs[@]}" --out "$tmp/r1" \
	--post "$url" --token-file "$tmp/token" --job "$job"
check "nothing sent again" grep -q -- "2 delivered, 0 dead-lettered, 0 pending; 0 posts" "$err"
expect_rc 0 "report reads the run's directory" "$exe" report --to "$url" --results "$tmp/r1" \
	--token-file "$tmp/token" --json
py "$out" 'd["posts"] == 0 and d["delivered"] == 2' && ok || bad "report: $(cat "$out")"
grep -q "$token" "$out" "$err" && bad "the token was printed" || ok
stop_server
check "recorded in order, once each" recorded in_progress completed

# A nightly job of our own, keyed by --repo's HEAD: completed only.
git init -q "$tmp/up" && git -C "$tmp/up" -c user.name=t -c user.email=t@t.invalid \
	commit -q --allow-empty -m init
start_server
expect_rc 0 "nightly --post" "$exe" run "${specs[@]}" --repo "$tmp/up" --out "$tmp/r2" \
	--post "$url" --token-file "$tmp/token"
py "$tmp/r2/job.json" 'd["event_type"] == "nightly" and len(d["head_sha"]) == 40' && ok ||
	bad "nightly job.json: $(cat "$tmp/r2/job.json")"
stop_server
check "nightly: completed only" recorded completed

# A wrong token: 401, dead-lettered, exit 3; the cases' reports are written all the same.
start_server
expect_rc 3 "401" "$exe" run "${specs[@]}" --out "$tmp/r3" --post "$url" \
	--token-file "$tmp/wrong" --job "$job"
check "dead letter printed" grep -q "dead letter .*HTTP 401" "$err"
check "reports written" test -s "$tmp/r3/results.jsonl"
grep -q "tok-WRONG" "$out" "$err" && bad "the token was printed" || ok
stop_server

# Bad input before any case runs.
expect_rc 2 "missing token file" "$exe" run "${specs[@]}" --out "$tmp/r4" --post "$url" \
	--token-file "$tmp/nope" --job "$job"
check "no case ran" test ! -e "$tmp/r4/results.jsonl"
usage_error "--post alone" "go together" "${specs[@]}" --post "$url"
usage_error "--job without --post" "--job is the job.json" "${specs[@]}" --job "$job"
expect_rc 2 "nightly without --repo or --job" "$exe" run "${specs[@]}" --out "$tmp/r5" \
	--post "$url" --token-file "$tmp/token"
check "says what to give" grep -q -- "--post needs --job FILE" "$err"
summary
