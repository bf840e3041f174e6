#!/usr/bin/env bash
# mk/lanes.sh TARGET...: runs each make target as a lane, all at once, every output line
# prefixed with its lane's name; waits for all and fails if any failed (naming which).
# make test runs its embedded and real lanes this way.
set -u
make=${MAKE:-make}
pids=()
for t in "$@"; do
	( set -o pipefail; $make --no-print-directory "$t" 2>&1 | sed -u "s/^/[${t%-lane}] /" ) &
	pids+=("$!")
done
rc=0
i=0
for t in "$@"; do
	if ! wait "${pids[$i]}"; then
		echo "lane ${t%-lane} failed"
		rc=1
	fi
	i=$((i + 1))
done
exit $rc
