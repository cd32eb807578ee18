// Inspects built addons that cannot run on this machine (musl, Darwin; arm64 glibc too), so a
// wrong link fails the build instead of a user's `import`:
//
//   node scripts/check-artifacts.js [FILE.node …]     (default: every target/napi-release/<triple>/)
//
// Per file: the object format (ELF shared object / Mach-O dylib), the architecture, the minimum
// OS (glibc symbol versions; macOS LC_BUILD_VERSION minos), the dynamic dependencies (only the
// allowed ones below), and `napi_register_module_v1` exported. Darwin also: the install name
// (LC_ID_DYLIB) is @rpath-relative, not the build machine's path; the `napi_*` symbols are
// undefined and bound by flat lookup (`-undefined dynamic_lookup`), so Node, which loads the
// addon, supplies them; and no other symbol is left to flat lookup (each binds to its dylib). Uses `readelf` (binutils) and
// `llvm-objdump` (Debian `llvm`), both installed by scripts/install-toolchains.sh.
import { execFileSync } from "node:child_process"
import { closeSync, existsSync, openSync, readSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** What each platform's addon must look like. */
export const EXPECTED = {
  "linux-x64-gnu": { format: "elf", machine: "Advanced Micro Devices X86-64", libc: "gnu", maxGlibc: "2.36" },
  "linux-arm64-gnu": { format: "elf", machine: "AArch64", libc: "gnu", maxGlibc: "2.36" },
  "linux-x64-musl": { format: "elf", machine: "Advanced Micro Devices X86-64", libc: "musl" },
  "linux-arm64-musl": { format: "elf", machine: "AArch64", libc: "musl" },
  "darwin-x64": { format: "macho", cpu: "X86_64", minos: "10.15" },
  "darwin-arm64": { format: "macho", cpu: "ARM64", minos: "11.0" },
}

/** Shared objects an addon may need: the C library's parts, nothing a user must install. */
const GLIBC_NEEDED = new Set(["libc.so.6", "libm.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"])
const MUSL_NEEDED = new Set(["libc.so"])
/** Darwin: libSystem, libiconv/libcharset (Rust std links libiconv; both are in every macOS), and the two frameworks of docs/DEPENDENCIES.md ("macOS frameworks"). */
const DARWIN_DYLIBS = new Set([
  "/usr/lib/libSystem.B.dylib",
  "/usr/lib/libiconv.2.dylib",
  "/usr/lib/libcharset.1.dylib",
  "/usr/lib/libresolv.9.dylib",
  "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation",
  "/System/Library/Frameworks/Security.framework/Versions/A/Security",
])

const tool = (command, args) => execFileSync(command, args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })

const versionParts = (version) => version.split(".").map(Number)
/** a <= b for dotted versions. */
const atMost = (a, b) => {
  const [x, y] = [versionParts(a), versionParts(b)]
  for (let index = 0; index < Math.max(x.length, y.length); index++) {
    if ((x[index] ?? 0) !== (y[index] ?? 0)) return (x[index] ?? 0) < (y[index] ?? 0)
  }
  return true
}

function inspectElf(file) {
  const header = tool("readelf", ["-h", "-W", file])
  const dynamic = tool("readelf", ["-d", "-W", file])
  const symbols = tool("readelf", ["--dyn-syms", "-W", file])
  const versions = tool("readelf", ["-V", "-W", file])
  const glibc = [...versions.matchAll(/Name: GLIBC_([0-9.]+)/g)].map((match) => match[1])
  return {
    format: /Class:\s+ELF64/.test(header) && /Type:\s+DYN/.test(header) ? "elf" : "other",
    machine: header.match(/Machine:\s+(.+)/)?.[1].trim(),
    needed: [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((match) => match[1]),
    exported: symbols.split("\n").some((line) => / FUNC +GLOBAL +DEFAULT +\d+ napi_register_module_v1$/.test(line.trim())),
    glibc: glibc.reduce((max, version) => (atMost(max, version) ? version : max), "0"),
  }
}

/** The facts `machOProblems` judges, read from a Mach-O file with llvm-objdump. */
export function inspectMachO(file) {
  const headers = tool("llvm-objdump", ["--macho", "--private-headers", file])
  const exports = tool("llvm-objdump", ["--macho", "--exports-trie", file])
  const binds = tool("llvm-objdump", ["--macho", "--bind", "--lazy-bind", "--weak-bind", file])
  // Bind rows end with "<dylib> <symbol>"; the dylib is `flat-namespace` for a flat lookup.
  const bound = [...binds.matchAll(/^\S+\s+\S+\s+0x[0-9A-Fa-f]+\s.*?(\S+)\s+(_\w+)\s*$/gm)].map((match) => ({ dylib: match[1], symbol: match[2] }))
  const header = headers.match(/MH_MAGIC_64\s+(\S+)\s+\S+\s+\S+\s+(\S+)/)
  const build = headers.match(/cmd LC_BUILD_VERSION[\s\S]*?minos ([0-9.]+)/)
  const legacy = headers.match(/cmd LC_VERSION_MIN_MACOSX[\s\S]*?version ([0-9.]+)/)
  return {
    format: header?.[2] === "DYLIB" ? "macho" : "other",
    cpu: header?.[1],
    minos: build?.[1] ?? legacy?.[1],
    dylibs: [...headers.matchAll(/cmd LC_(?:LOAD|LOAD_WEAK|REEXPORT)_DYLIB\n\s+cmdsize \d+\n\s+name (\S+)/g)].map((match) => match[1]),
    exported: /\b_napi_register_module_v1\b/.test(exports),
    definesNapi: [...exports.matchAll(/\b(_napi_\w+)/g)].map((match) => match[1]).filter((symbol) => symbol !== "_napi_register_module_v1"),
    installName: headers.match(/cmd LC_ID_DYLIB\n\s+cmdsize \d+\n\s+name (\S+)/)?.[1],
    napiBinds: bound.filter(({ symbol }) => symbol.startsWith("_napi_")),
    otherFlat: bound.filter(({ symbol, dylib }) => !symbol.startsWith("_napi_") && dylib === "flat-namespace").map(({ symbol }) => symbol),
  }
}

/** "elf", "macho" (64-bit, either byte order's magic as stored by the target) or "other". */
function magic(file) {
  const bytes = Buffer.alloc(4)
  const fd = openSync(file, "r")
  try {
    readSync(fd, bytes, 0, 4, 0)
  } finally {
    closeSync(fd)
  }
  if (bytes.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) return "elf"
  if (bytes.readUInt32LE(0) === 0xfeedfacf) return "macho"
  return "other"
}

/** Returns the problems found in `file`, the addon of `triple` (empty when it is right). */
export function checkArtifact(triple, file) {
  const expected = EXPECTED[triple]
  if (!expected) return [`no expectations for ${triple}`]
  const kind = magic(file)
  if (kind !== expected.format) return [expected.format === "elf" ? "not an ELF64 shared object" : "not a Mach-O 64-bit dylib"]
  const problems = []
  if (expected.format === "elf") {
    const found = inspectElf(file)
    if (found.format !== "elf") problems.push("not an ELF64 shared object")
    if (found.machine !== expected.machine) problems.push(`machine ${found.machine}, expected ${expected.machine}`)
    const allowed = expected.libc === "musl" ? MUSL_NEEDED : GLIBC_NEEDED
    for (const library of found.needed) if (!allowed.has(library)) problems.push(`needs ${library}`)
    if (expected.libc === "musl" && found.glibc !== "0") problems.push(`musl addon references GLIBC_${found.glibc}`)
    if (expected.libc === "gnu" && !atMost(found.glibc, expected.maxGlibc)) problems.push(`needs GLIBC_${found.glibc}, newer than ${expected.maxGlibc}`)
    if (!found.exported) problems.push("napi_register_module_v1 is not exported")
  } else {
    problems.push(...machOProblems(triple, inspectMachO(file)))
  }
  return problems
}

/** What is wrong with a Darwin addon of `triple`, from its facts (`inspectMachO`). */
export function machOProblems(triple, found) {
  const expected = EXPECTED[triple]
  const problems = []
  if (found.format !== "macho") problems.push("not a Mach-O 64-bit dylib")
  if (found.cpu !== expected.cpu) problems.push(`cpu ${found.cpu}, expected ${expected.cpu}`)
  if (found.minos !== expected.minos) problems.push(`minimum macOS ${found.minos}, expected ${expected.minos}`)
  for (const dylib of found.dylibs) if (!DARWIN_DYLIBS.has(dylib)) problems.push(`loads ${dylib}`)
  if (!found.exported) problems.push("_napi_register_module_v1 is not exported")
  const name = `@rpath/aml-jsx-sdk.${triple}.node`
  if (found.installName !== name) problems.push(`install name ${found.installName}, expected ${name}`)
  if (found.definesNapi.length) problems.push(`defines ${found.definesNapi.slice(0, 3).join(", ")}: Node's napi_* must stay undefined`)
  if (!found.napiBinds.length) problems.push("binds no napi_* symbol")
  const twoLevel = found.napiBinds.filter(({ dylib }) => dylib !== "flat-namespace")
  if (twoLevel.length) problems.push(`${twoLevel[0].symbol} binds to ${twoLevel[0].dylib}, not by flat lookup (-undefined dynamic_lookup)`)
  if (found.otherFlat.length) problems.push(`left to flat lookup: ${found.otherFlat.slice(0, 3).join(", ")}${found.otherFlat.length > 3 ? ` and ${found.otherFlat.length - 3} more` : ""}`)
  return problems
}

/** The release addons built here: `{ triple, file }` for each target/napi-release/<triple>/. */
export function builtArtifacts() {
  return Object.keys(EXPECTED)
    .map((triple) => ({ triple, file: join(root, "target", "napi-release", triple, `aml-jsx-sdk.${triple}.node`) }))
    .filter(({ file }) => existsSync(file))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let failed = false
  for (const { triple, file } of builtArtifacts()) {
    const problems = checkArtifact(triple, file)
    console.log(`${triple}: ${problems.length ? problems.join("; ") : "ok"}`)
    failed ||= problems.length > 0
  }
  process.exitCode = failed ? 1 : 0
}
