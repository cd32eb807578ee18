// The parts of the real `modal` and `@daytona/sdk` types the remote Sandboxes use, as the
// fakes in remote-sandbox-fakes.ts must implement them. Type-checked by `npx tsc -p
// tsconfig.json` against the published declarations (both are devDependencies): a member
// the real SDK lacks, or a signature it does not have, fails the build. Where the SDK returns
// a class with private state (Modal's Image, Sandbox, ContainerProcess; Daytona's Sandbox),
// a structural stand-in lists the members used, each name checked by `Only`.
import type {
  CreateSandboxFromImageParams,
  CreateSandboxFromSnapshotParams,
  Daytona,
  FileSystem,
  Process,
  Sandbox as DaytonaSdkSandbox,
} from "@daytona/sdk"
import type {
  AppService,
  ContainerProcess,
  ImageService,
  ModalClient,
  Sandbox as ModalSdkSandbox,
  SandboxCreateParams,
  SandboxExecParams,
  SandboxFilesystem,
  SandboxService,
} from "modal"

/** `T`, refused if it has a member name `Real` does not have. */
export type Only<Real, T extends { [K in keyof T]: K extends keyof Real ? unknown : never }> = T

/** A Modal process: the SDK's own stream types (ModalWriteStream, ModalReadStream). */
export type ModalProcessSurface = Pick<ContainerProcess, "stdin" | "stdout" | "stderr" | "wait">

export type ModalSandboxSurface = Only<
  ModalSdkSandbox,
  {
    readonly sandboxId: ModalSdkSandbox["sandboxId"]
    readonly filesystem: Pick<SandboxFilesystem, "copyFromLocal" | "copyToLocal">
    exec(command: string[], params?: SandboxExecParams): Promise<ModalProcessSurface>
    terminate(): Promise<void>
  }
>

/** Modal's Image as AML passes it on: an opaque value from `fromRegistry` to `create`. */
export interface ModalImageSurface {
  readonly imageId: string
}

export type ModalClientSurface = Only<
  ModalClient,
  {
    readonly apps: Pick<AppService, "fromName">
    readonly images: Only<ImageService, { fromRegistry(tag: string): ModalImageSurface }>
    readonly sandboxes: Only<
      SandboxService,
      { create(app: Parameters<SandboxService["create"]>[0], image: ModalImageSurface, params?: SandboxCreateParams): Promise<ModalSandboxSurface> }
    >
  }
>

export type DaytonaProcessSurface = Pick<
  Process,
  | "executeCommand"
  | "createSession"
  | "executeSessionCommand"
  | "getSessionCommandLogs"
  | "getSessionCommand"
  | "sendSessionCommandInput"
  | "deleteSession"
>

export type DaytonaSandboxSurface = Pick<DaytonaSdkSandbox, "id" | "delete"> & {
  readonly fs: Pick<FileSystem, "uploadFile" | "downloadFile">
  readonly process: DaytonaProcessSurface
}

/** The parameters of both real `Daytona.create` overloads. */
export type DaytonaCreateOptions = { onSnapshotCreateLogs?: (chunk: string) => void; timeout?: number }

export type DaytonaClientSurface = Only<
  Daytona,
  { create(params?: CreateSandboxFromSnapshotParams | CreateSandboxFromImageParams, options?: DaytonaCreateOptions): Promise<DaytonaSandboxSurface> }
>
