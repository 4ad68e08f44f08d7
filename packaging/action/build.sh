#!/usr/bin/env bash
# The action's build step: `imgbake build` on the site with the cache the previous step restored, both
# reports (the page to upload, the JSON for the summary) and the workflow's extra arguments. Its exit
# code is the step's, and is kept as the output `exit-code` for the steps that run after a failure.
set -uo pipefail
: "${IMGBAKE_SITE:?}" "${IMGBAKE_CACHE_DIR:?}" "${IMGBAKE_REPORT_HTML:?}" "${IMGBAKE_REPORT_JSON:?}"

command=(imgbake build "$IMGBAKE_SITE" --cache-dir "$IMGBAKE_CACHE_DIR"
         --report "$IMGBAKE_REPORT_HTML" --report "$IMGBAKE_REPORT_JSON")
[ -z "${IMGBAKE_CONFIG:-}" ] || command+=(--config "$IMGBAKE_CONFIG")
# Extra arguments split as a shell would split words, quotes honoured, nothing expanded.
extra=()
if [ -n "${IMGBAKE_ARGS:-}" ]; then
  mapfile -d '' extra < <(printf '%s' "$IMGBAKE_ARGS" | xargs printf '%s\0') ||
    { echo "::error::cannot split the args input: $IMGBAKE_ARGS"; exit 2; }
fi
rm -f "$IMGBAKE_REPORT_JSON" "$IMGBAKE_REPORT_HTML"

echo "${command[*]} ${extra[*]}"
"${command[@]}" "${extra[@]}"
status=$?
[ -z "${GITHUB_OUTPUT:-}" ] || printf 'exit-code=%s\nreport=%s\n' "$status" "$IMGBAKE_REPORT_JSON" >> "$GITHUB_OUTPUT"
exit "$status"
