// The MCP Tool bridge served on this thread's event loop (src/acp/loop_bridge.rs over
// aml_acp::LoopBridge). Rust owns the protocol: request framing and its limits, the bearer
// token, the 404/405 rules, JSON-RPC and MCP routing and every answer text. This file only
// moves bytes between `node:net` sockets and Rust, and runs the Tool calls Rust hands it
// through the same `dispatch` a Sandbox relay's call takes (lib/tools/native-dispatch.js), so
// validation, spans, leases and cancellation are unchanged.
//
// Why here and not on a thread of its own: the Tools run on this thread, and a call served
// from another thread costs four cross-thread wake-ups (docs/ACP.md, "The bridge round trip").

import { createServer } from "node:net"

import { dispatch } from "../../tools/native-dispatch.js"
import {
  acpBridgeStop,
  acpLoopBridgeAnswer,
  acpLoopBridgeDescriptor,
  acpLoopBridgeDrop,
  acpLoopBridgeFeed,
  acpLoopBridgeOpen,
} from "../../core/native.js"

const CALL = 0
const CANCEL = 1

// Call ids of this file are negative: the threaded dispatcher's ids count up from 1 in the
// same table of running calls (lib/tools/native-dispatch.js), so the two never meet.
let nextCall = 0
function callId() {
  nextCall = nextCall <= -0x7fffffff ? -1 : nextCall - 1
  return nextCall
}

/**
 * Serves the Tools lent as `lentJson` (lendTools) on 127.0.0.1. Resolves with the bridge's
 * `handle` (for the Sandbox MCP relay), MCP server `name`, ACP `descriptor` and `stop()`,
 * which closes the listener and every connection and aborts the calls still running.
 */
export async function startLoopBridge(lentJson) {
  const { handle, name } = acpLoopBridgeOpen(lentJson)
  const sockets = new Map()
  /** conn → the id of its running Tool call. */
  const running = new Map()
  let stopped = false
  let nextConn = 0

  // A socket whose bytes Rust could not take (never expected) is closed rather than left
  // to throw from an event handler, which would take the process down.
  const step = (socket, next) => {
    try {
      return next()
    } catch {
      socket.destroy()
      return undefined
    }
  }

  const apply = (conn, socket, feed) => {
    if (feed === undefined) return
    if (feed.write !== undefined && feed.write !== null) socket.write(feed.write)
    if (feed.close) socket.end()
    else if (feed.tool !== undefined && feed.tool !== null) call(conn, socket, feed.tool, feed.input)
  }

  const call = (conn, socket, tool, input) => {
    const id = callId()
    running.set(conn, id)
    // dispatch never rejects: every failure is an outcome (lib/tools/native-dispatch.js).
    dispatch(CALL, id, tool, input).then((outcome) => {
      running.delete(conn)
      if (stopped || socket.destroyed) return
      apply(conn, socket, step(socket, () => acpLoopBridgeAnswer(handle, conn, outcome)))
    })
  }

  const server = createServer({ noDelay: true }, (socket) => {
    const conn = ++nextConn
    sockets.set(conn, socket)
    // The bridge never keeps Node alive: the evaluation does.
    socket.unref()
    socket.on("data", (chunk) => {
      if (!stopped) apply(conn, socket, step(socket, () => acpLoopBridgeFeed(handle, conn, chunk)))
    })
    socket.on("error", () => socket.destroy())
    socket.on("close", () => {
      sockets.delete(conn)
      step(socket, () => acpLoopBridgeDrop(handle, conn))
      const id = running.get(conn)
      if (id !== undefined) dispatch(CANCEL, id)
    })
  })
  try {
    await new Promise((resolve, reject) => {
      server.once("error", reject)
      server.listen({ host: "127.0.0.1", port: 0 }, resolve)
    })
  } catch (error) {
    acpBridgeStop(handle)
    throw new Error(`ACP MCP bridge could not start: ${error.message}`, { cause: error })
  }
  server.unref()
  const descriptor = JSON.parse(acpLoopBridgeDescriptor(handle, server.address().port))
  return {
    descriptor,
    handle,
    name,
    stop() {
      if (stopped) return
      stopped = true
      server.close()
      for (const socket of sockets.values()) socket.destroy()
      for (const id of running.values()) dispatch(CANCEL, id)
      running.clear()
      acpBridgeStop(handle)
    },
  }
}
