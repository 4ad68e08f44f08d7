#!/usr/bin/env bash
# The action's summary step (it runs after a failed build too): pages, images, bytes before and after,
# and every failure with its file and line, as Markdown in the job summary, from the JSON report.
set -euo pipefail
: "${GITHUB_STEP_SUMMARY:?}" "${IMGBAKE_REPORT_JSON:?}"
if [ ! -s "$IMGBAKE_REPORT_JSON" ]; then
  printf '### imgbake\n\nNo report: the build stopped before writing one (exit code %s); the log says why.\n' \
    "${IMGBAKE_EXIT_CODE:-unknown}" >> "$GITHUB_STEP_SUMMARY"
  exit 0
fi
jq -r --arg code "${IMGBAKE_EXIT_CODE:-}" -f "$(dirname "$0")/summary.jq" "$IMGBAKE_REPORT_JSON" >> "$GITHUB_STEP_SUMMARY"
