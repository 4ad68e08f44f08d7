# The job summary from imgbake's JSON report (docs/report.schema.json); summary.sh runs it.
def size: if . >= 1000000 then "\(. / 100000 | round / 10) MB" elif . >= 1000 then "\(. / 1000 | round) KB" else "\(.) B" end;
def cell: tostring | gsub("\\|"; "\\|") | gsub("\n"; " ");
def percent($before; $after): if $before > 0 then " (\((($after - $before) * 100 / $before) | round) %)" else "" end;
def place: "\(.file):\(.line)";
.totals as $t
| [.references[] | select(.outcome == "failed")] as $failed
| ($failed | map("\(.file):\(.line):\(.column)")) as $failedAt
| [.diagnostics[] | select(.severity != "note") | select((.location // "") as $at | $failedAt | index($at) | not)] as $others
| "### imgbake \(.imgbake): \(.site)\(if .check then " (check only)" else "" end)",
  "",
  (if $code != "" and $code != "0" then "**The build failed (exit code \($code)).**\n" else empty end),
  "| | |",
  "|---|---|",
  "| pages | \($t.pages) (\($t.pagesRewritten) rewritten, \($t.pagesUnchanged) unchanged) |",
  "| image references | \($t.referencesLocalised) of \($t.references) localised |",
  "| images | \($t.images): \($t.imagesCached) from the cache, \($t.imagesDownloaded) downloaded, \($t.imagesRead) read from the site, \($t.imagesFailed) failed |",
  "| bytes before → after | \($t.bytesBefore | size) → \($t.bytesAfter | size)\(percent($t.bytesBefore; $t.bytesAfter)) |",
  "| network | \($t.requests) requests, \($t.bytesDownloaded | size) downloaded |",
  "| time | \(.seconds * 100 | round / 100) s |",
  "",
  (if ($failed | length) > 0 then
     "#### Failures (\($failed | length))\n\n| where | image | why |\n|---|---|---|",
     ($failed[:100][] | "| `\(place)` | \(.url | cell) | \(.reason // "" | cell) |"),
     (if ($failed | length) > 100 then "\n… and \(($failed | length) - 100) more in the report." else empty end),
     ""
   else "No failures.\n" end),
  (if ($others | length) > 0 then
     "#### Other warnings and errors (\($others | length))\n\n| where | what |\n|---|---|",
     ($others[:100][] | "| `\(.location // "")` | \(.severity): \(.message | cell) |"),
     (if ($others | length) > 100 then "\n… and \(($others | length) - 100) more in the report." else empty end),
     ""
   else empty end)
