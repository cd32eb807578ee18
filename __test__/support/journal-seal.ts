// Opens a sealed journal entry as docs/DURABLE.md ("Trust") specifies the format, written
// independently of crates/aml-restate/src/seal.rs with Node's own crypto: the specs read what
// the workers recorded, and the format is checked against its documentation on the way.
import { createDecipheriv, hkdfSync } from "node:crypto"

export interface Place {
  object: string
  workflow: string
  run: string
  key: string
  digest: string
}

function associatedData(place: Place): Buffer {
  const parts = [place.object, place.workflow, place.run, place.key, place.digest].map((part) => Buffer.from(part, "utf8"))
  const lengths = parts.map((part) => {
    const length = Buffer.alloc(8)
    length.writeBigUInt64BE(BigInt(part.length))
    return length
  })
  return Buffer.concat([Buffer.from("aml-journal-entry/1"), ...parts.flatMap((part, i) => [lengths[i]!, part])])
}

/** The `{ kind, value }` sealed in `sealed` for `place`, or undefined when it does not open. */
export function openSealed(secret: string, place: Place, sealed: string): { kind: string; value: unknown } | undefined {
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(secret, "utf8"), Buffer.from("aml-jsx restate journal"), Buffer.from("entry sealing key v1"), 32))
  const bytes = Buffer.from(sealed, "base64url")
  if (bytes.length < 12 + 16) return undefined
  const decipher = createDecipheriv("chacha20-poly1305", key, bytes.subarray(0, 12), { authTagLength: 16 })
  decipher.setAAD(associatedData(place), { plaintextLength: bytes.length - 28 })
  decipher.setAuthTag(bytes.subarray(bytes.length - 16))
  try {
    const plain = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()])
    return JSON.parse(plain.toString("utf8")) as { kind: string; value: unknown }
  } catch {
    return undefined
  }
}
