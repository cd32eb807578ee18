// A process started inside a guest (a Docker container, a remote Sandbox) is stopped by a
// second command that kills its process group, whose id the process recorded in a marker
// file before exec'ing the command. The marker, the kill script and both ways of recording
// live here.
//
// Two recorders, on purpose: `docker exec` makes its process lead a new group, so the
// reference's documented wrapper records `$$` (INVENTORY DS spawn); a remote session shell
// may itself lead the group and run the wrapper inside it, so there the group is read from
// `/proc/$$/stat` (field 5).

import { randomUUID } from "node:crypto"

/** A fresh marker path in the guest's /tmp. */
export function groupMarker() {
  return `/tmp/aml-spawn-${randomUUID()}.pid`
}

/** The documented Docker wrapper: `sh -c 'echo $$ > <marker>; exec "$@"' aml-spawn <cmd> <args…>`. */
export function recordLeaderArgv(marker, argv) {
  return ["sh", "-c", `echo $$ > ${marker}; exec "$@"`, "aml-spawn", ...argv]
}

/** The wrapper for a guest whose shell may not lead the group: the group id from /proc. */
export function recordGroupArgv(marker, argv) {
  return ["sh", "-c", `read -r _ _ _ _ group _ < /proc/$$/stat; echo "$group" > ${marker}; exec "$@"`, "aml-spawn", ...argv]
}

/**
 * The script that kills the group recorded in `marker`: it waits up to 5 s for the marker
 * (a kill may come before the wrapper ran), kills the whole group, removes the marker, and
 * always succeeds (a group already gone is not an error).
 */
export function killGroupScript(marker) {
  return (
    `i=0; while [ ! -s ${marker} ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; ` +
    `[ -s ${marker} ] && kill -s KILL -- -$(cat ${marker}) 2>/dev/null; rm -f ${marker}; true`
  )
}
