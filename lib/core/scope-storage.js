// The realm-shared AsyncLocalStorage that holds the active ComponentScope while a function
// component runs (RT-2, RT-4). Its own module so that context.js and component-scope.js can
// both read it without importing each other.

import { AsyncLocalStorage } from "node:async_hooks"

import { realmSingleton } from "./realm.js"

export const storage = realmSingleton(
  "@aml-jsx/sdk/component-evaluation-storage",
  () => new AsyncLocalStorage(),
  (value) => value instanceof AsyncLocalStorage,
  "AML component evaluation storage has an invalid global value",
)

/** Runs `fn` with component evaluation masked (listeners, providers, schema callbacks). */
//
// Not `storage.exit()`: on Node 20 it disables and re-enables the global promise hooks on
// every call, which dominated the Agent hot path. Running with an undefined store masks the
// same way, and when no store is active there is nothing to mask at all.
export function masked(fn, ...args) {
  if (storage.getStore() === undefined) return fn(...args)
  return storage.run(undefined, fn, ...args)
}
