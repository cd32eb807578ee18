// Modules the published SDK declarations import without shipping their types: `modal`'s
// index.d.ts names `@bufbuild/protobuf/wire` (not among its dependencies; only its
// generated protobuf codecs use it) and `@daytona/sdk` reaches `ws` through
// `isomorphic-ws` (no bundled types). Declared opaque so `tsc` can check the SDK-shaped
// fakes (sdk-surfaces.ts) without skipLibCheck.
declare module "@bufbuild/protobuf/wire" {
  export class BinaryReader {
    constructor(buf: Uint8Array)
  }
  /** `finish()` is what nice-grpc's ts-proto service definitions require of a writer. */
  export class BinaryWriter {
    finish(): Uint8Array
  }
}
declare module "ws"
