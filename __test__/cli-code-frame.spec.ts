// lib/cli/code-frame.js: the line `aml run` shows under a compile error.
import { expect, it } from "vitest"

import { codeFrame } from "../lib/cli/code-frame.js"

it("shows the line with a caret under the column", () => {
  expect(codeFrame("a\nconst x = (1 +;\nb", 2, 15)).toBe("2 | const x = (1 +;\n  |               ^")
})

it("keeps tabs in the caret line so it stays under the column", () => {
  expect(codeFrame("\t\tfoo(", 1, 7)).toBe("1 | \t\tfoo(\n  | \t\t    ^")
})

it("cuts a long line around the column", () => {
  const line = `${"x".repeat(500)}!${"y".repeat(500)}`
  const [text, caret] = codeFrame(line, 1, 501)!.split("\n")
  expect(text.length).toBe("1 | ".length + 160)
  expect(text["1 | ".length + caret.length - "  | ".length - 1]).toBe("!")
  expect(caret.endsWith("^")).toBe(true)
})

it("gives nothing for a position outside the source", () => {
  expect(codeFrame("one line", 3, 1)).toBeUndefined()
  expect(codeFrame("one line", 1, 0)).toBeUndefined()
})
