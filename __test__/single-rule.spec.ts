// scripts/check-rules.js: rules with a recognisable copy shape live in one file only.
import { expect, it } from "vitest"

import { RULES, copies } from "../scripts/check-rules.js"

it("finds no copy of a checked rule outside its home", () => {
  expect(copies()).toEqual([])
})

it.each([
  ["normalized string (JS)", 'return typeof value === "string" && value.length > 0 && value === value.trim()'],
  ["normalized string (JS)", "  if (name !== name.trim()) throw new TypeError(message)"],
  ["normalized string (Rust)", "    !value.is_empty() && value == value.trim() && !value.contains('\\0')"],
])("recognises a copy of %s", (rule, line) => {
  const found = RULES.find((candidate) => candidate.rule === rule)
  expect(found?.pattern.test(line)).toBe(true)
})
