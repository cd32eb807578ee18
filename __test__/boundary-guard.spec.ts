// Every #[napi] entry point runs inside guard() (scripts/check-boundary.js), so no Rust panic
// unwinds into Node; __test__/panic-boundary.spec.ts shows one such panic rejecting.
import { expect, it } from "vitest"

import { unguarded } from "../scripts/check-boundary.js"

it("leaves no #[napi] function outside guard()", () => {
  const { total, unguarded: list } = unguarded()
  expect(total).toBeGreaterThan(100)
  expect(list).toEqual([])
})
