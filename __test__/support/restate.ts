// The Restate set-up of the durable specs: scripts/restate-local.js, typed.
import type { ChildProcess } from "node:child_process"

// @ts-ignore -- a plain JS module of the repository's scripts
import * as local from "../../scripts/restate-local.js"

export interface RestateServer {
  ingress: string
  admin: string
  dataDir: string
  pid: number | undefined
  /** Registers the endpoint at `uri` (HTTP/2 cleartext), replacing an earlier one. */
  register(uri: string): Promise<void>
  /** Cancels invocation `id` through the admin API. */
  cancel(id: string): Promise<void>
  stop(): Promise<void>
}

export interface Worker {
  port: number
  child: ChildProcess
  exited: Promise<void>
  stop(): Promise<void>
}

export interface Proxy {
  port: number
  uri: string
  /** Bytes passed so far: from Restate to the workers, and back. */
  traffic(): { toWorkers: number; fromWorkers: number }
  stop(): Promise<void>
}

export const node22: string = local.node22
export const freePort: () => Promise<number> = local.freePort
export const startRestate: (env?: Record<string, string>) => Promise<RestateServer> = local.startRestate
export const startWorker: (script: string, env: Record<string, string>) => Promise<Worker> = local.startWorker
export const startProxy: (ports: () => number[]) => Promise<Proxy> = local.startProxy
/** The ports of the still-running workers, first first (for startProxy). */
export const livePorts: (workers: Worker[]) => number[] = local.livePorts
/** The journal secret every worker started by startWorker shares. */
export const workerSecret: string = local.workerSecret
