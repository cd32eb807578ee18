// The three-node Restate cluster of the cluster spec: scripts/restate-cluster.js, typed.
import type { ChildProcess } from "node:child_process"

// @ts-ignore -- a plain JS module of the repository's scripts
import * as cluster from "../../scripts/restate-cluster.js"

export interface ClusterNode {
  name: string
  dataDir: string
  pid: number | undefined
  child: ChildProcess
  admin: string
  ingress: string
  /** The node's advertised (fabric) address; its /metrics is served there. */
  address: string
  alive(): boolean
  /** SIGKILLs the node and waits for it to exit. */
  kill(): Promise<void>
}

/** What one node serves, read from its metrics. */
export interface Serving {
  /** Partitions this node leads. */
  leads: number
  /** Partition replicas this node runs, leader or follower. */
  replicas: number
  /** The metadata (Raft) leader's node id, as this node sees it. */
  metadataLeader: number
}

export interface RestateCluster {
  nodes: ClusterNode[]
  /** A loopback proxy in front of the three ingresses: the first live node takes each connection. */
  ingress: string
  admin(): string
  query(sql: string): Promise<Record<string, unknown>[]>
  /** By node name, for the live nodes. */
  serving(): Promise<Record<string, Serving>>
  register(uri: string): Promise<void>
  stop(): Promise<void>
}

export interface ClusterOptions {
  partitions?: number
  replication?: number
  /** TOML appended to every node's configuration file. */
  extra?: string
}

export const startCluster: (options?: ClusterOptions) => Promise<RestateCluster> = cluster.startCluster
