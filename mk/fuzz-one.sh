#!/bin/sh
# mk/fuzz-one.sh DIR NAME FUZZTIME PARALLEL: fuzz one go test -fuzz target (mk/fuzz.mk).
#
# Go 1.26's fuzz coordinator can end a duration-bounded run with a bare "context deadline
# exceeded" when -fuzztime expires while a starved worker is mid-call (golang/go#75804, fixed
# in Go 1.27): no input failed and none is written. Such a run is fuzzed once more; any other
# failure, or the same one twice, fails.
set -u
dir=$1 name=$2 fuzztime=$3 parallel=$4
GO=${GO:-go}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for attempt in 1 2; do
	rc=0
	"$GO" test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -parallel "$parallel" "./$dir/" >"$out" 2>&1 || rc=$?
	cat "$out"
	[ "$rc" -eq 0 ] && exit 0
	# The flake's signature: the target's only failure line is the deadline, no input written.
	if [ "$attempt" -eq 1 ] && grep -q '^    context deadline exceeded$' "$out" &&
		! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$out"; then
		echo "== $name: Go's fuzz coordinator stopped on its own deadline (golang/go#75804), no input failed; fuzzing again"
		continue
	fi
	exit "$rc"
done
