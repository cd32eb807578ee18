// The layout rules of docs/ARCHITECTURE.md ("Where things live"), read off the source:
// scripts/check-layout.js finds import and module cycles, crowded folders and long files.
import { describe, expect, it } from "vitest"

import { breaches, cycles } from "../scripts/check-layout.js"

describe("the source layout", () => {
  it("finds a cycle where one exists and none in a chain", () => {
    const chain = new Map([["a", ["b"]], ["b", ["c"]], ["c", []]])
    expect(cycles(chain)).toEqual([])
    expect(cycles(new Map([...chain, ["c", ["a"]]]))).toEqual([["a", "b", "c"]])
  })

  it("has no module cycle, no folder of more than 25 files and no production file over 500 lines", () => {
    expect(breaches()).toEqual([])
  })
})
