export class ProcessSignalCancellation {}
