#!/usr/bin/env bash
# Checks `spyre-ci report` as a user meets it, against recorder-server on loopback: usage errors
# (exit 2, naming the file and line of a bad results directory), a report through 500s and a
# closed connection that ends with each message recorded once and in order, a re-run that sends
# nothing, a re-post that the receiver's dedup absorbs, a 401 that dead-letters and exits 1, and
# the token in no output. The bodies `--dry-run` prints go through the schema check too.
# Usage: report.sh PATH/TO/spyre-ci PATH/TO/recorder-server SCHEMA_CHECK.py FIXTURES_DIR
set -u
cli_name=report
cli_sub=report
. "$(dirname "$(realpath "$0")")/lib.sh"
exe=$1 server=$2 schema=$3 fixtures=$4
token=tok-cli-SECRET-99

results=$tmp/job0
mkdir -p "$results"
cp "$fixtures/job-pr.json" "$results/job.json"
cp "$fixtures/results.jsonl" "$results/results.jsonl"
printf '%s\n' "$token" >"$tmp/token"
printf 'tok-WRONG\n' >"$tmp/wrong"

server_pid=
# start_server HEADER=VALUE ARGS...: recorder-server in the background, answering 401 unless
# the header is that value; sets $port.
start_server() {
	rm -f "$tmp/port" "$tmp/dump.jsonl"
	local need=$1
	shift
	"$server" --port-file "$tmp/port" --dump "$tmp/dump.jsonl" --require "$need" "$@" &
	server_pid=$!
	for _ in $(seq 100); do [[ -s $tmp/port ]] && break; sleep 0.05; done
	port=$(cat "$tmp/port")
}
# stop_server: SIGTERM to the server this script started; it writes its dump.
stop_server() {
	kill -TERM "$server_pid"
	wait "$server_pid"
}
# recorded_ok: every accepted key once, in_progress before completed per job, N accepted.
recorded_ok() {
	python3 - "$tmp/dump.jsonl" "$1" <<'EOF'
import collections, json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
acc = [r for r in reqs if r["accepted"]]
keys = collections.Counter(r["idem"] for r in acc)
assert all(c == 1 for c in keys.values()), keys
order = {}
for r in acc:
    w = json.loads(r["body"])["workflow"]
    order.setdefault(w["job_name"], []).append(w["status"])
for job, seq in order.items():
    assert seq == ["in_progress", "completed"], (job, seq)
assert len(acc) == int(sys.argv[2]), (len(acc), sys.argv[2])
assert all(r["agent"].startswith("spyre-ci/") and r["idem"].startswith("sci1-") for r in reqs)
EOF
}

usage_error "no --results" "--results DIR is required" --to http://127.0.0.1:1/ --token-file "$tmp/token"
usage_error "no --to" "--to URL is required" --results "$results" --token-file "$tmp/token"
usage_error "no token" "exactly one of --token-file" --results "$results" --to http://127.0.0.1:1/
usage_error "bad format" "--format: format 'xml'" --results "$results" --dry-run --format xml
expect_rc 2 "missing token file" "$exe" report --results "$results" --to http://127.0.0.1:1/ \
	--token-file "$tmp/nope"
grep -q "$tmp/nope" "$err" && ok || bad "the missing token file is not named"
expect_rc 2 "credentials in the URL" "$exe" report --results "$results" \
	--to "http://user:pw@127.0.0.1:1/" --token-file "$tmp/token"
grep -q "must not carry credentials" "$err" && ok || bad "user@ in the URL not refused"
mkdir -p "$tmp/broken"
cp "$results/job.json" "$tmp/broken/"
printf '{"name":"a","outcome":"passed"}\n{"name":"b","outcome":"maybe"}\n' >"$tmp/broken/results.jsonl"
expect_rc 2 "bad results line" "$exe" report --results "$tmp/broken" --dry-run
grep -q "results.jsonl:2: outcome 'maybe'" "$err" && ok || bad "no file:line: $(cat "$err")"
expect_rc 0 "--help" "$exe" report --help
grep -q "Exit codes" "$out" && ok || bad "--help lacks the exit codes"

# The bodies, as docs/contracts.md describes them (checked by a table written from its text).
for f in crcr hud; do
	expect_rc 0 "dry run $f" "$exe" report --results "$results" --dry-run --format $f
	i=0
	while read -r line; do
		printf '%s\n' "$line" >"$tmp/body-$f-$i.json"
		i=$((i + 1))
	done <"$out"
	[[ $i == 2 ]] && ok || bad "dry run $f printed $i bodies"
	python3 "$schema" --format $f "$tmp"/body-$f-*.json >"$tmp/schema.out" 2>&1 && ok ||
		bad "schema ($f): $(cat "$tmp/schema.out")"
done

# Through two 500s and a connection closed mid-answer; then the re-run sends nothing.
start_server "Authorization=Bearer $token" --fail 500:2 --fail close:1
url=http://127.0.0.1:$port/github/callback
expect_rc 0 "report through failures" "$exe" report --to "$url" --results "$results" \
	--token-file "$tmp/token" --horizon 60 --json
py "$out" 'd["delivered"] == 2 and d["dead"] == 0 and d["already_recorded"] == 1' && ok ||
	bad "summary: $(cat "$out")"
grep -q "$token" "$out" "$err" && bad "the token was printed" || ok
expect_rc 0 "re-run" "$exe" report --to "$url" --results "$results" --token-file "$tmp/token" --json
py "$out" 'd["posts"] == 0 and d["delivered"] == 2' && ok || bad "re-run posted: $(cat "$out")"
expect_rc 0 "re-post" "$exe" report --to "$url" --results "$results" --token-file "$tmp/token" \
	--repost --json
py "$out" 'd["posts"] == 2 and d["already_recorded"] == 2' && ok || bad "re-post: $(cat "$out")"
stop_server
recorded_ok 2 && ok || bad "the recorder's log"

# A wrong token: 401, dead-lettered with the answer, exit 1, the token nowhere.
start_server "Authorization=Bearer $token"
rm -f "$results/outbox.sqlite"*
expect_rc 1 "401" "$exe" report --to "http://127.0.0.1:$port/github/callback" \
	--results "$results" --token-file "$tmp/wrong"
grep -q "dead letter .*HTTP 401.*bad credentials" "$err" && ok || bad "401: $(cat "$err")"
grep -q "tok-WRONG" "$out" "$err" && bad "the token was printed" || ok
stop_server

# HUD: the envelope and its header, the token from the environment.
start_server "x-hud-internal-bot=$token"
rm -f "$results/outbox.sqlite"*
SPYRE_TEST_TOKEN=$token expect_rc 0 "hud" "$exe" report --format hud \
	--to "http://127.0.0.1:$port/api/crcr/results" --results "$results" \
	--token-env SPYRE_TEST_TOKEN
stop_server
python3 -c 'import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
assert len(reqs) == 2 and all(r["accepted"] for r in reqs), reqs
assert [json.loads(r["body"])["untrusted"]["callback_payload"]["workflow"]["status"] for r in reqs] == ["in_progress", "completed"]' "$tmp/dump.jsonl" && ok || bad "hud: $(cat "$tmp/dump.jsonl" | head -c 600)"
summary
