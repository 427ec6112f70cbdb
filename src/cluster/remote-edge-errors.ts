/**
 * The remote edge's typed errors. They belong in the catalogue (src/errors.ts), but everything
 * there is exported from the package's entry point and scale-out is not public yet: they move
 * there when it is. Both are task failures.
 */
import { WeirError } from '../errors.js';

/**
 * A remote edge (one producer subtask → one consumer subtask over NATS, `src/cluster/remote-edge-*`)
 * received a message that is not a valid remote-edge message: wrong magic or version, an unknown
 * type, a truncated frame, or a generation the receiver never issued. A bug or a foreign
 * publisher on the flow's subject; the task fails and restarts.
 */
export class RemoteEdgeProtocolError extends WeirError {
  readonly code = 'ERR_WEIR_REMOTE_EDGE_PROTOCOL';
  readonly failureKind = 'task' as const;
  constructor(
    readonly flow: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`remote edge ${flow}: ${message}`, options);
  }
}

/**
 * A remote edge's sequence numbers broke: a `duplicate` (a message with a sequence number already
 * delivered in the same generation — core NATS never duplicates, so a second publisher or a bug),
 * or a `gap` that cannot be repaired (the producer no longer holds the missing messages, or
 * claims never to have sent a message the receiver saw). Gaps the producer can still fill are
 * repaired by a resume and never reach this error; nothing is ever skipped.
 */
export class RemoteEdgeSequenceError extends WeirError {
  readonly code = 'ERR_WEIR_REMOTE_EDGE_SEQUENCE';
  readonly failureKind = 'task' as const;
  constructor(
    readonly flow: string,
    readonly sequenceFault: 'gap' | 'duplicate',
    readonly expectedSeq: number,
    readonly receivedSeq: number,
    message: string,
  ) {
    super(`remote edge ${flow}: ${sequenceFault}: ${message}`);
  }
}
