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
  ["timer-safe delay bound (JS)", "const MAX_TIMER = 2 ** 31 - 1"],
  ["plain options record (JS)", '  return typeof value === "object" && value !== null && !Array.isArray(value)'],
  ["guest process-group kill", "`[ -s ${marker} ] && kill -s KILL -- -$(cat ${marker}) 2>/dev/null`"],
  ["guest process-group kill", "const record = `read -r _ _ _ _ group _ < /proc/$$/stat; echo`"],
  ["AML_*_MS environment setting (Rust)", '        std::env::var("AML_DOCKER_API_TIMEOUT_MS")'],
  ["Sandbox maxOutputBytes option", "  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES"],
  ["optional peer import", '  sdk ??= import("@daytona/sdk").catch((error) => {'],
  ["ACP launch file path (JS)", '    path.split("/").every((segment) => segment !== "" && segment !== ".")'],
  ["absent object on a file system store (Rust)", "                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory"],
])("recognises a copy of %s", (rule, line) => {
  const found = RULES.find((candidate) => candidate.rule === rule)
  expect(found?.pattern.test(line)).toBe(true)
})
