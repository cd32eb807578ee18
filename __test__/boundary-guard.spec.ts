// No code of a #[napi] entry point runs outside guard() (scripts/check-boundary.js), so no Rust
// panic unwinds into Node; __test__/panic-boundary.spec.ts shows one such panic rejecting.
import { describe, expect, it } from "vitest"

import { unguarded, unguardedIn } from "../scripts/check-boundary.js"

it("finds no #[napi] function with code outside guard() in src/", () => {
  const { total, unguarded: list } = unguarded()
  expect(total).toBeGreaterThan(100)
  expect(list).toEqual([])
})

/** One #[napi] entry point named `entry` with `body`, after the file's `helpers`. */
const source = (body: string, helpers = "") => `${helpers}\n#[napi]\npub fn entry(env: &Env, handle: u32) -> Result<Object<'_>> {\n${body}\n}\n`

describe("the check reads every statement, not just whether a guarded call is present", () => {
  it.each([
    ["a lookup before spawn_promise", "let journal = journal(handle)?;\nspawn_promise(env, async move { Ok(journal.load().await) }, |_, v| Ok(v))"],
    ["a copy before the guarded call", "let bytes = chunk.to_vec();\nguard(|| Ok(bytes.len()))"],
    ["a statement after it", "let port = guard(|| port(handle))?;\nport.kill();\nspawn_promise(env, async move { Ok(()) }, |_, ()| Ok(()))"],
    ["an argument evaluated before the call", "spawn_promise(env, work(handle), |_, v| Ok(v))"],
    ["no guarded call at all", "let work = async move { Ok(1) };\nwork"],
    ["a helper that itself runs code first", "lookup(handle)", "fn lookup(handle: u32) -> Result<()> {\n  let x = table()[handle];\n  guard(|| Ok(x))\n}"],
  ])("%s is reported", (_, body, helpers) => {
    expect(unguardedIn(source(body, helpers))).toEqual({ total: 1, unguarded: ["entry"] })
  })

  it.each([
    ["guard alone", "guard(|| Ok(handle))"],
    ["guarded lookups, futures and closures", "let port = guard(|| port(handle))?;\nlet bytes = guard(|| Ok(chunk.to_vec()))?;\nlet fed = async move { Ok(port.feed(bytes).await) };\nspawn_promise(env, fed, |_, ok| Ok(ok))"],
    ["an async fn called with a closure", "let work = blocking(move || read(handle));\nspawn_promise(env, work, |_, result| Ok(result))", "async fn blocking<T>(f: impl FnOnce() -> T) -> Result<T> { Ok(f()) }"],
    ["a helper that guards", "lookup(handle)", "fn lookup(handle: u32) -> Result<()> {\n  guard(|| Ok(table()[handle]))\n}"],
    ["braces and semicolons inside strings and comments", "// not { a statement; }\nguard(|| Ok(format!(\"{{; }}\")))"],
  ])("%s passes", (_, body, helpers) => {
    expect(unguardedIn(source(body, helpers))).toEqual({ total: 1, unguarded: [] })
  })
})
