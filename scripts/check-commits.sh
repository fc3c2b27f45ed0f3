#!/usr/bin/env bash
# Checks that every commit subject since the convention began is at most 72 characters (git's own
# convention: the subject fits a terminal and `git log --oneline`; the detail goes in the body).
# Run by .ci/run; prints each subject that is too long and fails.
set -euo pipefail
export LC_ALL=C.UTF-8  # ${#subject} counts characters, not bytes
cd "$(dirname "$0")/.."
# the last commit before the convention (CONTRIBUTING.md, "Commits")
base=fb87b02
if ! git rev-parse --quiet --verify "$base^{commit}" >/dev/null; then
    echo "check-commits: $base is not in this clone's history; nothing checked"
    exit 0
fi
status=0
while IFS= read -r line; do
    hash=${line%% *}
    subject=${line#* }
    if [ "${#subject}" -gt 72 ]; then
        echo "check-commits: $hash's subject has ${#subject} characters (at most 72): $subject"
        status=1
    fi
done < <(git log --no-merges --format='%h %s' "$base..HEAD")
[ "$status" = 0 ] && echo "check-commits: every subject since $base has at most 72 characters"
exit "$status"
